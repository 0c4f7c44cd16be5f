// A plan records the index_guard it was made with and, fed back as a
// policy, reproduces its IR: with "exact" the head MatMul that feeds an
// argmax-gathered token stays fp32, with the default it computes in f16.
// RUN: mp-opt %s --mp-mixed-precision="plan=%t.exact.json index-guard=exact" -o %t.a.mlir
// RUN: mp-opt %s --mp-mixed-precision="policy=%t.exact.json" -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// RUN: FileCheck %s --check-prefix=EXACT < %t.exact.json
// RUN: mp-opt %s --mp-mixed-precision="plan=%t.default.json" -o %t.c.mlir
// RUN: mp-opt %s --mp-mixed-precision="policy=%t.default.json" -o %t.d.mlir
// RUN: diff %t.c.mlir %t.d.mlir
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.default.json

func.func @greedy(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %e: tensor<32x8xf32>) -> tensor<4x8xf32> {
  %0 = mp.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> loc("lm_head")
  %1 = mp.arg_max %0 {axis = -1 : i64, keepdims = false} : tensor<4x32xf32> -> tensor<4xi64> loc("argmax")
  %2 = mp.gather %e, %1 : (tensor<32x8xf32>, tensor<4xi64>) -> tensor<4x8xf32> loc("embed")
  return %2 : tensor<4x8xf32>
}

// EXACT: "index_guard": "exact",
// EXACT: "lm_head": {
// EXACT: "compute": "f32",
// EXACT: "rule": "shape/index guard: feeds operand #1 of 'embed'",

// DEFAULT: "index_guard": "arithmetic",
// DEFAULT: "lm_head": {
// DEFAULT: "compute": "f16",
// DEFAULT: "rule": "allow class of MatMul",
// DEFAULT: "findings": [
// DEFAULT: "'lm_head' follows its class although its output reaches operand #1 of 'embed' (index-guard=arithmetic; exact would keep it in its type)"
