// RUN: mp-opt %s --mp-merge-launches --split-input-file | FileCheck %s

// A decode step's q, k and v projections as mp-contraction-to-mma leaves
// them (the shapes of llama_ts: 64 output columns on 2 warps, 32 on one),
// bodies cut down to a load and a store: independent launches, so one
// launch of 3 blocks of 64 threads. Block 0 runs q; blocks 1 and 2 run k and
// v on their first 32 threads, with the block index rebased.
// CHECK-LABEL: func.func @qkv
//  CHECK-SAME:   (%[[X:.+]]: memref<64xf16>, %[[Q:.+]]: memref<64xf16>, %[[K:.+]]: memref<32xf16>, %[[V:.+]]: memref<32xf16>)
//       CHECK:   %[[C3:.+]] = arith.constant 3 : index
//       CHECK:   %[[C64:.+]] = arith.constant 64 : index
//       CHECK:   gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C3]], {{.*}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C64]],
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.+}}, %[[Q]]
//       CHECK:     arith.cmpi uge, %[[B]]
//       CHECK:     %[[NARROW:.+]] = arith.cmpi ult, %[[T]], %{{.+}}
//       CHECK:     %[[KSHARE:.+]] = arith.andi %{{.+}}, %[[NARROW]]
//       CHECK:     scf.if %[[KSHARE]]
//       CHECK:       arith.subi %[[B]]
//       CHECK:       memref.store %{{.+}}, %[[K]]
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.+}}, %[[V]]
//   CHECK-NOT:   gpu.launch
func.func @qkv(%x: memref<64xf16>, %q: memref<64xf16>, %k: memref<32xf16>, %v: memref<32xf16>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<64xf16>
    memref.store %e, %q[%tx] : memref<64xf16>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.addi %tx, %bx : index
    %e = memref.load %x[%i] : memref<64xf16>
    memref.store %e, %k[%tx] : memref<32xf16>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<64xf16>
    memref.store %e, %v[%tx] : memref<32xf16>
    gpu.terminator
  }
  return
}

// -----

// The second launch reads what the first writes, and the third has a
// barrier that every thread of its blocks must reach, so it cannot run on
// 16 of the others' 32 threads: three launches stay.
// CHECK-LABEL: func.func @kept_apart
// CHECK-COUNT-3: gpu.launch blocks
func.func @kept_apart(%x: memref<32xf32>, %y: memref<32xf32>, %z: memref<32xf32>, %w: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<32xf32>
    memref.store %e, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %y[%tx] : memref<32xf32>
    memref.store %e, %z[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %e = memref.load %w[%tx] : memref<16xf32>
    gpu.barrier
    memref.store %e, %w[%tx] : memref<16xf32>
    gpu.terminator
  }
  return
}

// -----

// A block-wide launch (a barrier, a block reduction: a normalization's
// kernel) joins a launch of its own width that it does not touch; each
// block runs one member's body, so the whole block reaches the barrier.
// CHECK-LABEL: func.func @block_wide_at_its_width
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C3:.+]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads({{.*}}) in (%{{.*}} = %[[C32:.+]],
//       CHECK:     scf.if
//       CHECK:       memref.store
//       CHECK:     scf.if
//       CHECK:       gpu.barrier
//       CHECK:       memref.store
//       CHECK-NOT: gpu.launch
func.func @block_wide_at_its_width(%x: memref<32xf32>, %y: memref<32xf32>, %w: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<32xf32>
    memref.store %e, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = affine.apply affine_map<(b, t) -> (b * 32 + t)>(%bx, %tx)
    %e = memref.load %w[%i] : memref<64xf32>
    %s = gpu.all_reduce add %e uniform {} : (f32) -> f32
    gpu.barrier
    memref.store %s, %w[%i] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// qwen3's q and k projections, each followed by its per-head RMSNorm's
// statistic (rows of 16, one thread per row), then the v projection
// (shapes of qwen3_ts at batch 1, bodies cut down to loads and stores). The
// k and v projections move up past the q statistic, which they do not
// touch, into the q projection's launch; the k statistic, which reads k,
// joins the q statistic's launch after it: two launches instead of five.
// CHECK-LABEL: func.func @projections_past_norm_statistics
//  CHECK-SAME:   (%[[X:.+]]: memref<64xf16>, %[[Q:.+]]: memref<64xf16>, %[[K:.+]]: memref<32xf16>, %[[V:.+]]: memref<32xf16>, %[[QS:.+]]: memref<4xf32>, %[[KS:.+]]: memref<2xf32>)
//       CHECK:   gpu.launch
//       CHECK:       memref.store %{{.+}}, %[[Q]]
//       CHECK:       memref.store %{{.+}}, %[[K]]
//       CHECK:       memref.store %{{.+}}, %[[V]]
//       CHECK:   gpu.launch
//       CHECK:       memref.load %[[Q]]
//       CHECK:       memref.store %{{.+}}, %[[QS]]
//       CHECK:       memref.load %[[K]]
//       CHECK:       memref.store %{{.+}}, %[[KS]]
//   CHECK-NOT:   gpu.launch
func.func @projections_past_norm_statistics(%x: memref<64xf16>, %q: memref<64xf16>, %k: memref<32xf16>, %v: memref<32xf16>, %qs: memref<4xf32>, %ks: memref<2xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<64xf16>
    memref.store %e, %q[%tx] : memref<64xf16>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %i = arith.muli %tx, %c16 : index
    %e = memref.load %q[%i] : memref<64xf16>
    %f = arith.extf %e : f16 to f32
    memref.store %f, %qs[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<64xf16>
    memref.store %e, %k[%tx] : memref<32xf16>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
    %i = arith.muli %tx, %c16 : index
    %e = memref.load %k[%i] : memref<32xf16>
    %f = arith.extf %e : f16 to f32
    memref.store %f, %ks[%tx] : memref<2xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<64xf16>
    memref.store %e, %v[%tx] : memref<32xf16>
    gpu.terminator
  }
  return
}

// -----

// Nothing moves past an op that may touch memory: the third launch is
// independent of the second, but a host store stands between them and the
// first.
// CHECK-LABEL: func.func @host_store_between
//       CHECK:   gpu.launch
//       CHECK:   memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<1xf32>
//       CHECK:   gpu.launch
//   CHECK-NOT:   gpu.launch
func.func @host_store_between(%x: memref<32xf32>, %y: memref<32xf32>, %z: memref<32xf32>, %w: memref<32xf32>, %h: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<32xf32>
    memref.store %e, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  memref.store %one, %h[%c0] : memref<1xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %y[%tx] : memref<32xf32>
    memref.store %e, %z[%tx] : memref<32xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %e = memref.load %x[%tx] : memref<32xf32>
    memref.store %e, %w[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
