// RUN: not mp-opt %s -split-input-file --mp-lower-to-linalg 2>&1 | FileCheck %s

// Constant indices outside the data's static sizes are the model's error:
// reported at compile time with the node, the range and the index.
func.func @gather(%d: tensor<4x50xf32>) -> tensor<4x2xf32> {
  %i = mp.constant dense<[3, 50]> : tensor<2xi64>
  %0 = mp.gather %d, %i {axis = 1 : i64} : (tensor<4x50xf32>, tensor<2xi64>) -> tensor<4x2xf32> loc("g")
  return %0 : tensor<4x2xf32>
}
// CHECK: error: {{.*}}Gather (node 'g'): an index is out of range [-50, 50) for axis 1 of the data, of size 50 (constant index 50 at flat position 1)

// -----

func.func @gather_elements(%d: tensor<3x5xf32>) -> tensor<1x2xf32> {
  %i = mp.constant dense<[[0, -6]]> : tensor<1x2xi32>
  %0 = mp.gather_elements %d, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<1x2xi32>) -> tensor<1x2xf32> loc("ge")
  return %0 : tensor<1x2xf32>
}
// CHECK: error: {{.*}}GatherElements (node 'ge'): an index is out of range [-5, 5) for axis 1 of the data, of size 5 (constant index -6 at flat position 1)

// -----

func.func @gather_nd(%d: tensor<3x4x5xf32>) -> tensor<2x5xf32> {
  %i = mp.constant dense<[[2, 3], [0, 4]]> : tensor<2x2xi64>
  %0 = mp.gather_nd %d, %i : (tensor<3x4x5xf32>, tensor<2x2xi64>) -> tensor<2x5xf32> loc("gnd")
  return %0 : tensor<2x5xf32>
}
// CHECK: error: {{.*}}GatherND (node 'gnd'): an index tuple is out of range: its entry j must lie in [-d_j, d_j) for the data's axes 0..1 of sizes d_j = (3, 4) (constant index 4 at flat position 3)

// -----

func.func @scatter_nd(%d: tensor<6x3xf32>, %u: tensor<1x3xf32>) -> tensor<6x3xf32> {
  %i = mp.constant dense<[[-7]]> : tensor<1x1xi64>
  %0 = mp.scatter_nd %d, %i, %u {reduction = "none"} : (tensor<6x3xf32>, tensor<1x1xi64>, tensor<1x3xf32>) -> tensor<6x3xf32> loc("snd")
  return %0 : tensor<6x3xf32>
}
// CHECK: error: {{.*}}ScatterND (node 'snd'): an index is out of range [-6, 6) for axis 0 of the data, of size 6 (constant index -7 at flat position 0)

// -----

func.func @scatter_elements(%d: tensor<4x3xf32>, %u: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %i = mp.constant dense<[[0, 4, 1]]> : tensor<1x3xi64>
  %0 = mp.scatter_elements %d, %i, %u : (tensor<4x3xf32>, tensor<1x3xi64>, tensor<1x3xf32>) -> tensor<4x3xf32> loc("se")
  return %0 : tensor<4x3xf32>
}
// CHECK: error: {{.*}}ScatterElements (node 'se'): an index is out of range [-4, 4) for axis 0 of the data, of size 4 (constant index 4 at flat position 1)
