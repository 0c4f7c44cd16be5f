// RUN: not mp-opt %s -split-input-file --mp-lower-to-linalg 2>&1 | FileCheck %s

// Forms without a dynamic-shape lowering yet are reported with the node
// name when their shapes are dynamic: a rotary embedding whose hidden width
// is known only at run time (the head split needs it).
func.func @dynamic(%x: tensor<1x4x?xf32>, %pos: tensor<1x4xi64>, %c: tensor<16x8xf32>) -> tensor<1x4x?xf32> {
  %0 = mp.ms.rotary_embedding %x, %pos, %c, %c {num_heads = 2 : i64} : (tensor<1x4x?xf32>, tensor<1x4xi64>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<1x4x?xf32> loc("rotary_node")
  return %0 : tensor<1x4x?xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.ms.rotary_embedding' (node 'rotary_node'): its shapes are dynamic and it has no dynamic-shape lowering yet (pin the graph inputs with --mp-specialize-shapes or --input-shape)

// -----

// Ops or forms without a CPU lowering yet are named (Resize by scales
// known only at run time).
func.func @resize_runtime_scales(%x: tensor<1x4x8xf32>, %scales: tensor<3xf32>) -> tensor<1x4x16xf32> {
  %0 = mp.resize %x scales %scales {mode = "linear"} : (tensor<1x4x8xf32>, tensor<3xf32>) -> tensor<1x4x16xf32> loc("resize1")
  return %0 : tensor<1x4x16xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.resize' (node 'resize1'): this op has no CPU lowering yet

// -----

// A Conv whose weight shape is known only at run time is refused (the
// channels and kernel must be static), with the node named.
func.func @conv_dynamic_weight(%x: tensor<1x2x8xf32>, %w: tensor<?x2x3xf32>) -> tensor<1x?x6xf32> {
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x2x8xf32>, tensor<?x2x3xf32>) -> tensor<1x?x6xf32> loc("conv_node")
  return %0 : tensor<1x?x6xf32>
}
// CHECK: error: {{.*}}cannot lower 'mp.conv' (node 'conv_node'): its shapes are dynamic and it has no dynamic-shape lowering yet
