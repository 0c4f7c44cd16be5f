// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg | FileCheck %s

// Broadcasting is in the indexing maps: size-1 dims read index 0.
// CHECK-DAG: #[[BCAST:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @broadcast_add(
// CHECK-SAME: %[[A:.+]]: tensor<4x3xf32>, %[[B:.+]]: tensor<1x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BCAST]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] :
// CHECK: arith.addf
func.func @broadcast_add(%a: tensor<4x3xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = mp.add %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// f16 data: computed in f32, rounded once.
// CHECK-LABEL: func.func @f16_exp(
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f16_exp(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = mp.exp %a : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// f16 matmul accumulates in f32 (the plan's accumulate type), then rounds.
// Loops (b, m, k, n): the reduction sits outside the contiguous n loop.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @f16_matmul(
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x8x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME: outs(%[[ACC]] : tensor<2x8x5xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f16_matmul(%a: tensor<2x8x4xf16>, %b: tensor<4x5xf16>) -> tensor<2x8x5xf16> {
  %0 = mp.matmul %a, %b : (tensor<2x8x4xf16>, tensor<4x5xf16>) -> tensor<2x8x5xf16>
  return %0 : tensor<2x8x5xf16>
}


// -----

// LSTM: the input projection of all steps at once, then a loop over time
// carrying h, c and the stacked states; the gates update h and c in place.
// CHECK-LABEL: func.func @lstm(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]{{.*}}outs(%{{.+}} : tensor<5x2x16xf32>)
// CHECK: %[[LOOP:.+]]:3 = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:.+]] = %{{.+}}, %[[C:.+]] = %{{.+}}, %[[ALL:.+]] = %{{.+}}) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[H]], %[[C]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: math.tanh
// CHECK: tensor.insert_slice %{{.+}} into %[[ALL]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK: scf.yield
func.func @lstm(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %y, %yh, %yc = mp.lstm %x, %w, %r {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %yh, %yc : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// Sums are marked reassoc so that LLVM may keep partial sums in vector
// lanes; max reductions need no flag (fmaximum is associative).
// CHECK-LABEL: func.func @reduce_sum(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
func.func @reduce_sum(%x: tensor<4x256xf32>) -> tensor<4x1xf32> {
  %0 = mp.reduce_sum %x {axes = array<i64: 1>} : tensor<4x256xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}
