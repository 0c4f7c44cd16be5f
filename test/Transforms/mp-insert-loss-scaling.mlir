// RUN: mp-opt %s --mp-build-training-step="loss=loss optimizer=sgd lr=0.1" --mp-insert-loss-scaling="mode=dynamic interval=100 growth=4" | FileCheck %s
// RUN: mp-opt %s --mp-build-training-step="loss=loss optimizer=adamw" --mp-insert-loss-scaling="mode=static scale=512" | FileCheck %s --check-prefix=STATIC
// RUN: mp-opt %s --mp-build-training-step="loss=loss optimizer=none" --mp-insert-loss-scaling | FileCheck %s --check-prefix=GRADS

// CHECK-LABEL: func.func @step
//  CHECK-SAME:   %[[W:[^:]+]]: tensor<4x4xf32> {mp.name = "w"}
//  CHECK-SAME:   %[[MW:[^:]+]]: tensor<4x4xf32> {mp.name = "w.momentum"}
//  CHECK-SAME:   %[[SCALE:[^:]+]]: tensor<f32> {mp.name = "loss_scale"}, %[[GOOD:[^:]+]]: tensor<i64> {mp.name = "loss_scale.good_steps"})
//  CHECK-SAME:   {mp.name = "loss_scale.next"}, tensor<i64> {mp.name = "loss_scale.good_steps.next"}, tensor<i1> {mp.name = "found_inf"})
// The backward pass starts from the scale.
//   CHECK-NOT:   mp.loss_seed
//       CHECK:   mp.reshape %[[SCALE]]
//       CHECK:   %[[DW:.+]] = mp.matmul
//       CHECK:   %[[U:.+]], %[[INF:.+]] = mp.unscale_and_check %[[SCALE]], %[[DW]] : tensor<f32>, tensor<4x4xf32> -> (tensor<4x4xf32>), tensor<i1>
//       CHECK:   %[[NW:.+]], %[[NM:.+]] = mp.sgd_update %[[W]], %[[U]], %[[MW]] skip %[[INF]]
//       CHECK:   %[[NS:.+]], %[[NG:.+]] = mp.update_loss_scale %[[SCALE]], %[[GOOD]], %[[INF]] {growth_factor = 4.000000e+00 : f32, growth_interval = 100 : i64}
//       CHECK:   return %{{.+}}, %[[NW]], %[[NM]], %[[NS]], %[[NG]], %[[INF]]

// STATIC-LABEL: func.func @step
//   STATIC-NOT:   mp.name = "loss_scale
//       STATIC:   %[[S:.+]] = mp.constant dense<5.120000e+02> : tensor<f32>
//       STATIC:   mp.reshape %[[S]]
//       STATIC:   %{{.+}}, %[[INF:.+]] = mp.unscale_and_check %[[S]]
//       STATIC:   mp.adamw_update {{.*}} skip %[[INF]]
// AdamW counts only the applied steps.
//       STATIC:   %[[INC:.+]] = mp.add %[[STEP:.+]], %{{.+}} {mp.step_increment}
//       STATIC:   %[[COUNT:.+]] = mp.where %[[INF]], %[[STEP]], %[[INC]]
//       STATIC:   return {{.*}}%[[COUNT]]
//   STATIC-NOT:   mp.update_loss_scale

// Without an optimizer the returned gradients are the unscaled ones.
// GRADS-LABEL: func.func @step
//       GRADS:   %[[U:.+]], %[[INF:.+]] = mp.unscale_and_check
//       GRADS:   return %{{.+}}, %[[U]], %{{.+}}, %{{.+}}, %[[INF]]
func.func @step(%x: tensor<2x4xf32> {mp.name = "x"}) -> (tensor<f32> {mp.name = "loss"}) {
  %w = mp.constant dense<0.25> : tensor<4x4xf32> loc("w")
  %y = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %loss = mp.reduce_mean %y {keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
