// RUN: mp-opt %s --mp-fuse-casts --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An f32 -> f16 cast read by a row sum and by an elementwise op: both read
// the f32 source and round it themselves; the cast and its buffer are gone.
// CHECK-LABEL: func.func @cast_with_two_consumers
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x64xf32>
//   CHECK-NOT:   tensor<4x64xf16>) outs
//       CHECK:   linalg.generic {{.*}} ins(%[[X]] : tensor<4x64xf32>) outs(%{{.+}} : tensor<4xf32>)
//       CHECK:     arith.truncf
//       CHECK:   linalg.generic {{.*}} ins(%[[X]] : tensor<4x64xf32>) outs(%{{.+}} : tensor<4x64xf16>)
//       CHECK:     arith.truncf
//       CHECK:     arith.mulf
func.func @cast_with_two_consumers(%x: tensor<4x64xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x64xf16>) {
  %e = tensor.empty() : tensor<4x64xf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xf32>) outs(%e : tensor<4x64xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x64xf16>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x64xf16>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f16, %o: f32):
    %w = arith.extf %a : f16 to f32
    %r = arith.addf %w, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x64xf16>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x64xf16>) outs(%e2 : tensor<4x64xf16>) {
  ^bb0(%a: f16, %o: f16):
    %m = arith.mulf %a, %a : f16
    linalg.yield %m : f16
  } -> tensor<4x64xf16>
  return %s, %sq : tensor<4xf32>, tensor<4x64xf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Not a cast (it computes): with two consumers it stays.
// CHECK-LABEL: func.func @not_a_cast
// CHECK-COUNT-3: linalg.generic
func.func @not_a_cast(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x64xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x64xf32>
  return %p, %q : tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

#k = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#kstat = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, 0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rot = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 8) mod 16)>

// qwen3_ts's key at batch 1 (TorchScript export, mixed), trimmed: the
// per-head RMSNorm's scaling, then the rotary reading it at d and at
// (d + 8) mod 16. Both uses are the rotary's: the scaling fuses into it,
// its body once per operand, and no tensor of the scaled key is left.
// CHECK-LABEL: func.func @read_twice_by_one_op
//  CHECK-SAME:   (%[[K:.+]]: tensor<1x1x2x16xf32>, %[[S:.+]]: tensor<1x1x2x1xf32>
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[K]], %[[S]], %[[K]]
//       CHECK:     math.sqrt
//       CHECK:     math.sqrt
//       CHECK:     linalg.index 3
//   CHECK-NOT:   linalg.generic
func.func @read_twice_by_one_op(%k: tensor<1x1x2x16xf32>, %s: tensor<1x1x2x1xf32>) -> tensor<1x2x1x16xf32> {
  %n = arith.constant 1.600000e+01 : f32
  %eps = arith.constant 9.99999997E-7 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<1x2x1x16xf32>
  %scaled = linalg.generic {indexing_maps = [#k, #kstat, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k, %s : tensor<1x1x2x16xf32>, tensor<1x1x2x1xf32>) outs(%e : tensor<1x2x1x16xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.divf %sum, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.sqrt %1 : f32
    %3 = arith.divf %one, %2 : f32
    %4 = arith.mulf %in, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<1x2x1x16xf32>
  %e2 = tensor.empty() : tensor<1x2x1x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #rot, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%scaled, %scaled : tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32>) outs(%e2 : tensor<1x2x1x16xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %d = linalg.index 3 : index
    %neg = arith.negf %y : f32
    %first = arith.cmpi ult, %d, %c8 : index
    %h = arith.select %first, %neg, %y : f32
    %sum = arith.addf %x, %h : f32
    linalg.yield %sum : f32
  } -> tensor<1x2x1x16xf32>
  return %r : tensor<1x2x1x16xf32>
}
