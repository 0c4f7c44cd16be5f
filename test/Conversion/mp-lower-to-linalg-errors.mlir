// RUN: not mp-opt %s -split-input-file --mp-lower-to-linalg 2>&1 | FileCheck %s

// Dynamic shapes are reported with the node name.
func.func @dynamic(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = mp.relu %a : tensor<?x3xf32> loc("relu_node")
  return %0 : tensor<?x3xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.relu' (node 'relu_node'): its shapes are dynamic (pin the graph inputs with --mp-specialize-shapes)

// -----

// Ops without a CPU lowering yet are named.
func.func @einsum(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = mp.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("einsum0")
  return %0 : tensor<2x4xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.einsum' (node 'einsum0'): this op has no CPU lowering yet
