// RUN: mp-opt %s --mp-map-to-gpu --split-input-file | FileCheck %s
// RUN: mp-opt %s --mp-map-to-gpu="block-size=64" --split-input-file | FileCheck %s --check-prefix=B64
// RUN: mp-opt %s --mp-map-to-gpu="memory=host" --split-input-file | FileCheck %s --check-prefix=HOST

// An elementwise op over 4x100 elements: one collapsed index over blocks of
// 256 threads (2 blocks), guarded, delinearized row-major.
// CHECK-LABEL: func.func @elementwise
//      CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT: %[[C256:.+]] = arith.constant 256 : index
// CHECK-NEXT: %[[C400:.+]] = arith.constant 400 : index
// CHECK-NEXT: %[[C100:.+]] = arith.constant 100 : index
// CHECK-NEXT: scf.parallel (%[[B:.+]]) = (%[[C0:.+]]) to (%[[C2]]) step (%[[C1:.+]])
// CHECK-NEXT:   scf.parallel (%[[T:.+]]) = (%[[C0]]) to (%[[C256]]) step (%[[C1]])
// CHECK-NEXT:     %[[M:.+]] = arith.muli %[[B]], %[[C256]]
// CHECK-NEXT:     %[[G:.+]] = arith.addi %[[M]], %[[T]]
// CHECK-NEXT:     %[[IN:.+]] = arith.cmpi ult, %[[G]], %[[C400]]
// CHECK-NEXT:     scf.if %[[IN]]
// CHECK-NEXT:       %[[I:.+]] = arith.divui %[[G]], %[[C100]]
// CHECK-NEXT:       %[[J:.+]] = arith.remui %[[G]], %[[C100]]
//      CHECK:       memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<4x100xf32>
//      CHECK:       math.exp
//      CHECK:       memref.store
//      CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
//      CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// B64-LABEL: func.func @elementwise
//      B64: %[[C7:.+]] = arith.constant 7 : index
// B64-NEXT: %[[C64:.+]] = arith.constant 64 : index
//      B64: scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[C7]])
// B64-NEXT:   scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[C64]])
#id = affine_map<(i, j) -> (i, j)>
func.func @elementwise(%a: memref<4x100xf32>, %out: memref<4x100xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x100xf32>) outs(%out : memref<4x100xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A MatMul whose reduction loop sits between parallel ones: the reduction
// moves inside, so each of the 8x16 threads owns one output element and
// loops over k itself. Small iteration spaces get one block of just enough
// threads.
// CHECK-LABEL: func.func @matmul
//      CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK-NEXT: %[[C16:.+]] = arith.constant 16 : index
// CHECK-NEXT: scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[C1:.+]]) step (%[[C1]])
// CHECK-NEXT:   scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[C128]])
//      CHECK:     scf.if
// CHECK-NEXT:       arith.divui %{{.+}}, %[[C16]]
// CHECK-NEXT:       arith.remui %{{.+}}, %[[C16]]
// CHECK-NEXT:       scf.for
//      CHECK:         memref.load %{{.+}} : memref<8x32xf32>
//      CHECK:         memref.load %{{.+}} : memref<32x16xf32>
//      CHECK:         arith.mulf
//      CHECK:         arith.addf
//      CHECK:         memref.store
func.func @matmul(%a: memref<8x32xf32>, %b: memref<32x16xf32>, %c: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>,
                                   affine_map<(i, k, j) -> (k, j)>,
                                   affine_map<(i, k, j) -> (i, j)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<8x32xf32>, memref<32x16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A full reduction has no parallel loop: one thread does it.
// CHECK-LABEL: func.func @full_reduction
//      CHECK: scf.parallel (%{{.+}}) = (%[[C0:.+]]) to (%[[C1:.+]]) step (%[[C1]])
// CHECK-NEXT:   scf.parallel (%{{.+}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]])
//      CHECK:     scf.for
//      CHECK:       arith.addf
func.func @full_reduction(%a: memref<64xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%a : memref<64xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Host copies become copy kernels and static reshapes reinterpret the
// buffer without reading the shape operand.
// CHECK-LABEL: func.func @copy_and_reshape
//  CHECK-NOT: memref.copy
//  CHECK-NOT: memref.reshape
//      CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [2, 6], strides: [6, 1]
//      CHECK: scf.parallel
//      CHECK:   memref.load
//      CHECK:   memref.store
func.func @copy_and_reshape(%a: memref<12xf32>, %shape: memref<2xi64>, %out: memref<2x6xf32>) {
  %r = memref.reshape %a(%shape) : (memref<12xf32>, memref<2xi64>) -> memref<2x6xf32>
  memref.copy %r, %out : memref<2x6xf32> to memref<2x6xf32>
  return
}

// -----

// Bounds known only at run time: the trip count and the grid are computed on
// the host (at least one block), the guard compares with the run-time total
// and the row index is a division by the static inner trip count.
// CHECK-LABEL: func.func @dynamic_rows
//      CHECK: %[[ROWS:.+]] = memref.dim %{{.+}}, %{{.+}} : memref<?x100xf32>
//      CHECK: %[[TRIP:.+]] = arith.ceildivsi %{{.+}}, %{{.+}} : index
//      CHECK: %[[TOTAL:.+]] = arith.muli %[[TRIP]], %[[C100:.+]] : index
//      CHECK: %[[N:.+]] = arith.ceildivsi %[[TOTAL]], %[[C256:.+]] : index
// CHECK-NEXT: %[[BLOCKS:.+]] = arith.maxsi %[[N]], %{{.+}} : index
// CHECK-NEXT: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%[[BLOCKS]])
// CHECK-NEXT:   scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%[[C256]])
//      CHECK:     %[[IN:.+]] = arith.cmpi ult, %{{.+}}, %[[TOTAL]]
// CHECK-NEXT:     scf.if %[[IN]]
// CHECK-NEXT:       arith.divui %{{.+}}, %[[C100]]
// CHECK-NEXT:       arith.remui %{{.+}}, %[[C100]]
func.func @dynamic_rows(%a: memref<?x100xf32>, %out: memref<?x100xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x100xf32>) outs(%out : memref<?x100xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// The lists that the lowering of a several-buffer bufferization.dealloc
// keeps (addresses, ownership flags), read only by host code and its
// helper, stay on the host stack instead of device memory.
// CHECK-LABEL: func.func @dealloc_lists
// CHECK-NEXT: %[[LIST:.+]] = memref.alloca() : memref<2xindex>
//  CHECK-NOT: memref.alloc()
//  CHECK-NOT: memref.dealloc %[[LIST]]
//      CHECK: call @helper
func.func @dealloc_lists(%p: index, %q: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %list = memref.alloc() : memref<2xindex>
  memref.store %p, %list[%c0] : memref<2xindex>
  memref.store %q, %list[%c1] : memref<2xindex>
  %any = memref.cast %list : memref<2xindex> to memref<?xindex>
  call @helper(%any) : (memref<?xindex>) -> ()
  memref.dealloc %list : memref<2xindex>
  return
}
func.func private @helper(%list: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %list[%c0] : memref<?xindex>
  memref.store %v, %list[%c0] : memref<?xindex>
  return
}

// -----

// The condition of an If, read on the host from a device buffer: loaded on
// one thread into a device scalar, copied to the host stack.
// CHECK-LABEL: func.func private @mp_cuda_copy_to_host(!llvm.ptr, !llvm.ptr, i64)
// CHECK-LABEL: func.func @host_read
// CHECK-SAME: (%[[FLAG:.+]]: memref<i1>, %[[OUT:.+]]: memref<4xf32>)
// CHECK: %[[HBUF:.+]] = memref.alloca() : memref<i1>
// CHECK: %[[DEV:.+]] = memref.alloc() : memref<i1>
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     scf.if
// CHECK-NEXT:  %[[C:.+]] = memref.load %[[FLAG]][] : memref<i1>
// CHECK-NEXT:  memref.store %[[C]], %[[DEV]][] : memref<i1>
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK: memref.extract_aligned_pointer_as_index %[[HBUF]]
// CHECK: %[[DST:.+]] = llvm.inttoptr
// CHECK: memref.extract_aligned_pointer_as_index %[[DEV]]
// CHECK: %[[SRC:.+]] = llvm.inttoptr
// CHECK: call @mp_cuda_copy_to_host(%[[DST]], %[[SRC]], %[[ONE]])
// CHECK: %[[V:.+]] = memref.load %[[HBUF]][] : memref<i1>
// CHECK: memref.dealloc %[[DEV]]
// CHECK: scf.if %[[V]] {
// CHECK:   scf.parallel
// HOST-LABEL: func.func private @memcpy(!llvm.ptr, !llvm.ptr, i64)
// HOST-LABEL: func.func @host_read
// HOST: call @memcpy(
func.func @host_read(%flag: memref<i1>, %out: memref<4xf32>) {
  %c = memref.load %flag[] : memref<i1>
  scf.if %c {
    %z = arith.constant 0.0 : f32
    linalg.fill ins(%z : f32) outs(%out : memref<4xf32>)
  }
  return
}

// -----

// A count (NonZero's first pass) sizes an allocation: the counting loop runs
// on one thread, its result comes back to size the buffer on the host.
// CHECK-LABEL: func.func @count_then_alloc
// CHECK: %[[HBUF:.+]] = memref.alloca() : memref<index>
// CHECK: %[[DEV:.+]] = memref.alloc() : memref<index>
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     scf.if
// CHECK-NEXT:  %[[N:.+]] = scf.for
// CHECK:       memref.store %[[N]], %[[DEV]][] : memref<index>
// CHECK: %[[EIGHT:.+]] = arith.constant 8 : i64
// CHECK: call @mp_cuda_copy_to_host(%{{.+}}, %{{.+}}, %[[EIGHT]])
// CHECK: %[[COUNT:.+]] = memref.load %[[HBUF]][] : memref<index>
// CHECK: memref.alloc(%[[COUNT]]) : memref<?xi64>
func.func @count_then_alloc(%mask: memref<8xi1>) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %c0) -> (index) {
    %m = memref.load %mask[%i] : memref<8xi1>
    %inc = arith.select %m, %c1, %c0 : index
    %next = arith.addi %acc, %inc : index
    scf.yield %next : index
  }
  %r = memref.alloc(%n) : memref<?xi64>
  return %r : memref<?xi64>
}

// -----

// A reshape to a shape computed in device memory: its run-time sizes are
// loaded together on one thread and come back for the reinterpret_cast.
// CHECK-LABEL: func.func @dynamic_reshape
// CHECK-SAME: (%[[A:.+]]: memref<12xf32>, %[[S:.+]]: memref<2xi64>)
// CHECK: scf.if
// CHECK-NEXT: %[[D0:.+]] = memref.load %[[S]][%{{.+}}] : memref<2xi64>
// CHECK-NEXT: %[[D1:.+]] = memref.load %[[S]][%{{.+}}] : memref<2xi64>
// CHECK-NEXT: memref.store %[[D0]]
// CHECK-NEXT: memref.store %[[D1]]
// CHECK-COUNT-2: call @mp_cuda_copy_to_host
// CHECK: memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%{{.+}}, %{{.+}}], strides: [%{{.+}}, 1] : memref<12xf32> to memref<?x?xf32>
func.func @dynamic_reshape(%a: memref<12xf32>, %shape: memref<2xi64>) -> memref<?x?xf32> {
  %r = memref.reshape %a(%shape) : (memref<12xf32>, memref<2xi64>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}

// -----

#s = affine_map<(b, h, q, k) -> (b, h, q, k)>
#m = affine_map<(b, h, q, k) -> (b, h, q)>

// Softmax's running max over a decode step's 8 cached positions, as
// llama_ts (TorchScript export) lowers it: 2x4 rows, the max -inf-filled
// right before. One kernel: each thread starts from the fill's value at
// the first position (k == 0) and reads the buffer after that; the fill is
// no kernel of its own.
// CHECK-LABEL: func.func @max_after_fill
//  CHECK-SAME:   (%[[S:.+]]: memref<2x4x1x8xf16>, %[[M:.+]]: memref<2x4x1xf32>)
//   CHECK-DAG:   %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
//   CHECK-NOT:   linalg.fill
//       CHECK:   scf.parallel
//       CHECK:     scf.for %[[K:.+]] = %{{.+}} to
//       CHECK:       %[[OLD:.+]] = memref.load %[[M]]
//       CHECK:       %[[FIRST:.+]] = arith.cmpi eq, %[[K]], %{{.+}} : index
//       CHECK:       %[[ACC:.+]] = arith.select %[[FIRST]], %[[NEGINF]], %[[OLD]]
//       CHECK:       arith.maximumf %{{.+}}, %[[ACC]]
//       CHECK:       memref.store {{.*}}, %[[M]]
//       CHECK:   } {mapping = [#gpu.loop_dim_map<processor = block_x
//   CHECK-NOT:   scf.parallel
// B64-LABEL: func.func @max_after_fill
// HOST-LABEL: func.func @max_after_fill
func.func @max_after_fill(%s: memref<2x4x1x8xf16>, %m: memref<2x4x1xf32>) {
  %cst = arith.constant 0xFF800000 : f32
  linalg.fill ins(%cst : f32) outs(%m : memref<2x4x1xf32>)
  linalg.generic {indexing_maps = [#s, #m], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : memref<2x4x1x8xf16>) outs(%m : memref<2x4x1xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.maximumf %0, %out : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Rotary embedding's rotate_half in llama_ts's decode step, as it lowers:
// the negated upper half and the lower half are copied into the two halves
// of one buffer. The copies touch disjoint bytes and nothing else writes
// what they read: one launch of 64 + 64 threads, each thread running the
// iteration of its share.
// CHECK-LABEL: func.func @rotate_half_copies
//   CHECK-DAG:   %[[C64:.+]] = arith.constant 64 : index
//   CHECK-DAG:   %[[C128:.+]] = arith.constant 128 : index
//       CHECK:   scf.parallel
//       CHECK:     scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[C128]])
//       CHECK:       scf.if
//       CHECK:         %[[FIRST:.+]] = arith.cmpi ult, %[[G:.+]], %[[C64]]
//       CHECK:         scf.if %[[FIRST]]
//       CHECK:           memref.store
//       CHECK:         %[[REST:.+]] = arith.cmpi uge, %[[G]], %[[C64]]
//       CHECK:         scf.if
//       CHECK:           arith.subi %[[G]], %[[C64]]
//       CHECK:           memref.store
//   CHECK-NOT:   scf.parallel
// B64-LABEL: func.func @rotate_half_copies
// HOST-LABEL: func.func @rotate_half_copies
func.func @rotate_half_copies(%q: memref<2x4x1x16xf16>, %rot: memref<2x4x1x16xf16>) {
  %hi = memref.subview %q[0, 0, 0, 8] [2, 4, 1, 8] [1, 1, 1, 1] : memref<2x4x1x16xf16> to memref<2x4x1x8xf16, strided<[64, 16, 16, 1], offset: 8>>
  %lo = memref.subview %q[0, 0, 0, 0] [2, 4, 1, 8] [1, 1, 1, 1] : memref<2x4x1x16xf16> to memref<2x4x1x8xf16, strided<[64, 16, 16, 1]>>
  %first = memref.subview %rot[0, 0, 0, 0] [2, 4, 1, 8] [1, 1, 1, 1] : memref<2x4x1x16xf16> to memref<2x4x1x8xf16, strided<[64, 16, 16, 1]>>
  %second = memref.subview %rot[0, 0, 0, 8] [2, 4, 1, 8] [1, 1, 1, 1] : memref<2x4x1x16xf16> to memref<2x4x1x8xf16, strided<[64, 16, 16, 1], offset: 8>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%hi : memref<2x4x1x8xf16, strided<[64, 16, 16, 1], offset: 8>>) outs(%first : memref<2x4x1x8xf16, strided<[64, 16, 16, 1]>>) {
  ^bb0(%in: f16, %out: f16):
    %n = arith.negf %in : f16
    linalg.yield %n : f16
  }
  memref.copy %lo, %second : memref<2x4x1x8xf16, strided<[64, 16, 16, 1]>> to memref<2x4x1x8xf16, strided<[64, 16, 16, 1], offset: 8>>
  return
}

// -----

// Ops that depend on each other keep their own launches: the second reads
// what the first writes, and the third writes arena bytes the second reads
// (a temporary reusing a dead one's place), so running it alongside could
// overwrite them before they are read.
// CHECK-LABEL: func.func @dependent_ops_stay_apart
// CHECK-COUNT-3: } {mapping = [#gpu.loop_dim_map<processor = block_x
// B64-LABEL: func.func @dependent_ops_stay_apart
// HOST-LABEL: func.func @dependent_ops_stay_apart
func.func @dependent_ops_stay_apart(%x: memref<64xf32>, %y: memref<64xf32>) {
  %arena = memref.alloc() : memref<512xi8>
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %a = memref.view %arena[%c0][] : memref<512xi8> to memref<64xf32>
  %b = memref.view %arena[%c256][] : memref<512xi8> to memref<64xf32>
  %c = memref.view %arena[%c0][] : memref<512xi8> to memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%a : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%b : memref<64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  memref.copy %c, %y : memref<64xf32> to memref<64xf32>
  memref.dealloc %arena : memref<512xi8>
  return
}
