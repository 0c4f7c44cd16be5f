// Each top-level linalg op becomes a call to its own noinline kernel; the
// kernel creates its output (tensor.empty, the accumulator's fill) and
// clones scalar constants; tensors it reads, including captured ones, are
// arguments.
// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --mp-outline-kernels | FileCheck %s

// CHECK-LABEL: func.func @two_ops(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<2x3xf32>, %[[W:[a-z0-9]+]]: tensor<3x4xf32>
// CHECK: %[[MM:.+]] = call @two_ops_kernel_0(%[[A]], %[[W]]) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[RELU:.+]] = call @two_ops_kernel_1(%[[MM]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: return %[[RELU]]
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func private @two_ops_kernel_0(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<2x4xf32>)
// CHECK: %[[R:.+]] = linalg.generic {{.*}} outs(%[[ACC]] : tensor<2x4xf32>)
// CHECK: return %[[R]]
// CHECK-LABEL: func.func private @two_ops_kernel_1(
// CHECK: arith.maximumf
func.func @two_ops(%a: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = mp.matmul %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = mp.relu %0 : tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// The table a gather reads inside its body is passed too.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[D:[a-z0-9]+]]: tensor<4x3xf32>, %[[I:[a-z0-9]+]]: tensor<2xi64>
// CHECK: call @gather_kernel_0(%[[I]], %[[D]])
// CHECK-LABEL: func.func private @gather_kernel_0(
// CHECK-SAME: %[[KI:[a-z0-9]+]]: tensor<2xi64>, %[[KD:[a-z0-9]+]]: tensor<4x3xf32>
// CHECK: tensor.extract %[[KD]]
func.func @gather(%d: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = mp.gather %d, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
