// Policy files of --mp-assign-precision: op type classes, node overrides by
// exact ONNX node name (the location) and by regex, keep_io_types,
// use_builtin and unlisted_class; user decisions lose against the safety
// rules.
// RUN: mp-opt %s -split-input-file --mp-assign-precision="policy=%S/Inputs/policy-overrides.json" | FileCheck %s --check-prefix=OVR
// RUN: mp-opt %s -split-input-file --mp-assign-precision="policy=%S/Inputs/policy-overrides.json keep-io-types=1" | FileCheck %s --check-prefix=OPT
// RUN: mp-opt %s -split-input-file --mp-assign-precision="policy=%S/Inputs/policy-unlisted.json" | FileCheck %s --check-prefix=UNL
// RUN: mp-opt %s -split-input-file --mp-assign-precision="policy=%S/Inputs/policy-no-builtin.json" | FileCheck %s --check-prefix=NOB
// RUN: mp-opt %s -split-input-file --mp-assign-precision="policy=%S/Inputs/policy-user-f16.json" | FileCheck %s --check-prefix=USR
// RUN: mp-opt %s -split-input-file --mp-mixed-precision="policy=%S/Inputs/policy-overrides.json" | FileCheck %s --check-prefix=IO
// RUN: mp-opt %s -split-input-file --mp-assign-precision | FileCheck %s --check-prefix=GUARD
// RUN: mp-opt %s -split-input-file --mp-assign-precision="policy=%S/Inputs/policy-index-guard-exact.json" | FileCheck %s --check-prefix=EXACT
// RUN: mp-opt %s -split-input-file --mp-mixed-precision="policy=%S/Inputs/policy-index-guard-exact.json index-guard=arithmetic" | FileCheck %s --check-prefix=GOPT

func.func @policy(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %0 = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm0")
  %1 = mp.softmax %0 {axes = array<i64: 1>} : tensor<2x4xf32> loc("sm0")
  %2 = mp.matmul %1, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm_keep")
  %3 = mp.matmul %2, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("decoder/l0/proj")
  %4 = mp.add %3, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("add_half")
  %5 = mp.relu %4 : tensor<2x4xf32> loc("relu0")
  %6 = mp.matmul %5, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("tail_mm")
  %7 = mp.matmul %6, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("decoder/l0/proj_not")
  return %7 : tensor<2x4xf32>
}

// op_types override (Softmax deny, Relu allow), node by exact name (class
// or compute with a rule), node_patterns (anchored: "decoder/l0/proj_not"
// is not matched), keep_io_types from the policy.
// OVR-LABEL: func.func @policy(
// OVR-SAME: attributes {mp.keep_io_types = false
// OVR: mp.matmul {{.*}}<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">
// OVR: mp.softmax {{.*}}<compute = f32, cls = deny, rule = "deny class of Softmax">
// OVR: mp.matmul {{.*}}<compute = f32, cls = deny, rule = "user override: class deny">
// OVR: mp.matmul {{.*}}<compute = f32, cls = deny, rule = "user override: class deny">
// OVR: mp.add {{.*}}<compute = f16, cls = infer, rule = "tuned by hand">
// OVR: mp.relu {{.*}}<compute = f16, cls = allow, rule = "allow class of Relu">
// OVR: mp.matmul {{.*}}<compute = f32, cls = allow, rule = "user override">
// OVR: mp.matmul {{.*}}<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">

// The pass option beats the policy's keep_io_types.
// OPT-LABEL: func.func @policy(
// OPT-SAME: attributes {mp.keep_io_types = true

// With keep_io_types false from the policy the pipeline gives the function
// an f16 argument where every user runs in f16 (%x: mm0 and add_half), keeps
// %w (also read by the f32 MatMuls) and returns the last MatMul's f16 result.
// IO-LABEL: func.func @policy(
// IO-SAME: %{{[a-z0-9]+}}: tensor<2x4xf16>, %{{[a-z0-9]+}}: tensor<4x4xf32>) -> tensor<2x4xf16>

// use_builtin false: only MatMul is listed; everything else takes the
// unlisted class (clear here), so the ops between the MatMuls become f16.
// UNL-LABEL: func.func @policy(
// UNL: mp.matmul {{.*}}<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">
// UNL: mp.softmax {{.*}}<compute = f16, accumulate = f32, cls = clear, rule = "between fp16 allow ops">
// UNL: mp.add {{.*}}<compute = f16, cls = clear, rule = "between fp16 allow ops">
// UNL: mp.relu {{.*}}<compute = f16, cls = clear, rule = "between fp16 allow ops">

// Without the built-in policy and without unlisted_class every op is deny:
// precision is never lowered by accident.
// NOB-LABEL: func.func @policy(
// NOB: mp.matmul {{.*}}<compute = f32, cls = deny, rule = "deny class of MatMul">
// NOB: mp.softmax {{.*}}<compute = f32, cls = deny, rule = "deny class of Softmax">
// NOB-NOT: compute = f16

// -----

// A user's f16 loses against the shape/index guard and against a constant
// out of fp16 range.
func.func @user_f16(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %k: tensor<2xf32>) -> (tensor<?x?xf32>, tensor<2x4xf32>) {
  %big = mp.constant dense<1.0e5> : tensor<4xf32> loc("big")
  %0 = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm0")
  %1 = mp.mul %k, %k : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("shape_math")
  %2 = mp.cast %1 {to = i64} : tensor<2xf32> -> tensor<2xi64> loc("to_i64")
  %3 = mp.reshape %0, %2 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("reshape0")
  %4 = mp.mul %0, %big : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("scale")
  return %3, %4 : tensor<?x?xf32>, tensor<2x4xf32>
}
// USR-LABEL: func.func @user_f16(
// USR: mp.mul {{.*}}<compute = f32, cls = infer, rule = "shape/index guard: feeds operand #1 of 'reshape0' (overrides the user's f16)">
// USR: mp.mul {{.*}}<compute = f32, cls = infer, rule = "constant 'big' out of fp16 range: 4 value(s) that overflow fp16 (max |v| = 100000)">

// -----

// index_guard: an in-graph greedy step (the next token's embedding is
// gathered at the argmax of the logits). By default the guard keeps the
// ArgMax in fp32 and lets the head MatMul follow its class; the policy's
// "index_guard": "exact" keeps the MatMul too; the pass option beats the
// policy.
func.func @index_guard(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %e: tensor<32x8xf32>) -> tensor<4x8xf32> {
  %0 = mp.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("lm_head")
  %1 = mp.arg_max %0 {axis = -1 : i64, keepdims = false} : tensor<4x32xf32> -> tensor<4xi64> loc("argmax")
  %2 = mp.gather %e, %1 : (tensor<32x8xf32>, tensor<4xi64>) -> tensor<4x8xf32> loc("embed")
  return %2 : tensor<4x8xf32>
}
// GUARD-LABEL: func.func @index_guard(
// GUARD: %[[H:.+]] = mp.matmul {{.*}}<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">
// GUARD: mp.arg_max %[[H]] {{.*}}<compute = f32, cls = {{[a-z]+}}, rule = "shape/index guard: feeds operand #1 of 'embed'">
// EXACT-LABEL: func.func @index_guard(
// EXACT: %[[H:.+]] = mp.matmul {{.*}}<compute = f32, cls = allow, rule = "shape/index guard: feeds operand #1 of 'embed'">
// EXACT: mp.arg_max %[[H]] {{.*}}<compute = f32, cls = {{[a-z]+}}, rule = "shape/index guard: feeds operand #1 of 'embed'">
// GOPT-LABEL: func.func @index_guard(
// GOPT: %[[H:.+]] = mp.matmul {{.*}}<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">} : (tensor<4x16xf16>, tensor<16x32xf16>) -> tensor<4x32xf16>
// GOPT: %[[C:.+]] = mp.cast %[[H]] {to = f32}
// GOPT: mp.arg_max %[[C]]
