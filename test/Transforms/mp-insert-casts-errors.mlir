// --mp-insert-casts on constants whose data is not available (an elided
// dense_resource, as printed with elided resources): a diagnostic, never a
// crash.
// RUN: not mp-opt %s --mp-mixed-precision 2>&1 | FileCheck %s

func.func @elided(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = mp.constant dense_resource<__elided__> : tensor<4x4xf32> loc("w")
  %0 = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm0")
  return %0 : tensor<2x4xf32>
}
// CHECK: error:
// CHECK-NOT: Stack dump
