// Static bounds (mp-assign-precision, static-bounds=1 by default, no ranges):
// a value whose largest possible |x| exceeds 65504 keeps its node and its
// readers in fp32, with the bound and where it comes from in the plan.
// Trimmed from mp.models.attention_overflow (LayerNorm -> key projection
// scaled by -1e4 -> scores) to 4 features: the LayerNorm row has L2 norm
// sqrt(4) = 2, each key-weight column 2e4 * sqrt(4) = 4e4, so by
// Cauchy-Schwarz |k| <= 8e4, beyond fp16 although every weight fits it.
// RUN: mp-opt %s --mp-assign-precision="plan=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=PLAN < %t.json
// RUN: mp-opt %s --mp-assign-precision="static-bounds=0" | FileCheck %s --check-prefix=OFF

func.func @key_projection(%x: tensor<2x4xf32>, %cond: tensor<2x2xi1>) -> tensor<2x2xf32> {
  %g = mp.constant dense<1.0> : tensor<4xf32> loc("ln.weight")
  %b = mp.constant dense<0.0> : tensor<4xf32> loc("ln.bias")
  %wq = mp.constant dense<0.5> : tensor<4x4xf32> loc("q_proj.weight")
  %wk = mp.constant dense<-2.0e4> : tensor<4x4xf32> loc("k_proj.weight")
  %ln, %mean, %istd = mp.layer_norm %x, %g bias %b {stash_type = f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>) loc("ln")
  %q = mp.matmul %ln, %wq : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("q_proj")
  %k = mp.matmul %ln, %wk : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("k_proj")
  %kt = mp.transpose %k {perm = array<i64: 1, 0>} : tensor<2x4xf32> -> tensor<4x2xf32> loc("k_t")
  %s = mp.matmul %q, %kt : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("scores")
  // The mask's finfo.min is the sentinel rule's, not a bound.
  %min = mp.constant dense<-3.40282347E+38> : tensor<f32> loc("fmin")
  %m = mp.where %cond, %s, %min : (tensor<2x2xi1>, tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32> loc("masked")
  %p = mp.softmax %m {axes = array<i64: 1>} : tensor<2x2xf32> loc("probs")
  return %p : tensor<2x2xf32>
}
// CHECK-LABEL: func.func @key_projection(
// CHECK: mp.layer_norm {{.*}}compute = f32, cls = infer, rule = "an input is fp32"
// |q| <= 2 * (0.5 * 2) = 2: fp16.
// CHECK: %[[Q:.+]] = mp.matmul %{{.+}}, %{{.+}} {mp.precision = #mp.precision<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">}
// CHECK: %[[K:.+]] = mp.matmul %{{.+}}, %{{.+}} {mp.precision = #mp.precision<compute = f32, cls = allow, rule = "static bound |x| <= 80000 > 65504 (MatMul 'k_proj' of LayerNormalization 'ln' x constant 'k_proj.weight' (row L2 norms))">}
// CHECK: %[[KT:.+]] = mp.transpose %[[K]] {{{.*}}compute = f32, cls = clear, rule = "static bound |x| <= 80000 > 65504 (Transpose 'k_t' of MatMul 'k_proj')"
// A product of two activations has no bound of its own; it reads one.
// CHECK: mp.matmul %[[Q]], %[[KT]] {mp.precision = #mp.precision<compute = f32, cls = allow, rule = "reads 'k_t': static bound |x| <= 80000 > 65504 (Transpose 'k_t' of MatMul 'k_proj')">}
// CHECK: mp.where {{.*}}compute = f32, cls = infer, rule = "an input is fp32"
// CHECK-NOT: static bound
// CHECK: return

// PLAN: "@key_projection:k_proj": {
// PLAN: "compute": "f32",
// PLAN: "rule": "static bound |x| <= 80000 > 65504 (MatMul 'k_proj' of LayerNormalization 'ln' x constant 'k_proj.weight' (row L2 norms))",
// PLAN: "@key_projection:q_proj": {
// PLAN: "compute": "f16",

// OFF-LABEL: func.func @key_projection(
// OFF-NOT: static bound
// OFF: mp.matmul {{.*}}compute = f16
// OFF: mp.matmul {{.*}}compute = f16

// A weight that fits fp16 but no provable bound: inputs from the graph are
// unbounded, so nothing is claimed and the classes decide.
func.func @unbounded_input(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = mp.constant dense<-2.0e4> : tensor<4x4xf32> loc("w")
  %y = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("proj")
  return %y : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @unbounded_input(
// CHECK: mp.matmul {{.*}}compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul"
