// RUN: not mp-opt %s --mp-insert-loss-scaling 2>&1 | FileCheck %s
// RUN: not mp-opt %s --mp-build-training-step="loss=loss" --mp-insert-loss-scaling="mode=auto" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not mp-opt %s --mp-build-training-step="loss=loss" --mp-insert-loss-scaling --mp-insert-loss-scaling 2>&1 | FileCheck %s --check-prefix=TWICE

// CHECK: error: mp-insert-loss-scaling: no training step here (run mp-build-training-step first)
// MODE: error: mp-insert-loss-scaling: unknown mode 'auto' (expected dynamic or static)
// TWICE: error: mp-insert-loss-scaling: this step has loss scaling already
func.func @forward(%x: tensor<4xf32> {mp.name = "x"}) -> (tensor<f32> {mp.name = "loss"}) {
  %w = mp.constant dense<0.25> : tensor<4xf32> loc("w")
  %y = mp.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %loss = mp.reduce_sum %y {keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
