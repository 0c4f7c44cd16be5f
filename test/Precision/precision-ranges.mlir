// mp-assign-precision="ranges=FILE": value ranges measured on calibration
// data (mp-run --calibrate) keep in fp32 the nodes whose values would
// overflow fp16 with a margin (|x| > 65504/4) or mostly fall below its
// normal range (or fp16 rounds most of them to zero), together with the
// nodes that read those values; the plan
// records the rule with the measured figure. The block is the attention of
// mp.models.attention_overflow (a key projection scaled by -1e4 on
// layer-normalized inputs), cut to one head; its weights are arguments, so
// only the measured ranges can know the key projection overflows.
// RUN: mp-opt %s --mp-assign-precision="ranges=%S/Inputs/ranges-attention.json plan=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=PLAN < %t.json
// The plan is a policy: fed back without data it reproduces the decisions.
// RUN: mp-opt %s --mp-mixed-precision="ranges=%S/Inputs/ranges-attention.json" -o %t.a.mlir
// RUN: mp-opt %s --mp-mixed-precision="policy=%t.json" -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// A larger margin leaves only the values beyond it in fp32.
// RUN: mp-opt %s --mp-assign-precision="ranges=%S/Inputs/ranges-attention.json overflow-margin=64" | FileCheck %s --check-prefix=MARGIN
// Without ranges the same block is all fp16 where the classes say so.
// RUN: mp-opt %s --mp-assign-precision | FileCheck %s --check-prefix=NODATA
// Errors and warnings.
// RUN: not mp-opt %s --mp-assign-precision="ranges=%S/Inputs/does-not-exist.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mp-opt %s --mp-assign-precision="ranges=%S/Inputs/ranges-not-calibration.json" 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not mp-opt %s --mp-assign-precision="ranges=%S/Inputs/ranges-bad-field.json" 2>&1 | FileCheck %s --check-prefix=FIELD
// RUN: not mp-opt %s --mp-assign-precision="ranges=%S/Inputs/ranges-attention.json overflow-margin=0.5" 2>&1 | FileCheck %s --check-prefix=BADMARGIN
// RUN: mp-opt %s --mp-assign-precision="ranges=%S/Inputs/ranges-other-graph.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OTHER

func.func @attention(%x: tensor<4x8xf32>, %wq: tensor<8x4xf32>, %wk: tensor<8x4xf32>, %wv: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %q = mp.matmul %x, %wq : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("q_proj")
  %k = mp.matmul %x, %wk : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("k_proj")
  %kt = mp.transpose %k {perm = array<i64: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32> loc("k_t")
  %s = mp.matmul %q, %kt : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("scores")
  %p = mp.softmax %s {axes = array<i64: 1>} : tensor<4x4xf32> loc("probs")
  %v = mp.matmul %x, %wv : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("v_proj")
  %o = mp.matmul %p, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("attn_out")
  %c = mp.constant dense<1.0e-6> : tensor<4x8xf32> loc("small_scale")
  %t = mp.mul %x, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("tiny")
  %u = mp.relu %t : tensor<4x8xf32> loc("tiny_relu")
  %f = mp.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("flushed")
  %g = mp.add %u, %f : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("sum")
  return %o, %g : tensor<4x4xf32>, tensor<4x8xf32>
}
// CHECK-LABEL: func.func @attention(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[WQ:[a-z0-9]+]]: tensor<8x4xf32>, %[[WK:[a-z0-9]+]]: tensor<8x4xf32>, %[[WV:[a-z0-9]+]]: tensor<8x4xf32>
// CHECK: %[[Q:.+]] = mp.matmul %[[X]], %[[WQ]] {mp.precision = #mp.precision<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">}
// CHECK: %[[K:.+]] = mp.matmul %[[X]], %[[WK]] {mp.precision = #mp.precision<compute = f32, cls = allow, rule = "calibrated |x| max 1.234e+06 > 65504/4">}
// CHECK: %[[KT:.+]] = mp.transpose %[[K]] {mp.precision = #mp.precision<compute = f32, cls = clear, rule = "calibrated |x| max 1.234e+06 > 65504/4">
// CHECK: %[[S:.+]] = mp.matmul %[[Q]], %[[KT]] {mp.precision = #mp.precision<compute = f32, cls = allow, rule = "calibrated |x| max 4e+06 > 65504/4">}
// CHECK: %[[P:.+]] = mp.softmax %[[S]] {axes = array<i64: 1>, mp.precision = #mp.precision<compute = f32, cls = infer, rule = "reads 'scores': calibrated |x| max 4e+06 > 65504/4">}
// CHECK: %[[V:.+]] = mp.matmul %[[X]], %[[WV]] {mp.precision = #mp.precision<compute = f16, accumulate = f32, cls = allow,
// CHECK: mp.matmul %[[P]], %[[V]] {mp.precision = #mp.precision<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">}
// CHECK: %[[T:.+]] = mp.mul %[[X]], %{{.+}} {mp.precision = #mp.precision<compute = f32, cls = infer, rule = "calibrated |x| max 2e-06 < 6.1e-05: no value in fp16's normal range">}
// CHECK: %[[U:.+]] = mp.relu %[[T]] {mp.precision = #mp.precision<compute = f32, cls = infer, rule = "reads 'tiny': calibrated |x| max 2e-06 < 6.1e-05: no value in fp16's normal range">}
// CHECK: %[[F:.+]] = mp.mul %[[X]], %[[X]] {mp.precision = #mp.precision<compute = f32, cls = infer, rule = "calibrated: 66.7% of nonzero |x| flush to zero in fp16 (< 3e-08)">}
// CHECK: mp.add %[[U]], %[[F]] {mp.precision = #mp.precision<compute = f32, cls = infer, rule = "reads 'flushed': calibrated: 66.7% of nonzero |x| flush to zero in fp16 (< 3e-08)">}

// PLAN: "k_proj": {
// PLAN: "compute": "f32",
// PLAN: "rule": "calibrated |x| max 1.234e+06 > 65504/4",
// PLAN: "probs": {
// PLAN: "compute": "f32",
// PLAN: "rule": "reads 'scores': calibrated |x| max 4e+06 > 65504/4",
// PLAN: "q_proj": {
// PLAN: "compute": "f16",

// MARGIN: mp.matmul {{.*}} {mp.precision = #mp.precision<compute = f32, cls = allow, rule = "calibrated |x| max 1.234e+06 > 65504/64">}
// MARGIN: mp.softmax {{.*}}rule = "reads 'scores': calibrated |x| max 4e+06 > 65504/64"

// NODATA-LABEL: func.func @attention(
// NODATA-NOT: rule = "calibrated
// NODATA: mp.softmax {{.*}}compute = f16

// MISSING: error: ranges: cannot read calibration ranges '{{.*}}does-not-exist.json'
// KIND: error: ranges: {{.*}}ranges-not-calibration.json: expected "mp-calibration" at calibration.kind (expected the output of mp-run --calibrate)
// FIELD: error: ranges: {{.*}}ranges-bad-field.json: expected number at calibration.nodes.k_proj[0].abs_max
// BADMARGIN: error: overflow-margin must be at least 1, not 0.5
// OTHER: warning: ranges: 2 of 3 measured nodes are not in this graph (first: '/attn/MatMul_7'); were they measured with other options?
