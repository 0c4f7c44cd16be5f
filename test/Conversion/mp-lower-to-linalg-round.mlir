// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s

// Round halves to even: math.roundeven, computed in f32 for f16.
// CHECK-LABEL: func.func @round_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf16>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?x4xf16>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<?x4xf16>) outs(%[[E]] : tensor<?x4xf16>)
// CHECK: %[[W:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK: %[[R:.+]] = math.roundeven %[[W]] : f32
// CHECK: arith.truncf %[[R]] : f32 to f16
func.func @round_dynamic(%x: tensor<?x4xf16>) -> tensor<?x4xf16> {
  %0 = mp.round %x : tensor<?x4xf16>
  return %0 : tensor<?x4xf16>
}

// -----

// Static f32: roundeven directly on the element.
// CHECK-LABEL: func.func @round_static
// CHECK: linalg.generic
// CHECK: %[[R:.+]] = math.roundeven %{{.+}} : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @round_static(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = mp.round %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
