//===- DistinctResults.cpp - one buffer per returned result ---------------===//
//
// BufferResultsToOutParams turns each returned allocation into the
// out-parameter the caller passes. An allocation returned twice would be
// replaced twice; a copy per repeat keeps every result its own buffer.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/DenseSet.h"

namespace mp {
#define GEN_PASS_DEF_DISTINCTRESULTS
#include "mp/Codegen/Common/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

struct DistinctResultsPass
    : public mp::impl::DistinctResultsBase<DistinctResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal() ||
          !func.getBody().hasOneBlock())
        continue;
      auto ret = cast<func::ReturnOp>(func.front().getTerminator());
      llvm::DenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<MemRefType>(v.getType());
        if (!type || seen.insert(v).second)
          continue;
        SmallVector<Value> dynamicSizes;
        for (int64_t d = 0, e = type.getRank(); d < e; ++d)
          if (type.isDynamicDim(d))
            dynamicSizes.push_back(
                memref::DimOp::create(b, ret.getLoc(), v, d));
        auto copy = memref::AllocOp::create(
            b, ret.getLoc(),
            MemRefType::get(type.getShape(), type.getElementType()),
            dynamicSizes);
        memref::CopyOp::create(b, ret.getLoc(), v, copy);
        Value result = copy;
        if (copy.getType() != type)
          result = memref::CastOp::create(b, ret.getLoc(), type, copy);
        operand.set(result);
      }
    }
  }
};

} // namespace
