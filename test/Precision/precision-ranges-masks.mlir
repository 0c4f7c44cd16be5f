// Measured ranges of an additive attention mask: its finfo.min sentinels
// reach 3.4e38, but the mask goes to a softmax, where the sentinel rule
// stores it in fp16 as -10000 (test/Transforms/mp-assign-precision.mlir):
// its size is no reason to keep the mask path in fp32. The same values
// that do not reach a mask are a reason. Trimmed from gpt2_dynamo
// (shared/corpus), whose calibrated build kept its mask Where and Adds in
// fp32 before.
// RUN: mp-opt %s --mp-assign-precision="ranges=%S/Inputs/ranges-mask.json" | FileCheck %s

func.func @mask(%q: tensor<4x4xf32>, %k: tensor<4x4xf32>, %keep: tensor<4x4xi1>, %x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %s = mp.matmul %q, %k : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("scores")
  %zero = mp.constant dense<0.0> : tensor<f32> loc("zero")
  %fmin = mp.constant dense<-3.40282347E+38> : tensor<f32> loc("fmin")
  %m = mp.where %keep, %zero, %fmin : (tensor<4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<4x4xf32> loc("mask")
  %a = mp.add %s, %m : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("masked")
  %p = mp.softmax %a {axes = array<i64: 1>} : tensor<4x4xf32> loc("probs")
  %n = mp.where %keep, %zero, %fmin : (tensor<4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<4x4xf32> loc("penalty")
  %o = mp.add %x, %n : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("not_a_mask")
  return %p, %o : tensor<4x4xf32>, tensor<4x4xf32>
}
// CHECK-LABEL: func.func @mask(
// CHECK: mp.matmul {{.*}}compute = f16
// CHECK: %[[M:.+]] = mp.where {{.*}}compute = f16
// CHECK-NOT: calibrated
// CHECK: mp.add {{.*}}compute = f16
// CHECK: mp.softmax {{.*}}compute = f16
// CHECK: %[[N:.+]] = mp.where {{.*}}compute = f32, cls = infer, rule = "constant {{.*}}fmin{{.*}} out of fp16 range
// CHECK: mp.add %{{.+}}, %[[N]] {{.*}}compute = f32, cls = infer, rule = "reads 'penalty': calibrated |x| max 3.40282e+38 > 65504/4"
