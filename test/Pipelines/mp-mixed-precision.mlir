// The --mp-mixed-precision pipeline: --mp-assign-precision then
// --mp-insert-casts with the same options (policy, plan, report,
// keep-io-types).
// RUN: mp-opt %s -split-input-file --mp-mixed-precision | FileCheck %s
// RUN: mp-opt %s -split-input-file --mp-mixed-precision -o %t.pipeline.mlir
// RUN: mp-opt %s -split-input-file --mp-assign-precision --mp-insert-casts -o %t.passes.mlir
// RUN: diff %t.pipeline.mlir %t.passes.mlir
// RUN: mp-opt %s -split-input-file --mp-mixed-precision="keep-io-types=0" | FileCheck %s --check-prefix=NOIO
// RUN: mp-opt %s -split-input-file --mp-mixed-precision="policy=%S/../Precision/Inputs/policy-softmax-deny.json" | FileCheck %s --check-prefix=DENY
// RUN: mp-opt %s -split-input-file --mp-mixed-precision="report=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// Scaled dot-product attention with a -1e9 causal mask: everything in f16,
// the weight stored in f16, one cast in and one cast out.
func.func @attention(%q: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = mp.constant dense<0.5> : tensor<4x4xf32> loc("w")
  %m = mp.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9]]> : tensor<2x4xf32> loc("mask")
  %s = mp.constant dense<0.125> : tensor<f32> loc("scale")
  %0 = mp.matmul %q, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("qk")
  %1 = mp.mul %0, %s : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> loc("qk_scale")
  %2 = mp.add %1, %m : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("add_mask")
  %3 = mp.softmax %2 {axes = array<i64: 1>} : tensor<2x4xf32> loc("softmax0")
  %4 = mp.matmul %3, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("pv")
  return %4 : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {mp.keep_io_types = true
// CHECK: %[[Q16:.+]] = mp.cast %[[Q]] {to = f16} : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK-DAG: %[[W:.+]] = mp.constant dense<5.000000e-01> : tensor<4x4xf16>
// CHECK-DAG: %[[MASK:.+]] = mp.constant dense<{{\[\[}}0.000000e+00, -1.000000e+04, -1.000000e+04, -1.000000e+04], [0.000000e+00, 0.000000e+00, -1.000000e+04, -1.000000e+04]]> : tensor<2x4xf16>
// CHECK-DAG: %[[S:.+]] = mp.constant dense<1.250000e-01> : tensor<f16>
// CHECK: %[[QK:.+]] = mp.matmul %[[Q16]], %[[W]] {mp.precision = #mp.precision<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">} : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// CHECK: %[[SC:.+]] = mp.mul %[[QK]], %[[S]] {{.*}} : (tensor<2x4xf16>, tensor<f16>) -> tensor<2x4xf16>
// CHECK: %[[ADD:.+]] = mp.add %[[SC]], %[[MASK]] {{.*}} -> tensor<2x4xf16>
// CHECK: %[[SM:.+]] = mp.softmax %[[ADD]] {{.*}}accumulate = f32{{.*}} : tensor<2x4xf16>
// CHECK: %[[PV:.+]] = mp.matmul %[[SM]], %[[W]] {{.*}} -> tensor<2x4xf16>
// CHECK: %[[OUT:.+]] = mp.cast %[[PV]] {to = f32} : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK: return %[[OUT]] : tensor<2x4xf32>

// NOIO-LABEL: func.func @attention(
// NOIO-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4xf16>) -> tensor<2x4xf16> attributes {mp.keep_io_types = false
// NOIO-NOT: mp.cast
// NOIO: return %{{.+}} : tensor<2x4xf16>

// Softmax made deny by the policy: f32 between two f16 MatMuls, with the
// casts at its boundary.
// DENY-LABEL: func.func @attention(
// DENY: %[[ADD:.+]] = mp.add {{.*}}compute = f16{{.*}} -> tensor<2x4xf16>
// DENY: %[[ADD32:.+]] = mp.cast %[[ADD]] {to = f32} : tensor<2x4xf16> -> tensor<2x4xf32>
// DENY: %[[SM:.+]] = mp.softmax %[[ADD32]] {axes = array<i64: 1>, mp.precision = #mp.precision<compute = f32, cls = deny, rule = "deny class of Softmax">} : tensor<2x4xf32>
// DENY: %[[SM16:.+]] = mp.cast %[[SM]] {to = f16} : tensor<2x4xf32> -> tensor<2x4xf16>
// DENY: mp.matmul %[[SM16]],

// REPORT: mp precision report: @attention
// REPORT: MatMul allow 2 2 0
// REPORT: nodes in f16: 5 / 5; casts: 2; fp16 share of matmul/conv FLOPs: 100.0%
// REPORT: [mask] 'mask': attention mask sentinel

// -----

// A vocoder-like block: Conv, deny Resize (nearest upsampling), Conv. The
// Resize runs in f32 between casts; the Conv weights are stored in f16.
func.func @vocoder(%x: tensor<1x2x8xf32>) -> tensor<1x2x16xf32> {
  %w = mp.constant dense<0.25> : tensor<2x2x1xf32> loc("conv_w")
  %sc = mp.constant dense<[1.0, 1.0, 2.0]> : tensor<3xf32> loc("scales")
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x2x8xf32>, tensor<2x2x1xf32>) -> tensor<1x2x8xf32> loc("conv0")
  %1 = mp.resize %0 scales %sc {nearest_mode = "floor"} : (tensor<1x2x8xf32>, tensor<3xf32>) -> tensor<1x2x16xf32> loc("up0")
  %2 = mp.conv %1, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x2x16xf32>, tensor<2x2x1xf32>) -> tensor<1x2x16xf32> loc("conv1")
  return %2 : tensor<1x2x16xf32>
}
// CHECK-LABEL: func.func @vocoder(
// CHECK-DAG: %[[W:.+]] = mp.constant dense<2.500000e-01> : tensor<2x2x1xf16>
// CHECK-DAG: %[[SC:.+]] = mp.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK: %[[C0:.+]] = mp.conv %{{.+}}, %[[W]] {{.*}} : (tensor<1x2x8xf16>, tensor<2x2x1xf16>) -> tensor<1x2x8xf16>
// CHECK: %[[C0_32:.+]] = mp.cast %[[C0]] {to = f32}
// CHECK: %[[UP:.+]] = mp.resize %[[C0_32]] scales %[[SC]] {{.*}} : (tensor<1x2x8xf32>, tensor<3xf32>) -> tensor<1x2x16xf32>
// CHECK: %[[UP16:.+]] = mp.cast %[[UP]] {to = f16}
// CHECK: mp.conv %[[UP16]], %[[W]]
