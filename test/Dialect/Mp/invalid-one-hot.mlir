// Verifier errors of mp.one_hot.
// RUN: mp-opt %s -split-input-file -verify-diagnostics

func.func @one_hot_axis(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<2xf32>) {
  // expected-error @+2 {{axis -3 is out of range [-2, 1] for indices of rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.one_hot %i, %d, %v {axis = -3 : i64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<?x3xf32>
  return
}
// -----
func.func @one_hot_depth_elements(%i: tensor<3xi64>, %d: tensor<2xi64>, %v: tensor<2xf32>) {
  // expected-error @+2 {{depth must be a scalar or a tensor of one element, got 'tensor<2xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.one_hot %i, %d, %v : (tensor<3xi64>, tensor<2xi64>, tensor<2xf32>) -> tensor<3x?xf32>
  return
}
// -----
func.func @one_hot_depth_zero(%i: tensor<3xi64>, %v: tensor<2xf32>) {
  %d = mp.constant dense<0> : tensor<1xi32>
  // expected-error @+2 {{depth must be positive, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.one_hot %i, %d, %v : (tensor<3xi64>, tensor<1xi32>, tensor<2xf32>) -> tensor<3x?xf32>
  return
}
// -----
func.func @one_hot_values(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<3xf32>) {
  // expected-error @+1 {{values must be a 1-D tensor of two elements [off, on], got 'tensor<3xf32>'}}
  %0 = mp.one_hot %i, %d, %v : (tensor<3xi64>, tensor<i64>, tensor<3xf32>) -> tensor<3x?xf32>
  return
}
// -----
func.func @one_hot_type(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<2xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3x?xf32>' are incompatible with return type(s) of operation 'tensor<3x?xf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.one_hot %i, %d, %v : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf16>
  return
}
