// Lowered through --mp-cpu-pipeline and run with mlir-runner. Expected values
// computed independently with numpy (float64, then rounded as printed).
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

// Broadcast add, gelu (erf), matmul and softmax.
func.func @case0() {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]> : tensor<2x3xf32>
  %w = arith.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]> : tensor<3x2xf32>
  %b = arith.constant dense<[0.5, -0.5, 1.0]> : tensor<3xf32>
  %0 = mp.add %x, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = mp.gelu %0 : tensor<2x3xf32>
  %2 = mp.matmul %1, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %3 = mp.softmax %2 {axes = array<i64: 1>} : tensor<2x2xf32>
  %u = tensor.cast %3 : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// CHECK: rank = 2 offset = 0 sizes = [2, 2]
// CHECK-NEXT: {{\[\[}}0.999665, 0.000335435]
// CHECK-NEXT: [0.999026, 0.000973677]]




// LayerNorm: f32 statistics, scale and bias broadcast.
func.func @case1() {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 9.0]]> : tensor<2x4xf32>
  %s = arith.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %b = arith.constant dense<[0.0, 1.0, 0.0, 1.0]> : tensor<4xf32>
  %y, %mean, %inv = mp.layer_norm %x, %s bias %b {axis = -1 : i64, epsilon = 1.0e-5 : f32, stash_type = f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %u = tensor.cast %y : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %m = tensor.cast %mean : tensor<2x1xf32> to tensor<*xf32>
  call @printMemrefF32(%m) : (tensor<*xf32>) -> ()
  return
}
// CHECK: sizes = [2, 4]
// CHECK-NEXT: {{\[\[}}-1.34164, 0.552788, 0.894424, 3.68327]
// CHECK-NEXT: [-1.25676, 0.516632, 0.580041, 3.90021]]
// CHECK: sizes = [2, 1]
// CHECK-NEXT: {{\[\[}}2.5]
// CHECK-NEXT: [5.25]]




// f16 matmul, accumulated in f32 and rounded to f16 once.
func.func @case2() {
  %a = arith.constant dense<[[0.5, 1.5], [2.0, -1.0], [0.25, 4.0]]> : tensor<3x2xf16>
  %w = arith.constant dense<[[1.0, 2.0, 0.5], [3.0, -1.0, 1.0]]> : tensor<2x3xf16>
  %0 = mp.matmul %a, %w : (tensor<3x2xf16>, tensor<2x3xf16>) -> tensor<3x3xf16>
  %1 = mp.cast %0 {to = f32} : tensor<3x3xf16> -> tensor<3x3xf32>
  %u = tensor.cast %1 : tensor<3x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// CHECK: sizes = [3, 3]
// CHECK-NEXT: {{\[\[}}5, -0.5, 1.75]
// CHECK-NEXT: [-1, 5, 0]
// CHECK-NEXT: [12.25, -3.5, 4.125]]




// Data movement: transpose, concat, strided slice, gather, reduce_mean.
func.func @case3() {
  %t = arith.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %tt = mp.transpose %t {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %t2 = mp.mul %tt, %two : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %c = mp.concat %tt, %t2 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  %starts = arith.constant dense<[1, 0]> : tensor<2xi64>
  %ends = arith.constant dense<[3, 4]> : tensor<2xi64>
  %steps = arith.constant dense<[1, 2]> : tensor<2xi64>
  %sl = mp.slice %c, %starts, %ends steps %steps : (tensor<3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xf32>
  %idx = arith.constant dense<[1, -2, 1]> : tensor<3xi64>
  %g = mp.gather %sl, %idx {axis = 0 : i64} : (tensor<2x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  %r = mp.reduce_mean %g {axes = array<i64: 1>} : tensor<3x2xf32> -> tensor<3x1xf32>
  %u = tensor.cast %r : tensor<3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// CHECK: sizes = [3, 1]
// CHECK-NEXT: {{\[\[}}3]
// CHECK-NEXT: [1.5]
// CHECK-NEXT: [3]]

func.func @main() {
  call @case0() : () -> ()
  call @case1() : () -> ()
  call @case2() : () -> ()
  call @case3() : () -> ()
  return
}
