// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg | FileCheck %s
// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg="attention=materialized" | FileCheck %s --check-prefix=NOSTREAM
// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg="convolution=direct" | FileCheck %s --check-prefix=DIRECT

// Broadcasting is in the indexing maps: size-1 dims read index 0.
// CHECK-DAG: #[[BCAST:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @broadcast_add(
// CHECK-SAME: %[[A:.+]]: tensor<4x3xf32>, %[[B:.+]]: tensor<1x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BCAST]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] :
// CHECK: arith.addf
func.func @broadcast_add(%a: tensor<4x3xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = mp.add %a, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// f16 data: computed in f32, rounded once.
// CHECK-LABEL: func.func @f16_exp(
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f16_exp(%a: tensor<4xf16>) -> tensor<4xf16> {
  %0 = mp.exp %a : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// f16 matmul accumulates in f32 (the plan's accumulate type), then rounds.
// Loops (b, m, k, n): the reduction sits outside the contiguous n loop.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @f16_matmul(
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x8x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME: outs(%[[ACC]] : tensor<2x8x5xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f16_matmul(%a: tensor<2x8x4xf16>, %b: tensor<4x5xf16>) -> tensor<2x8x5xf16> {
  %0 = mp.matmul %a, %b : (tensor<2x8x4xf16>, tensor<4x5xf16>) -> tensor<2x8x5xf16>
  return %0 : tensor<2x8x5xf16>
}


// -----

// LSTM: the input projection of all steps at once, then a loop over time
// carrying h, c and the stacked states; the gates update h and c in place.
// CHECK-LABEL: func.func @lstm(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]{{.*}}outs(%{{.+}} : tensor<5x2x16xf32>)
// CHECK: %[[LOOP:.+]]:3 = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:.+]] = %{{.+}}, %[[C:.+]] = %{{.+}}, %[[ALL:.+]] = %{{.+}}) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[H]], %[[C]] : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: math.tanh
// CHECK: tensor.insert_slice %{{.+}} into %[[ALL]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK: scf.yield
func.func @lstm(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %y, %yh, %yc = mp.lstm %x, %w, %r {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %yh, %yc : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// Sums are marked reassoc so that LLVM may keep partial sums in vector
// lanes; max reductions need no flag (fmaximum is associative).
// CHECK-LABEL: func.func @reduce_sum(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
func.func @reduce_sum(%x: tensor<4x256xf32>) -> tensor<4x1xf32> {
  %0 = mp.reduce_sum %x {axes = array<i64: 1>} : tensor<4x256xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// GroupQueryAttention decode step: the present caches (max(past 6, total 7)
// positions) take the past before past_b = seqlens_k - S + 1 and the new
// token at it; a [B, 1, S, T] mask keeps keys t <= past_b + s and
// t <= seqlens_k; query head h reads K/V head h / 2 through the maps.
// CHECK-DAG: #[[BATCH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-DAG: #[[KVHEAD:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-LABEL: func.func @gqa_decode(
// CHECK-SAME: %[[PK:[a-z0-9]+]]: tensor<1x2x6x8xf32>, %[[PV:[a-z0-9]+]]: tensor<1x2x6x8xf32>, %[[SL:[a-z0-9]+]]: tensor<1xi32>
// CHECK: %[[LAST:.+]] = linalg.generic {{.*}} ins(%[[SL]] : tensor<1xi32>) outs(%{{.+}} : tensor<1xi64>)
// CHECK: %[[PAST:.+]] = linalg.generic {{.*}} ins(%[[LAST]] : tensor<1xi64>) outs(%{{.+}} : tensor<1xi64>)
// CHECK: %[[KEYS:.+]] = linalg.generic {indexing_maps = [#[[BATCH]], #{{.+}}], {{.*}} ins(%[[PAST]] : tensor<1xi64>) outs(%{{.+}} : tensor<1x2x7x8xf32>)
// CHECK: tensor.extract %[[PK]]
// CHECK: %[[VALUES:.+]] = linalg.generic {{.*}} ins(%[[PAST]] : tensor<1xi64>) outs(%{{.+}} : tensor<1x2x7x8xf32>)
// CHECK: tensor.extract %[[PV]]
// CHECK: %[[KEEP:.+]] = linalg.generic {{.*}} ins(%[[PAST]], %[[LAST]] : tensor<1xi64>, tensor<1xi64>) outs(%{{.+}} : tensor<1x1x1x7xi1>)
// CHECK: arith.cmpi sle
// CHECK: arith.cmpi sle
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[KVHEAD]], #{{.+}}], {{.*}} ins(%{{.+}}, %[[KEYS]] : tensor<1x4x1x8xf32>, tensor<1x2x7x8xf32>)
// CHECK: return %{{.+}}, %[[KEYS]], %[[VALUES]]
func.func @gqa_decode(%q: tensor<1x1x32xf32>, %k: tensor<1x1x16xf32>, %v: tensor<1x1x16xf32>, %pk: tensor<1x2x6x8xf32>, %pv: tensor<1x2x6x8xf32>, %sl: tensor<1xi32>) -> (tensor<1x1x32xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>) {
  %t = mp.constant dense<7> : tensor<i32>
  %0:3 = mp.ms.group_query_attention %q key %k value %v past_key %pk past_value %pv seqlens_k %sl total %t {num_heads = 4 : i64, kv_num_heads = 2 : i64} : (tensor<1x1x32xf32>, tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1xi32>, tensor<i32>) -> (tensor<1x1x32xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<1x1x32xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>
}

// -----

// 600 keys stream: two blocks of 256 in a loop carrying the running max,
// sum and output accumulator, then one block of the 88 left; no [.., 600]
// score tensor is built.
// CHECK-LABEL: func.func @attention_streaming(
// CHECK: %[[LOOP:.+]]:3 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1x16xf32>)
// CHECK: tensor.extract_slice %{{.+}} [1, 2, 256, 16]
// CHECK: math.exp
// CHECK: scf.yield
// CHECK: tensor.extract_slice %{{.+}}[0, 0, %{{.+}}, 0] [1, 2, 88, 16]
// CHECK-NOT: tensor<1x4x1x600xf32>
// Not streamed (the CUDA target): the 600 scores of each query exist and no
// loop carries a running max.
// NOSTREAM-LABEL: func.func @attention_streaming(
//   NOSTREAM-NOT: scf.for
//       NOSTREAM: tensor<1x4x1x600xf32>
func.func @attention_streaming(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x600x16xf32>, %v: tensor<1x2x600x16xf32>) -> tensor<1x4x1x16xf32> {
  %o, %pk, %pv, %qk = mp.attention %q, %k, %v : (tensor<1x4x1x16xf32>, tensor<1x2x600x16xf32>, tensor<1x2x600x16xf32>) -> (tensor<1x4x1x16xf32>, tensor<1x2x600x16xf32>, tensor<1x2x600x16xf32>, tensor<1x4x1x600xf32>)
  return %o : tensor<1x4x1x16xf32>
}

// -----

// A fixed-capacity cache (mp-kv-cache-in-place): the new K/V are inserted
// at the clamped fill level, no Concat joins past and new, keys at or past
// fill + 1 are masked, and the key-block loop stops after the block holding
// the last filled key.
// CHECK-LABEL: func.func @attention_cache_in_place(
// CHECK-SAME: %[[K:[^:]+]]: tensor<1x2x1x16xf32>, %[[V:[^:]+]]: tensor<1x2x1x16xf32>, %[[CK:[^:]+]]: tensor<1x2x1024x16xf32>, %[[CV:[^:]+]]: tensor<1x2x1024x16xf32>, %[[LEN:[^:]+]]: tensor<i64>
// CHECK-NOT: tensor.concat
// CHECK: %[[RAW:.+]] = tensor.extract %[[LEN]][]
// CHECK: %[[AT:.+]] = arith.index_cast %[[RAW]]
// CHECK: %[[LOW:[^ ]+]] = arith.minsi %[[AT]], %{{.+}}
// CHECK: %[[FILL:[^ ]+]] = arith.maxsi {{.*}}%[[LOW]]{{[,: ]}}
// CHECK: %[[NK:.+]] = tensor.insert_slice %[[K]] into %[[CK]][0, 0, %[[FILL]], 0] [1, 2, 1, 16] [1, 1, 1, 1]
// CHECK: %[[NV:.+]] = tensor.insert_slice %[[V]] into %[[CV]][0, 0, %[[FILL]], 0] [1, 2, 1, 16] [1, 1, 1, 1]
// CHECK: %[[VALID:[^ ]+]] = arith.addi %[[FILL]], %{{.+}}
// CHECK: %[[BLOCKS:[^ ]+]] = arith.ceildivsi %[[VALID]], %{{.+}}
// CHECK: %[[ROUNDED:[^ ]+]] = arith.muli %[[BLOCKS]], %{{.+}}
// CHECK: %[[UPPER:[^ ]+]] = arith.minsi %[[ROUNDED]], %c1024
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[UPPER]] step
// CHECK-NOT: tensor.concat
// CHECK: return %{{.+}}, %[[NK]], %[[NV]]
func.func @attention_cache_in_place(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x1x16xf32>, %v: tensor<1x2x1x16xf32>, %ck: tensor<1x2x1024x16xf32>, %cv: tensor<1x2x1024x16xf32>, %len: tensor<i64>) -> (tensor<1x4x1x16xf32>, tensor<1x2x1024x16xf32>, tensor<1x2x1024x16xf32>) {
  %o, %pk, %pv, %qk = mp.attention %q, %k, %v past(%ck, %cv) past_length %len {is_causal = true} : (tensor<1x4x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x2x1x16xf32>, tensor<1x2x1024x16xf32>, tensor<1x2x1024x16xf32>, tensor<i64>) -> (tensor<1x4x1x16xf32>, tensor<1x2x1024x16xf32>, tensor<1x2x1024x16xf32>, tensor<1x4x1x1024xf32>)
  return %o, %pk, %pv : tensor<1x4x1x16xf32>, tensor<1x2x1024x16xf32>, tensor<1x2x1024x16xf32>
}
// -----

// A scalar additive mask (a score_mod adding a constant) broadcasts to
// every score, both in the materialized and the streaming lowering.
// CHECK-LABEL: func.func @attention_scalar_mask(
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x2x3x3xf32>, tensor<f32>)
// CHECK-LABEL: func.func @attention_scalar_mask_streaming(
// CHECK: scf.for
func.func @attention_scalar_mask(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %m = mp.constant dense<5.000000e-01> : tensor<f32>
  %o, %pk, %pv, %qk = mp.attention %q, %k, %v mask %m {scale = 1.0 : f32} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<f32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x3xf32>)
  return %o : tensor<1x2x3x4xf32>
}
func.func @attention_scalar_mask_streaming(%q: tensor<1x2x1x4xf32>, %k: tensor<1x2x600x4xf32>, %v: tensor<1x2x600x4xf32>) -> tensor<1x2x1x4xf32> {
  %m = mp.constant dense<5.000000e-01> : tensor<f32>
  %o, %pk, %pv, %qk = mp.attention %q, %k, %v mask %m : (tensor<1x2x1x4xf32>, tensor<1x2x600x4xf32>, tensor<1x2x600x4xf32>, tensor<f32>) -> (tensor<1x2x1x4xf32>, tensor<1x2x600x4xf32>, tensor<1x2x600x4xf32>, tensor<1x2x1x600xf32>)
  return %o : tensor<1x2x1x4xf32>
}

// -----

// com.microsoft RotaryEmbedding with one start position: token s reads the
// caches at start + s, in every batch.
// CHECK-LABEL: func.func @ms_rotary_start
// CHECK-SAME: %[[POS:[^:]+]]: tensor<1xi64>
// CHECK: %[[P:.+]] = linalg.generic
// CHECK: %[[START:.+]] = tensor.extract %[[POS]][%{{.+}}] : tensor<1xi64>
// CHECK: %[[S:.+]] = linalg.index 1 : index
// CHECK: %[[S64:.+]] = arith.index_cast %[[S]] : index to i64
// CHECK: arith.addi %[[START]], %[[S64]] : i64
// CHECK: } -> tensor<1x4xi64>
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<1x4xi64>)
func.func @ms_rotary_start(%x: tensor<2x4x32xf32>, %pos: tensor<1xi64>, %c: tensor<16x8xf32>) -> tensor<2x4x32xf32> {
  %0 = mp.ms.rotary_embedding %x, %pos, %c, %c {num_heads = 2 : i64} : (tensor<2x4x32xf32>, tensor<1xi64>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<2x4x32xf32>
  return %0 : tensor<2x4x32xf32>
}

// -----

// com.microsoft Attention with key ranges [2B] as mask_index: key t of batch
// b is kept when start[b] = mask[B + b] <= t < end[b] = mask[b].
// CHECK-LABEL: func.func @ms_attention_key_ranges
// CHECK-SAME: %[[M:[^:]+]]: tensor<4xi32>
// CHECK: %[[KEEP:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2x3xi32>)
// CHECK: %[[B:.+]] = linalg.index 0 : index
// CHECK: %[[T:.+]] = linalg.index 1 : index
// CHECK: %[[T64:.+]] = arith.index_cast %[[T]] : index to i64
// CHECK: %[[SI:.+]] = arith.addi %[[B]], %c2 : index
// CHECK: %[[SIC:.+]] = arith.minsi %[[SI]], %c3 : index
// CHECK: %[[START:.+]] = tensor.extract %[[M]][%[[SIC]]] : tensor<4xi32>
// CHECK: %[[START64:.+]] = arith.extsi %[[START]] : i32 to i64
// CHECK: %[[END:.+]] = tensor.extract %[[M]][%[[B]]] : tensor<4xi32>
// CHECK: %[[END64:.+]] = arith.extsi %[[END]] : i32 to i64
// CHECK: %[[BEFORE:.+]] = arith.cmpi slt, %[[T64]], %[[END64]] : i64
// CHECK: %[[AFTER:.+]] = arith.cmpi sge, %[[T64]], %[[START64]] : i64
// CHECK: arith.andi %[[BEFORE]], %[[AFTER]] : i1
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[KEEP]] : tensor<2x2x3x3xf32>, tensor<2x3xi32>)
func.func @ms_attention_key_ranges(%x: tensor<2x3x16xf32>, %w: tensor<16x48xf32>, %m: tensor<4xi32>) -> tensor<2x3x16xf32> {
  %0:2 = mp.ms.attention %x, %w mask_index %m {num_heads = 2 : i64} : (tensor<2x3x16xf32>, tensor<16x48xf32>, tensor<4xi32>) -> (tensor<2x3x16xf32>, tensor<2x2x2x3x8xf32>)
  return %0#0 : tensor<2x3x16xf32>
}

// -----

// A static stride-1 convolution as one channel contraction per kernel tap,
// in a loop over the taps: each tap reads a slice of the padded input at
// tap * dilation and one weight column, and accumulates into the output
// (the batched-MatMul form that mp-tile-and-vectorize register-tiles).
// With convolution=direct (the GPU's) one generic contracts channels and
// taps together.
// CHECK-LABEL: func.func @conv_taps(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x4x10xf32>, %[[W:[a-z0-9]+]]: tensor<8x4x3xf32>
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1] high[0, 0, 1]
// CHECK: %[[INIT:.+]] = linalg.fill {{.+}} -> tensor<1x8x8xf32>
// CHECK: %[[R:.+]] = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]])
// CHECK:   %[[K:.+]] = arith.remui %[[T]]
// CHECK:   %[[OFF:.+]] = arith.muli %[[K]]
// CHECK:   %[[XT:.+]] = tensor.extract_slice %[[P]][0, 0, %[[OFF]]] [1, 4, 8] [1, 1, 1] : tensor<1x4x12xf32> to tensor<1x4x8xf32>
// CHECK:   %[[WT:.+]] = tensor.extract_slice %{{.+}}[0, 0, %[[K]]] [8, 4, 1] [1, 1, 1] : tensor<8x4x3xf32> to tensor<8x4xf32>
// CHECK:   linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[WT]], %[[XT]] : tensor<8x4xf32>, tensor<1x4x8xf32>) outs(%[[ACC]] : tensor<1x8x8xf32>)
// CHECK:   scf.yield
// DIRECT-LABEL: func.func @conv_taps(
// DIRECT-NOT: scf.for
// DIRECT: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @conv_taps(%x: tensor<1x4x10xf32>, %w: tensor<8x4x3xf32>) -> tensor<1x8x8xf32> {
  %0 = mp.conv %x, %w {dilations = array<i64: 2>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 1, 1>, strides = array<i64: 1>} : (tensor<1x4x10xf32>, tensor<8x4x3xf32>) -> tensor<1x8x8xf32>
  return %0 : tensor<1x8x8xf32>
}
