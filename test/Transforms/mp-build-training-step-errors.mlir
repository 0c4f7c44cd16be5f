// RUN: mp-opt %s -split-input-file -verify-diagnostics --mp-build-training-step="loss=loss"

// expected-error @+1 {{mp-build-training-step: the model has no output named 'loss'; its outputs are 'out'}}
func.func @no_loss() -> (tensor<f32> {mp.name = "out"}) {
  %w = mp.constant dense<0.5> : tensor<4xf32> loc("w")
  %s = mp.reduce_sum %w {keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// expected-error @+1 {{the loss 'loss' must be one float element, got 'tensor<4xf32>'}}
func.func @vector_loss() -> (tensor<4xf32> {mp.name = "loss"}) {
  %w = mp.constant dense<0.5> : tensor<4xf32> loc("w")
  %n = mp.neg %w : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// expected-error @+1 {{the loss 'loss' depends on no float initializer: nothing to train}}
func.func @nothing_to_train(%x: tensor<4xf32> {mp.name = "x"}) -> (tensor<f32> {mp.name = "loss"}) {
  %s = mp.reduce_sum %x {keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @no_rule() -> (tensor<f32> {mp.name = "loss"}) {
  %w = mp.constant dense<0.5> : tensor<4xf32> loc("w")
  // expected-error @+1 {{no gradient rule for 'mp.cumsum', which lies between the trained weights and the loss}}
  %c = mp.cumsum %w {axis = 0 : i64} : tensor<4xf32>
  %s = mp.reduce_sum %c {keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// The exponent of a Pow is not differentiated: one that depends on a
// weight is reported rather than silently treated as constant.
func.func @weight_in_exponent(%x: tensor<4xf32> {mp.name = "x"}) -> (tensor<f32> {mp.name = "loss"}) {
  %w = mp.constant dense<2.0> : tensor<4xf32> loc("w")
  // expected-error @+1 {{no gradient rule for 'mp.pow'}}
  %p = mp.pow %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = mp.reduce_sum %p {keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @dynamic(%x: tensor<?x4xf32> {mp.name = "x"}) -> (tensor<f32> {mp.name = "loss"}) {
  %w = mp.constant dense<0.5> : tensor<4xf32> loc("w")
  %m = mp.mul %x, %w : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // expected-error @+1 {{'mp.reduce_sum' has dynamic shapes: a training step is built for static shapes}}
  %s = mp.reduce_sum %m {keepdims = false} : tensor<?x4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
