// The plan file of --mp-assign-precision / --mp-mixed-precision: every node
// by its ONNX name with op type, class, decision, rule, casts and weight
// bytes saved, then the totals. The plan is itself a valid policy: feeding
// it back gives the same IR.
// RUN: mp-opt %s --mp-mixed-precision="plan=%t.json" -o %t.a.mlir
// RUN: mp-opt %s --mp-mixed-precision="policy=%t.json" -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// RUN: FileCheck %s --check-prefix=PLAN < %t.json
// The same plan from the pass alone (without materialization).
// RUN: mp-opt %s --mp-assign-precision="plan=%t.assign.json" -o /dev/null
// RUN: diff %t.json %t.assign.json
// And with keep-io-types=0 the round trip holds too.
// RUN: mp-opt %s --mp-mixed-precision="plan=%t.noio.json keep-io-types=0" -o %t.c.mlir
// RUN: mp-opt %s --mp-mixed-precision="policy=%t.noio.json" -o %t.d.mlir
// RUN: diff %t.c.mlir %t.d.mlir
// RUN: FileCheck %s --check-prefix=NOIO < %t.noio.json

func.func @plan(%q: tensor<2x4xf32>, %c: tensor<i1>, %k: tensor<2xf32>) -> (tensor<2x4xf32>, tensor<?x?xf32>) {
  %w = mp.constant dense<0.5> : tensor<4x4xf32> loc("w")
  %m = mp.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9]]> : tensor<2x4xf32> loc("mask")
  %big = mp.constant dense<1.0e5> : tensor<4xf32> loc("big")
  %0 = mp.matmul %q, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("qk")
  %1 = mp.add %0, %m : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("add_mask")
  %2 = mp.softmax %1 {axes = array<i64: 1>} : tensor<2x4xf32> loc("softmax0")
  %3 = mp.matmul %2, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("pv")
  %4 = mp.mul %3, %big : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("scale")
  %5 = mp.if %c : tensor<i1> -> tensor<2x4xf32> {
    %e = mp.exp %4 : tensor<2x4xf32> loc("then_exp")
    mp.yield %e : tensor<2x4xf32>
  } else {
    mp.yield %3 : tensor<2x4xf32>
  } loc("if0")
  %6 = mp.mul %k, %k : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("shape_math")
  %7 = mp.cast %6 {to = i64} : tensor<2xf32> -> tensor<2xi64> loc("to_i64")
  %8 = mp.reshape %3, %7 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("reshape0")
  %9 = mp.relu %q : tensor<2x4xf32> loc("relu_q")
  %10 = mp.add %5, %9 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("add_out")
  return %10, %8 : tensor<2x4xf32>, tensor<?x?xf32>
}

// PLAN: "function": "plan",
// PLAN-NEXT: "index_guard": "arithmetic",
// PLAN-NEXT: "keep_io_types": true,
// PLAN: "nodes": {
// PLAN: "add_mask": {
// PLAN-NEXT: "casts_in": 0,
// PLAN-NEXT: "class": "infer",
// PLAN-NEXT: "compute": "f16",
// PLAN-NEXT: "op_type": "Add",
// PLAN-NEXT: "rule": "between fp16 allow ops",
// PLAN-NEXT: "weight_bytes_saved": 16
// PLAN: "add_out": {
// PLAN-NEXT: "casts_in": 0,
// PLAN-NEXT: "class": "infer",
// PLAN-NEXT: "compute": "f32",
// PLAN-NEXT: "op_type": "Add",
// PLAN-NEXT: "rule": "propagated from deny node 'if0'",
// PLAN: "if0": {
// PLAN-NEXT: "casts_in": 0,
// PLAN-NEXT: "class": "clear",
// PLAN-NEXT: "compute": "f32",
// PLAN-NEXT: "op_type": "If",
// PLAN-NEXT: "rule": "propagated from deny node 'then_exp'",
// PLAN: "pv": {
// PLAN-NEXT: "accumulate": "f32",
// PLAN-NEXT: "casts_in": 0,
// PLAN-NEXT: "class": "allow",
// PLAN-NEXT: "compute": "f16",
// PLAN-NEXT: "op_type": "MatMul",
// PLAN-NEXT: "rule": "allow class of MatMul",
// PLAN-NEXT: "weight_bytes_saved": 0
// PLAN: "qk": {
// PLAN-NEXT: "accumulate": "f32",
// PLAN-NEXT: "casts_in": 1,
// PLAN-NEXT: "class": "allow",
// PLAN-NEXT: "compute": "f16",
// PLAN-NEXT: "op_type": "MatMul",
// PLAN-NEXT: "rule": "allow class of MatMul",
// PLAN-NEXT: "weight_bytes_saved": 32
// PLAN: "scale": {
// PLAN-NEXT: "casts_in": 1,
// PLAN-NEXT: "class": "infer",
// PLAN-NEXT: "compute": "f32",
// PLAN-NEXT: "op_type": "Mul",
// PLAN-NEXT: "rule": "constant 'big' out of fp16 range: 4 value(s) that overflow fp16 (max |v| = 100000)",
// PLAN: "shape_math": {
// PLAN-NEXT: "casts_in": 0,
// PLAN-NEXT: "class": "infer",
// PLAN-NEXT: "compute": "f32",
// PLAN-NEXT: "op_type": "Mul",
// PLAN-NEXT: "rule": "shape/index guard: feeds operand #1 of 'reshape0'",
// PLAN: "summary": {
// PLAN-NEXT: "casts":
// PLAN-NEXT: "contraction_flops_f16_share": 1,
// PLAN-NEXT: "findings": [
// PLAN-DAG: "kind": "mask",
// PLAN-DAG: "kind": "range",
// PLAN-DAG: "kind": "guard",
// PLAN: "nodes_f16":
// PLAN-NEXT: "nodes_total": 11,
// PLAN-NEXT: "weight_bytes_fp32": 112,
// PLAN-NEXT: "weight_bytes_mixed": 64
// PLAN: "version": 1

// NOIO: "keep_io_types": false,
