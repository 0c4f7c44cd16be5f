//===- Plan.h - precision plans and reports ---------------------*- C++ -*-===//

#ifndef MP_PRECISION_PLAN_H
#define MP_PRECISION_PLAN_H

#include "mp/Precision/Analysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

namespace mp {

/// Totals of a function's decisions.
struct PlanSummary {
  int64_t nodes = 0, nodesF16 = 0, casts = 0;
  double contractionFlops = 0, contractionFlopsF16 = 0;
  int64_t weightBytesBefore = 0, weightBytesAfter = 0;
};

/// Builds the plan of `func` from its recorded decisions (`mp.precision`
/// attributes): every node by ONNX name with op type, class, compute and
/// accumulate types, rule, casts into it and weight bytes saved; then the
/// totals and `findings`. The plan is a valid policy: its `nodes` entries
/// force each decision.
llvm::json::Object buildPlan(mlir::func::FuncOp func, bool keepIoTypes,
                             llvm::ArrayRef<PrecisionAnalysis::Finding> findings,
                             PlanSummary &summary);

/// Prints the decisions of `func` as a table (per op type), the totals and
/// the findings.
void printReport(mlir::func::FuncOp func, bool keepIoTypes,
                 llvm::ArrayRef<PrecisionAnalysis::Finding> findings,
                 llvm::raw_ostream &os);

} // namespace mp

#endif // MP_PRECISION_PLAN_H
