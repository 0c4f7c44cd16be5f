// RUN: mp-opt %s -split-input-file --mp-distinct-results | FileCheck %s
// An allocation returned twice gets a copy for each repeat, so that
// buffer-results-to-out-params can make every result its own out-param.
// Seen on gpt2_ts (shared/corpus) with every node value returned for
// calibration: present.0.key is also the Concat node's value.
// RUN: mp-opt %s -split-input-file --mp-distinct-results --buffer-results-to-out-params="hoist-static-allocs modify-public-functions" | FileCheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @twice(
// CHECK: %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[C:.+]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[C]]
// CHECK: return %[[A]], %[[C]], %[[B]]
// OUT-LABEL: func.func @twice(
// OUT-SAME: %{{.+}}: memref<4xf32>, %[[O0:[^:]+]]: memref<4xf32>, %[[O1:[^:]+]]: memref<4xf32>, %[[O2:[^:]+]]: memref<4xf32>)
// OUT: memref.copy %[[O0]], %[[O1]]
func.func @twice(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  return %a, %a, %b : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// A dynamic size is read from the buffer copied.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[X:[^:]+]]: memref<?xf32>
// CHECK: %[[N:.+]] = memref.dim %[[X]], %{{.+}}
// CHECK: %[[C:.+]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK: memref.copy %[[X]], %[[C]]
// CHECK: return %[[X]], %[[C]]
func.func @dynamic(%x: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  return %x, %x : memref<?xf32>, memref<?xf32>
}
