// Fused and unfused attention compute the same values on the CPU: the same
// function through --mp-cpu-pipeline with and without --mp-fuse-attention
// must print numpy's result (float64 reference, 6 digits), including a
// masked-out key (-inf in the additive mask).
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: mp-opt %s --mp-fuse-attention --mp-cpu-pipeline | \
// RUN:   mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: mp-opt %s --mp-fuse-attention | FileCheck %s --check-prefix=FUSED
// FUSED: mp.attention
// FUSED-NOT: mp.softmax

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<[[[[0.61, 0.62, 0.03, -0.43], [-0.89, -0.23, -0.18, -0.91]], [[-0.9, 1.0, 0.3, -0.53], [-0.13, 0.95, 0.8, 0.69]]]]> : tensor<1x2x2x4xf32>
  %k = arith.constant dense<[[[[-0.22, -0.01, 0.35, -0.88], [0.11, -0.46, 0.76, -0.87], [0.36, 0.74, -0.55, 0.79]], [[0.74, -0.96, 0.41, -1.0], [0.01, -0.13, -0.59, -0.35], [0.61, -0.37, -0.7, 0.4]]]]> : tensor<1x2x3x4xf32>
  %v = arith.constant dense<[[[[-0.1, 0.6, -0.53, -0.36], [0.6, 0.01, 0.01, -0.53], [-0.97, 0.87, -0.83, 0.69]], [[-0.26, 0.9, -0.2, 0.87], [0.11, -0.52, 0.48, 0.35], [0.37, -0.07, -0.56, 0.28]]]]> : tensor<1x2x3x4xf32>
  %mask = arith.constant dense<[[[[0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]]]> : tensor<1x1x2x3xf32>
  %kt = mp.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x3x4xf32> -> tensor<1x2x4x3xf32>
  %s = mp.matmul %q, %kt : (tensor<1x2x2x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x2x3xf32>
  %c = mp.constant dense<0.5> : tensor<f32>
  %m = mp.mul %s, %c : (tensor<1x2x2x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %a = mp.add %m, %mask : (tensor<1x2x2x3xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  %p = mp.softmax %a {axes = array<i64: 3>} : tensor<1x2x2x3xf32>
  %o = mp.matmul %p, %v : (tensor<1x2x2x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x2x4xf32>
  %u = tensor.cast %o : tensor<1x2x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// numpy: [[0.243902, 0.31014, -0.264704, -0.443519],
//          [0.033497, 0.412867, -0.367243, -0.257342]],
//         [[-0.036601, 0.042629, 0.210572, 0.556033],
//          [0.107514, 0.033698, -0.095035, 0.464519]]; printed to 6
// significant digits:
// CHECK: sizes = [1, 2, 2, 4]
// CHECK-NEXT: {{\[\[\[\[}}0.243902, 0.31014, -0.264704, -0.443519],
// CHECK-NEXT: [0.0334967, 0.412867, -0.367243, -0.257342]],
// CHECK-NEXT: {{\[\[}}-0.0366005, 0.0426291, 0.210572, 0.556033],
// CHECK-NEXT: [0.107514, 0.0336979, -0.095035, 0.464519]]]]
