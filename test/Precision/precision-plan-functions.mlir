// A module with several functions: the plan is one object whose node keys
// carry "@function:" prefixes, and it is still a valid policy that
// reproduces the same IR.
// RUN: mp-opt %s --mp-mixed-precision="plan=%t.json" -o %t.a.mlir
// RUN: mp-opt %s --mp-mixed-precision="policy=%t.json" -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// RUN: FileCheck %s < %t.json

func.func @f1(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %0 = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm0")
  return %0 : tensor<2x4xf32>
}
func.func @f2(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = mp.exp %x : tensor<2x4xf32> loc("exp0")
  return %0 : tensor<2x4xf32>
}
// CHECK: "@f1:mm0": {
// CHECK: "compute": "f16"
// CHECK: "@f2:exp0": {
// CHECK: "compute": "f32"
// CHECK: "summaries": {
// CHECK: "f1": {
// CHECK: "f2": {
