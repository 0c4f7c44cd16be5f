// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg | FileCheck %s

// Rotary embedding's rotate-half of llama_ts's key (TorchScript export,
// mixed), trimmed: concat(-x[..., 8:], x[..., :8]) over the head dim. One
// elementwise generic reads x at (d + 8) mod 16 and negates the first
// half, so it fuses into the rotary op that reads it.
// CHECK-DAG: #[[ROT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 8) mod 16)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @rotate_half
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x2x1x16xf16>)
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   linalg.generic {indexing_maps = [#[[ROT]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x2x1x16xf16>)
//       CHECK:   ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
//       CHECK:     %[[D:.+]] = linalg.index 3 : index
//       CHECK:     %[[WIDE:.+]] = arith.extf %[[IN]] : f16 to f32
//       CHECK:     %[[NEGF:.+]] = arith.negf %[[WIDE]] : f32
//       CHECK:     %[[NEG:.+]] = arith.truncf %[[NEGF]] : f32 to f16
//       CHECK:     %[[FIRST:.+]] = arith.cmpi ult, %[[D]], %{{.+}} : index
//       CHECK:     %[[R:.+]] = arith.select %[[FIRST]], %[[NEG]], %[[IN]] : f16
//       CHECK:     linalg.yield %[[R]] : f16
//   CHECK-NOT:   tensor.insert_slice
func.func @rotate_half(%x: tensor<1x2x1x16xf16>) -> tensor<1x2x1x16xf16> {
  %s0 = mp.constant dense<0> : tensor<1xi64>
  %s8 = mp.constant dense<8> : tensor<1xi64>
  %end = mp.constant dense<9223372036854775807> : tensor<1xi64>
  %axis = mp.constant dense<3> : tensor<1xi64>
  %step = mp.constant dense<1> : tensor<1xi64>
  %x1 = mp.slice %x, %s0, %s8 axes %axis steps %step : (tensor<1x2x1x16xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x8xf16>
  %x2 = mp.slice %x, %s8, %end axes %axis steps %step : (tensor<1x2x1x16xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x8xf16>
  %n = mp.neg %x2 : tensor<1x2x1x8xf16>
  %r = mp.concat %n, %x1 {axis = -1 : i64} : (tensor<1x2x1x8xf16>, tensor<1x2x1x8xf16>) -> tensor<1x2x1x16xf16>
  return %r : tensor<1x2x1x16xf16>
}

// -----

// Halves of two different tensors: inserts into one tensor.
// CHECK-LABEL: func.func @halves_of_two_tensors
//       CHECK:   tensor.insert_slice
//       CHECK:   tensor.insert_slice
func.func @halves_of_two_tensors(%x: tensor<1x16xf32>, %y: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %s0 = mp.constant dense<0> : tensor<1xi64>
  %s8 = mp.constant dense<8> : tensor<1xi64>
  %end = mp.constant dense<16> : tensor<1xi64>
  %axis = mp.constant dense<1> : tensor<1xi64>
  %x1 = mp.slice %x, %s0, %s8 axes %axis : (tensor<1x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8xf32>
  %y2 = mp.slice %y, %s8, %end axes %axis : (tensor<1x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8xf32>
  %r = mp.concat %y2, %x1 {axis = 1 : i64} : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x16xf32>
  return %r : tensor<1x16xf32>
}

// -----

// The same half twice is no rotation (the pieces would have to start
// where each other ends): inserts.
// CHECK-LABEL: func.func @same_half_twice
//       CHECK:   tensor.insert_slice
//       CHECK:   tensor.insert_slice
func.func @same_half_twice(%x: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %s0 = mp.constant dense<0> : tensor<1xi64>
  %s8 = mp.constant dense<8> : tensor<1xi64>
  %axis = mp.constant dense<1> : tensor<1xi64>
  %x1 = mp.slice %x, %s0, %s8 axes %axis : (tensor<1x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8xf32>
  %n = mp.neg %x1 : tensor<1x8xf32>
  %r = mp.concat %n, %x1 {axis = 1 : i64} : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x16xf32>
  return %r : tensor<1x16xf32>
}

// -----

// GLM's interleaved rotary of glm_ts's query (TorchScript export, mixed),
// trimmed: the rotated half's odd elements negated and its even ones,
// each unsqueezed, concatenated on the new last axis and reshaped back.
// One generic over the merged shape picks piece d mod 2 at d floordiv 2,
// so it fuses into the rotary op that reads it; no concat, no inserts.
// CHECK-DAG: #[[HALF:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 floordiv 2)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @interleave
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   %[[NEG:.+]] = linalg.generic
//       CHECK:     arith.negf
//       CHECK:   linalg.generic {indexing_maps = [#[[HALF]], #[[HALF]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[NEG]], %{{.+}} : tensor<1x4x1x4xf16>, tensor<1x4x1x4xf16>) outs(%{{.+}} : tensor<1x4x1x8xf16>)
//       CHECK:   ^bb0(%[[ODD:.+]]: f16, %[[EVEN:.+]]: f16, %{{.+}}: f16):
//       CHECK:     %[[D:.+]] = linalg.index 3 : index
//       CHECK:     %[[SLOT:.+]] = arith.remui %[[D]], %{{.+}} : index
//       CHECK:     %[[FIRST:.+]] = arith.cmpi eq, %[[SLOT]], %{{.+}} : index
//       CHECK:     %[[R:.+]] = arith.select %[[FIRST]], %[[ODD]], %[[EVEN]] : f16
//       CHECK:     linalg.yield %[[R]] : f16
//   CHECK-NOT:   tensor.insert_slice
//   CHECK-NOT:   tensor.collapse_shape
func.func @interleave(%q: tensor<1x4x1x16xf16>) -> tensor<1x4x1x8xf16> {
  %s0 = mp.constant dense<0> : tensor<1xi64>
  %s1 = mp.constant dense<1> : tensor<1xi64>
  %s8 = mp.constant dense<8> : tensor<1xi64>
  %end = mp.constant dense<9223372036854775807> : tensor<1xi64>
  %axis = mp.constant dense<3> : tensor<1xi64>
  %step1 = mp.constant dense<1> : tensor<1xi64>
  %step2 = mp.constant dense<2> : tensor<1xi64>
  %shape = mp.constant dense<[1, 4, 1, -1]> : tensor<4xi64>
  %rot = mp.slice %q, %s0, %s8 axes %axis steps %step1 : (tensor<1x4x1x16xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4x1x8xf16>
  %even = mp.slice %rot, %s0, %end axes %axis steps %step2 : (tensor<1x4x1x8xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4x1x4xf16>
  %odd = mp.slice %rot, %s1, %end axes %axis steps %step2 : (tensor<1x4x1x8xf16>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4x1x4xf16>
  %neg = mp.neg %odd : tensor<1x4x1x4xf16>
  %a = mp.unsqueeze %neg {axes = array<i64: -1>} : tensor<1x4x1x4xf16> -> tensor<1x4x1x4x1xf16>
  %b = mp.unsqueeze %even {axes = array<i64: -1>} : tensor<1x4x1x4xf16> -> tensor<1x4x1x4x1xf16>
  %c = mp.concat %a, %b {axis = -1 : i64} : (tensor<1x4x1x4x1xf16>, tensor<1x4x1x4x1xf16>) -> tensor<1x4x1x4x2xf16>
  %r = mp.reshape %c, %shape : (tensor<1x4x1x4x2xf16>, tensor<4xi64>) -> tensor<1x4x1x8xf16>
  return %r : tensor<1x4x1x8xf16>
}

// -----

// The same pieces stacked but not merged back: inserts.
// CHECK-LABEL: func.func @stacked_not_merged
//       CHECK:   tensor.insert_slice
//       CHECK:   tensor.insert_slice
func.func @stacked_not_merged(%x: tensor<1x4xf32>, %y: tensor<1x4xf32>) -> tensor<1x4x2xf32> {
  %a = mp.unsqueeze %x {axes = array<i64: -1>} : tensor<1x4xf32> -> tensor<1x4x1xf32>
  %b = mp.unsqueeze %y {axes = array<i64: -1>} : tensor<1x4xf32> -> tensor<1x4x1xf32>
  %c = mp.concat %a, %b {axis = -1 : i64} : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x2xf32>
  return %c : tensor<1x4x2xf32>
}
