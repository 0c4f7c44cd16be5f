// RUN: mp-opt %s -split-input-file | mp-opt | FileCheck %s
// RUN: mp-opt %s -split-input-file -canonicalize | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @round_trip
//       CHECK:   %[[U:.+]]:2, %[[INF:.+]] = mp.unscale_and_check %{{.+}}, %{{.+}}, %{{.+}} : tensor<f32>, tensor<4xf16>, tensor<2x3xf32> -> (tensor<4xf32>, tensor<2x3xf32>), tensor<i1>
//       CHECK:   mp.update_loss_scale %{{.+}}, %{{.+}}, %[[INF]] {growth_interval = 3 : i64} : tensor<f32>, tensor<i64>, tensor<i1>
//       CHECK:   mp.sgd_update %{{.+}}, %[[U]]#0, %{{.+}} skip %[[INF]] {lr = 1.000000e-01 : f32, momentum = 0.899999976 : f32} : tensor<4xf32>, tensor<i1>
//       CHECK:   mp.adamw_update %{{.+}}, %[[U]]#0, %{{.+}}, %{{.+}}, %{{.+}} {lr = 1.000000e-03 : f32} : tensor<4xf32>, tensor<f32>
func.func @round_trip(%s: tensor<f32>, %n: tensor<i64>, %g: tensor<4xf16>, %h: tensor<2x3xf32>,
                      %p: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<f32>)
    -> (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>) {
  %u:2, %inf = mp.unscale_and_check %s, %g, %h : tensor<f32>, tensor<4xf16>, tensor<2x3xf32> -> (tensor<4xf32>, tensor<2x3xf32>), tensor<i1>
  %ns, %nn = mp.update_loss_scale %s, %n, %inf {growth_interval = 3 : i64} : tensor<f32>, tensor<i64>, tensor<i1>
  %p1, %m1 = mp.sgd_update %p, %u#0, %m skip %inf {lr = 0.1 : f32, momentum = 0.9 : f32} : tensor<4xf32>, tensor<i1>
  %p2, %m2, %v2 = mp.adamw_update %p, %u#0, %m, %v, %t {lr = 0.001 : f32} : tensor<4xf32>, tensor<f32>
  return %ns, %nn, %p1, %p2, %v2, %u#1 : tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>
}

// -----

// A gradient widened to f32 before the unscale is read in f16: the op
// widens it itself.
// CANON-LABEL: func.func @absorb_widening_cast
//  CANON-SAME:   (%[[S:.+]]: tensor<f32>, %[[G:.+]]: tensor<8xf16>)
//   CANON-NOT:   mp.cast
//       CANON:   mp.unscale_and_check %[[S]], %[[G]] : tensor<f32>, tensor<8xf16> -> (tensor<8xf32>), tensor<i1>
func.func @absorb_widening_cast(%s: tensor<f32>, %g: tensor<8xf16>) -> (tensor<8xf32>, tensor<i1>) {
  %w = mp.cast %g {to = f32} : tensor<8xf16> -> tensor<8xf32>
  %u, %inf = mp.unscale_and_check %s, %w : tensor<f32>, tensor<8xf32> -> (tensor<8xf32>), tensor<i1>
  return %u, %inf : tensor<8xf32>, tensor<i1>
}

// -----

// Constant state folds: overflow backs off (and clamps at min), the
// interval-th finite step grows (and clamps at max).
// CANON-LABEL: func.func @fold_update
//   CANON-DAG:   %[[HALF:.+]] = mp.constant dense<5.120000e+02> : tensor<f32>
//   CANON-DAG:   %[[ZERO:.+]] = mp.constant dense<0> : tensor<i64>
//   CANON-DAG:   %[[MAX:.+]] = mp.constant dense<1.500000e+03> : tensor<f32>
//   CANON-DAG:   %[[TWO:.+]] = mp.constant dense<2> : tensor<i64>
//       CANON:   return %[[HALF]], %[[ZERO]], %[[MAX]], %[[ZERO]], %{{.+}}, %[[TWO]]
func.func @fold_update() -> (tensor<f32>, tensor<i64>, tensor<f32>, tensor<i64>, tensor<f32>, tensor<i64>) {
  %s = mp.constant dense<1024.0> : tensor<f32>
  %n = mp.constant dense<1> : tensor<i64>
  %t = mp.constant dense<true> : tensor<i1>
  %f = mp.constant dense<false> : tensor<i1>
  %a, %b = mp.update_loss_scale %s, %n, %t : tensor<f32>, tensor<i64>, tensor<i1>
  %c, %d = mp.update_loss_scale %s, %n, %f {growth_interval = 2 : i64, max_scale = 1500.0 : f32} : tensor<f32>, tensor<i64>, tensor<i1>
  %e, %g = mp.update_loss_scale %s, %n, %f {growth_interval = 3 : i64} : tensor<f32>, tensor<i64>, tensor<i1>
  return %a, %b, %c, %d, %e, %g : tensor<f32>, tensor<i64>, tensor<f32>, tensor<i64>, tensor<f32>, tensor<i64>
}
