// Copies into or out of non-contiguous views become linalg.copy (a loop
// nest LLVM vectorizes); contiguous ones stay memref.copy (a memcpy).
// RUN: mp-opt %s -split-input-file --mp-expand-strided-copies | FileCheck %s

// A past KV cache copied into the first 128 rows of the joined cache.
// CHECK-LABEL: func.func @into_slice(
// CHECK-SAME: %[[PAST:[a-z0-9]+]]: memref<1x4x128x32xf32>, %[[JOINED:[a-z0-9]+]]: memref<1x4x129x32xf32>
// CHECK: %[[VIEW:.+]] = memref.subview %[[JOINED]]
// CHECK: linalg.copy ins(%[[PAST]] : memref<1x4x128x32xf32>) outs(%[[VIEW]] : memref<1x4x128x32xf32, strided<[16512, 4128, 32, 1]>>)
// CHECK-NOT: memref.copy
func.func @into_slice(%past: memref<1x4x128x32xf32>, %joined: memref<1x4x129x32xf32>) {
  %view = memref.subview %joined[0, 0, 0, 0] [1, 4, 128, 32] [1, 1, 1, 1] : memref<1x4x129x32xf32> to memref<1x4x128x32xf32, strided<[16512, 4128, 32, 1]>>
  memref.copy %past, %view : memref<1x4x128x32xf32> to memref<1x4x128x32xf32, strided<[16512, 4128, 32, 1]>>
  return
}

// -----

// A view that is one contiguous block, and plain buffers: memcpy already.
// CHECK-LABEL: func.func @contiguous(
// CHECK-NOT: linalg.copy
// CHECK: memref.copy
// CHECK: memref.copy
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %rows = memref.subview %c[4, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  memref.copy %a, %rows : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  return
}

// -----

// Unranked buffers have no loop nest: left to the runtime.
// CHECK-LABEL: func.func @unranked(
// CHECK: memref.copy
func.func @unranked(%a: memref<*xf32>, %b: memref<*xf32>) {
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  return
}
