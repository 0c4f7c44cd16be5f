// Verifier errors of mp.top_k (checked by its type inference, which the
// importer also reports at the node).
// RUN: mp-opt %s -split-input-file -verify-diagnostics

func.func @top_k_scalar(%x: tensor<f32>, %k: tensor<1xi64>) {
  // expected-error @+2 {{input must have rank >= 1, got 'tensor<f32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = mp.top_k %x, %k : (tensor<f32>, tensor<1xi64>) -> (tensor<f32>, tensor<i64>)
  return
}
// -----
func.func @top_k_axis(%x: tensor<3x4xf32>, %k: tensor<1xi64>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = mp.top_k %x, %k {axis = 2 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  return
}
// -----
func.func @top_k_k_elements(%x: tensor<3x4xf32>, %k: tensor<2xi64>) {
  // expected-error @+2 {{k must be a tensor of one element, got 'tensor<2xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = mp.top_k %x, %k : (tensor<3x4xf32>, tensor<2xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  return
}
// -----
func.func @top_k_too_large(%x: tensor<3x4xf32>) {
  %k = mp.constant dense<5> : tensor<1xi64>
  // expected-error @+2 {{k = 5 is larger than the input's size 4 along axis 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = mp.top_k %x, %k : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  return
}
// -----
func.func @top_k_negative(%x: tensor<3x?xf32>) {
  %k = mp.constant dense<-2> : tensor<1xi64>
  // expected-error @+2 {{k must not be negative, got -2}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = mp.top_k %x, %k : (tensor<3x?xf32>, tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  return
}
// -----
func.func @top_k_result(%x: tensor<3x4xf32>) {
  %k = mp.constant dense<2> : tensor<1xi64>
  // expected-error @+2 {{inferred type(s) 'tensor<3x2xf32>', 'tensor<3x2xi64>' are incompatible with return type(s) of operation 'tensor<3x3xf32>', 'tensor<3x3xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %v, %i = mp.top_k %x, %k : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x3xf32>, tensor<3x3xi64>)
  return
}
