//===- GenericBody.h - evaluate a linalg.generic body per point -*- C++ -*-===//
//
// Kernels that map a bufferized linalg.generic's iterations to threads
// themselves (Tensor Core tiles, block reductions) evaluate parts of its
// body at chosen points of the iteration space: the operands are loaded
// through their indexing maps and the body ops cloned. Also the checks and
// index arithmetic those kernel builders and mp-map-to-gpu share.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_CODEGEN_CUDA_GENERICBODY_H
#define MP_LIB_CODEGEN_CUDA_GENERICBODY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mp {

/// Whether `op` already runs inside a kernel (a GPU-mapped scf.parallel or
/// a gpu.launch): the kernel-building passes leave such ops alone.
bool inKernel(mlir::Operation *op);

/// The `linalg.fill` that initializes `op`'s one output buffer right before
/// it: the closest earlier op of the block with memory effects, filling
/// that same buffer with a scalar of its element type, where `op` writes
/// every element (its output map is a projected permutation of full rank). A
/// kernel that starts from the fill's value instead of reading the buffer
/// replaces both ops (one launch, one pass over the buffer fewer); null when
/// there is none.
mlir::linalg::FillOp initializingFill(mlir::linalg::LinalgOp op);

/// Moves the ops strictly between `first` and `last` in their block, other
/// than `keep`, above `first`. Fusions call it when they build one kernel
/// in place of `first` from ops up to `last`: what lies between (views,
/// reshapes, constants; nothing with memory effects) must dominate it.
void hoistBetween(mlir::Operation *first, mlir::Operation *last,
                  llvm::ArrayRef<mlir::Operation *> keep);

/// Product of `sizes[d]` over `dims` (1 for none): the extent of a group of
/// loop dims flattened row-major.
int64_t extentOf(llvm::ArrayRef<unsigned> dims, llvm::ArrayRef<int64_t> sizes);

/// The static loop ranges of a bufferized generic with one output buffer,
/// the form the kernel builders take; failure for anything else (tensors,
/// several outputs, dynamic ranges).
mlir::FailureOr<llvm::SmallVector<int64_t>>
staticSingleOutputRanges(mlir::linalg::GenericOp op);

/// A value of a generic's body with the body ops computing it (in body
/// order), the inputs they read and the loop dims those are indexed by.
struct BodySlice {
  mlir::Value value;
  llvm::SmallVector<mlir::Operation *> ops;
  llvm::SmallVector<unsigned> inputs; // indices into the generic's inputs
  llvm::SmallBitVector dims;
};

/// Collects what `value` depends on in `op`'s body (linalg.index too: the
/// point's index when evaluated). Fails when it reads the accumulator (an
/// init block argument) or needs an op with effects or regions.
mlir::FailureOr<BodySlice> sliceBody(mlir::linalg::GenericOp op,
                                     mlir::Value value);

/// Builds index arithmetic in one place, with the helpers every
/// thread-mapping kernel needs.
class IndexBuilder {
public:
  IndexBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}
  mlir::Value idx(int64_t v);
  /// x + y and x * y, on indices or floats.
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value mul(mlir::Value x, mlir::Value y);
  /// x / y and x % y, unsigned (y == 1 folds).
  mlir::Value div(mlir::Value x, int64_t y);
  mlir::Value rem(mlir::Value x, int64_t y);
  /// x / y and x % y, unsigned, by a run-time divisor.
  mlir::Value div(mlir::Value x, mlir::Value y);
  mlir::Value rem(mlir::Value x, mlir::Value y);
  /// x < bound, unsigned.
  mlir::Value lt(mlir::Value x, int64_t bound);
  /// Signed x < y, min and max.
  mlir::Value slt(mlir::Value x, mlir::Value y);
  mlir::Value min(mlir::Value x, mlir::Value y);
  mlir::Value max(mlir::Value x, mlir::Value y);
  mlir::Value select(mlir::Value cond, mlir::Value x, mlir::Value y);
  /// Writes `linear` (row-major over `dims` of extents `sizes[dim]`, in
  /// range) into `point[dim]`.
  void delinearize(llvm::ArrayRef<unsigned> dims, llvm::ArrayRef<int64_t> sizes,
                   mlir::Value linear,
                   llvm::SmallVectorImpl<mlir::Value> &point);

protected:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// Indices of `operand` of `op` at iteration `point` (one index per loop);
/// non-dim results of its indexing map become affine.apply.
llvm::SmallVector<mlir::Value>
operandIndices(mlir::OpBuilder &b, mlir::Location loc,
               mlir::linalg::GenericOp op, mlir::OpOperand &operand,
               llvm::ArrayRef<mlir::Value> point);

/// The value a single-result generic yields at loop `point`: every operand
/// its body uses loaded there (the output too, when read), except those
/// given in `known` (operand number, value), its linalg.index ops the
/// point's indices, its body ops cloned.
mlir::Value
evaluateBodyAt(mlir::OpBuilder &b, mlir::Location loc,
               mlir::linalg::GenericOp op, llvm::ArrayRef<mlir::Value> point,
               llvm::ArrayRef<std::pair<unsigned, mlir::Value>> known);

/// The slice's value at `point`: its inputs loaded (but those given in
/// `known`, as for evaluateBodyAt), its ops cloned.
mlir::Value
evaluateSlice(mlir::OpBuilder &b, mlir::Location loc,
              mlir::linalg::GenericOp op, const BodySlice &slice,
              llvm::ArrayRef<mlir::Value> point,
              llvm::ArrayRef<std::pair<unsigned, mlir::Value>> known = {});

} // namespace mp

#endif // MP_LIB_CODEGEN_CUDA_GENERICBODY_H
