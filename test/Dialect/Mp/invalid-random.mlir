// Verifier and result-type inference errors of mp.random_normal and
// mp.random_uniform.
// RUN: mp-opt %s -split-input-file -verify-diagnostics

func.func @random_no_shape() -> tensor<2xf32> {
  // expected-error @+2 {{a shape attribute (or a like operand) is required}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.random_normal {dtype = f32} -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @random_both(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{give either a like operand or a shape attribute, not both}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.random_normal %x : tensor<2xf32> {dtype = f32, shape = array<i64: 2>} -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @random_negative_shape() -> tensor<2xf32> {
  // expected-error @+2 {{shape entries must be >= 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.random_uniform {dtype = f32, shape = array<i64: -2>} -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @random_dtype_mismatch() -> tensor<2xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf16>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.random_uniform {dtype = f16, shape = array<i64: 2>} -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @random_uniform_bounds() -> tensor<2xf32> {
  // expected-error @+1 {{low (1.000000e+00) must be below high (1.000000e+00)}}
  %0 = mp.random_uniform {dtype = f32, shape = array<i64: 2>, low = 1.0 : f32, high = 1.0 : f32} -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @random_normal_finite() -> tensor<2xf32> {
  // expected-error @+1 {{scale must be finite, got INF}}
  %0 = mp.random_normal {dtype = f32, shape = array<i64: 2>, scale = 0x7F800000 : f32} -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
