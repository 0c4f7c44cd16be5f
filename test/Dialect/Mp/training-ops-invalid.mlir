// RUN: mp-opt %s -split-input-file -verify-diagnostics

func.func @unscale_shape(%s: tensor<f32>, %g: tensor<4xf16>) {
  // expected-error @+1 {{unscaled result #0 'tensor<3xf32>' must have the shape of gradient #0 'tensor<4xf16>'}}
  %u, %inf = mp.unscale_and_check %s, %g : tensor<f32>, tensor<4xf16> -> (tensor<3xf32>), tensor<i1>
  return
}

// -----

func.func @unscale_count(%s: tensor<f32>, %g: tensor<4xf16>) {
  // expected-error @+1 {{has 1 gradient(s) but 2 unscaled result(s)}}
  %u:2, %inf = mp.unscale_and_check %s, %g : tensor<f32>, tensor<4xf16> -> (tensor<4xf32>, tensor<4xf32>), tensor<i1>
  return
}

// -----

func.func @backoff(%s: tensor<f32>, %n: tensor<i64>, %f: tensor<i1>) {
  // expected-error @+1 {{backoff_factor must be in (0, 1), got 2}}
  %a, %b = mp.update_loss_scale %s, %n, %f {backoff_factor = 2.0 : f32} : tensor<f32>, tensor<i64>, tensor<i1>
  return
}

// -----

func.func @interval(%s: tensor<f32>, %n: tensor<i64>, %f: tensor<i1>) {
  // expected-error @+1 {{growth_interval must be >= 1, got 0}}
  %a, %b = mp.update_loss_scale %s, %n, %f {growth_interval = 0 : i64} : tensor<f32>, tensor<i64>, tensor<i1>
  return
}

// -----

func.func @bounds(%s: tensor<f32>, %n: tensor<i64>, %f: tensor<i1>) {
  // expected-error @+1 {{needs 0 < min_scale <= max_scale, got [8, 4]}}
  %a, %b = mp.update_loss_scale %s, %n, %f {min_scale = 8.0 : f32, max_scale = 4.0 : f32} : tensor<f32>, tensor<i64>, tensor<i1>
  return
}

// -----

func.func @sgd_momentum(%p: tensor<4xf32>) {
  // expected-error @+1 {{momentum must be in [0, 1], got 1.5}}
  %a, %b = mp.sgd_update %p, %p, %p {lr = 0.1 : f32, momentum = 1.5 : f32} : tensor<4xf32>
  return
}

// -----

func.func @adamw_beta(%p: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{beta2 must be in [0, 1), got 1}}
  %a, %b, %c = mp.adamw_update %p, %p, %p, %p, %t {lr = 0.1 : f32, beta2 = 1.0 : f32} : tensor<4xf32>, tensor<f32>
  return
}

// -----

func.func @adamw_eps(%p: tensor<4xf32>, %t: tensor<f32>) {
  // expected-error @+1 {{eps must be > 0, got 0}}
  %a, %b, %c = mp.adamw_update %p, %p, %p, %p, %t {lr = 0.1 : f32, eps = 0.0 : f32} : tensor<4xf32>, tensor<f32>
  return
}

// -----

func.func @f16_state(%p: tensor<4xf16>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float values}}
  %a, %b = mp.sgd_update %p, %p, %p {lr = 0.1 : f32} : tensor<4xf16>
  return
}
