// RUN: mp-opt %s -split-input-file --mp-build-training-step="loss=loss optimizer=sgd lr=0.5 momentum=0.9" | FileCheck %s
// RUN: mp-opt %s -split-input-file --mp-build-training-step="loss=loss optimizer=adamw lr=0.01" | FileCheck %s --check-prefix=ADAMW
// RUN: mp-opt %s -split-input-file --mp-build-training-step="loss=loss optimizer=none" | FileCheck %s --check-prefix=GRADS
// RUN: mp-opt %s -split-input-file --mp-build-training-step="loss=loss" -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// A linear layer with an MSE loss. The initializers (NameLoc constants)
// become fp32 arguments; the Constant node (fused location) stays.
// CHECK-LABEL: func.func @linear
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32> {mp.name = "x"}, %[[W:.+]]: tensor<3x4xf32> {mp.name = "w"}, %[[B:.+]]: tensor<4xf32> {mp.name = "b"}, %[[MW:.+]]: tensor<3x4xf32> {mp.name = "w.momentum"}, %[[MB:.+]]: tensor<4xf32> {mp.name = "b.momentum"})
//  CHECK-SAME:   -> (tensor<f32> {mp.name = "loss"}, tensor<3x4xf32> {mp.name = "w.next"}, tensor<4xf32> {mp.name = "b.next"}, tensor<3x4xf32> {mp.name = "w.momentum.next"}, tensor<4xf32> {mp.name = "b.momentum.next"})
//       CHECK:   %[[Y:.+]] = mp.matmul %[[X]], %[[W]]
//       CHECK:   %[[SEED:.+]] = mp.constant {mp.loss_seed} dense<1.000000e+00> : tensor<f32>
// db: dY summed over the broadcast batch dim (the Add comes first, backwards).
//       CHECK:   %[[DB:.+]] = mp.reduce_sum %[[DY:.+]] {axes = array<i64: 0>} : tensor<2x4xf32> -> tensor<1x4xf32>
//       CHECK:   %[[DBR:.+]] = mp.reshape %[[DB]]
// dW = X^T dY
//       CHECK:   %[[XT:.+]] = mp.transpose %[[X]] {perm = array<i64: 1, 0>}
//       CHECK:   %[[DW:.+]] = mp.matmul %[[XT]], %[[DY]] : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
//       CHECK:   %[[NW:.+]], %[[NMW:.+]] = mp.sgd_update %[[W]], %[[DW]], %[[MW]] {lr = 5.000000e-01 : f32, momentum = 0.899999976 : f32}
//       CHECK:   %[[NB:.+]], %[[NMB:.+]] = mp.sgd_update %[[B]], %[[DBR]], %[[MB]]
//       CHECK:   return %{{.+}}, %[[NW]], %[[NB]], %[[NMW]], %[[NMB]]

// ADAMW-LABEL: func.func @linear
//  ADAMW-SAME:   %{{.+}}: tensor<f32> {mp.name = "adamw.step"}, %{{.+}}: tensor<3x4xf32> {mp.name = "w.exp_avg"}, %{{.+}}: tensor<3x4xf32> {mp.name = "w.exp_avg_sq"}
//       ADAMW:   mp.adamw_update
//       ADAMW:   mp.adamw_update
//       ADAMW:   %[[NEXT:.+]] = mp.add %{{.+}}, %{{.+}} {mp.step_increment}
//       ADAMW:   return {{.*}}%[[NEXT]]

// GRADS-LABEL: func.func @linear
//  GRADS-SAME:   -> (tensor<f32> {mp.name = "loss"}, tensor<3x4xf32> {mp.name = "w.grad"}, tensor<4xf32> {mp.name = "b.grad"})
//   GRADS-NOT:   mp.sgd_update
func.func @linear(%x: tensor<2x3xf32> {mp.name = "x"}) -> (tensor<f32> {mp.name = "loss"}, tensor<2x4xf32> {mp.name = "y"}) {
  %w = mp.constant dense<0.5> : tensor<3x4xf32> loc("w")
  %b = mp.constant dense<0.1> : tensor<4xf32> loc("b")
  %t = mp.constant dense<1.0> : tensor<2x4xf32> loc(fused<"Constant">["target"])
  %y0 = mp.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %y = mp.add %y0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %d = mp.sub %y, %t : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %d2 = mp.mul %d, %d : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %loss = mp.reduce_mean %d2 {keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %loss, %y : tensor<f32>, tensor<2x4xf32>
}

// -----

// Backward ops are located at "NODE.grad" without the forward op type, so
// precision policies classify them by what they are.
// LOC-LABEL: func.func @grad_locations
//       LOC:   mp.neg %{{.+}} : tensor<4xf32> loc(#[[FWD:loc[0-9]+]])
//       LOC:   mp.neg %{{.+}} : tensor<4xf32> loc(#[[BWD:loc[0-9]+]])
//   LOC-DAG:   #[[FWD]] = loc(fused<"Neg">
//   LOC-DAG:   #[[BWD]] = loc("act.grad"
func.func @grad_locations() -> (tensor<f32> {mp.name = "loss"}) {
  %w = mp.constant dense<0.5> : tensor<4xf32> loc("w")
  %n = mp.neg %w : tensor<4xf32> loc(fused<"Neg">["act"])
  %loss = mp.reduce_sum %n {keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
