// mp-expose-values appends every float output of the entry function's
// top-level nodes to its results, in program order, named "RESULT:KEY" with
// KEY as plans name the node; the graph's own results keep their names.
// RUN: mp-opt %s -split-input-file --mp-expose-values | FileCheck %s

func.func @block(%x: tensor<2x4xf32> {mp.name = "x"}, %w: tensor<4x4xf32> {mp.name = "w"}) -> (tensor<2x4xf32> {mp.name = "y"}) {
  %0 = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("proj")
  %1 = mp.softmax %0 {axes = array<i64: 1>} : tensor<2x4xf32> loc("probs")
  %2 = mp.relu %1 : tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @block(
// CHECK-SAME: -> (tensor<2x4xf32> {mp.name = "y"}, tensor<2x4xf32> {mp.name = "0:proj"}, tensor<2x4xf32> {mp.name = "0:probs"}, tensor<2x4xf32> {mp.name = "0:Relu#2"})
// CHECK: %[[P:.+]] = mp.matmul
// CHECK: %[[S:.+]] = mp.softmax %[[P]]
// CHECK: %[[R:.+]] = mp.relu %[[S]]
// CHECK: return %[[R]], %[[P]], %[[S]], %[[R]]

// -----

// Every float output of a node (LayerNormalization's mean and inverse
// standard deviation too); integer outputs, constants and ops inside an
// mp.if's branches are not exposed (the If's results are).
func.func @outputs(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %c: tensor<i1>) -> tensor<2x4xf32> {
  %y, %mean, %inv = mp.layer_norm %x, %g {epsilon = 9.99999974E-6 : f32, stash_type = f32} : (tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>) loc("ln")
  %i = mp.arg_max %y {axis = 1 : i64, keepdims = true} : tensor<2x4xf32> -> tensor<2x1xi64> loc("am")
  %k = mp.constant dense<2.0> : tensor<2x4xf32> loc("two")
  %r = mp.if %c : tensor<i1> -> tensor<2x4xf32> {
    %e = mp.exp %y : tensor<2x4xf32> loc("branch_exp")
    mp.yield %e : tensor<2x4xf32>
  } else {
    mp.yield %k : tensor<2x4xf32>
  } loc("if0")
  return %r : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @outputs(
// CHECK-SAME: -> (tensor<2x4xf32>, tensor<2x4xf32> {mp.name = "0:ln"}, tensor<2x1xf32> {mp.name = "1:ln"}, tensor<2x1xf32> {mp.name = "2:ln"}, tensor<2x4xf32> {mp.name = "0:if0"})
// CHECK: %[[Y:[a-z_0-9]+]], %[[M:[a-z_0-9]+]], %[[I:[a-z_0-9]+]] = mp.layer_norm
// CHECK: %[[IF:.+]] = mp.if
// CHECK: return %[[IF]], %[[Y]], %[[M]], %[[I]], %[[IF]]
