//===- CastPlan.h - where casts go for a set of decisions -------*- C++ -*-===//
//
// From per-op decisions, the cast plan predicts the element type of every
// float value after materialization and lists the conversions needed: one
// runtime cast per (value, type) shared by all its users, and folded
// constant copies. `mp-assign-precision` uses it to write plans;
// `mp-insert-casts` materializes exactly what it lists.
//
//===----------------------------------------------------------------------===//

#ifndef MP_PRECISION_CASTPLAN_H
#define MP_PRECISION_CASTPLAN_H

#include "mp/Precision/Policy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace mp {

/// Decision lookup: nullopt for ops without a decision.
using DecisionFn = llvm::function_ref<std::optional<Compute>(mlir::Operation *)>;

struct CastPlan {
  /// Element type of each float value after materialization.
  llvm::DenseMap<mlir::Value, mlir::Type> newElementType;
  /// Uses to redirect, per (value, target element type), in first-use
  /// order. Values defined by constants are converted at compile time.
  llvm::MapVector<std::pair<mlir::Value, mlir::Type>,
                  llvm::SmallVector<mlir::OpOperand *>>
      conversions;

  /// Number of runtime casts (conversions of non-constant values).
  int64_t numRuntimeCasts() const;
  /// Runtime casts whose result feeds `op`.
  int64_t castsInto(mlir::Operation *op) const;
};

/// The float element type of `c`.
mlir::Type computeType(mlir::MLIRContext *ctx, Compute c);

/// Plans the casts of `func` for the decisions given by `decisionOf`.
CastPlan planCasts(mlir::func::FuncOp func, DecisionFn decisionOf,
                   bool keepIoTypes);

} // namespace mp

#endif // MP_PRECISION_CASTPLAN_H
