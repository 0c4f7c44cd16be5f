// Each top-level linalg op (or one in an scf.if branch), and each loop over
// linalg ops there, becomes a call to
// its own noinline kernel; the
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

// The table a gather reads inside its body is passed too. The check of the
// indices (a reduction to one flag) is a kernel of its own, the assert on
// its flag stays in the caller.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[D:[a-z0-9]+]]: tensor<4x3xf32>, %[[I:[a-z0-9]+]]: tensor<2xi64>
// CHECK: %[[ALL:.+]] = call @gather_kernel_0(%[[I]]) : (tensor<2xi64>) -> tensor<i1>
// CHECK: %[[OK:.+]] = tensor.extract %[[ALL]][]
// CHECK: cf.assert %[[OK]]
// CHECK: call @gather_kernel_1(%[[I]], %[[D]])
// CHECK-LABEL: func.func private @gather_kernel_1(
// CHECK-SAME: %[[KI:[a-z0-9]+]]: tensor<2xi64>, %[[KD:[a-z0-9]+]]: tensor<4x3xf32>
// CHECK: tensor.extract %[[KD]]
func.func @gather(%d: tensor<4x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = mp.gather %d, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Dynamic shapes: the kernel writes into the tensor.empty its caller sized
// (an argument), and the run-time broadcast in an scf.if branch is a kernel
// too.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<?x4xf32>, %[[B:[a-z0-9]+]]: tensor<?x4xf32>
// CHECK: %[[A2:.+]] = scf.if
// CHECK: %[[E1:.+]] = tensor.empty(%{{.+}}) : tensor<?x4xf32>
// CHECK: %[[X:.+]] = func.call @dynamic_kernel_0(%[[A]], %[[E1]])
// CHECK: scf.yield %[[X]]
// CHECK: %[[B2:.+]] = scf.if
// CHECK: } else {
// CHECK: %[[E:.+]] = tensor.empty(%{{.+}}) : tensor<?x4xf32>
// CHECK: call @dynamic_kernel_2(%[[A2]], %[[B2]], %[[E]])
// CHECK-LABEL: func.func private @dynamic_kernel_0(
// CHECK-SAME: %{{.+}}: tensor<?x4xf32>, %[[OUT:.+]]: tensor<?x4xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[OUT]] : tensor<?x4xf32>)
func.func @dynamic(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = mp.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A convolution's loop over its taps is one kernel, loop and all: the
// weight's repacking and the accumulator's fill are kernels of their own.
// CHECK-LABEL: func.func @conv_taps(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x8x?xf32>, %[[W:[a-z0-9]+]]: tensor<4x8x3xf32>
// CHECK: %[[P:.+]] = tensor.pad %[[X]]
// CHECK: %[[ACC:.+]] = call @conv_taps_kernel_0(
// CHECK: %[[WT:.+]] = call @conv_taps_kernel_1(%[[W]])
// CHECK: %[[SUM:.+]] = call @conv_taps_kernel_2({{.*}}%[[ACC]]{{.*}}) : ({{.*}}) -> tensor<1x4x?xf32>
// CHECK-NOT: scf.for
// CHECK: call @conv_taps_kernel_3(%[[SUM]],
// CHECK-LABEL: func.func private @conv_taps_kernel_2(
// CHECK: scf.for
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
func.func @conv_taps(%x: tensor<1x8x?xf32>, %w: tensor<4x8x3xf32>) -> tensor<1x4x?xf32> {
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 1, 1>, strides = array<i64: 1>} : (tensor<1x8x?xf32>, tensor<4x8x3xf32>) -> tensor<1x4x?xf32>
  return %0 : tensor<1x4x?xf32>
}
