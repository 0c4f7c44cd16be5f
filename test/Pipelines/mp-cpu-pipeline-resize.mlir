// mp.resize through --mp-cpu-pipeline: 2x upsampling of [[1, 2], [3, 4]]
// in three modes. Expected values from the ONNX reference implementation
// (onnx.reference.ReferenceEvaluator, Resize-19), printed to 6 digits.
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e resize -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

func.func @resize() {
  %x = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %s = mp.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %0 = mp.resize %x scales %s {mode = "linear"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  %1 = mp.resize %x scales %s {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  %2 = mp.resize %x scales %s {mode = "cubic", coordinate_transformation_mode = "align_corners"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  %p0 = tensor.cast %0 : tensor<1x1x4x4xf32> to tensor<*xf32>
  call @printMemrefF32(%p0) : (tensor<*xf32>) -> ()
  %p1 = tensor.cast %1 : tensor<1x1x4x4xf32> to tensor<*xf32>
  call @printMemrefF32(%p1) : (tensor<*xf32>) -> ()
  %p2 = tensor.cast %2 : tensor<1x1x4x4xf32> to tensor<*xf32>
  call @printMemrefF32(%p2) : (tensor<*xf32>) -> ()
  return
}

// Linear, half_pixel: edges clamp.
// CHECK: sizes = [1, 1, 4, 4]
// CHECK-NEXT: {{\[\[\[\[}}1, 1.25, 1.75, 2],
// CHECK-NEXT: [1.5, 1.75, 2.25, 2.5],
// CHECK-NEXT: [2.5, 2.75, 3.25, 3.5],
// CHECK-NEXT: [3, 3.25, 3.75, 4]]]]
// Nearest, asymmetric, floor.
// CHECK: sizes = [1, 1, 4, 4]
// CHECK-NEXT: {{\[\[\[\[}}1, 1, 2, 2],
// CHECK-NEXT: [1, 1, 2, 2],
// CHECK-NEXT: [3, 3, 4, 4],
// CHECK-NEXT: [3, 3, 4, 4]]]]
// Cubic (A = -0.75), align_corners.
// CHECK: sizes = [1, 1, 4, 4]
// CHECK-NEXT: {{\[\[\[\[}}1, 1.31481, 1.68519, 2],
// CHECK-NEXT: [1.62963, 1.94444, 2.31481, 2.62963],
// CHECK-NEXT: [2.37037, 2.68519, 3.05556, 3.37037],
// CHECK-NEXT: [3, 3.31481, 3.68519, 4]]]]

// Antialiased downsampling of 1..16 (4x4) by (0.5, 0.75): the linear and
// cubic filters widen to 1/scale input pixels. Expected values from the
// ONNX reference (Resize-19), 6 digits.
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e antialias -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=AA
func.func @antialias() {
  %x = arith.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]]]> : tensor<1x1x4x4xf32>
  %s = mp.constant dense<[1.0, 1.0, 0.5, 0.75]> : tensor<4xf32>
  %0 = mp.resize %x scales %s {mode = "linear", antialias = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<4xf32>) -> tensor<1x1x2x3xf32>
  %1 = mp.resize %x scales %s {mode = "cubic", antialias = 1 : i64, exclude_outside = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<4xf32>) -> tensor<1x1x2x3xf32>
  %p0 = tensor.cast %0 : tensor<1x1x2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%p0) : (tensor<*xf32>) -> ()
  %p1 = tensor.cast %1 : tensor<1x1x2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%p1) : (tensor<*xf32>) -> ()
  return
}
// AA: sizes = [1, 1, 2, 3]
// AA-NEXT: {{\[\[\[\[}}3.77273, 5, 6.22727],
// AA-NEXT: [10.7727, 12, 13.2273]]]]
// AA: sizes = [1, 1, 2, 3]
// AA-NEXT: {{\[\[\[\[}}3.43029, 4.76939, 6.10849],
// AA-NEXT: [10.8915, 12.2306, 13.5697]]]]
