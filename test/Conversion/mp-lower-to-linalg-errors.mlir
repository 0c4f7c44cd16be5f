// RUN: not mp-opt %s -split-input-file --mp-lower-to-linalg 2>&1 | FileCheck %s

// Dynamic shapes are reported with the node name.
func.func @dynamic(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = mp.relu %a : tensor<?x3xf32> loc("relu_node")
  return %0 : tensor<?x3xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.relu' (node 'relu_node'): its shapes are dynamic (pin the graph inputs with --mp-specialize-shapes)

// -----

// Ops without a CPU lowering yet are named (MaxPool's indices output).
func.func @max_pool_indices(%a: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xi64> {
  %o, %i = mp.max_pool %a {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) loc("pool0")
  return %i : tensor<1x1x2x2xi64>
}
// CHECK: error: {{.*}}cannot lower 'mp.max_pool' (node 'pool0'): this op has no CPU lowering yet
