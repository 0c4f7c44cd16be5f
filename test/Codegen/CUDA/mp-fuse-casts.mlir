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
