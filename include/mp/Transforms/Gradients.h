//===- Gradients.h - reverse-mode differentiation of mp graphs --*- C++ -*-===//
//
// The backward graph is built from mp ops (a MatMul's gradient is two
// MatMuls, a broadcast's is a ReduceSum), so it is lowered, fused and
// assigned precision exactly like the forward graph.
//
//===----------------------------------------------------------------------===//

#ifndef MP_TRANSFORMS_GRADIENTS_H
#define MP_TRANSFORMS_GRADIENTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SetVector.h"

namespace mp {

/// True when `op` has a gradient rule for operand `index` (false for shape,
/// index and condition operands and for ops without a rule).
bool hasGradientRule(mlir::Operation *op, unsigned index);

/// Values `wrt` reaches through float data that `target` depends on: the ops
/// whose gradients the backward pass needs.
llvm::SetVector<mlir::Operation *> activeOps(mlir::Value target,
                                             mlir::ValueRange wrt);

/// Appends the backward pass of `target` (a scalar) to the block of `b`'s
/// insertion point: `seed` is d(out)/d(target), with `target`'s type.
/// Returns d(out)/d(w) for each `wrt` (zeros where `target` does not depend
/// on it), or fails with an error naming the op that has no gradient rule.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildGradients(mlir::OpBuilder &b, mlir::Value target, mlir::Value seed,
               mlir::ValueRange wrt);

} // namespace mp

#endif // MP_TRANSFORMS_GRADIENTS_H
