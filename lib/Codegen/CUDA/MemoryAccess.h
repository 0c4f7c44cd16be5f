//===- MemoryAccess.h - which buffer bytes a kernel touches -----*- C++ -*-===//
//
// Ops that run side by side in one launch must not touch the same bytes
// where one of them writes. These helpers describe what a piece of code
// reads and writes (the buffer behind views, the arena bytes of a view, the
// box of a static slice) and whether two such descriptions can meet.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_CODEGEN_CUDA_MEMORYACCESS_H
#define MP_LIB_CODEGEN_CUDA_MEMORYACCESS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <limits>

namespace mp {

/// A region of a buffer an op touches: the buffer behind views and casts,
/// the bytes of it when a constant-offset `memref.view` of an arena says
/// which (else all of it), and when the access goes through a static,
/// unit-stride `memref.subview`, its box (offset, size per dim) in the
/// buffer it slices.
struct Access {
  mlir::Value root;
  int64_t begin = 0, end = std::numeric_limits<int64_t>::max();
  bool write = false;
  mlir::Value sliced;
  llvm::SmallVector<std::pair<int64_t, int64_t>> box;
};

/// The region of a buffer an access to `memref` touches.
Access describeAccess(mlir::Value memref, bool write);

/// The buffer regions the ops nested in `op` read and write; failure when
/// an op's effects are unknown.
mlir::FailureOr<llvm::SmallVector<Access>> accessesOf(mlir::Operation *op);

/// What `op` itself and the ops nested in it read and write (freeing or
/// allocating a buffer counts as writing it); failure when an effect is
/// unknown.
mlir::FailureOr<llvm::SmallVector<Access>> opAccesses(mlir::Operation *op);

/// Whether `a` comes before `b` in the same block with only ops without
/// memory effects between them: moving `b` up to `a` reorders no memory
/// access.
bool onlyEffectFreeBetween(mlir::Operation *a, mlir::Operation *b);

/// Whether two sets of accesses may touch the same bytes with at least one
/// write. Distinct roots (function arguments, allocations, constants) do
/// not overlap: a run's buffers are distinct (docs/runtime.md).
bool conflict(llvm::ArrayRef<Access> a, llvm::ArrayRef<Access> b);

} // namespace mp

#endif // MP_LIB_CODEGEN_CUDA_MEMORYACCESS_H
