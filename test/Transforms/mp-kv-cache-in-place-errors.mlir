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
