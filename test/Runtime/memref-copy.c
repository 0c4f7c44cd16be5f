// memrefCopy of libmp_runtime against a naive loop, on strided, permuted,
// reversed and dense views; and the pool behind MLIR's generic allocation
// functions.
//
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_runtime_include \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib -o %t
// RUN: %t | FileCheck %s
//
// CHECK:      2-D window: ok
// CHECK-NEXT: 2-D transpose: ok
// CHECK-NEXT: 2-D reversed rows: ok
// CHECK-NEXT: 3-D every other plane: ok
// CHECK-NEXT: 3-D permuted destination: ok
// CHECK-NEXT: 3-D dense: ok
// CHECK-NEXT: 3-D f16 inner stride 2: ok
// CHECK-NEXT: rank 0: ok
// CHECK-NEXT: empty: ok
// CHECK-NEXT: pool: aligned 64 1, reused 1, aligned 128 1
// CHECK-NOT:  mismatch

#include "mp/mlir_abi.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/// A ranked descriptor as MLIR lays it out (up to rank 3).
typedef struct {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[6];
} Desc;

static Desc view(void *data, int rank, int64_t offset, const int64_t *sizes,
                 const int64_t *strides) {
  Desc d = {data, data, offset, {0}};
  for (int i = 0; i < rank; ++i) {
    d.sizesAndStrides[i] = sizes[i];
    d.sizesAndStrides[rank + i] = strides[i];
  }
  return d;
}

/// Copies with memrefCopy and with a loop over every index; compares the
/// whole destination buffers (untouched elements included).
static void check(const char *name, int rank, int64_t elemSize, char *src,
                  int64_t srcOffset, const int64_t *srcStrides,
                  int64_t dstCapacity, int64_t dstOffset,
                  const int64_t *dstStrides, const int64_t *sizes) {
  static char got[4096], want[4096];
  memset(got, 0x5a, sizeof(got));
  memset(want, 0x5a, sizeof(want));
  Desc s = view(src, rank, srcOffset, sizes, srcStrides);
  Desc d = view(got, rank, dstOffset, sizes, dstStrides);
  mp_unranked_memref us = {rank, &s}, ud = {rank, &d};
  memrefCopy(elemSize, &us, &ud);

  int64_t total = 1;
  for (int i = 0; i < rank; ++i)
    total *= sizes[i];
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t rest = linear, from = srcOffset, to = dstOffset;
    for (int i = rank - 1; i >= 0; --i) {
      int64_t index = rest % sizes[i];
      rest /= sizes[i];
      from += index * srcStrides[i];
      to += index * dstStrides[i];
    }
    memcpy(want + to * elemSize, src + from * elemSize, elemSize);
  }
  int same = memcmp(got, want, dstCapacity * elemSize) == 0;
  printf("%s: %s\n", name, same ? "ok" : "mismatch");
}

int main(void) {
  float src[4 * 5 * 6];
  for (int i = 0; i < 4 * 5 * 6; ++i)
    src[i] = (float)i;
  char *s = (char *)src;

  { // Rows 1..3, columns 2..5 of a 6x8 matrix into a dense 3x4 one.
    int64_t sizes[] = {3, 4}, ss[] = {8, 1}, ds[] = {4, 1};
    check("2-D window", 2, 4, s, 1 * 8 + 2, ss, 12, 0, ds, sizes);
  }
  { // The transpose of a 6x8 matrix.
    int64_t sizes[] = {8, 6}, ss[] = {1, 8}, ds[] = {6, 1};
    check("2-D transpose", 2, 4, s, 0, ss, 48, 0, ds, sizes);
  }
  { // Rows in reverse order (negative stride), into a padded destination.
    int64_t sizes[] = {6, 8}, ss[] = {-8, 1}, ds[] = {10, 1};
    check("2-D reversed rows", 2, 4, s, 5 * 8, ss, 60, 1, ds, sizes);
  }
  { // Planes 0 and 2 of a 4x5x6 array: each plane is one contiguous run.
    int64_t sizes[] = {2, 5, 6}, ss[] = {60, 6, 1}, ds[] = {30, 6, 1};
    check("3-D every other plane", 3, 4, s, 0, ss, 60, 0, ds, sizes);
  }
  { // A dense 4x5x6 source into a destination laid out as 6x4x5.
    int64_t sizes[] = {4, 5, 6}, ss[] = {30, 6, 1}, ds[] = {5, 1, 20};
    check("3-D permuted destination", 3, 4, s, 0, ss, 120, 0, ds, sizes);
  }
  { // Dense to dense at an offset: a single memcpy.
    int64_t sizes[] = {2, 5, 6}, ss[] = {30, 6, 1}, ds[] = {30, 6, 1};
    check("3-D dense", 3, 4, s, 30, ss, 70, 10, ds, sizes);
  }
  { // 2-byte elements, every other one in the innermost dimension.
    int64_t sizes[] = {3, 4, 5}, ss[] = {80, 20, 2}, ds[] = {20, 5, 1};
    check("3-D f16 inner stride 2", 3, 2, s, 1, ss, 60, 0, ds, sizes);
  }
  { // Rank 0: one element.
    check("rank 0", 0, 4, s, 7, NULL, 2, 1, NULL, NULL);
  }
  { // A zero-sized dimension copies nothing.
    int64_t sizes[] = {3, 0}, ss[] = {8, 1}, ds[] = {4, 1};
    check("empty", 2, 4, s, 0, ss, 12, 0, ds, sizes);
  }

  void *a = _mlir_memref_to_llvm_alloc(100);
  int aligned64 = (uintptr_t)a % 64 == 0;
  _mlir_memref_to_llvm_free(a);
  void *b = _mlir_memref_to_llvm_alloc(100);
  void *c = _mlir_memref_to_llvm_aligned_alloc(128, 1000);
  printf("pool: aligned 64 %d, reused %d, aligned 128 %d\n", aligned64, a == b,
         (uintptr_t)c % 128 == 0);
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(c);
  _mlir_memref_to_llvm_free(NULL);
  return 0;
}
