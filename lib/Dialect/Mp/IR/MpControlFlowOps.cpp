//===- MpControlFlowOps.cpp - mp.if ---------------------------------------===//

#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mp;

LogicalResult IfOp::verify() {
  if (productOf(shapeOf(getCondition())) != 1 &&
      !ShapedType::isDynamic(productOf(shapeOf(getCondition()))))
    return emitOpError("condition must hold a single element, got ")
           << getCondition().getType();
  for (Region *region : {&getThenBranch(), &getElseBranch()}) {
    auto yield = cast<YieldOp>(region->front().getTerminator());
    if (yield.getNumOperands() != getNumResults())
      return emitOpError("branch yields ")
             << yield.getNumOperands() << " values for " << getNumResults()
             << " results";
    for (auto [i, pair] :
         llvm::enumerate(llvm::zip(yield.getOperandTypes(), getResultTypes()))) {
      auto [yielded, result] = pair;
      if (getElementTypeOrSelf(yielded) != getElementTypeOrSelf(result) ||
          failed(verifyCompatibleShape(yielded, result)))
        return emitOpError("branch value #")
               << i << " of type " << yielded
               << " is not compatible with result type " << result;
    }
  }
  return success();
}
