// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s

// Dims known only at run time: sizes come from tensor.dim, and a dynamic
// dim that meets another operand's may be 1 at run time, so it is expanded
// first when it is (numpy broadcasting decided at run time).

// CHECK-LABEL: func.func @add_dynamic
// CHECK-SAME: (%[[A:.+]]: tensor<?x4xf32>, %[[B:.+]]: tensor<?x4xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[DA:.+]] = tensor.dim %[[A]], %[[C0]]
// CHECK-DAG: %[[DB:.+]] = tensor.dim %[[B]], %[[C0]]
// CHECK: %[[N:.+]] = arith.maxui %[[DA]], %[[DB]] : index
// CHECK: %[[A2:.+]] = scf.if %{{.+}} -> (tensor<?x4xf32>) {
// CHECK:   tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK:   linalg.generic {{.*}} ins(%[[A]] : tensor<?x4xf32>)
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[A]]
// CHECK: %[[B2:.+]] = scf.if
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[B]]
// CHECK: %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[A2]], %[[B2]] : tensor<?x4xf32>, tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf32>)
// CHECK: arith.addf
func.func @add_dynamic(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = mp.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// One operand sets the dynamic dim: no run-time check.
// CHECK-LABEL: func.func @bias_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK-NOT: scf.if
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[X]], %c1
// CHECK: tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %[[B]] : tensor<?x?x8xf32>, tensor<8xf32>)
func.func @bias_dynamic(%x: tensor<?x?x8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %0 = mp.add %x, %b : (tensor<?x?x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// Batch dims of MatMul broadcast like elementwise ones; m comes from the
// lhs and n from the rhs.
// CHECK-LABEL: func.func @matmul_dynamic
// CHECK-SAME: (%[[L:.+]]: tensor<?x4x?x8xf32>, %[[R:.+]]: tensor<?x4x8x?xf32>)
// CHECK: arith.maxui
// CHECK: %[[L2:.+]] = scf.if
// CHECK: %[[R2:.+]] = scf.if
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[L2]], %c0
// CHECK-DAG: %[[M:.+]] = tensor.dim %[[L2]], %c2
// CHECK-DAG: %[[N:.+]] = tensor.dim %[[R2]], %c3
// CHECK: tensor.empty(%[[B]], %[[M]], %[[N]]) : tensor<?x4x?x?xf32>
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]
func.func @matmul_dynamic(%l: tensor<?x4x?x8xf32>, %r: tensor<?x4x8x?xf32>) -> tensor<?x4x?x?xf32> {
  %0 = mp.matmul %l, %r : (tensor<?x4x?x8xf32>, tensor<?x4x8x?xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

// A mean over a dynamic dim divides by its run-time size.
// CHECK-LABEL: func.func @mean_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<2x?xf32>)
// CHECK: %[[D:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[I:.+]] = arith.index_cast %[[D]] : index to i64
// CHECK: %[[N:.+]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: linalg.generic
// CHECK: arith.divf %{{.+}}, %[[N]] : f32
func.func @mean_dynamic(%x: tensor<2x?xf32>) -> tensor<2x1xf32> {
  %0 = mp.reduce_mean %x {axes = array<i64: 1>} : tensor<2x?xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func.func @softmax_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>)
// CHECK: %[[D0:.+]] = tensor.dim %[[X]], %c0
// CHECK: tensor.empty(%[[D0]]) : tensor<?xf32>
// CHECK: arith.maximumf
// CHECK: %[[D1:.+]] = tensor.dim %[[X]], %c1
// CHECK: tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = mp.softmax %x {axes = array<i64: 1>} : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x1x8xf32>
// CHECK: %[[D:.+]] = tensor.dim %[[X]], %c0
// CHECK: tensor.empty(%[[D]]) : tensor<?x1xf32>
// CHECK: tensor.empty(%[[D]]) : tensor<?x1x8xf32>
// The statistics keep their unit dim: a view, not a copy.
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [%[[D]], 1, 1] : tensor<?x1xf32> into tensor<?x1x1xf32>
func.func @layer_norm_dynamic(%x: tensor<?x1x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<?x1x8xf32>, tensor<?x1x1xf32>) {
  %y, %m, %i = mp.layer_norm %x, %s bias %b {stash_type = f32} : (tensor<?x1x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x1x8xf32>, tensor<?x1x1xf32>, tensor<?x1x1xf32>)
  return %y, %m : tensor<?x1x8xf32>, tensor<?x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x4x?x8xf32>)
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[D2:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[E:.+]] = tensor.empty(%[[D0]], %[[D2]]) : tensor<?x?x4x8xf32>
// CHECK: linalg.transpose ins(%[[X]] : tensor<?x4x?x8xf32>) outs(%[[E]] : tensor<?x?x4x8xf32>) permutation = [0, 2, 1, 3]
func.func @transpose_dynamic(%x: tensor<?x4x?x8xf32>) -> tensor<?x?x4x8xf32> {
  %0 = mp.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<?x4x?x8xf32> -> tensor<?x?x4x8xf32>
  return %0 : tensor<?x?x4x8xf32>
}

// -----

// Reshape to a constant shape with 0 (copy) and -1 (inferred) entries:
// the split is a view with sizes from the input.
// CHECK-LABEL: func.func @reshape_split_heads
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x128xf32>)
// The -1 is the elements over the 0-copied and the given dims (0 when
// that is 0).
// CHECK: %[[D0:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[OTHERS:.+]] = arith.muli %[[D0]], %c128
// CHECK: %[[D1:.+]] = tensor.dim %[[X]], %c1
// CHECK: arith.divui
// CHECK: %[[INFERRED:.+]] = arith.select
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [%[[D0]], %[[INFERRED]], 4, 32] : tensor<?x?x128xf32> into tensor<?x?x4x32xf32>
func.func @reshape_split_heads(%x: tensor<?x?x128xf32>) -> tensor<?x?x4x32xf32> {
  %s = mp.constant dense<[0, -1, 4, 32]> : tensor<4xi64>
  %0 = mp.reshape %x, %s : (tensor<?x?x128xf32>, tensor<4xi64>) -> tensor<?x?x4x32xf32>
  return %0 : tensor<?x?x4x32xf32>
}

// -----

// A shape computed at run time (from Shape) is read element by element.
// CHECK-LABEL: func.func @reshape_runtime_shape
// CHECK-SAME: (%[[X:.+]]: tensor<?x6xf32>, %[[Y:.+]]: tensor<?x2x3xf32>)
// CHECK: tensor.from_elements
// CHECK: tensor.reshape %[[X]]
func.func @reshape_runtime_shape(%x: tensor<?x6xf32>, %y: tensor<?x2x3xf32>) -> tensor<?x?x?xf32> {
  %s = mp.shape %y : tensor<?x2x3xf32> -> tensor<3xi64>
  %0 = mp.reshape %x, %s : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze_flatten
// CHECK-SAME: (%[[X:.+]]: tensor<?x1x?xf32>)
// CHECK: tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2]] : tensor<?x1x?xf32> into tensor<?x?xf32>
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]]
// CHECK-SAME: into tensor<?x1x?x1xf32>
// Flatten at the last axis: [all, 1], to sizes computed at run time.
// CHECK: %[[F:.+]] = arith.muli
// CHECK: %[[FI:.+]] = arith.index_cast %[[F]] : index to i64
// CHECK: %[[S:.+]] = tensor.from_elements %[[FI]], %c1_i64 : tensor<2xi64>
// CHECK: tensor.reshape %[[X]](%[[S]])
func.func @squeeze_unsqueeze_flatten(%x: tensor<?x1x?xf32>) -> (tensor<?x?xf32>, tensor<?x1x?x1xf32>, tensor<?x1xf32>) {
  %0 = mp.squeeze %x {axes = array<i64: 1>} : tensor<?x1x?xf32> -> tensor<?x?xf32>
  %1 = mp.unsqueeze %0 {axes = array<i64: 1, 3>} : tensor<?x?xf32> -> tensor<?x1x?x1xf32>
  %2 = mp.flatten %x {axis = 3 : i64} : tensor<?x1x?xf32> -> tensor<?x1xf32>
  return %0, %1, %2 : tensor<?x?xf32>, tensor<?x1x?x1xf32>, tensor<?x1xf32>
}

// -----

// CHECK-LABEL: func.func @concat_shape_gather
// CHECK-SAME: (%[[P:.+]]: tensor<?x4x?x8xf32>, %[[N:.+]]: tensor<?x4x1x8xf32>, %[[I:.+]]: tensor<?x?xi64>, %[[T:.+]]: tensor<10x8xf32>)
// CHECK: tensor.insert_slice %[[P]]
// CHECK: tensor.insert_slice %[[N]]
// The shape of a dynamic tensor is read at run time.
// CHECK: tensor.from_elements {{.*}} : tensor<4xi64>
// Gathering rows of a static table by dynamic indices.
// CHECK: tensor.dim %[[I]], %c0
// CHECK: tensor.dim %[[I]], %c1
// CHECK: linalg.generic
// CHECK: tensor.extract %[[T]]
func.func @concat_shape_gather(%p: tensor<?x4x?x8xf32>, %n: tensor<?x4x1x8xf32>, %i: tensor<?x?xi64>, %t: tensor<10x8xf32>) -> (tensor<?x4x?x8xf32>, tensor<4xi64>, tensor<?x?x8xf32>) {
  %0 = mp.concat %p, %n {axis = 2 : i64} : (tensor<?x4x?x8xf32>, tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  %1 = mp.shape %0 : tensor<?x4x?x8xf32> -> tensor<4xi64>
  %2 = mp.gather %t, %i {axis = 0 : i64} : (tensor<10x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  return %0, %1, %2 : tensor<?x4x?x8xf32>, tensor<4xi64>, tensor<?x?x8xf32>
}

// -----

// Attention with a past of run-time length: past and new keys are joined,
// the keys stream in blocks of 256 up to the run-time number of whole
// blocks, then one block of the run-time rest, and the causal rule counts
// from the past's run-time length.
// CHECK-LABEL: func.func @attention_dynamic_past
// CHECK-SAME: (%[[Q:.+]]: tensor<?x4x1x16xf32>, %[[K:.+]]: tensor<?x2x1x16xf32>, %[[V:.+]]: tensor<?x2x1x16xf32>, %[[PK:.+]]: tensor<?x2x?x16xf32>, %[[PV:.+]]: tensor<?x2x?x16xf32>)
// CHECK-DAG: %[[P:.+]] = tensor.dim %[[PK]], %c2
// CHECK: tensor.insert_slice %[[PK]]
// CHECK: %[[KEYS:.+]] = tensor.insert_slice %[[K]]
// CHECK: %[[NB:.+]] = arith.divui %[[T:.+]], %c256 : index
// CHECK: %[[WHOLE:.+]] = arith.muli %[[NB]], %c256 : index
// CHECK: scf.for %[[T0:.+]] = %c0 to %[[WHOLE]] step %c256
// CHECK: tensor.extract_slice %[[KEYS]][0, 0, %[[T0]], 0] [%{{.+}}, 2, 256, 16]
// The one query (s = 0) sees keys t <= P.
// CHECK: %[[I:.+]] = linalg.index 3 : index
// CHECK: %[[KEY:.+]] = arith.addi %[[I]], %[[T0]] : index
// CHECK: arith.cmpi sgt, %[[KEY]], %[[P]] : index
// CHECK: math.exp
// CHECK: scf.yield
// CHECK: %[[REST:.+]] = arith.subi %[[T]], %[[WHOLE]] : index
// CHECK: tensor.extract_slice %[[KEYS]][0, 0, %[[WHOLE]], 0] [%{{.+}}, 2, %[[REST]], 16]
// No contraction reads the whole cache.
// CHECK-NOT: ins(%{{[^,]+}}, %[[KEYS]] :
func.func @attention_dynamic_past(%q: tensor<?x4x1x16xf32>, %k: tensor<?x2x1x16xf32>, %v: tensor<?x2x1x16xf32>, %pk: tensor<?x2x?x16xf32>, %pv: tensor<?x2x?x16xf32>) -> (tensor<?x4x1x16xf32>, tensor<?x2x?x16xf32>) {
  %o, %k2, %v2, %qk = mp.attention %q, %k, %v past(%pk, %pv) {is_causal = true} : (tensor<?x4x1x16xf32>, tensor<?x2x1x16xf32>, tensor<?x2x1x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> (tensor<?x4x1x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x4x1x?xf32>)
  return %o, %k2 : tensor<?x4x1x16xf32>, tensor<?x2x?x16xf32>
}

// -----

// Rotary embedding over run-time batch and sequence: the result takes x's
// sizes and the caches are read at the position ids, clamped to their rows
// (checked before on the CPU; where nothing checks, the GPU, a position
// out of range still reads inside the caches).
// CHECK-LABEL: func.func @rotary_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x32xf16>, %[[POS:[^:]+]]: tensor<?x?xi64>, %[[COS:[^:]+]]: tensor<64x8xf16>
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[E:.+]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x?x32xf16>
// CHECK: linalg.generic {{.*}} ins(%[[POS]] : tensor<?x?xi64>) outs(%[[E]] : tensor<?x?x32xf16>)
// CHECK: %[[P:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[HI:.+]] = arith.minsi %[[P]], %c63 : index
// CHECK: %[[ROW:.+]] = arith.maxsi %[[HI]], %c0 : index
// CHECK: tensor.extract %[[COS]][%[[ROW]], %{{.+}}] : tensor<64x8xf16>
func.func @rotary_dynamic(%x: tensor<?x?x32xf16>, %pos: tensor<?x?xi64>, %cos: tensor<64x8xf16>, %sin: tensor<64x8xf16>) -> tensor<?x?x32xf16> {
  %0 = mp.ms.rotary_embedding %x, %pos, %cos, %sin {num_heads = 2 : i64} : (tensor<?x?x32xf16>, tensor<?x?xi64>, tensor<64x8xf16>, tensor<64x8xf16>) -> tensor<?x?x32xf16>
  return %0 : tensor<?x?x32xf16>
}

// -----

// com.microsoft MultiHeadAttention with a past of run-time length and an
// additive bias whose dynamic dims may be 1 at run time: the bias is
// expanded in an scf.if along the keys before the key blocks slice it, and
// along the batch for each block; past and new keys are joined, and the
// causal rule counts from the past's run-time length.
// CHECK-LABEL: func.func @mha_dynamic_past
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<?x1x?x?xf32>, %[[PK:[^:]+]]: tensor<?x2x?x16xf32>
// CHECK: %[[P:.+]] = tensor.dim %[[PK]], %c2
// CHECK: tensor.insert_slice %[[PK]]
// CHECK: %[[KEYS:.+]] = tensor.insert_slice %{{.+}}[0, 0, %[[P]], 0]
// CHECK: %[[NT:.+]] = tensor.dim %[[BIAS]], %c3
// CHECK: %[[UNITT:.+]] = arith.cmpi eq, %[[NT]], %c1
// CHECK: %[[GROWST:.+]] = arith.andi %[[UNITT]]
// CHECK: %[[FULL:.+]] = scf.if %[[GROWST]] -> (tensor<?x1x?x?xf32>)
// CHECK: scf.for %[[T0:[^ ]+]] =
// CHECK: %[[NB:.+]] = tensor.dim %[[FULL]], %c0
// CHECK: tensor.extract_slice %[[FULL]][0, 0, 0, %[[T0]]]
// CHECK: %[[UNIT:.+]] = arith.cmpi eq, %[[NB]], %c1
// CHECK: %[[GROWS:.+]] = arith.andi %[[UNIT]]
// CHECK: scf.if %[[GROWS]] -> (tensor<?x1x?x256xf32>)
// CHECK: %[[T:.+]] = linalg.index 3 : index
// CHECK: %[[KEY:.+]] = arith.addi %[[T]], %[[T0]] : index
// CHECK: %[[LIMIT:.+]] = arith.addi %{{.+}}, %[[P]] : index
// CHECK: arith.cmpi sgt, %[[KEY]], %[[LIMIT]] : index
func.func @mha_dynamic_past(%q: tensor<?x?x32xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>, %bias: tensor<?x1x?x?xf32>, %pk: tensor<?x2x?x16xf32>, %pv: tensor<?x2x?x16xf32>) -> (tensor<?x?x32xf32>, tensor<?x2x?x16xf32>) {
  %0:3 = mp.ms.multi_head_attention %q key %k value %v attention_bias %bias past_key %pk past_value %pv {num_heads = 2 : i64, unidirectional = true} : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x1x?x?xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> (tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
  return %0#0, %0#1 : tensor<?x?x32xf32>, tensor<?x2x?x16xf32>
}

// -----

// Tile with run-time sizes: each output dim is the input's times its
// repeat, and output index i reads input index i mod the input's size.
// CHECK-LABEL: func.func @tile_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x3xf32>, %[[R:.+]]: tensor<2xi64>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[R0:.+]] = tensor.extract %[[R]][%c0]
// CHECK: %[[R0I:.+]] = arith.index_cast %[[R0]] : i64 to index
// CHECK: %[[ROWS:.+]] = arith.muli %[[N]], %[[R0I]] : index
// CHECK: %[[R1:.+]] = tensor.extract %[[R]][%c1]
// CHECK: %[[R1I:.+]] = arith.index_cast %[[R1]] : i64 to index
// CHECK: %[[COLS:.+]] = arith.muli %[[R1I]], %c3 : index
// CHECK: tensor.empty(%[[ROWS]], %[[COLS]]) : tensor<?x?xf32>
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[II:.+]] = arith.remui %[[I]], %[[N]] : index
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: %[[JJ:.+]] = arith.remui %[[J]], %c3 : index
// CHECK: tensor.extract %[[X]][%[[II]], %[[JJ]]] : tensor<?x3xf32>
func.func @tile_dynamic(%x: tensor<?x3xf32>, %r: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = mp.tile %x, %r : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Trilu over run-time sizes keeps the input's sizes.
// CHECK-LABEL: func.func @trilu_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>
// CHECK-DAG: %[[M:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[N:.+]] = tensor.dim %[[X]], %c1
// CHECK: tensor.empty(%[[M]], %[[N]]) : tensor<?x?xf32>
// CHECK: arith.cmpi sle
func.func @trilu_dynamic(%x: tensor<?x?xf32>, %k: tensor<i64>) -> tensor<?x?xf32> {
  %0 = mp.trilu %x k %k {upper = false} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// One dynamic dim split into two dynamic ones is a tensor.reshape, not an
// expand_shape: memref's expand-strided-metadata crashes on the run-time
// stride such an expand_shape has once bufferized.
// CHECK-LABEL: func.func @reshape_split_two_dynamic
// CHECK-NOT: tensor.expand_shape
// CHECK: tensor.reshape %{{.+}}(%{{.+}}) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
func.func @reshape_split_two_dynamic(%x: tensor<?xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = mp.reshape %x, %s : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// ConvTranspose of stride 2 over run-time batch and length, as 2 phases:
// the kernel (3 taps, padded to 4) becomes [M*2, C, 2] with phase r taking
// taps r and r + 2 reversed; one stride-1 convolution over x padded by 1
// and 2 gives Y[n, m*2 + r, j] for j < L + 2, and the output
// ((L - 1) * 2 + 3 long) reads Y back interleaved.
// CHECK-DAG: #[[PHASES:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d1 - d3 * 2 + 2)>
// CHECK-DAG: #[[INTERLEAVE:.+]] = affine_map<(d0, d1, d2) -> (d0, d1 * 2 + d2 mod 2, d2 floordiv 2)>
// CHECK-LABEL: func.func @conv_transpose_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4x?xf32>, %[[W:[^:]+]]: tensor<4x2x3xf32>
// CHECK: %[[WP:.+]] = tensor.pad %[[W]] low[0, 0, 0] high[0, 0, 1]
// CHECK: %[[PH:.+]] = linalg.generic {indexing_maps = [#[[PHASES]], {{.*}}]{{.*}} ins(%[[WP]] : tensor<4x2x4xf32>) outs({{.*}} : tensor<2x2x4x2xf32>)
// CHECK: %[[K:.+]] = tensor.collapse_shape %[[PH]] {{\[}}[0, 1], [2], [3]] : tensor<2x2x4x2xf32> into tensor<4x4x2xf32>
// CHECK: %[[XP:.+]] = tensor.pad %[[X]] low[0, 0, 1] high[0, 0, 2]
// CHECK: %[[Y:.+]] = scf.for {{.*}} -> (tensor<?x4x?xf32>)
// CHECK: tensor.extract_slice %[[K]]
// CHECK-DAG: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[L:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[L2:.+]] = arith.muli %[[L]], %c2 : index
// CHECK: %[[OL:.+]] = arith.addi %[[L2]], %c1 : index
// CHECK: %[[E:.+]] = tensor.empty(%[[N]], %[[OL]]) : tensor<?x2x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[INTERLEAVE]], {{.*}}]{{.*}} ins(%[[Y]] : tensor<?x4x?xf32>) outs(%[[E]] : tensor<?x2x?xf32>)
func.func @conv_transpose_dynamic(%x: tensor<?x4x?xf32>, %w: tensor<4x2x3xf32>) -> tensor<?x2x?xf32> {
  %0 = mp.conv_transpose %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, output_padding = array<i64: 0>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<?x4x?xf32>, tensor<4x2x3xf32>) -> tensor<?x2x?xf32>
  return %0 : tensor<?x2x?xf32>
}

// -----

// A dilated ConvTranspose keeps the zero-spread form: the input is spread
// to (L - 1) * stride + 1, padded by dilation * (k - 1) on each side, and
// convolved to the padded length less dilation * (k - 1).
// CHECK-LABEL: func.func @conv_transpose_dilated_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4x?xf32>
// CHECK-DAG: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[L:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[LAST:.+]] = arith.subi %[[L]], %c1 : index
// CHECK: %[[SCALED:.+]] = arith.muli %[[LAST]], %c2 : index
// CHECK: %[[SPREAD:.+]] = arith.addi %[[SCALED]], %c1 : index
// CHECK: %[[E:.+]] = tensor.empty(%[[N]], %[[SPREAD]]) : tensor<?x4x?xf32>
// CHECK: %[[Z:.+]] = linalg.fill {{.*}} outs(%[[E]]
// CHECK: %[[S:.+]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 0] [%[[N]], 4, %[[L]]] [1, 1, 2]
// CHECK: %[[P:.+]] = tensor.pad %[[S]] low[0, 0, 4] high[0, 0, 4]
// CHECK: %[[PL:.+]] = tensor.dim %[[P]], %c2
// CHECK: %[[OL:.+]] = arith.addi %[[PL]], %c-4 : index
// CHECK: tensor.empty(%{{.+}}, %[[OL]]) : tensor<?x2x?xf32>
func.func @conv_transpose_dilated_dynamic(%x: tensor<?x4x?xf32>, %w: tensor<4x2x3xf32>) -> tensor<?x2x?xf32> {
  %0 = mp.conv_transpose %x, %w {dilations = array<i64: 2>, group = 1 : i64, kernel_shape = array<i64: 3>, output_padding = array<i64: 0>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<?x4x?xf32>, tensor<4x2x3xf32>) -> tensor<?x2x?xf32>
  return %0 : tensor<?x2x?xf32>
}

// -----

// MaxPool over a run-time length: floor((L + 2 - 3) / 2) + 1 windows, and
// the indices flatten with the input's run-time length.
// CHECK-LABEL: func.func @max_pool_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x3x?xf32>)
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1] high[0, 0, 1]
// CHECK: %[[L:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[L64:.+]] = arith.index_cast %[[L]] : index to i64
// CHECK: %[[SPAN:.+]] = arith.addi %[[L]], %c-1 : index
// CHECK: %[[Q:.+]] = arith.floordivsi %[[SPAN]], %c2 : index
// CHECK: %[[OL:.+]] = arith.addi %[[Q]], %c1 : index
// CHECK: tensor.empty(%{{.+}}, %[[OL]]) : tensor<?x3x?xf32>
// CHECK: tensor.empty(%{{.+}}, %[[OL]]) : tensor<?x3x?xi64>
// CHECK: arith.muli %{{.+}}, %[[L64]] : i64
func.func @max_pool_dynamic(%x: tensor<?x3x?xf32>) -> (tensor<?x3x?xf32>, tensor<?x3x?xi64>) {
  %o, %i = mp.max_pool %x {dilations = array<i64: 1>, kernel_shape = array<i64: 3>, pads = array<i64: 1, 1>, strides = array<i64: 2>} : (tensor<?x3x?xf32>) -> (tensor<?x3x?xf32>, tensor<?x3x?xi64>)
  return %o, %i : tensor<?x3x?xf32>, tensor<?x3x?xi64>
}

// -----

// GroupNorm over run-time batch and length: x is viewed as [N, G, C/G, L]
// with L the run-time product of the spatial dims.
// CHECK-LABEL: func.func @group_norm_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8x?xf32>
// CHECK-DAG: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[L:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[G:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3]] output_shape [%[[N]], 2, 4, %[[L]]] : tensor<?x8x?xf32> into tensor<?x2x4x?xf32>
// CHECK: linalg.generic {{.*}} ins(%[[G]] : tensor<?x2x4x?xf32>) outs(%{{.+}} : tensor<?x2xf32>)
// CHECK: %[[Y:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3]] : tensor<?x2x4x?xf32> into tensor<?x8x?xf32>
// CHECK: return %[[Y]]
func.func @group_norm_dynamic(%x: tensor<?x8x?xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<?x8x?xf32> {
  %0 = mp.group_norm %x, %s, %b {epsilon = 1.000000e-03 : f32, num_groups = 2 : i64, per_group_affine = true} : (tensor<?x8x?xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x8x?xf32>
  return %0 : tensor<?x8x?xf32>
}

// -----

// Einsum with a run-time ellipsis dim on both sides: the loop runs to the
// larger, and a side that is 1 at run time is expanded first.
// CHECK-LABEL: func.func @einsum_dynamic
// CHECK-SAME: (%[[A:[^:]+]]: tensor<?x?x8xf32>, %[[B:[^:]+]]: tensor<?x8x?xf32>)
// CHECK-DAG: %[[NA:.+]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[NB:.+]] = tensor.dim %[[B]], %c0
// CHECK: %[[N:.+]] = arith.maxui %[[NA]], %[[NB]] : index
// CHECK: %[[XA:.+]] = scf.if %{{.+}} -> (tensor<?x?x8xf32>)
// CHECK: %[[XB:.+]] = scf.if %{{.+}} -> (tensor<?x8x?xf32>)
// CHECK: tensor.empty(%[[N]], %{{.+}}, %{{.+}}) : tensor<?x?x?xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XA]], %[[XB]] :
func.func @einsum_dynamic(%a: tensor<?x?x8xf32>, %b: tensor<?x8x?xf32>) -> tensor<?x?x?xf32> {
  %0 = mp.einsum %a, %b {equation = "...ij,...jk->...ik"} : (tensor<?x?x8xf32>, tensor<?x8x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// Resize by a constant scale along a run-time length: floor(L * 2) output
// positions, taps clamped to the run-time last index.
// CHECK-LABEL: func.func @resize_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x?xf32>
// CHECK: %[[L:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[L64:.+]] = arith.index_cast %[[L]] : index to i64
// CHECK: %[[LF:.+]] = arith.sitofp %[[L64]] : i64 to f64
// CHECK: %[[SF:.+]] = arith.mulf %[[LF]], %{{.+}} : f64
// CHECK: %[[FL:.+]] = math.floor %[[SF]] : f64
// CHECK: %[[OI:.+]] = arith.fptosi %[[FL]] : f64 to i64
// CHECK: %[[O:.+]] = arith.index_cast %[[OI]] : i64 to index
// CHECK: tensor.empty(%[[O]]) : tensor<1x4x?xf32>
// CHECK: %[[LAST:.+]] = arith.subi %[[L64]], %c1_i64 : i64
// CHECK: arith.minsi %{{.+}}, %[[LAST]] : i64
func.func @resize_dynamic(%x: tensor<1x4x?xf32>) -> tensor<1x4x?xf32> {
  %scales = mp.constant dense<[1.0, 1.0, 2.0]> : tensor<3xf32>
  %0 = mp.resize %x scales %scales {mode = "linear"} : (tensor<1x4x?xf32>, tensor<3xf32>) -> tensor<1x4x?xf32>
  return %0 : tensor<1x4x?xf32>
}

// -----

// Resize to a constant size along a run-time length: the scale, size / L,
// is computed at run time and output coordinates are divided by it (as the
// reference does); the output is static.
// CHECK-LABEL: func.func @resize_sizes_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x?xf32>
// CHECK-DAG: %[[SIZE:.+]] = arith.constant 1.600000e+01 : f64
// CHECK: %[[L:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[L64:.+]] = arith.index_cast %[[L]] : index to i64
// CHECK: %[[LF:.+]] = arith.sitofp %[[L64]] : i64 to f64
// CHECK: %[[SCALE:.+]] = arith.divf %[[SIZE]], %[[LF]] : f64
// CHECK: tensor.empty() : tensor<1x4x16xf32>
// CHECK: linalg.generic
// CHECK: arith.divf %{{.+}}, %[[SCALE]] : f64
func.func @resize_sizes_dynamic(%x: tensor<1x4x?xf32>) -> tensor<1x4x16xf32> {
  %sizes = mp.constant dense<[1, 4, 16]> : tensor<3xi64>
  %0 = mp.resize %x sizes %sizes {mode = "linear"} : (tensor<1x4x?xf32>, tensor<3xi64>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// -----

// LSTM over a run-time sequence length and batch: the time loop runs to the
// input's run-time length, the states take its run-time batch, and each
// step's hidden state is stacked at its time index.
// CHECK-LABEL: func.func @lstm_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?x3xf32>
// CHECK-DAG: %[[T:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[ALL:.+]] = tensor.empty(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// CHECK: tensor.empty(%[[B]]) : tensor<?x4xf32>
// CHECK: scf.for %[[STEP:.+]] = %c0 to %[[T]] step %c1 iter_args({{.*}}, %{{.+}} = %[[ALL]]) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x?x4xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[%[[STEP]], 0, 0] [1, %[[B]], 4] [1, 1, 1]
// CHECK: tensor.empty(%[[T]], %[[B]]) : tensor<?x1x?x4xf32>
func.func @lstm_dynamic(%x: tensor<?x?x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) -> tensor<?x1x?x4xf32> {
  %y, %h, %c = mp.lstm %x, %w, %r {hidden_size = 4 : i64} : (tensor<?x?x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (tensor<?x1x?x4xf32>, tensor<1x?x4xf32>, tensor<1x?x4xf32>)
  return %y : tensor<?x1x?x4xf32>
}

// -----

// ScatterND over run-time sizes: one step per index tuple (the run-time
// product of the indices' leading dims), each writing a slice of the
// data's run-time size at its normalized index.
// CHECK-LABEL: func.func @scatter_nd_dynamic
// CHECK-SAME: (%[[D:[^:]+]]: tensor<?x3x?xf32>, %[[I:[^:]+]]: tensor<?x1xi64>, %[[U:[^:]+]]: tensor<?x3x?xf32>)
// CHECK-DAG: %[[N:.+]] = tensor.dim %[[I]], %c0
// CHECK-DAG: %[[ROWS:.+]] = tensor.dim %[[D]], %c0
// CHECK-DAG: %[[L:.+]] = tensor.dim %[[D]], %c2
// CHECK: scf.for %{{.+}} = %c0 to %[[N]] step %c1
// CHECK: arith.addi %{{.+}}, %[[ROWS]] : index
// CHECK: tensor.extract_slice %[[U]][%{{.+}}, 0, 0] [1, 3, %[[L]]] [1, 1, 1] : tensor<?x3x?xf32> to tensor<3x?xf32>
// CHECK-NOT: scf.if
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 0, 0] [1, 3, %[[L]]] [1, 1, 1] : tensor<3x?xf32> into tensor<?x3x?xf32>
func.func @scatter_nd_dynamic(%d: tensor<?x3x?xf32>, %i: tensor<?x1xi64>, %u: tensor<?x3x?xf32>) -> tensor<?x3x?xf32> {
  %0 = mp.scatter_nd %d, %i, %u {reduction = "add"} : (tensor<?x3x?xf32>, tensor<?x1xi64>, tensor<?x3x?xf32>) -> tensor<?x3x?xf32>
  return %0 : tensor<?x3x?xf32>
}

// -----

// com.microsoft GroupQueryAttention with run-time batch, sequence and cache
// lengths and total_sequence_length: the present cache holds max(total,
// past) positions, a sequence as long as total is a first prompt (nothing
// cached), and the cache, which may be empty, is read only where it holds
// the position.
// CHECK-LABEL: func.func @gqa_dynamic
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x?x32xf32>, %{{[^:]+}}: tensor<?x?x16xf32>, %[[PK:[^:]+]]: tensor<?x2x?x8xf32>, %{{[^:]+}}: tensor<?xi32>, %[[T:[^:]+]]: tensor<i32>)
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[Q]], %c0
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[Q]], %c1
// CHECK: %[[TOT32:.+]] = tensor.extract %[[T]][] : tensor<i32>
// CHECK: %[[TOT:.+]] = arith.index_cast %[[TOT32]] : i32 to index
// CHECK: %[[P:.+]] = tensor.dim %[[PK]], %c2
// CHECK: %[[LEN:.+]] = arith.maxsi %[[TOT]], %[[P]] : index
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[S]], %[[TOT]] : index
// CHECK: arith.select %[[FIRST]], %c0_i64, %{{.+}} : i64
// CHECK: tensor.empty(%[[B]], %[[LEN]]) : tensor<?x2x?x8xf32>
// CHECK: scf.if %{{.+}} -> (f32)
// CHECK: tensor.extract %[[PK]]
func.func @gqa_dynamic(%q: tensor<?x?x32xf32>, %k: tensor<?x?x16xf32>, %pk: tensor<?x2x?x8xf32>, %sl: tensor<?xi32>, %t: tensor<i32>) -> (tensor<?x?x32xf32>, tensor<?x2x?x8xf32>) {
  %0:3 = mp.ms.group_query_attention %q key %k value %k past_key %pk past_value %pk seqlens_k %sl total %t {num_heads = 4 : i64, kv_num_heads = 2 : i64} : (tensor<?x?x32xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?xi32>, tensor<i32>) -> (tensor<?x?x32xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>)
  return %0#0, %0#1 : tensor<?x?x32xf32>, tensor<?x2x?x8xf32>
}

// -----

// Loss-scaling ops over gradients of run-time size: the unscaled gradient
// takes the gradient's sizes and the inf/NaN check reduces over all of it.
// CHECK-LABEL: func.func @unscale_dynamic
// CHECK-SAME: (%[[S:[^:]+]]: tensor<f32>, %[[G:[^:]+]]: tensor<?x4xf16>)
// CHECK: %[[N:.+]] = tensor.dim %[[G]], %c0
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[G]] : tensor<?x4xf16>)
func.func @unscale_dynamic(%s: tensor<f32>, %g: tensor<?x4xf16>) -> (tensor<?x4xf32>, tensor<i1>) {
  %u, %bad = mp.unscale_and_check %s, %g : tensor<f32>, tensor<?x4xf16> -> (tensor<?x4xf32>), tensor<i1>
  return %u, %bad : tensor<?x4xf32>, tensor<i1>
}

// -----

// A reversed Slice of a run-time length: the start clamps to [0, L - 1],
// the end to [-1, L - 1], and output element i reads start - i.
// CHECK-LABEL: func.func @slice_reverse_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x4xf32>)
// CHECK: %[[L:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[LAST:.+]] = arith.subi %[[L]], %c1 : index
// CHECK: %[[S0:.+]] = arith.minsi %{{.+}}, %[[LAST]] : index
// CHECK: %[[S:.+]] = arith.maxsi %[[S0]], %c0 : index
// CHECK: %[[E:.+]] = arith.maxsi %{{.+}}, %c-1 : index
// CHECK: %[[SPAN:.+]] = arith.subi %[[S]], %[[E]] : index
// CHECK: %[[N:.+]] = arith.maxsi %[[SPAN]], %c0 : index
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[FROM:.+]] = arith.subi %[[S]], %[[I]] : index
// CHECK: tensor.extract %{{.+}}[%[[FROM]], %{{.+}}] : tensor<?x4xf32>
func.func @slice_reverse_dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %s = mp.constant dense<[-1]> : tensor<1xi64>
  %e = mp.constant dense<[-9223372036854775807]> : tensor<1xi64>
  %a = mp.constant dense<[0]> : tensor<1xi64>
  %st = mp.constant dense<[-1]> : tensor<1xi64>
  %0 = mp.slice %x, %s, %e axes %a steps %st : (tensor<?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Ceil-mode pooling over a run-time length: the end pad grows by stride - 1
// (the most the last window can overhang), and the window count rounds up
// unless the last window would start past the input and the begin pad.
// CHECK-LABEL: func.func @ceil_pool_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x3x?xf32>)
// CHECK: tensor.pad %[[X]] low[0, 0, 0] high[0, 0, 1]
// CHECK: %[[L:.+]] = tensor.dim %[[X]], %c2
// CHECK: %[[SPAN:.+]] = arith.addi %[[L]], %c-2 : index
// CHECK: %[[Q:.+]] = arith.ceildivsi %[[SPAN]], %c2 : index
// CHECK: %[[START:.+]] = arith.muli %[[Q]], %c2 : index
// CHECK: %[[BEYOND:.+]] = arith.cmpi sge, %[[START]], %[[L]] : index
// CHECK: %[[LESS:.+]] = arith.subi %[[Q]], %c1 : index
// CHECK: %[[STEPS:.+]] = arith.select %[[BEYOND]], %[[LESS]], %[[Q]] : index
// CHECK: %[[OL:.+]] = arith.addi %[[STEPS]], %c1 : index
// CHECK: tensor.empty(%[[OL]]) : tensor<1x3x?xf32>
func.func @ceil_pool_dynamic(%x: tensor<1x3x?xf32>) -> tensor<1x3x?xf32> {
  %o = mp.average_pool %x {ceil_mode = true, dilations = array<i64: 1>, kernel_shape = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<1x3x?xf32>) -> tensor<1x3x?xf32>
  return %o : tensor<1x3x?xf32>
}

// -----

// TensorScatter with run-time batch, cache and update lengths: every cache
// element takes the update's value inside the written window, read only
// there (the update may be empty).
// CHECK-LABEL: func.func @tensor_scatter_dynamic
// CHECK-SAME: (%[[C:[^:]+]]: tensor<?x2x?x8xf32>, %[[U:[^:]+]]: tensor<?x2x?x8xf32>, %[[W:[^:]+]]: tensor<?xi64>)
// CHECK: %[[S:.+]] = tensor.dim %[[U]], %c2
// CHECK: linalg.generic {{.*}} ins(%[[C]], %[[W]] :
// CHECK: %[[I:.+]] = arith.subi
// CHECK: %[[IN:.+]] = arith.cmpi slt, %[[I]], %[[S]] : index
// CHECK: %[[WINDOW:.+]] = arith.andi %{{.+}}, %[[IN]] : i1
// CHECK: scf.if %[[WINDOW]] -> (f32)
// CHECK: tensor.extract %[[U]]
func.func @tensor_scatter_dynamic(%c: tensor<?x2x?x8xf32>, %u: tensor<?x2x?x8xf32>, %w: tensor<?xi64>) -> tensor<?x2x?x8xf32> {
  %0 = mp.tensor_scatter %c, %u at %w {axis = -2 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?xi64>) -> tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}

// -----

// Antialiased downsampling to a constant size along a run-time length: the
// filter covers 1 / scale input pixels, so the taps are a run-time window
// first .. -first + 1 (first = floor(-1 / s) + 1): one loop sums their
// weights, one loop reads them.
// CHECK-LABEL: func.func @resize_antialias_dynamic
// CHECK: %[[SCALE:.+]] = arith.divf %{{.+}}, %{{.+}} : f64
// CHECK: linalg.generic
// CHECK: %[[S:.+]] = arith.minimumf %[[SCALE]], %{{.+}} : f64
// CHECK: %[[W:.+]] = arith.divf %{{.+}}, %[[S]] : f64
// CHECK: %[[FIRST:.+]] = math.floor %[[W]] : f64
// CHECK: %[[TOTAL:.+]] = scf.for {{.*}} iter_args
// CHECK: scf.yield
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.divf %{{.+}}, %[[TOTAL]] : f64
// CHECK: tensor.extract %{{.+}} : tensor<1x4x?xf32>
func.func @resize_antialias_dynamic(%x: tensor<1x4x?xf32>) -> tensor<1x4x16xf32> {
  %sizes = mp.constant dense<[1, 4, 16]> : tensor<3xi64>
  %0 = mp.resize %x sizes %sizes {mode = "linear", antialias = 1 : i64} : (tensor<1x4x?xf32>, tensor<3xi64>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}


// -----

// NonZero counts its hits in one loop, allocates the [rank, count] result at
// that run-time size and fills one column per hit in a second loop (NaN is
// not zero).
// CHECK-LABEL: func.func @non_zero
// CHECK-SAME: (%[[X:.+]]: tensor<?x3xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[X]]
// CHECK: %[[COUNT:.+]] = scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}) -> (index)
// CHECK: arith.cmpf une
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[COUNT]]) : tensor<2x?xi64>
// CHECK: %[[FILL:.+]]:2 = scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %[[EMPTY]]) -> (index, tensor<2x?xi64>)
// CHECK: scf.if
// CHECK: tensor.insert
// CHECK: tensor.insert
// CHECK: return %[[FILL]]#1
func.func @non_zero(%x: tensor<?x3xf32>) -> tensor<2x?xi64> {
  %0 = mp.non_zero %x : tensor<?x3xf32> -> tensor<2x?xi64>
  return %0 : tensor<2x?xi64>
}

// -----

// Slice bounds computed at run time (VITS: the first NonZero-count values of
// a flattened tensor) are read from their tensor; negative ones count from
// the end, then ONNX's clamping applies.
// CHECK-LABEL: func.func @slice_runtime_end
// CHECK-SAME: (%[[X:.+]]: tensor<?xf32>, %[[E:.+]]: tensor<1xi64>)
// CHECK: %[[D:.+]] = tensor.dim %[[X]]
// CHECK: %[[V:.+]] = tensor.extract %[[E]]
// CHECK: %[[I:.+]] = arith.index_cast %[[V]] : i64 to index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[I]]
// CHECK: %[[FROM_END:.+]] = arith.addi %[[D]], %[[I]]
// CHECK: arith.select %[[NEG]], %[[FROM_END]], %[[I]]
// CHECK: tensor.extract_slice %[[X]][%{{.+}}] [%{{.+}}] [1]
func.func @slice_runtime_end(%x: tensor<?xf32>, %e: tensor<1xi64>) -> tensor<?xf32> {
  %s = mp.constant dense<0> : tensor<1xi64>
  %0 = mp.slice %x, %s, %e : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// A run-time shape that merges dims of an input with two dynamic dims (GPT-2
// Conv1D's x.view(-1, x.size(-1)) under --dynamic-shapes): the static types
// do not say which dims merge, so the reshape takes the sizes computed at
// run time instead of guessing a collapse_shape.
// CHECK-LABEL: func.func @reshape_merges_dynamic_dims(
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[SHAPE:.+]] = tensor.from_elements
// CHECK: tensor.reshape %{{.+}}(%[[SHAPE]]) : (tensor<?x?x64xf32>, tensor<2xi64>) -> tensor<?x?xf32>
func.func @reshape_merges_dynamic_dims(%x: tensor<?x?x64xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = mp.reshape %x, %s : (tensor<?x?x64xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A past joined with new keys whose head size is known only at run time
// (glm_dynamo with --dynamic-shapes: the key row is a Concat of rotated and
// passed halves): the joined cache takes the cache's declared head size, so
// it is the op's present type.
// CHECK-LABEL: func.func @joined_past_head_size
//  CHECK-SAME:     %[[K:[^:]+]]: tensor<?x2x?x?xf32>, %{{[^:]+}}: tensor<?x2x?x16xf32>, %[[PK:[^:]+]]: tensor<?x2x?x16xf32>
//       CHECK:   %[[PAST:.+]] = tensor.insert_slice %[[PK]] into %{{.+}} : tensor<?x2x?x16xf32> into tensor<?x2x?x16xf32>
//       CHECK:   %[[KEYS:.+]] = tensor.insert_slice %[[K]] into %[[PAST]]{{.+}} : tensor<?x2x?x?xf32> into tensor<?x2x?x16xf32>
//       CHECK:   return %{{.+}}, %[[KEYS]] : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>
func.func @joined_past_head_size(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x?xf32>, %v: tensor<?x2x?x16xf32>, %pk: tensor<?x2x?x16xf32>, %pv: tensor<?x2x?x16xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>) {
  %o, %nk, %nv, %qk = mp.attention %q, %k, %v past(%pk, %pv) {is_causal = true} : (tensor<?x4x?x16xf32>, tensor<?x2x?x?xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x4x?x?xf32>)
  return %o, %nk : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>
}
