// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s
// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg="index-checks=false" --canonicalize --cse | FileCheck %s --check-prefix=NOCHECK

// Lengths and positions read from data, checked before anything reads or
// writes through them (onnxruntime's ranges): one and-reduction over the
// values and one cf.assert naming the node, the op and the range. The CUDA
// pipeline turns the checks off (index-checks=false); its reads and writes
// stay inside the buffers through clamps.

// GroupQueryAttention: seqlens_k[b] must lie in [0, T) of the present cache
// (T = 7). The compiled-in total_sequence_length (7 >= S = 1) needs no
// check, and with one new position "after a past cache" adds nothing.
// CHECK-LABEL: func.func @gqa_decode
// CHECK-SAME: %[[SL:[a-z0-9]+]]: tensor<1xi32>
// CHECK-NOT: cf.assert
// CHECK: %[[ALL:.+]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[SL]] : tensor<1xi32>) outs(%{{.+}} : tensor<i1>)
// CHECK: arith.cmpi sge, %{{.+}}, %c0 : index
// CHECK: arith.cmpi slt, %{{.+}}, %c7 : index
// CHECK: %[[OK:.+]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK: cf.assert %[[OK]], "mp: GroupQueryAttention (node 'gqa'): seqlens_k is out of range [0, 7): seqlens_k[b] is batch b's last valid position in the present KV cache of 7 positions"
// CHECK-NOT: cf.assert
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<1x2x7x8xf32>)
// CHECK: return
// NOCHECK-LABEL: func.func @gqa_decode
// NOCHECK-NOT: cf.assert
// NOCHECK: return
func.func @gqa_decode(%q: tensor<1x1x32xf32>, %k: tensor<1x1x16xf32>, %v: tensor<1x1x16xf32>, %pk: tensor<1x2x6x8xf32>, %pv: tensor<1x2x6x8xf32>, %sl: tensor<1xi32>) -> (tensor<1x1x32xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>) {
  %t = mp.constant dense<7> : tensor<i32>
  %0:3 = mp.ms.group_query_attention %q key %k value %v past_key %pk past_value %pv seqlens_k %sl total %t {num_heads = 4 : i64, kv_num_heads = 2 : i64} : (tensor<1x1x32xf32>, tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1xi32>, tensor<i32>) -> (tensor<1x1x32xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>) loc("gqa")
  return %0#0, %0#1, %0#2 : tensor<1x1x32xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>
}

// -----

// Run-time lengths and rotary: total_sequence_length >= S; seqlens_k in
// [0, T) with T = max(past, total); after a past cache (S != total) in
// [S - 1, T); and the positions the rotation reads (past_b + s) in the
// cos cache's 64 rows, checked before the rotation. Unchecked, the present
// length is kept non-negative and the rotation clamps the rows it reads.
// CHECK-LABEL: func.func @gqa_dynamic_rotary
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x?x64xf32>, %{{[^:]+}}: tensor<?x?x32xf32>, %[[PK:[^:]+]]: tensor<?x2x?x16xf32>, %[[SL:[^:]+]]: tensor<?xi32>, %[[T:[^:]+]]: tensor<i32>
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[Q]], %c1
// CHECK-DAG: %[[TOT32:.+]] = tensor.extract %[[T]][] : tensor<i32>
// CHECK: %[[TOT:.+]] = arith.index_cast %[[TOT32]] : i32 to index
// CHECK: %[[P:.+]] = tensor.dim %[[PK]], %c2
// CHECK: %[[LEN:.+]] = arith.maxsi %[[TOT]], %[[P]] : index
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[S]], %[[TOT]] : index
// CHECK: %[[TOTOK:.+]] = arith.cmpi sge, %[[TOT]], %[[S]] : index
// CHECK: cf.assert %[[TOTOK]], "mp: GroupQueryAttention (node 'gqa'): total_sequence_length is out of range [S, inf): it counts the past and the S new positions"
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[SL]] : tensor<?xi32>)
// CHECK: arith.cmpi sge, %{{.+}}, %c0 : index
// CHECK: arith.cmpi slt, %{{.+}}, %[[LEN]] : index
// CHECK: cf.assert %{{.+}}, "mp: GroupQueryAttention (node 'gqa'): seqlens_k is out of range [0, T): seqlens_k[b] is batch b's last valid position in the present KV cache of T = max(past length, total_sequence_length) positions"
// CHECK: %[[SM1:.+]] = arith.subi %[[S]], %c1 : index
// CHECK: %[[LO:.+]] = arith.select %[[FIRST]], %c0, %[[SM1]] : index
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[SL]] : tensor<?xi32>)
// CHECK: arith.cmpi sge, %{{.+}}, %[[LO]] : index
// CHECK: arith.cmpi slt, %{{.+}}, %[[LEN]] : index
// CHECK: cf.assert %{{.+}}, "mp: GroupQueryAttention (node 'gqa'): seqlens_k is out of range [S - 1, T) after a past cache: seqlens_k[b] + 1 counts batch b's past and S new positions"
// CHECK: %[[POS:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<?x?xi64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[POS]] : tensor<?x?xi64>)
// CHECK: arith.cmpi slt, %{{.+}}, %c64 : index
// CHECK: cf.assert %{{.+}}, "mp: GroupQueryAttention (node 'gqa'): a rotary position (the past length from seqlens_k plus the token's index) is out of range [0, 64): the cos and sin caches have 64 rows"
// CHECK-NOT: cf.assert
// CHECK: return
// NOCHECK-LABEL: func.func @gqa_dynamic_rotary
// NOCHECK-NOT: cf.assert
// NOCHECK: %[[LEN:.+]] = arith.maxsi %{{.+}}, %{{.+}} : index
// NOCHECK: arith.maxsi %[[LEN]], %c0 : index
// NOCHECK: %[[ROW:.+]] = arith.minsi %{{.+}}, %c63 : index
// NOCHECK: arith.maxsi %[[ROW]], %c0 : index
// NOCHECK-NOT: cf.assert
// NOCHECK: return
func.func @gqa_dynamic_rotary(%q: tensor<?x?x64xf32>, %k: tensor<?x?x32xf32>, %pk: tensor<?x2x?x16xf32>, %sl: tensor<?xi32>, %t: tensor<i32>, %cos: tensor<64x8xf32>, %sin: tensor<64x8xf32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>) {
  %0:3 = mp.ms.group_query_attention %q key %k value %k past_key %pk past_value %pk seqlens_k %sl total %t cos %cos sin %sin {do_rotary = true, num_heads = 4 : i64, kv_num_heads = 2 : i64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>, tensor<i32>, tensor<64x8xf32>, tensor<64x8xf32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) loc("gqa")
  return %0#0, %0#1 : tensor<?x?x64xf32>, tensor<?x2x?x16xf32>
}

// -----

// TensorScatter, linear mode: the 3 updated positions fit in the cache's 16
// from write indices in [0, 14); the slices are still clamped to [0, 13].
// CHECK-LABEL: func.func @tensor_scatter_linear
// CHECK-SAME: %[[W:[^:]+]]: tensor<2xi64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[W]] : tensor<2xi64>)
// CHECK: arith.cmpi sge, %{{.+}}, %c0 : index
// CHECK: arith.cmpi slt, %{{.+}}, %c14 : index
// CHECK: cf.assert %{{.+}}, "mp: TensorScatter (node 'ts'): a write index is out of range [0, 14): the update's 3 positions along axis 2 must fit in the cache's 16"
// CHECK: arith.minsi %{{.+}}, %c13 : index
// CHECK: tensor.insert_slice
// NOCHECK-LABEL: func.func @tensor_scatter_linear
// NOCHECK-NOT: cf.assert
// NOCHECK: arith.minsi %{{.+}}, %c13 : index
// NOCHECK: tensor.insert_slice
func.func @tensor_scatter_linear(%c: tensor<2x2x16x8xf32>, %u: tensor<2x2x3x8xf32>, %w: tensor<2xi64>) -> tensor<2x2x16x8xf32> {
  %0 = mp.tensor_scatter %c, %u at %w {axis = -2 : i64} : (tensor<2x2x16x8xf32>, tensor<2x2x3x8xf32>, tensor<2xi64>) -> tensor<2x2x16x8xf32> loc("ts")
  return %0 : tensor<2x2x16x8xf32>
}

// -----

// Circular mode wraps any non-negative write index around the cache: the
// offset of a cache row in the window is (t - start) mod n, in [0, n).
// CHECK-LABEL: func.func @tensor_scatter_circular
// CHECK-SAME: %[[W:[^:]+]]: tensor<?xi64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[W]] : tensor<?xi64>)
// CHECK: arith.cmpi sge, %{{.+}}, %c0 : index
// CHECK-NOT: arith.cmpi slt
// CHECK: cf.assert %{{.+}}, "mp: TensorScatter (node 'ts'): a write index is out of range [0, inf): circular mode wraps it around the cache's n positions along axis 2"
// CHECK: %[[N:.+]] = tensor.dim %{{.+}}, %c2 : tensor<?x2x?x8xf32>
// CHECK: %[[D:.+]] = arith.subi
// CHECK: %[[R:.+]] = arith.remsi %[[D]], %[[N]] : index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[R]], %c0 : index
// CHECK: %[[UP:.+]] = arith.addi %[[R]], %[[N]] : index
// CHECK: arith.select %[[NEG]], %[[UP]], %[[R]] : index
// NOCHECK-LABEL: func.func @tensor_scatter_circular
// NOCHECK-NOT: cf.assert
// NOCHECK: arith.remsi
func.func @tensor_scatter_circular(%c: tensor<?x2x?x8xf32>, %u: tensor<?x2x?x8xf32>, %w: tensor<?xi64>) -> tensor<?x2x?x8xf32> {
  %0 = mp.tensor_scatter %c, %u at %w {axis = -2 : i64, mode = "circular"} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?xi64>) -> tensor<?x2x?x8xf32> loc("ts")
  return %0 : tensor<?x2x?x8xf32>
}

// -----

// Attention's nonpad_kv_seqlen counts each batch's valid keys: in [0, T]
// for T = 16 keys.
// CHECK-LABEL: func.func @attention_nonpad
// CHECK-SAME: %[[N:[^:]+]]: tensor<2xi64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[N]] : tensor<2xi64>)
// CHECK: arith.cmpi sge, %{{.+}}, %c0 : index
// CHECK: arith.cmpi slt, %{{.+}}, %c17 : index
// CHECK: cf.assert %{{.+}}, "mp: Attention (node 'attn'): nonpad_kv_seqlen is out of range [0, 17): it counts each batch's valid keys among the 16"
// NOCHECK-LABEL: func.func @attention_nonpad
// NOCHECK-NOT: cf.assert
// NOCHECK: return
func.func @attention_nonpad(%q: tensor<2x4x1x8xf32>, %k: tensor<2x2x16x8xf32>, %v: tensor<2x2x16x8xf32>, %n: tensor<2xi64>) -> tensor<2x4x1x8xf32> {
  %o, %k2, %v2, %qk = mp.attention %q, %k, %v nonpad_kv_seqlen %n : (tensor<2x4x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2xi64>) -> (tensor<2x4x1x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x4x1x16xf32>) loc("attn")
  return %o : tensor<2x4x1x8xf32>
}
