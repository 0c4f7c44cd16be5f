//===- InsertCasts.cpp - materialize precision decisions ------------------===//

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/Materialize.h"
#include "mp/Precision/OpInfo.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mp {
#define GEN_PASS_DEF_INSERTCASTS
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

struct InsertCastsPass : public mp::impl::InsertCastsBase<InsertCastsPass> {
  using InsertCastsBase::InsertCastsBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      bool decided = false, candidates = false;
      func.walk([&](Operation *op) {
        decided |= op->hasAttr(kPrecisionAttrName);
        candidates |= isPrecisionNode(op);
      });
      if (!decided && candidates) {
        emitWarning(func.getLoc(), "no precision decisions to materialize "
                                   "(run --mp-assign-precision first)");
        continue;
      }
      if (!decided)
        continue;
      bool keepIo = true;
      if (keepIoTypes != KeepIoTypes::Policy)
        keepIo = keepIoTypes == KeepIoTypes::Yes;
      else if (auto attr = func->getAttrOfType<BoolAttr>(kKeepIoTypesAttrName))
        keepIo = attr.getValue();
      if (failed(materializePrecision(func, keepIo)))
        return signalPassFailure();
    }
  }
};

} // namespace
