// RUN: not mp-opt %s -split-input-file --mp-lower-to-linalg 2>&1 | FileCheck %s

// Dynamic shapes are reported with the node name.
func.func @dynamic(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = mp.relu %a : tensor<?x3xf32> loc("relu_node")
  return %0 : tensor<?x3xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.relu' (node 'relu_node'): its shapes are dynamic (pin the graph inputs with --mp-specialize-shapes)

// -----

// Ops without a CPU lowering yet are named (Resize with antialias).
func.func @resize_antialias(%a: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %s = mp.constant dense<[1.0, 1.0, 0.5, 0.5]> : tensor<4xf32>
  %0 = mp.resize %a scales %s {antialias = 1 : i64, mode = "linear"} : (tensor<1x1x4x4xf32>, tensor<4xf32>) -> tensor<1x1x2x2xf32> loc("resize0")
  return %0 : tensor<1x1x2x2xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.resize' (node 'resize0'): this op has no CPU lowering yet
