//===- mp/BufferPool.h - reused buffers for generated code ------*- C++ -*-===//
//
// The CPU pipeline can lower memref.alloc/dealloc to the generic
// `_mlir_memref_to_llvm_*` functions; the JIT binds them to this pool, and
// libmp_runtime.so exports them bound to it (mp/mlir_abi.h). A
// model step allocates the same sizes every run, and fresh memory from
// malloc (mmap for large blocks) costs a page fault per 4 KB page on first
// touch: with it, a 4-layer decoder step over a 4096-step KV cache in mixed
// precision went from 39 ms to 20 ms (bench/attention.md). The pool keeps
// freed blocks by size class (at most 512 MB) and hands them out again.
//
//===----------------------------------------------------------------------===//

#ifndef MP_BUFFERPOOL_H
#define MP_BUFFERPOOL_H

#include <cstddef>

namespace mp {

/// A block of at least `size` bytes, 64-byte aligned; null when out of
/// memory.
void *poolAlloc(size_t size);

/// A block of at least `size` bytes aligned to `alignment` (a power of two).
void *poolAlignedAlloc(size_t alignment, size_t size);

/// Returns a block from poolAlloc/poolAlignedAlloc (null is ignored).
void poolFree(void *ptr);

} // namespace mp

#endif // MP_BUFFERPOOL_H
