// RUN: mp-opt %s --pass-pipeline="builtin.module(func.func(mp-hoist-buffers))" --split-input-file | FileCheck %s

// Trimmed from llama_ts's CUDA lowering (mixed, decode step): bufferization
// allocates each temporary just before the kernel that writes it and frees
// it at the end. The static allocs move to the top in their order, the
// deallocs before the return, so the two casts and the kernel reading both
// are adjacent.
// CHECK-LABEL: func.func @casts_of_the_cache
//  CHECK-SAME:   (%[[K:.+]]: memref<2x2x7x16xf32>, %[[V:.+]]: memref<2x2x7x16xf32>, %[[OUT:.+]]: memref<2x2x7x16xf32>)
//  CHECK-NEXT:   %[[A:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x2x7x16xf16>
//  CHECK-NEXT:   %[[B:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x2x7x16xf16>
//  CHECK-NEXT:   linalg.generic
//  CHECK-SAME:     ins(%[[V]] : memref<2x2x7x16xf32>) outs(%[[A]] : memref<2x2x7x16xf16>)
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[K]] : memref<2x2x7x16xf32>) outs(%[[B]] : memref<2x2x7x16xf16>)
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[A]], %[[B]] : memref<2x2x7x16xf16>, memref<2x2x7x16xf16>) outs(%[[OUT]] : memref<2x2x7x16xf32>)
//       CHECK:   }
//  CHECK-NEXT:   memref.dealloc %[[A]]
//  CHECK-NEXT:   memref.dealloc %[[B]]
//  CHECK-NEXT:   return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @casts_of_the_cache(%k: memref<2x2x7x16xf32>, %v: memref<2x2x7x16xf32>, %out: memref<2x2x7x16xf32>) {
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<2x2x7x16xf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v : memref<2x2x7x16xf32>) outs(%alloc : memref<2x2x7x16xf16>) {
  ^bb0(%in: f32, %o: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  %alloc_7 = memref.alloc() {alignment = 64 : i64} : memref<2x2x7x16xf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : memref<2x2x7x16xf32>) outs(%alloc_7 : memref<2x2x7x16xf16>) {
  ^bb0(%in: f32, %o: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  memref.dealloc %alloc : memref<2x2x7x16xf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alloc, %alloc_7 : memref<2x2x7x16xf16>, memref<2x2x7x16xf16>) outs(%out : memref<2x2x7x16xf32>) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %0 = arith.addf %a, %b : f16
    %1 = arith.extf %0 : f16 to f32
    linalg.yield %1 : f32
  }
  memref.dealloc %alloc_7 : memref<2x2x7x16xf16>
  return
}

// -----

// A buffer whose size is computed in the body stays where its size is
// known; so does one allocated inside a loop.
// CHECK-LABEL: func.func @dynamic_and_nested
//  CHECK-SAME:   (%[[N:.+]]: index)
//  CHECK-NEXT:   %[[S:.+]] = memref.alloc() : memref<4xf32>
//  CHECK-NEXT:   %[[C0:.+]] = arith.constant 0 : index
//  CHECK-NEXT:   %[[D:.+]] = memref.alloc(%[[N]]) : memref<?xf32>
//  CHECK-NEXT:   call @use_dynamic(%[[D]])
//  CHECK-NEXT:   memref.dealloc %[[D]]
//  CHECK-NEXT:   scf.for
//  CHECK-NEXT:     %[[L:.+]] = memref.alloc() : memref<4xf32>
//  CHECK-NEXT:     call @use(%[[L]])
//  CHECK-NEXT:     memref.dealloc %[[L]]
//  CHECK-NEXT:   }
//  CHECK-NEXT:   call @use(%[[S]])
//  CHECK-NEXT:   memref.dealloc %[[S]]
//  CHECK-NEXT:   return
func.func private @use(memref<4xf32>)
func.func private @use_dynamic(memref<?xf32>)
func.func @dynamic_and_nested(%n: index) {
  %c0 = arith.constant 0 : index
  %d = memref.alloc(%n) : memref<?xf32>
  call @use_dynamic(%d) : (memref<?xf32>) -> ()
  memref.dealloc %d : memref<?xf32>
  scf.for %i = %c0 to %n step %n {
    %l = memref.alloc() : memref<4xf32>
    func.call @use(%l) : (memref<4xf32>) -> ()
    memref.dealloc %l : memref<4xf32>
  }
  %s = memref.alloc() : memref<4xf32>
  call @use(%s) : (memref<4xf32>) -> ()
  memref.dealloc %s : memref<4xf32>
  return
}
