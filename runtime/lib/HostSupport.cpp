//===- HostSupport.cpp - what CPU libraries call besides libc -------------===//
//
// Code lowered by finalize-memref-to-llvm calls `memrefCopy` (MLIR's C
// runner utils define it; a compiled library must not need them) and, with
// generic allocation functions, `_mlir_memref_to_llvm_*`, bound here to
// the buffer pool.
//
//===----------------------------------------------------------------------===//

#include "mp/BufferPool.h"
#include "mp/mlir_abi.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

/// A ranked descriptor {allocated, aligned, offset, sizes[rank],
/// strides[rank]} read through its unranked handle.
struct View {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;

  View(const mp_unranked_memref &memref) {
    auto *pointers = static_cast<char **>(memref.descriptor);
    aligned = pointers[1];
    auto *ints = reinterpret_cast<const int64_t *>(pointers + 2);
    offset = ints[0];
    sizes = ints + 1;
    strides = ints + 1 + memref.rank;
  }
};

} // namespace

extern "C" void memrefCopy(int64_t elemSize, mp_unranked_memref *srcArg,
                           mp_unranked_memref *dstArg) {
  View src(*srcArg), dst(*dstArg);
  int64_t rank = srcArg->rank;
  for (int64_t d = 0; d < rank; ++d)
    if (src.sizes[d] == 0)
      return;
  const char *from = src.aligned + src.offset * elemSize;
  char *to = dst.aligned + dst.offset * elemSize;

  // The innermost dimensions that are contiguous in both views make one
  // memcpy; for dense views that is the whole copy.
  int64_t chunk = elemSize;
  int64_t outer = rank;
  while (outer > 0) {
    int64_t d = outer - 1;
    if (src.sizes[d] != 1 && (src.strides[d] * elemSize != chunk ||
                              dst.strides[d] * elemSize != chunk))
      break;
    chunk *= src.sizes[d];
    --outer;
  }
  if (outer == 0) {
    std::memcpy(to, from, chunk);
    return;
  }

  // Walk the remaining dimensions like an odometer.
  std::vector<int64_t> index(outer, 0);
  while (true) {
    std::memcpy(to, from, chunk);
    int64_t d = outer - 1;
    for (; d >= 0; --d) {
      from += src.strides[d] * elemSize;
      to += dst.strides[d] * elemSize;
      if (++index[d] < src.sizes[d])
        break;
      from -= src.strides[d] * elemSize * src.sizes[d];
      to -= dst.strides[d] * elemSize * src.sizes[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return mp::poolAlloc(size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  return mp::poolAlignedAlloc(alignment, size);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) { mp::poolFree(ptr); }
