// The plan round trip must hold for ops without an ONNX node name too (the
// plan calls them "<OpType>#<n>") when their neighbours are named: feeding
// the plan back gives the same IR, rules included.
// RUN: mp-opt %s --mp-mixed-precision="plan=%t.json" -o %t.a.mlir
// RUN: mp-opt %s --mp-mixed-precision="policy=%t.json" -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// RUN: FileCheck %s < %t.json

func.func @unnamed(%x: tensor<2x4xf32>, %c: tensor<i1>) -> tensor<2x4xf32> {
  %0 = mp.if %c : tensor<i1> -> tensor<2x4xf32> {
    %e = mp.exp %x : tensor<2x4xf32> loc("then_exp")
    mp.yield %e : tensor<2x4xf32>
  } else {
    mp.yield %x : tensor<2x4xf32>
  } loc("if0")
  %1 = mp.relu %x : tensor<2x4xf32>
  %2 = mp.add %0, %1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
// CHECK: "Add#{{[0-9]+}}": {
// CHECK: "rule": "propagated from deny node 'if0'",
// CHECK: "Relu#{{[0-9]+}}": {
// CHECK: "if0": {
// CHECK: "then_exp": {
