// RUN: mp-opt %s -split-input-file -verify-diagnostics --mp-kv-cache-in-place="max-seq-len=16"
// RUN: not mp-opt %s -split-input-file --mp-kv-cache-in-place 2>&1 | FileCheck %s --check-prefix=NOLEN

// NOLEN: mp-kv-cache-in-place: max-seq-len must be positive, got 0

// A past cache that is computed in the graph has no caller buffer to update.
func.func @computed_past(%q: tensor<1x2x1x8xf32> {mp.name = "q"}, %pk: tensor<1x2x?x8xf32> {mp.name = "past_key"}, %pv: tensor<1x2x?x8xf32> {mp.name = "past_value"}) -> (tensor<1x2x1x8xf32> {mp.name = "y"}, tensor<1x2x?x8xf32> {mp.name = "present_key"}, tensor<1x2x?x8xf32> {mp.name = "present_value"}) {
  %scaled = mp.neg %pk : tensor<1x2x?x8xf32>
  // expected-error @+1 {{cannot keep this attention's KV cache in place: its past cache is computed, not a graph input}}
  %y, %nk, %nv, %s = mp.attention %q, %q, %q past(%scaled, %pv) : (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> (tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x1x?xf32>)
  return %y, %nk, %nv : tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// -----

// The present cache is read by something else than the graph's outputs.
func.func @present_used(%q: tensor<1x2x1x8xf32> {mp.name = "q"}, %pk: tensor<1x2x?x8xf32> {mp.name = "past_key"}, %pv: tensor<1x2x?x8xf32> {mp.name = "past_value"}) -> (tensor<1x2x1x8xf32> {mp.name = "y"}, tensor<1x2x?x8xf32> {mp.name = "present_key"}, tensor<1x2x?x8xf32> {mp.name = "present_value"}) {
  // expected-error @+1 {{its present cache is not only a graph output}}
  %y, %nk, %nv, %s = mp.attention %q, %q, %q past(%pk, %pv) : (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> (tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x1x?xf32>)
  %twice = mp.add %nk, %nk : (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %y, %twice, %nv : tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// -----

// Cache dims other than the sequence must be known.
func.func @dynamic_batch(%q: tensor<?x2x1x8xf32> {mp.name = "q"}, %pk: tensor<?x2x?x8xf32> {mp.name = "past_key"}, %pv: tensor<?x2x?x8xf32> {mp.name = "past_value"}) -> (tensor<?x2x1x8xf32> {mp.name = "y"}, tensor<?x2x?x8xf32> {mp.name = "present_key"}, tensor<?x2x?x8xf32> {mp.name = "present_value"}) {
  // expected-error @+1 {{its cache dims other than the sequence are dynamic (pin the inputs' shapes)}}
  %y, %nk, %nv, %s = mp.attention %q, %q, %q past(%pk, %pv) : (tensor<?x2x1x8xf32>, tensor<?x2x1x8xf32>, tensor<?x2x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> (tensor<?x2x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x1x?xf32>)
  return %y, %nk, %nv : tensor<?x2x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}

// -----

// The fill level's name must be free.
// expected-error @+1 {{mp-kv-cache-in-place: the graph has an input named 'past_sequence_length' already; choose another length-input}}
func.func @name_taken(%q: tensor<1x2x1x8xf32> {mp.name = "q"}, %pk: tensor<1x2x?x8xf32> {mp.name = "past_key"}, %pv: tensor<1x2x?x8xf32> {mp.name = "past_value"}, %n: tensor<i64> {mp.name = "past_sequence_length"}) -> (tensor<1x2x1x8xf32> {mp.name = "y"}, tensor<1x2x?x8xf32> {mp.name = "present_key"}, tensor<1x2x?x8xf32> {mp.name = "present_value"}) {
  %y, %nk, %nv, %s = mp.attention %q, %q, %q past(%pk, %pv) : (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> (tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x1x?xf32>)
  return %y, %nk, %nv : tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// -----

// Nothing to convert.
// expected-error @+1 {{mp-kv-cache-in-place: no mp.attention reads a KV cache (past key/value) from the graph inputs; fuse attention first (mp-fuse-attention) or compile without max-seq-len}}
func.func @no_cache(%q: tensor<1x2x1x8xf32> {mp.name = "q"}) -> (tensor<1x2x1x8xf32> {mp.name = "y"}) {
  %y, %nk, %nv, %s = mp.attention %q, %q, %q : (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>) -> (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x1xf32>)
  return %y : tensor<1x2x1x8xf32>
}

// -----

// Trimmed from mistral_dynamo (sliding window 5) specialized to a past of 15:
// the window folded into a constant for a query at position 15, not at the
// fill level.
func.func @sliding_window(%q: tensor<1x4x1x16xf32> {mp.name = "q"}, %k: tensor<1x2x1x16xf32> {mp.name = "k"}, %am: tensor<1x16xi64> {mp.name = "attention_mask"}, %pk: tensor<1x2x15x16xf32> {mp.name = "past_key_values.0.key"}, %pv: tensor<1x2x15x16xf32> {mp.name = "past_key_values.0.value"}) -> (tensor<1x4x1x16xf32> {mp.name = "y"}, tensor<1x2x16x16xf32> {mp.name = "present.0.key"}, tensor<1x2x16x16xf32> {mp.name = "present.0.value"}) {
  %window = mp.constant dense<[[[[false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true]]]]> : tensor<1x1x1x16xi1>
  %index = mp.constant dense<[[[[[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [0, 6], [0, 7], [0, 8], [0, 9], [0, 10], [0, 11], [0, 12], [0, 13], [0, 14], [0, 15]]]]]> : tensor<1x1x1x16x2xi64>
  %zero = mp.constant dense<0.000000e+00> : tensor<f32>
  %min = mp.constant dense<-3.40282347E+38> : tensor<f32>
  %keep = mp.cast %am {to = i1} : tensor<1x16xi64> -> tensor<1x16xi1>
  %padding = mp.gather_nd %keep, %index : (tensor<1x16xi1>, tensor<1x1x1x16x2xi64>) -> tensor<1x1x1x16xi1>
  %both = mp.and %window, %padding : (tensor<1x1x1x16xi1>, tensor<1x1x1x16xi1>) -> tensor<1x1x1x16xi1>
  %mask = mp.where %both, %zero, %min : (tensor<1x1x1x16xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x1x16xf32>
  // expected-error @+1 {{its mask folds to positions computed from the cache length (a sliding window, or causal rows of several new positions)}}
  %y, %nk, %nv, %s = mp.attention %q, %k, %k mask %mask past(%pk, %pv) : (tensor<1x4x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x1x1x16xf32>, tensor<1x2x15x16xf32>, tensor<1x2x15x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x4x1x16xf32>)
  return %y, %nk, %nv : tensor<1x4x1x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>
}

// -----

// A mask over a pinned past of 7 and one new position: 8 keys, not the 16
// of the buffer.
func.func @mask_shorter_than_buffer(%q: tensor<1x4x1x16xf32> {mp.name = "q"}, %k: tensor<1x2x1x16xf32> {mp.name = "k"}, %mask: tensor<1x1x1x8xf32> {mp.name = "mask"}, %pk: tensor<1x2x7x16xf32> {mp.name = "past_key"}, %pv: tensor<1x2x7x16xf32> {mp.name = "past_value"}) -> (tensor<1x4x1x16xf32> {mp.name = "y"}, tensor<1x2x8x16xf32> {mp.name = "present_key"}, tensor<1x2x8x16xf32> {mp.name = "present_value"}) {
  // expected-error @+1 {{its mask spans the pinned past and the new positions, not the buffer: pin the past inputs' sequence length to max-seq-len - 1 = 15}}
  %y, %nk, %nv, %s = mp.attention %q, %k, %k mask %mask past(%pk, %pv) : (tensor<1x4x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x1x1x8xf32>, tensor<1x2x7x16xf32>, tensor<1x2x7x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x1x8xf32>)
  return %y, %nk, %nv : tensor<1x4x1x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}
