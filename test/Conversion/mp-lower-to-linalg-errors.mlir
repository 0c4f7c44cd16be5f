// RUN: not mp-opt %s -split-input-file --mp-lower-to-linalg 2>&1 | FileCheck %s

// Forms without a dynamic-shape lowering yet are reported with the node
// name when their shapes are dynamic: antialiased Resize to constant sizes
// over a run-time length (the filter width would depend on the run-time
// scale).
func.func @dynamic(%x: tensor<1x4x?xf32>) -> tensor<1x4x16xf32> {
  %sizes = mp.constant dense<[1, 4, 16]> : tensor<3xi64>
  %0 = mp.resize %x sizes %sizes {mode = "linear", antialias = 1 : i64} : (tensor<1x4x?xf32>, tensor<3xi64>) -> tensor<1x4x16xf32> loc("resize_node")
  return %0 : tensor<1x4x16xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.resize' (node 'resize_node'): its shapes are dynamic and it has no dynamic-shape lowering yet (pin the graph inputs with --mp-specialize-shapes or --input-shape)

// -----

// Ops or forms without a CPU lowering yet are named (Resize by scales
// known only at run time).
func.func @resize_runtime_scales(%x: tensor<1x4x8xf32>, %scales: tensor<3xf32>) -> tensor<1x4x16xf32> {
  %0 = mp.resize %x scales %scales {mode = "linear"} : (tensor<1x4x8xf32>, tensor<3xf32>) -> tensor<1x4x16xf32> loc("resize1")
  return %0 : tensor<1x4x16xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.resize' (node 'resize1'): this op has no CPU lowering yet

// -----

// A Conv whose input channels are known only at run time is refused (the
// weights fix them), with the node named.
func.func @conv_dynamic_channels(%x: tensor<1x?x8xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x6xf32> {
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x?x8xf32>, tensor<3x2x3xf32>) -> tensor<1x3x6xf32> loc("conv_node")
  return %0 : tensor<1x3x6xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.conv' (node 'conv_node'): its shapes are dynamic and it has no dynamic-shape lowering yet
