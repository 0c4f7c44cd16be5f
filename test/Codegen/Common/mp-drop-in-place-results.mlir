// RUN: mp-opt %s -split-input-file -verify-diagnostics --mp-drop-in-place-results | FileCheck %s

// The cache was written into its argument: the result goes, nothing is
// copied.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[X:[^:]+]]: memref<4xf32>, %[[C:[^:]+]]: memref<16xf32>) -> memref<4xf32>
// CHECK: %[[SUB:.+]] = memref.subview %[[C]][2] [4] [1]
// CHECK-NEXT: memref.copy %[[X]], %[[SUB]]
// CHECK-NEXT: return %[[X]] : memref<4xf32>
func.func @in_place(%x: memref<4xf32>, %cache: memref<16xf32>) -> (memref<4xf32>, memref<16xf32> {mp.in_place_of = 1 : i64}) {
  %sub = memref.subview %cache[2] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1], offset: 2>>
  memref.copy %x, %sub : memref<4xf32> to memref<4xf32, strided<[1], offset: 2>>
  return %x, %cache : memref<4xf32>, memref<16xf32>
}

// -----

// Bufferization placed the new state elsewhere: it is copied into the
// argument before the result goes.
// CHECK-LABEL: func.func @elsewhere(
// CHECK-SAME: %[[C:[^:]+]]: memref<16xf32>)
// CHECK-NOT: -> memref
// CHECK: %[[NEW:.+]] = memref.alloc
// CHECK: memref.copy %[[NEW]], %[[C]]
// CHECK-NEXT: return
func.func @elsewhere(%cache: memref<16xf32>) -> (memref<16xf32> {mp.in_place_of = 0 : i64}) {
  %new = memref.alloc() : memref<16xf32>
  memref.copy %cache, %new : memref<16xf32> to memref<16xf32>
  return %new : memref<16xf32>
}

// -----

// expected-error @+1 {{result 0 is marked in place of argument 3, which is not a buffer argument}}
func.func @bad_mark(%cache: memref<16xf32>) -> (memref<16xf32> {mp.in_place_of = 3 : i64}) {
  return %cache : memref<16xf32>
}
