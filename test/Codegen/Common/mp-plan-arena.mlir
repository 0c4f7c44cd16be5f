// RUN: mp-opt %s --pass-pipeline="builtin.module(func.func(mp-plan-arena))" --split-input-file | FileCheck %s
// RUN: mp-opt %s --pass-pipeline="builtin.module(func.func(mp-plan-arena{alignment=64}))" --split-input-file | FileCheck %s --check-prefix=A64
// RUN: not mp-opt %s --pass-pipeline="builtin.module(func.func(mp-plan-arena{alignment=48}))" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: mp-plan-arena: alignment must be a power of 2, not 48

func.func private @use(memref<1024xf32>)
func.func private @use2(memref<1024xf32>, memref<1024xf32>)
func.func private @use_h(memref<512xf16>)

// A chain a -> b -> c: a and b overlap, b and c overlap, a and c do not, so
// c takes a's place. Arena: 2 x 4 KiB; the buffers sum to 9 KiB.
// CHECK-LABEL: func.func @chain
//  CHECK-SAME:   attributes {mp.arena = {buffer_bytes = 9216 : i64, buffers = 3 : i64, bytes = 8192 : i64, peak_bytes = 8192 : i64}}
//       CHECK:   %[[ARENA:.+]] = memref.alloc() {alignment = 256 : i64} : memref<8192xi8>
//   CHECK-DAG:   %[[C0:.+]] = arith.constant 0 : index
//       CHECK:   %[[A:.+]] = memref.view %[[ARENA]][%[[C0]]][] : memref<8192xi8> to memref<1024xf32>
//       CHECK:   %[[C4096:.+]] = arith.constant 4096 : index
//       CHECK:   %[[B:.+]] = memref.view %[[ARENA]][%[[C4096]]][] : memref<8192xi8> to memref<1024xf32>
//       CHECK:   call @use2(%[[A]], %[[B]])
//       CHECK:   %[[CC:.+]] = arith.constant 0 : index
//       CHECK:   %[[C:.+]] = memref.view %[[ARENA]][%[[CC]]][] : memref<8192xi8> to memref<512xf16>
//       CHECK:   call @use_h(%[[C]])
//   CHECK-NOT:   memref.dealloc %[[A]]
//       CHECK:   memref.dealloc %[[ARENA]]
//  CHECK-NEXT:   return
// With a 64-byte alignment the f16 buffer still reuses a's 4 KiB.
// A64-LABEL: func.func @chain
//       A64:   memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
func.func @chain() {
  %a = memref.alloc() : memref<1024xf32>
  %b = memref.alloc() : memref<1024xf32>
  call @use2(%a, %b) : (memref<1024xf32>, memref<1024xf32>) -> ()
  memref.dealloc %a : memref<1024xf32>
  %c = memref.alloc() : memref<512xf16>
  call @use_h(%c) : (memref<512xf16>) -> ()
  memref.dealloc %b : memref<1024xf32>
  memref.dealloc %c : memref<512xf16>
  return
}

// -----

func.func private @use2(memref<1024xf32>, memref<1024xf32>)

// A freed slot that is not the first: `long` stays live at offset 0 while a
// is freed, so c must take a's place at 4096, not the lowest offset.
// CHECK-LABEL: func.func @avoid_live
//  CHECK-SAME:   bytes = 8192 : i64
//       CHECK:   %[[ARENA:.+]] = memref.alloc() {alignment = 256 : i64} : memref<8192xi8>
//       CHECK:   %[[C0:.+]] = arith.constant 0 : index
//       CHECK:   %[[L:.+]] = memref.view %[[ARENA]][%[[C0]]][] : memref<8192xi8> to memref<1024xf32>
//       CHECK:   %[[CA:.+]] = arith.constant 4096 : index
//       CHECK:   %[[A:.+]] = memref.view %[[ARENA]][%[[CA]]][] : memref<8192xi8> to memref<1024xf32>
//       CHECK:   call @use2(%[[L]], %[[A]])
//       CHECK:   %[[CC:.+]] = arith.constant 4096 : index
//       CHECK:   %[[C:.+]] = memref.view %[[ARENA]][%[[CC]]][] : memref<8192xi8> to memref<1024xf32>
//       CHECK:   call @use2(%[[L]], %[[C]])
func.func @avoid_live() {
  %long = memref.alloc() : memref<1024xf32>
  %a = memref.alloc() : memref<1024xf32>
  call @use2(%long, %a) : (memref<1024xf32>, memref<1024xf32>) -> ()
  memref.dealloc %a : memref<1024xf32>
  %c = memref.alloc() : memref<1024xf32>
  call @use2(%long, %c) : (memref<1024xf32>, memref<1024xf32>) -> ()
  memref.dealloc %long : memref<1024xf32>
  memref.dealloc %c : memref<1024xf32>
  return
}

// -----

func.func private @use(memref<1024xf32>)

// Left alone: a returned buffer, a dynamic one, a conditionally freed one,
// a bool buffer. Only the plain temporary is planned.
// CHECK-LABEL: func.func @left_alone
//  CHECK-SAME:   mp.arena = {buffer_bytes = 4096 : i64, buffers = 1 : i64, bytes = 4096 : i64, peak_bytes = 4096 : i64}
//       CHECK:   memref.alloc() {alignment = 256 : i64} : memref<4096xi8>
//       CHECK:   %[[R:.+]] = memref.alloc() : memref<1024xf32>
//       CHECK:   memref.alloc(%{{.+}}) : memref<?xf32>
//       CHECK:   %[[M:.+]] = memref.alloc() : memref<1024xf32>
//       CHECK:   memref.alloc() : memref<64xi1>
//       CHECK:   scf.if
//  CHECK-NEXT:     memref.dealloc %[[M]]
//       CHECK:   return %[[R]]
func.func @left_alone(%n: index, %flag: i1) -> memref<1024xf32> {
  %r = memref.alloc() : memref<1024xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  %m = memref.alloc() : memref<1024xf32>
  %bits = memref.alloc() : memref<64xi1>
  %t = memref.alloc() : memref<1024xf32>
  call @use(%t) : (memref<1024xf32>) -> ()
  memref.dealloc %t : memref<1024xf32>
  scf.if %flag {
    memref.dealloc %m : memref<1024xf32>
  }
  memref.dealloc %d : memref<?xf32>
  memref.dealloc %bits : memref<64xi1>
  return %r : memref<1024xf32>
}

// -----

// No temporaries: no arena, no attribute.
// CHECK-LABEL: func.func @nothing
//   CHECK-NOT:   mp.arena
//   CHECK-NOT:   memref.alloc
func.func @nothing(%x: memref<4xf32>) {
  return
}
