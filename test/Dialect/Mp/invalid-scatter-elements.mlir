// Verifier errors of mp.scatter_elements.
// RUN: mp-opt %s -split-input-file -verify-diagnostics

func.func @scatter_elements_rank(%x: tensor<4x2xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{indices must have the data's rank 2, got rank 1}}
  %0 = mp.scatter_elements %x, %i, %u : (tensor<4x2xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
// -----
func.func @scatter_elements_updates(%x: tensor<4x2xf32>, %i: tensor<1x2xi64>, %u: tensor<2x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{updates must have the shape of indices, got 'tensor<2x2xf32>' for 'tensor<1x2xi64>'}}
  %0 = mp.scatter_elements %x, %i, %u : (tensor<4x2xf32>, tensor<1x2xi64>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
// -----
func.func @scatter_elements_type(%x: tensor<4xf32>, %i: tensor<1xi64>, %u: tensor<1xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{updates must have the data's element type, got 'f16' for 'f32'}}
  %0 = mp.scatter_elements %x, %i, %u : (tensor<4xf32>, tensor<1xi64>, tensor<1xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @scatter_elements_axis(%x: tensor<4xf32>, %i: tensor<1xi64>, %u: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{axis -2 is out of range for rank 1}}
  %0 = mp.scatter_elements %x, %i, %u {axis = -2 : i64} : (tensor<4xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @scatter_elements_reduction(%x: tensor<4xf32>, %i: tensor<1xi64>, %u: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction must be none, add, mul, max or min, got avg}}
  %0 = mp.scatter_elements %x, %i, %u {reduction = "avg"} : (tensor<4xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
