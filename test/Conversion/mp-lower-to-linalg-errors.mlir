// RUN: not mp-opt %s -split-input-file --mp-lower-to-linalg 2>&1 | FileCheck %s

// Dynamic shapes are reported with the node name.
func.func @dynamic(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = mp.relu %a : tensor<?x3xf32> loc("relu_node")
  return %0 : tensor<?x3xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.relu' (node 'relu_node'): its shapes are dynamic (pin the graph inputs with --mp-specialize-shapes)

// -----

// Ops without a CPU lowering yet are named.
func.func @conv(%x: tensor<1x2x8xf32>, %w: tensor<4x2x3xf32>) -> tensor<1x4x6xf32> {
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x2x8xf32>, tensor<4x2x3xf32>) -> tensor<1x4x6xf32> loc("conv0")
  return %0 : tensor<1x4x6xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.conv' (node 'conv0'): this op has no CPU lowering yet
