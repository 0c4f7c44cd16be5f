// A mixed-precision training step (AdamW, dynamic loss scaling) through the
// CUDA pipeline: forward and backward f16 matmuls on Tensor Cores, the
// overflow test, the optimizer and the scale update as device kernels (the
// skip decision never goes to the host).
// REQUIRES: ptxas
// RUN: mp-opt %s --mp-build-training-step="loss=loss optimizer=adamw" --mp-insert-loss-scaling \
// RUN:   --mp-mixed-precision --canonicalize --mp-lower-to-nvvm="chip=sm_80 format=isa" \
// RUN:   | %python %inputs/ptx-of-binaries.py | FileCheck %s

// Forward products (x.W, a.a) and backward ones (dW, d(a.a)): f16 on Tensor Cores.
// CHECK-COUNT-3: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// mp.unscale_and_check: |g| unordered-equal to +inf is inf or NaN.
//         CHECK: setp.equ.f32 {{.*}}, 0f7F800000
// mp.adamw_update: the skip flag (i1 as a byte) selects the old weight.
// mp.update_loss_scale: backoff clamped to min (1.0), growth to max (2^24).
// Independent of the last weight's update, it shares its launch.
//         CHECK: .entry
//         CHECK: ld.global.b8
//     CHECK-DAG: sqrt
//     CHECK-DAG: selp.f32
//     CHECK-DAG: max.NaN.f32 {{.*}}, 0f3F800000
//     CHECK-DAG: min.NaN.f32 {{.*}}, 0f4B800000
func.func @step(%x: tensor<16x32xf32> {mp.name = "x"}, %t: tensor<16x16xf32> {mp.name = "t"})
    -> (tensor<f32> {mp.name = "loss"}) {
  %w = mp.constant dense<0.01> : tensor<32x16xf32> loc("w")
  %y = mp.matmul %x, %w : (tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
  %a = mp.tanh %y : tensor<16x16xf32>
  %z = mp.matmul %a, %a : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %d = mp.sub %z, %t : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %d2 = mp.mul %d, %d : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %loss = mp.reduce_mean %d2 {keepdims = false} : tensor<16x16xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
