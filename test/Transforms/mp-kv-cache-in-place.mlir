// RUN: mp-opt %s -split-input-file --mp-kv-cache-in-place="max-seq-len=16" | FileCheck %s

// The caches become 16-position inputs updated in place, a scalar fill
// level is appended, and the presents are the attention's cache results.
// CHECK-LABEL: func.func @decode(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x4x1x8xf32>
// CHECK-SAME: %[[PK:[^:]+]]: tensor<1x2x16x8xf32> {mp.name = "past_key", mp.updated_in_place = 1 : i64}
// CHECK-SAME: %[[PV:[^:]+]]: tensor<1x2x16x8xf32> {mp.name = "past_value", mp.updated_in_place = 2 : i64}
// CHECK-SAME: %[[LEN:[^:]+]]: tensor<i64> {mp.name = "past_sequence_length"}
// CHECK-SAME: -> (tensor<1x4x1x8xf32> {mp.name = "y"}, tensor<1x2x16x8xf32> {mp.in_place_of = 3 : i64, mp.name = "present_key"}, tensor<1x2x16x8xf32> {mp.in_place_of = 4 : i64, mp.name = "present_value"})
// CHECK-SAME: mp.kv_cache = {capacity = 16 : i64, length_input = "past_sequence_length", new_positions = 1 : i64}
// CHECK: %[[Y:[^,]+]], %[[NK:[^,]+]], %[[NV:[^,]+]], %{{[^ ]+}} = mp.attention %[[Q]], %{{.+}}, %{{.+}} past(%[[PK]], %[[PV]]) past_length %[[LEN]] {is_causal = true}
// CHECK-SAME: -> (tensor<1x4x1x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x4x1x16xf32>)
// CHECK: return %[[Y]], %[[NK]], %[[NV]]
func.func @decode(%q: tensor<1x4x1x8xf32> {mp.name = "q"}, %k: tensor<1x2x1x8xf32> {mp.name = "k"}, %v: tensor<1x2x1x8xf32> {mp.name = "v"}, %pk: tensor<1x2x?x8xf32> {mp.name = "past_key"}, %pv: tensor<1x2x?x8xf32> {mp.name = "past_value"}) -> (tensor<1x4x1x8xf32> {mp.name = "y"}, tensor<1x2x?x8xf32> {mp.name = "present_key"}, tensor<1x2x?x8xf32> {mp.name = "present_value"}) {
  %y, %nk, %nv, %s = mp.attention %q, %k, %v past(%pk, %pv) {is_causal = true} : (tensor<1x4x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> (tensor<1x4x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x4x1x?xf32>)
  return %y, %nk, %nv : tensor<1x4x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// -----

// Mixed precision: the cache is stored in the attention's f16, so the casts
// around it go and the graph's cache inputs and outputs become f16.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: %{{[^:]+}}: tensor<1x2x16x8xf16> {mp.name = "past_key", mp.updated_in_place = 1 : i64}
// CHECK-SAME: -> (tensor<1x4x1x8xf32> {mp.name = "y"}, tensor<1x2x16x8xf16> {mp.in_place_of = 3 : i64, mp.name = "present_key"}
// CHECK-NOT: mp.cast {{.*}}16x8
// CHECK: mp.attention
// CHECK-SAME: past_length
func.func @mixed(%q: tensor<1x4x1x8xf16> {mp.name = "q"}, %k: tensor<1x2x1x8xf16> {mp.name = "k"}, %v: tensor<1x2x1x8xf16> {mp.name = "v"}, %pk: tensor<1x2x?x8xf32> {mp.name = "past_key"}, %pv: tensor<1x2x?x8xf32> {mp.name = "past_value"}) -> (tensor<1x4x1x8xf32> {mp.name = "y"}, tensor<1x2x?x8xf32> {mp.name = "present_key"}, tensor<1x2x?x8xf32> {mp.name = "present_value"}) {
  %pk16 = mp.cast %pk {to = f16} : tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf16>
  %pv16 = mp.cast %pv {to = f16} : tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf16>
  %y, %nk, %nv, %s = mp.attention %q, %k, %v past(%pk16, %pv16) : (tensor<1x4x1x8xf16>, tensor<1x2x1x8xf16>, tensor<1x2x1x8xf16>, tensor<1x2x?x8xf16>, tensor<1x2x?x8xf16>) -> (tensor<1x4x1x8xf16>, tensor<1x2x?x8xf16>, tensor<1x2x?x8xf16>, tensor<1x4x1x?xf16>)
  %y32 = mp.cast %y {to = f32} : tensor<1x4x1x8xf16> -> tensor<1x4x1x8xf32>
  %nk32 = mp.cast %nk {to = f32} : tensor<1x2x?x8xf16> -> tensor<1x2x?x8xf32>
  %nv32 = mp.cast %nv {to = f32} : tensor<1x2x?x8xf16> -> tensor<1x2x?x8xf32>
  return %y32, %nk32, %nv32 : tensor<1x4x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// -----

// Trimmed from llama_dynamo specialized to a past of 15: the causal row of
// the one new position folds to every key, which holds at any fill level,
// and the padding comes from attention_mask.
// CHECK-LABEL: func.func @causal_row_of_one_position(
// CHECK-SAME: tensor<1x2x16x16xf32> {mp.name = "past_key_values.0.key", mp.updated_in_place = 1 : i64}
// CHECK-SAME: %[[LEN:[^:]*]]: tensor<i64> {mp.name = "past_sequence_length"}
// CHECK: %[[MASK:.*]] = mp.where
// CHECK: mp.attention {{.*}} mask %[[MASK]] past({{.*}}) past_length %[[LEN]]
func.func @causal_row_of_one_position(%q: tensor<1x4x1x16xf32> {mp.name = "q"}, %k: tensor<1x2x1x16xf32> {mp.name = "k"}, %am: tensor<1x16xi64> {mp.name = "attention_mask"}, %pk: tensor<1x2x15x16xf32> {mp.name = "past_key_values.0.key"}, %pv: tensor<1x2x15x16xf32> {mp.name = "past_key_values.0.value"}) -> (tensor<1x4x1x16xf32> {mp.name = "y"}, tensor<1x2x16x16xf32> {mp.name = "present.0.key"}, tensor<1x2x16x16xf32> {mp.name = "present.0.value"}) {
  %window = mp.constant dense<[[[[true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]]]]> : tensor<1x1x1x16xi1>
  %index = mp.constant dense<[[[[[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [0, 6], [0, 7], [0, 8], [0, 9], [0, 10], [0, 11], [0, 12], [0, 13], [0, 14], [0, 15]]]]]> : tensor<1x1x1x16x2xi64>
  %zero = mp.constant dense<0.000000e+00> : tensor<f32>
  %min = mp.constant dense<-3.40282347E+38> : tensor<f32>
  %keep = mp.cast %am {to = i1} : tensor<1x16xi64> -> tensor<1x16xi1>
  %padding = mp.gather_nd %keep, %index : (tensor<1x16xi1>, tensor<1x1x1x16x2xi64>) -> tensor<1x1x1x16xi1>
  %both = mp.and %window, %padding : (tensor<1x1x1x16xi1>, tensor<1x1x1x16xi1>) -> tensor<1x1x1x16xi1>
  %mask = mp.where %both, %zero, %min : (tensor<1x1x1x16xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x1x16xf32>
  %y, %nk, %nv, %s = mp.attention %q, %k, %k mask %mask past(%pk, %pv) : (tensor<1x4x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x1x1x16xf32>, tensor<1x2x15x16xf32>, tensor<1x2x15x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x4x1x16xf32>)
  return %y, %nk, %nv : tensor<1x4x1x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>
}
