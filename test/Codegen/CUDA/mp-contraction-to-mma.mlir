// RUN: mp-opt %s --mp-contraction-to-mma --canonicalize --split-input-file | FileCheck %s
// RUN: mp-opt %s --mp-contraction-to-mma="warps-per-block=2 subtiles=1" --canonicalize --split-input-file | FileCheck %s --check-prefix=SMALL

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// Aligned 32x64x32: 2 row tiles x 2 column tiles of 16x32 (4 subtiles of
// 8), one block of 4 warps; the k loop takes 16 at a time; no edge guards.
// CHECK-LABEL: func.func @aligned
//  CHECK-SAME:   (%[[A:.+]]: memref<32x32xf16>, %[[B:.+]]: memref<32x64xf16>, %[[C:.+]]: memref<32x64xf32>)
//   CHECK-DAG:   %[[C1:.+]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C128:.+]] = arith.constant 128 : index
//       CHECK:   gpu.launch blocks({{.*}}) in ({{.*}} = %[[C1]], {{.*}} = %[[C1]], {{.*}} = %[[C1]]) threads({{.*}}) in ({{.*}} = %[[C128]],
//   CHECK-NOT:     arith.select
//       CHECK:     memref.load %[[C]]
// A's row-major pairs along k are single aligned 2-element loads; B's
// pairs along k are a column apart, loaded one by one.
//       CHECK:     scf.for {{.*}} iter_args
//   CHECK-NOT:       arith.select
//       CHECK:       vector.load %[[A]][%{{.+}}, %{{.+}}] {alignment = 4 : i64} : memref<32x32xf16>, vector<2xf16>
//       CHECK:       memref.load %[[B]]
//       CHECK:       nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-COUNT-3:     nvgpu.mma.sync
//       CHECK:       scf.yield
//       CHECK:     memref.store {{.*}}, %[[C]]
//   CHECK-NOT:   linalg.generic
// SMALL-LABEL: func.func @aligned
//       SMALL:   %[[C64:.+]] = arith.constant 64 : index
//       SMALL:   %[[C8:.+]] = arith.constant 8 : index
//       SMALL:   gpu.launch blocks({{.*}}) in ({{.*}} = %[[C8]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C64]],
// SMALL-COUNT-1: nvgpu.mma.sync
//   SMALL-NOT:   nvgpu.mma.sync
func.func @aligned(%a: memref<32x32xf16>, %b: memref<32x64xf16>, %c: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x32xf16>, memref<32x64xf16>) outs(%c : memref<32x64xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %0 = arith.extf %x : f16 to f32
    %1 = arith.extf %y : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#a = affine_map<(b, h, m, k, n) -> (b, h, m, k)>
#b = affine_map<(b, h, m, k, n) -> (b, h, k, n)>
#c = affine_map<(b, h, m, k, n) -> (b, h, m, n)>

// A decode step's P.V: one row (m = 1), 9 cached positions (k), 32 columns,
// 4 heads batched. Rows past 1 and k past 9 read zeros; rows past 1 store
// nothing. The probabilities are f32 rounded to f16 (a fused cast), which
// is evaluated per loaded element. One k step: no loop.
// CHECK-LABEL: func.func @decode_pv
//  CHECK-SAME:   (%[[P:.+]]: memref<1x4x1x9xf32>, %[[V:.+]]: memref<1x4x9x32xf16>, %[[O:.+]]: memref<1x4x1x32xf32>)
//       CHECK:   gpu.launch blocks({{.*}}) in ({{.*}} = %{{.+}}, {{.*}}) threads({{.*}}) in ({{.*}} = %[[C128:.+]],
//       CHECK:     scf.if
//   CHECK-NOT:     scf.for
//       CHECK:       %[[PK:.+]] = memref.load %[[P]]
//       CHECK:       %[[H:.+]] = arith.truncf %[[PK]] : f32 to f16
//       CHECK:       arith.select %{{.+}}, %[[H]], %{{.+}} : f16
//       CHECK:       memref.load %[[V]]
//       CHECK:       nvgpu.mma.sync
//       CHECK:     scf.if
//       CHECK:       memref.store {{.*}}, %[[O]]
func.func @decode_pv(%p: memref<1x4x1x9xf32>, %v: memref<1x4x9x32xf16>, %o: memref<1x4x1x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : memref<1x4x1x9xf32>, memref<1x4x9x32xf16>) outs(%o : memref<1x4x1x32xf32>) {
  ^bb0(%x: f32, %y: f16, %acc: f32):
    %h = arith.truncf %x : f32 to f16
    %0 = arith.extf %h : f16 to f32
    %1 = arith.extf %y : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %2, %acc : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// Not for Tensor Cores: f32 products, a reused accumulator, an integer
// contraction. They stay linalg.generic for mp-map-to-gpu.
// CHECK-LABEL: func.func @left_alone
//   CHECK-NOT:   gpu.launch
// CHECK-COUNT-3: linalg.generic
func.func @left_alone(%a: memref<16x16xf16>, %b: memref<16x16xf16>, %c: memref<16x16xf32>,
                      %af: memref<16x16xf32>, %ai: memref<16x16xi32>, %ci: memref<16x16xi32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%af, %af : memref<16x16xf32>, memref<16x16xf32>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x16xf16>, memref<16x16xf16>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %0 = arith.extf %x : f16 to f32
    %1 = arith.extf %y : f16 to f32
    %2 = arith.mulf %0, %acc : f32
    %3 = arith.mulf %2, %1 : f32
    %4 = arith.addf %acc, %3 : f32
    linalg.yield %4 : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ai, %ai : memref<16x16xi32>, memref<16x16xi32>) outs(%ci : memref<16x16xi32>) {
  ^bb0(%x: i32, %y: i32, %acc: i32):
    %0 = arith.muli %x, %y : i32
    %1 = arith.addi %acc, %0 : i32
    linalg.yield %1 : i32
  }
  return
}

// -----

#x = affine_map<(b, s, k, n) -> (b, s, k)>
#w = affine_map<(b, s, k, n) -> (k, n)>
#o = affine_map<(b, s, k, n) -> (b, s, n)>

// A decode step's query projection as llama_ts (TorchScript export) lowers
// it: 2 rows of 64, a 64x64 f16 weight, zero-filled right before. The
// accumulators start at the fill's value, the result is never read and the
// fill is no kernel of its own.
// CHECK-LABEL: func.func @projection_after_fill
// SMALL-LABEL: func.func @projection_after_fill
//  CHECK-SAME:   (%[[X:.+]]: memref<2x1x64xf16>, %[[W:.+]]: memref<64x64xf16>, %[[O:.+]]: memref<2x1x64xf32>)
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<2x2xf32>
//       CHECK:   gpu.launch
//   CHECK-NOT:     memref.load %[[O]]
//       CHECK:     scf.for {{.*}} iter_args(%{{.+}} = %[[ZERO]], %{{.+}} = %[[ZERO]]
//       CHECK:       nvgpu.mma.sync
//       CHECK:     memref.store {{.*}}, %[[O]]
//   CHECK-NOT:   linalg.fill
func.func @projection_after_fill(%x: memref<2x1x64xf16>, %w: memref<64x64xf16>, %o: memref<2x1x64xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%o : memref<2x1x64xf32>)
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x1x64xf16>, memref<64x64xf16>) outs(%o : memref<2x1x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#x = affine_map<(b, s, k, n) -> (b, s, k)>
#w = affine_map<(b, s, k, n) -> (k, n)>
#o = affine_map<(b, s, k, n) -> (b, s, n)>

// A store between the fill and the contraction may write the result (the
// buffers may alias): the fill stays and the accumulators are loaded.
// CHECK-LABEL: func.func @store_between_fill_and_contraction
// SMALL-LABEL: func.func @store_between_fill_and_contraction
//  CHECK-SAME:   (%{{.+}}: memref<2x1x64xf16>, %{{.+}}: memref<64x64xf16>, %[[O:.+]]: memref<2x1x64xf32>
//       CHECK:   linalg.fill
//       CHECK:   memref.store
//       CHECK:   gpu.launch
//       CHECK:     memref.load %[[O]]
func.func @store_between_fill_and_contraction(%x: memref<2x1x64xf16>, %w: memref<64x64xf16>, %o: memref<2x1x64xf32>, %other: memref<4xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  linalg.fill ins(%cst : f32) outs(%o : memref<2x1x64xf32>)
  memref.store %cst, %other[%c0] : memref<4xf32>
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x1x64xf16>, memref<64x64xf16>) outs(%o : memref<2x1x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#x = affine_map<(b, s, k, n) -> (b, s, k)>
#w = affine_map<(b, s, k, n) -> (k, n)>
#o = affine_map<(b, s, k, n) -> (b, s, n)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#heads = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>

// The query projection of llama_ts's decode step with what reads it next
// (trimmed from its lowering): the f16 cast, a reshape to 4 heads of 16
// and the transpose to [batch, head, seq, dim]. Both run on the
// accumulators: each element is rounded and stored once, at its transposed
// place. The f32 result and the untransposed f16 copy are temporaries that
// nothing else reads, so neither is written (their arena folds away); the
// whole chain is one kernel.
// CHECK-LABEL: func.func @projection_cast_transpose
//  CHECK-SAME:   (%[[X:.+]]: memref<2x1x64xf16>, %[[W:.+]]: memref<64x64xf16>, %{{.+}}: memref<4xi64>, %[[Q:.+]]: memref<2x4x1x16xf16>)
//   CHECK-NOT:   memref.alloc
//       CHECK:   gpu.launch
//       CHECK:     nvgpu.mma.sync
//       CHECK:     %[[E:.+]] = vector.extract
//       CHECK:     %[[H:.+]] = arith.truncf %[[E]] : f32 to f16
//       CHECK:     memref.store %[[H]], %[[Q]]
//   CHECK-NOT:     memref.store
//       CHECK:   }
//   CHECK-NOT:   linalg.generic
// SMALL-LABEL: func.func @projection_cast_transpose
func.func @projection_cast_transpose(%x: memref<2x1x64xf16>, %w: memref<64x64xf16>, %shape: memref<4xi64>, %q: memref<2x4x1x16xf16>) {
  %cst = arith.constant 0.000000e+00 : f32
  %alloc = memref.alloc() : memref<1024xi8>
  %c0 = arith.constant 0 : index
  %view = memref.view %alloc[%c0][] : memref<1024xi8> to memref<2x1x64xf32>
  linalg.fill ins(%cst : f32) outs(%view : memref<2x1x64xf32>)
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x1x64xf16>, memref<64x64xf16>) outs(%view : memref<2x1x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %2, %out : f32
    linalg.yield %3 : f32
  }
  %c512 = arith.constant 512 : index
  %view_1 = memref.view %alloc[%c512][] : memref<1024xi8> to memref<2x1x64xf16>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%view : memref<2x1x64xf32>) outs(%view_1 : memref<2x1x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  %reshape = memref.reshape %view_1(%shape) : (memref<2x1x64xf16>, memref<4xi64>) -> memref<2x1x4x16xf16>
  linalg.generic {indexing_maps = [#heads, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%reshape : memref<2x1x4x16xf16>) outs(%q : memref<2x4x1x16xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  memref.dealloc %alloc : memref<1024xi8>
  return
}

// -----

#x = affine_map<(s, k, n) -> (s, k)>
#w = affine_map<(s, k, n) -> (k, n)>
#o = affine_map<(s, k, n) -> (s, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// A residual add after the output projection, whose f32 result is also
// read later (by a second op): the add runs on the accumulators and the
// projection is still stored. The op after that reads the result, not as
// an elementwise consumer of the chain, and stays.
// CHECK-LABEL: func.func @residual_add_result_read_later
//  CHECK-SAME:   (%{{.+}}: memref<2x64xf16>, %{{.+}}: memref<64x64xf16>, %[[R:.+]]: memref<2x64xf32>, %[[H:.+]]: memref<2x64xf32>, %{{.+}}: memref<2x64xf32>)
//       CHECK:   gpu.launch
//       CHECK:     %[[E:.+]] = vector.extract
//       CHECK:     memref.store %[[E]], %[[P:.+]][
//       CHECK:     %[[RES:.+]] = memref.load %[[R]]
//       CHECK:     %[[SUM:.+]] = arith.addf %[[E]], %[[RES]]
//       CHECK:     memref.store %[[SUM]], %[[H]]
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[P]]
// SMALL-LABEL: func.func @residual_add_result_read_later
func.func @residual_add_result_read_later(%a: memref<2x64xf16>, %w: memref<64x64xf16>, %r: memref<2x64xf32>, %h: memref<2x64xf32>, %later: memref<2x64xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %p = memref.alloc() : memref<2x64xf32>
  linalg.fill ins(%cst : f32) outs(%p : memref<2x64xf32>)
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %w : memref<2x64xf16>, memref<64x64xf16>) outs(%p : memref<2x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %2, %out : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : memref<2x64xf32>, memref<2x64xf32>) outs(%h : memref<2x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.addf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %h : memref<2x64xf32>, memref<2x64xf32>) outs(%later : memref<2x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %p : memref<2x64xf32>
  return
}

// -----

#x = affine_map<(s, k, n) -> (s, k)>
#w = affine_map<(s, k, n) -> (k, n)>
#o = affine_map<(s, k, n) -> (s, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// The cast's result lies on the arena bytes of the contraction's input (a
// temporary placed where a dead one was, as speecht5_hifigan's lowering
// has it). Run on the accumulators, it would overwrite rows other warps
// are still reading: it stays a kernel of its own.
// CHECK-LABEL: func.func @epilogue_over_the_input
//       CHECK:   gpu.launch
//       CHECK:   linalg.generic
//  CHECK-SAME:     outs(%[[H:.+]] : memref<32x64xf16>)
// SMALL-LABEL: func.func @epilogue_over_the_input
func.func @epilogue_over_the_input(%w: memref<64x64xf16>, %src: memref<32x64xf16>) -> f16 {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c8192 = arith.constant 8192 : index
  %arena = memref.alloc() : memref<16384xi8>
  %x = memref.view %arena[%c0][] : memref<16384xi8> to memref<32x64xf16>
  memref.copy %src, %x : memref<32x64xf16> to memref<32x64xf16>
  %o = memref.view %arena[%c8192][] : memref<16384xi8> to memref<32x64xf32>
  linalg.fill ins(%cst : f32) outs(%o : memref<32x64xf32>)
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<32x64xf16>, memref<64x64xf16>) outs(%o : memref<32x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %2, %out : f32
    linalg.yield %3 : f32
  }
  %h = memref.view %arena[%c0][] : memref<16384xi8> to memref<32x64xf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%o : memref<32x64xf32>) outs(%h : memref<32x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  %r = memref.load %h[%c0, %c0] : memref<32x64xf16>
  memref.dealloc %arena : memref<16384xi8>
  return %r : f16
}

// -----

#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// A decode step's projection by a constant weight (a MatMul's [K, N]
// initializer, trimmed from llama_ts's lowering to 32 x 12): the weight
// is laid out at compile time in fragment order, 2 column tiles x 2
// reduction tiles x 2 registers x 32 lanes x 2 values, padded with zeros
// to whole tiles. Each register is one 4-byte load per lane, without edge
// guards, and the row-major weight, read by nothing else, is dropped. The
// reduction is numbered so that lane t of a row holds k = 4t..4t+3 of each
// 16-wide step: A (its one row; rows g + 8 are past M and zeros, not loads)
// is one 8-byte load per lane, the 4 lanes of the row 32 contiguous bytes.
// CHECK:       memref.global "private" constant @__constant_32x12xf16_fragments : memref<2x2x2x32x2xf16> = dense_resource<__constant_32x12xf16_fragments> {alignment = 128 : i64}
// CHECK-NOT:   @__constant_32x12xf16 :
// CHECK-LABEL: func.func @projection_by_constant_weight
//  CHECK-SAME:   (%[[X:.+]]: memref<1x1x32xf16>, %[[Y:.+]]: memref<1x1x12xf32>)
//       CHECK:   %[[W:.+]] = memref.get_global @__constant_32x12xf16_fragments : memref<2x2x2x32x2xf16>
//       CHECK:   gpu.launch
//       CHECK:     scf.for %[[KT:.+]] = {{.*}} iter_args
//       CHECK:       vector.load %[[X]]{{.*}} {alignment = 8 : i64} : memref<1x1x32xf16>, vector<4xf16>
//   CHECK-NOT:       vector.load %[[X]]
//       CHECK:       vector.load %[[W]][%[[NT:.+]], %[[KT]], %{{.+}}, %[[LANE:.+]], %{{.+}}] {alignment = 4 : i64} : memref<2x2x2x32x2xf16>, vector<2xf16>
//   CHECK-NOT:       arith.select
//       CHECK:       vector.load %[[W]][%[[NT]], %[[KT]], %{{.+}}, %[[LANE]], %{{.+}}] {alignment = 4 : i64} : memref<2x2x2x32x2xf16>, vector<2xf16>
//       CHECK:       nvgpu.mma.sync
// Lane 0 holds column 0 at k = 0, 1 (0 and 12/64 = 0x3200), lane 1 at
// k = 4, 5 (48/64 = 0x3A00, 60/64 = 0x3B80), little-endian after the
// blob's alignment word.
//       CHECK:   __constant_32x12xf16_fragments: "0x0200000000000032003A803B
// SMALL-LABEL: func.func @projection_by_constant_weight
//       SMALL:   memref.get_global @__constant_32x12xf16_fragments : memref<2x2x2x32x2xf16>
memref.global "private" constant @__constant_32x12xf16 : memref<32x12xf16> = dense<[[0.000000e+00, 1.562500e-02, 3.125000e-02, 4.687500e-02, 6.250000e-02, 7.812500e-02, 9.375000e-02, 1.093750e-01, 1.250000e-01, 1.406250e-01, 1.562500e-01, 1.718750e-01], [1.875000e-01, 2.031250e-01, 2.187500e-01, 2.343750e-01, 2.500000e-01, 2.656250e-01, 2.812500e-01, 2.968750e-01, 3.125000e-01, 3.281250e-01, 3.437500e-01, 3.593750e-01], [3.750000e-01, 3.906250e-01, 4.062500e-01, 4.218750e-01, 4.375000e-01, 4.531250e-01, 4.687500e-01, 4.843750e-01, 5.000000e-01, 5.156250e-01, 5.312500e-01, 5.468750e-01], [5.625000e-01, 5.781250e-01, 5.937500e-01, 6.093750e-01, 6.250000e-01, 6.406250e-01, 6.562500e-01, 6.718750e-01, 6.875000e-01, 7.031250e-01, 7.187500e-01, 7.343750e-01], [7.500000e-01, 7.656250e-01, 7.812500e-01, 7.968750e-01, 8.125000e-01, 8.281250e-01, 8.437500e-01, 8.593750e-01, 8.750000e-01, 8.906250e-01, 9.062500e-01, 9.218750e-01], [9.375000e-01, 9.531250e-01, 9.687500e-01, 9.843750e-01, 1.000000e+00, 1.015625e+00, 1.031250e+00, 1.046875e+00, 1.062500e+00, 1.078125e+00, 1.093750e+00, 1.109375e+00], [1.125000e+00, 1.140625e+00, 1.156250e+00, 1.171875e+00, 1.187500e+00, 1.203125e+00, 1.218750e+00, 1.234375e+00, 1.250000e+00, 1.265625e+00, 1.281250e+00, 1.296875e+00], [1.312500e+00, 1.328125e+00, 1.343750e+00, 1.359375e+00, 1.375000e+00, 1.390625e+00, 1.406250e+00, 1.421875e+00, 1.437500e+00, 1.453125e+00, 1.468750e+00, 1.484375e+00], [1.500000e+00, 1.515625e+00, 1.531250e+00, 1.546875e+00, 1.562500e+00, 1.578125e+00, 1.593750e+00, 1.609375e+00, 1.625000e+00, 1.640625e+00, 1.656250e+00, 1.671875e+00], [1.687500e+00, 1.703125e+00, 1.718750e+00, 1.734375e+00, 1.750000e+00, 1.765625e+00, 1.781250e+00, 1.796875e+00, 1.812500e+00, 1.828125e+00, 1.843750e+00, 1.859375e+00], [1.875000e+00, 1.890625e+00, 1.906250e+00, 1.921875e+00, 1.937500e+00, 1.953125e+00, 1.968750e+00, 1.984375e+00, 2.000000e+00, 2.015625e+00, 2.031250e+00, 2.046875e+00], [2.062500e+00, 2.078125e+00, 2.093750e+00, 2.109375e+00, 2.125000e+00, 2.140625e+00, 2.156250e+00, 2.171875e+00, 2.187500e+00, 2.203125e+00, 2.218750e+00, 2.234375e+00], [2.250000e+00, 2.265625e+00, 2.281250e+00, 2.296875e+00, 2.312500e+00, 2.328125e+00, 2.343750e+00, 2.359375e+00, 2.375000e+00, 2.390625e+00, 2.406250e+00, 2.421875e+00], [2.437500e+00, 2.453125e+00, 2.468750e+00, 2.484375e+00, 2.500000e+00, 2.515625e+00, 2.531250e+00, 2.546875e+00, 2.562500e+00, 2.578125e+00, 2.593750e+00, 2.609375e+00], [2.625000e+00, 2.640625e+00, 2.656250e+00, 2.671875e+00, 2.687500e+00, 2.703125e+00, 2.718750e+00, 2.734375e+00, 2.750000e+00, 2.765625e+00, 2.781250e+00, 2.796875e+00], [2.812500e+00, 2.828125e+00, 2.843750e+00, 2.859375e+00, 2.875000e+00, 2.890625e+00, 2.906250e+00, 2.921875e+00, 2.937500e+00, 2.953125e+00, 2.968750e+00, 2.984375e+00], [3.000000e+00, 3.015625e+00, 3.031250e+00, 3.046875e+00, 3.062500e+00, 3.078125e+00, 3.093750e+00, 3.109375e+00, 3.125000e+00, 3.140625e+00, 3.156250e+00, 3.171875e+00], [3.187500e+00, 3.203125e+00, 3.218750e+00, 3.234375e+00, 3.250000e+00, 3.265625e+00, 3.281250e+00, 3.296875e+00, 3.312500e+00, 3.328125e+00, 3.343750e+00, 3.359375e+00], [3.375000e+00, 3.390625e+00, 3.406250e+00, 3.421875e+00, 3.437500e+00, 3.453125e+00, 3.468750e+00, 3.484375e+00, 3.500000e+00, 3.515625e+00, 3.531250e+00, 3.546875e+00], [3.562500e+00, 3.578125e+00, 3.593750e+00, 3.609375e+00, 3.625000e+00, 3.640625e+00, 3.656250e+00, 3.671875e+00, 3.687500e+00, 3.703125e+00, 3.718750e+00, 3.734375e+00], [3.750000e+00, 3.765625e+00, 3.781250e+00, 3.796875e+00, 3.812500e+00, 3.828125e+00, 3.843750e+00, 3.859375e+00, 3.875000e+00, 3.890625e+00, 3.906250e+00, 3.921875e+00], [3.937500e+00, 3.953125e+00, 3.968750e+00, 3.984375e+00, 4.000000e+00, 4.015625e+00, 4.031250e+00, 4.046875e+00, 4.062500e+00, 4.078125e+00, 4.093750e+00, 4.109375e+00], [4.125000e+00, 4.140625e+00, 4.156250e+00, 4.171875e+00, 4.187500e+00, 4.203125e+00, 4.218750e+00, 4.234375e+00, 4.250000e+00, 4.265625e+00, 4.281250e+00, 4.296875e+00], [4.312500e+00, 4.328125e+00, 4.343750e+00, 4.359375e+00, 4.375000e+00, 4.390625e+00, 4.406250e+00, 4.421875e+00, 4.437500e+00, 4.453125e+00, 4.468750e+00, 4.484375e+00], [4.500000e+00, 4.515625e+00, 4.531250e+00, 4.546875e+00, 4.562500e+00, 4.578125e+00, 4.593750e+00, 4.609375e+00, 4.625000e+00, 4.640625e+00, 4.656250e+00, 4.671875e+00], [4.687500e+00, 4.703125e+00, 4.718750e+00, 4.734375e+00, 4.750000e+00, 4.765625e+00, 4.781250e+00, 4.796875e+00, 4.812500e+00, 4.828125e+00, 4.843750e+00, 4.859375e+00], [4.875000e+00, 4.890625e+00, 4.906250e+00, 4.921875e+00, 4.937500e+00, 4.953125e+00, 4.968750e+00, 4.984375e+00, 5.000000e+00, 5.015625e+00, 5.031250e+00, 5.046875e+00], [5.062500e+00, 5.078125e+00, 5.093750e+00, 5.109375e+00, 5.125000e+00, 5.140625e+00, 5.156250e+00, 5.171875e+00, 5.187500e+00, 5.203125e+00, 5.218750e+00, 5.234375e+00], [5.250000e+00, 5.265625e+00, 5.281250e+00, 5.296875e+00, 5.312500e+00, 5.328125e+00, 5.343750e+00, 5.359375e+00, 5.375000e+00, 5.390625e+00, 5.406250e+00, 5.421875e+00], [5.437500e+00, 5.453125e+00, 5.468750e+00, 5.484375e+00, 5.500000e+00, 5.515625e+00, 5.531250e+00, 5.546875e+00, 5.562500e+00, 5.578125e+00, 5.593750e+00, 5.609375e+00], [5.625000e+00, 5.640625e+00, 5.656250e+00, 5.671875e+00, 5.687500e+00, 5.703125e+00, 5.718750e+00, 5.734375e+00, 5.750000e+00, 5.765625e+00, 5.781250e+00, 5.796875e+00], [5.812500e+00, 5.828125e+00, 5.843750e+00, 5.859375e+00, 5.875000e+00, 5.890625e+00, 5.906250e+00, 5.921875e+00, 5.937500e+00, 5.953125e+00, 5.968750e+00, 5.984375e+00]]>
func.func @projection_by_constant_weight(%x: memref<1x1x32xf16>, %y: memref<1x1x12xf32>) {
  %w = memref.get_global @__constant_32x12xf16 : memref<32x12xf16>
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x1x12xf32>)
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : memref<1x1x32xf16>, memref<32x12xf16>) outs(%y : memref<1x1x12xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// The same weight also read by another op (tied embeddings: the head's
// weight is the token table): the row-major weight stays for it.
// CHECK-LABEL: func.func @weight_read_elsewhere
//       CHECK:   memref.get_global @__constant_32x12xf16 : memref<32x12xf16>
//       CHECK:   memref.get_global @__constant_32x12xf16_fragments
//       CHECK:   memref.copy
memref.global "private" constant @__constant_32x12xf16 : memref<32x12xf16> = dense<1.0>
func.func @weight_read_elsewhere(%x: memref<1x1x32xf16>, %y: memref<1x1x12xf32>, %z: memref<32x12xf16>) {
  %w = memref.get_global @__constant_32x12xf16 : memref<32x12xf16>
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : memref<1x1x32xf16>, memref<32x12xf16>) outs(%y : memref<1x1x12xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  memref.copy %w, %z : memref<32x12xf16> to memref<32x12xf16>
  return
}

// -----

#q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#kc = affine_map<(b, h, m, n, k) -> (b, h floordiv 2, n, k)>
#s = affine_map<(b, h, m, n, k) -> (b, h, m, n)>

// Q.K^T of llama_ts's decode step (grouped-query heads, cache 129),
// trimmed from its lowering: K is read straight from the f32 present cache
// of its KV head, scaled and rounded to f16 as it is loaded. The two
// values of a register are adjacent in the cache, so they are one 8-byte
// load, and the scale and cast run on each.
// CHECK-LABEL: func.func @scores_from_f32_cache
//  CHECK-SAME:   (%[[Q:.+]]: memref<1x4x1x16xf16>, %[[K:.+]]: memref<1x2x129x16xf32>, %{{.+}}: memref<1x4x1x129xf32>)
//       CHECK:   gpu.launch
//       CHECK:     %[[PAIR:.+]] = vector.load %[[K]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] {alignment = 8 : i64} : memref<1x2x129x16xf32>, vector<2xf32>
//       CHECK:     %[[K0:.+]] = vector.extract %[[PAIR]][0] : f32 from vector<2xf32>
//       CHECK:     %[[S0:.+]] = arith.mulf %[[K0]], %{{.+}} : f32
//       CHECK:     arith.truncf %[[S0]] : f32 to f16
//       CHECK:     %[[K1:.+]] = vector.extract %[[PAIR]][1] : f32 from vector<2xf32>
//       CHECK:     %[[S1:.+]] = arith.mulf %[[K1]], %{{.+}} : f32
//       CHECK:     arith.truncf %[[S1]] : f32 to f16
//       CHECK:     nvgpu.mma.sync
func.func @scores_from_f32_cache(%q: memref<1x4x1x16xf16>, %k: memref<1x2x129x16xf32>, %s: memref<1x4x1x129xf32>) {
  %scale = arith.constant 5.000000e-01 : f32
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<1x4x1x129xf32>)
  linalg.generic {indexing_maps = [#q, #kc, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<1x4x1x16xf16>, memref<1x2x129x16xf32>) outs(%s : memref<1x4x1x129xf32>) {
  ^bb0(%x: f16, %y: f32, %acc: f32):
    %0 = arith.mulf %y, %scale : f32
    %1 = arith.truncf %0 : f32 to f16
    %2 = arith.extf %x : f16 to f32
    %3 = arith.extf %1 : f16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.addf %acc, %4 : f32
    linalg.yield %5 : f32
  }
  return
}
