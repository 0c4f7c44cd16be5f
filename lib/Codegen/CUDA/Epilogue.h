//===- Epilogue.h - elementwise consumers run where a result is made -*- C++
//-*-===//
//
// A kernel that computes each element of a result in registers (a Tensor
// Core tile's accumulators) can apply the elementwise ops that read the
// result right there: the cast of a projection to f16, the transpose of its
// heads, a residual add. Each such consumer is then no kernel of its own,
// and the intermediate buffer is neither written nor read back unless
// something else reads it.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_CODEGEN_CUDA_EPILOGUE_H
#define MP_LIB_CODEGEN_CUDA_EPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mp {

/// One elementwise consumer in an epilogue chain.
struct EpilogueStage {
  mlir::linalg::GenericOp op;
  /// The input that reads the previous stage's result (through `view`).
  unsigned input;
  /// Whether the previous stage's result must still be stored: something
  /// other than this stage reads it, or it is not a temporary.
  bool storePrevious;
};

/// The elementwise generics that follow `producer` in its block and read,
/// one after the other, the buffer `result` it writes, each the next op with
/// memory effects: all-parallel, static, one output, reading the previous
/// result element for element (a permutation of its indices, through
/// reshapes of the whole contiguous buffer) and no other buffer of the
/// chain. `alsoWriting`: other ops that write `result` and go with the
/// producer (the fill it starts from). Empty when there is none.
llvm::SmallVector<EpilogueStage>
findEpilogueChain(mlir::Operation *producer, mlir::Value result,
                  llvm::ArrayRef<mlir::Operation *> alsoWriting = {},
                  unsigned maxStages = 4);

/// Evaluates `stage`'s body for one element of the previous result
/// `previous`: `value`, at its indices `at`. Returns the stage's value and
/// the indices of its output where it belongs; stores nothing.
std::pair<mlir::Value, llvm::SmallVector<mlir::Value>>
evaluateStage(mlir::OpBuilder &b, mlir::Location loc, EpilogueStage stage,
              mlir::Value previous, mlir::Value value,
              llvm::ArrayRef<mlir::Value> at);

/// Buffer facts the fusions share.
/// `base` and every reshape of it (memref.reshape, expand/collapse_shape),
/// transitively.
llvm::SmallVector<mlir::Value> viewsOf(mlir::Value base);
/// The buffer a chain of reshapes starts from.
mlir::Value rootOf(mlir::Value view);
/// The next op after `op` in its block that may touch memory (reshapes only
/// read their constant shape operand and are skipped).
mlir::Operation *nextWithEffects(mlir::Operation *op);
/// Whether a buffer is a temporary of this function (a view of its arena or
/// an allocation) that an op other than `known`, a reshape leading to one,
/// or a deallocation uses; buffers that are not temporaries always count as
/// used (the caller reads them).
bool usedElsewhere(mlir::Value buffer, llvm::ArrayRef<mlir::Operation *> known);

/// Emits the chain for one element: `value` is the producer's result at
/// `indices` of `result`. Evaluates each stage's body at the point that
/// reads that element and stores the element of every result that must be
/// stored: the producer's when `storeResult` (no chain, or its first
/// stage's `storePrevious`), the last stage's always.
void emitEpilogue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value result,
                  bool storeResult, llvm::ArrayRef<EpilogueStage> chain,
                  mlir::Value value, llvm::ArrayRef<mlir::Value> indices);

} // namespace mp

#endif // MP_LIB_CODEGEN_CUDA_EPILOGUE_H
