//===- DropInPlaceResults.cpp - results that are their input's buffer -----===//
//
// A KV cache updated in place is both an input and an output of the graph.
// Callers pass one buffer for the two (prepareEntry drops the output from
// the entry's arguments), so after bufferization the function must leave
// the new state in that input's buffer and return nothing for it.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/BitVector.h"

namespace mp {
#define GEN_PASS_DEF_DROPINPLACERESULTS
#include "mp/Codegen/Common/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// `v` without the casts that only change its static type.
Value throughCasts(Value v) {
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  return v;
}

struct DropInPlaceResultsPass
    : public mp::impl::DropInPlaceResultsBase<DropInPlaceResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() &&
          failed(dropResults(func)))
        return signalPassFailure();
  }

  LogicalResult dropResults(func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return success();
    auto ret = cast<func::ReturnOp>(func.front().getTerminator());
    llvm::BitVector erase(func.getNumResults());
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto of = func.getResultAttrOfType<IntegerAttr>(i, "mp.in_place_of");
      if (!of)
        continue;
      int64_t k = of.getInt();
      if (k < 0 || k >= (int64_t)func.getNumArguments() ||
          !isa<MemRefType>(func.getArgument(k).getType()))
        return func.emitOpError("result ")
               << i << " is marked in place of argument " << k
               << ", which is not a buffer argument";
      Value result = ret.getOperand(i);
      BlockArgument arg = func.getArgument(k);
      // Written elsewhere (bufferization chose a copy): copy it back.
      if (throughCasts(result) != arg) {
        OpBuilder b(ret);
        memref::CopyOp::create(b, ret.getLoc(), result, arg);
      }
      erase.set(i);
    }
    if (erase.none())
      return success();
    ret->eraseOperands(erase);
    return func.eraseResults(erase);
  }
};

} // namespace
