// mp-shadow-fp16 clones every node decided f16: the original computes in
// fp32 (the reference), the clone in fp16 from the same fp32 inputs, and
// both are returned ("I:KEY" and "I:f16:KEY"): one run gives each node's
// own fp16 error (mp-tune's sensitivity).
// RUN: mp-opt %s -split-input-file --mp-assign-precision --mp-shadow-fp16 | FileCheck %s
// RUN: mp-opt %s -split-input-file --mp-assign-precision --mp-shadow-fp16 --mp-insert-casts="keep-io-types=1" | FileCheck %s --check-prefix=CASTS

func.func @chain(%x: tensor<2x4xf32> {mp.name = "x"}, %w: tensor<4x4xf32> {mp.name = "w"}) -> (tensor<2x4xf32> {mp.name = "y"}) {
  %0 = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm")
  %1 = mp.relu %0 : tensor<2x4xf32> loc("act")
  %2 = mp.exp %1 : tensor<2x4xf32> loc("ex")
  return %2 : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: -> (tensor<2x4xf32> {mp.name = "y"}, tensor<2x4xf32> {mp.name = "0:mm"}, tensor<2x4xf32> {mp.name = "0:act"}, tensor<2x4xf32> {mp.name = "0:ex"}, tensor<2x4xf32> {mp.name = "0:f16:mm"}, tensor<2x4xf32> {mp.name = "0:f16:act"})
// CHECK: %[[MM:.+]] = mp.matmul %{{.+}}, %{{.+}} {mp.precision = #mp.precision<compute = f32, cls = allow, rule = "fp32 reference of its fp16 shadow">}
// CHECK: %[[SMM:.+]] = mp.matmul %{{.+}}, %{{.+}} {mp.precision = #mp.precision<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">}
// The shadow of the Relu reads the fp32 MatMul, not the MatMul's shadow.
// CHECK: %[[ACT:.+]] = mp.relu %[[MM]] {mp.precision = #mp.precision<compute = f32, cls = infer, rule = "fp32 reference of its fp16 shadow">}
// CHECK: %[[SACT:.+]] = mp.relu %[[MM]] {mp.precision = #mp.precision<compute = f16, cls = infer, rule = "inputs are fp16">}
// CHECK: %[[EX:.+]] = mp.exp %[[ACT]] {mp.precision = #mp.precision<compute = f32, cls = deny
// CHECK: return %[[EX]], %[[MM]], %[[ACT]], %[[EX]], %[[SMM]], %[[SACT]]

// The clones read the fp32 values through casts; their fp16 results come
// back widened.
// CASTS-LABEL: func.func @chain(
// CASTS-SAME: %[[X:[a-z0-9]+]]: tensor<2x4xf32> {mp.name = "x"}, %[[W:[a-z0-9]+]]: tensor<4x4xf32>
// CASTS-DAG: %[[WH:.+]] = mp.cast %[[W]] {to = f16}
// CASTS-DAG: %[[XH:.+]] = mp.cast %[[X]] {to = f16}
// CASTS: %[[MM:.+]] = mp.matmul %[[X]], %[[W]] {{.*}} -> tensor<2x4xf32>
// CASTS: %[[MMH:.+]] = mp.cast %[[MM]] {to = f16}
// CASTS: %[[SMM:.+]] = mp.matmul %[[XH]], %[[WH]] {{.*}} -> tensor<2x4xf16>
// CASTS: %[[SMM32:.+]] = mp.cast %[[SMM]] {to = f32}
// CASTS: %[[ACT:.+]] = mp.relu %[[MM]] {{.*}} : tensor<2x4xf32>
// CASTS: %[[SACT:.+]] = mp.relu %[[MMH]] {{.*}} : tensor<2x4xf16>
// CASTS: %[[SACT32:.+]] = mp.cast %[[SACT]] {to = f32}
// CASTS: return {{.*}}, %[[SMM32]], %[[SACT32]] :
