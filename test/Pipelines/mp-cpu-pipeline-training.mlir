// The loss-scaling and optimizer ops lowered through --mp-cpu-pipeline and
// run. Expected values by hand from the update rules in MpTrainingOps.td.
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

func.func @print(%t: tensor<2xf32>) {
  %u = tensor.cast %t : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @printFlag(%t: tensor<i1>) {
  %f = mp.cast %t {to = f32} : tensor<i1> -> tensor<f32>
  %u = tensor.cast %f : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %scale = arith.constant dense<4.0> : tensor<f32>
  %g = arith.constant dense<[2.0, -8.0]> : tensor<2xf16>
  %nan = arith.constant dense<[1.0, 0x7E00]> : tensor<2xf16>
  %inf = arith.constant dense<[0x7F800000, 1.0]> : tensor<2xf32>
  // CHECK: [0.5,  -2]
  // CHECK: 0
  %u, %bad = mp.unscale_and_check %scale, %g : tensor<f32>, tensor<2xf16> -> (tensor<2xf32>), tensor<i1>
  call @print(%u) : (tensor<2xf32>) -> ()
  call @printFlag(%bad) : (tensor<i1>) -> ()
  // A NaN in one gradient, an inf in another: found either way.
  // CHECK: 1
  // CHECK: 1
  %u1:2, %bad1 = mp.unscale_and_check %scale, %g, %nan : tensor<f32>, tensor<2xf16>, tensor<2xf16> -> (tensor<2xf32>, tensor<2xf32>), tensor<i1>
  call @printFlag(%bad1) : (tensor<i1>) -> ()
  %u2, %bad2 = mp.unscale_and_check %scale, %inf : tensor<f32>, tensor<2xf32> -> (tensor<2xf32>), tensor<i1>
  call @printFlag(%bad2) : (tensor<i1>) -> ()

  // The third finite step grows the scale (4 -> 8) and restarts the count;
  // an overflow halves it (4 -> 2).
  // CHECK: 8
  // CHECK: 0
  // CHECK: 2
  %good = arith.constant dense<2> : tensor<i64>
  %s1, %n1 = mp.update_loss_scale %scale, %good, %bad {growth_interval = 3 : i64} : tensor<f32>, tensor<i64>, tensor<i1>
  %n1f = mp.cast %n1 {to = f32} : tensor<i64> -> tensor<f32>
  %s1u = tensor.cast %s1 : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%s1u) : (tensor<*xf32>) -> ()
  %n1u = tensor.cast %n1f : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%n1u) : (tensor<*xf32>) -> ()
  %s2, %n2 = mp.update_loss_scale %scale, %good, %bad2 {growth_interval = 3 : i64} : tensor<f32>, tensor<i64>, tensor<i1>
  %s2u = tensor.cast %s2 : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%s2u) : (tensor<*xf32>) -> ()

  // SGD: buf = g, p - 0.1 * g; skipped: p unchanged.
  // CHECK: [0.95,  2.2]
  // CHECK: [1,  2]
  %p = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %zero = arith.constant dense<0.0> : tensor<2xf32>
  %p1, %b1 = mp.sgd_update %p, %u, %zero skip %bad {lr = 0.1 : f32, momentum = 0.9 : f32} : tensor<2xf32>, tensor<i1>
  call @print(%p1) : (tensor<2xf32>) -> ()
  %p2, %b2 = mp.sgd_update %p, %u, %zero skip %bad2 {lr = 0.1 : f32, momentum = 0.9 : f32} : tensor<2xf32>, tensor<i1>
  call @print(%p2) : (tensor<2xf32>) -> ()

  // AdamW's first step moves each weight by lr * sign(g) (bias-corrected
  // m / sqrt(v) = g / |g|), after decay by 1 - lr * wd.
  // CHECK: [0.84,  1.98]
  %step = arith.constant dense<0.0> : tensor<f32>
  %p3, %m3, %v3 = mp.adamw_update %p, %u, %zero, %zero, %step {lr = 0.1 : f32, weight_decay = 0.6 : f32} : tensor<2xf32>, tensor<f32>
  call @print(%p3) : (tensor<2xf32>) -> ()
  return
}
