//===- PrecisionReport.cpp - print the precision decisions ----------------===//

#include "mp/Precision/Materialize.h"
#include "mp/Precision/Plan.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mp {
#define GEN_PASS_DEF_PRECISIONREPORT
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

struct PrecisionReportPass
    : public mp::impl::PrecisionReportBase<PrecisionReportPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto keep = func->getAttrOfType<BoolAttr>(kKeepIoTypesAttrName);
      printReport(func, !keep || keep.getValue(), {}, llvm::errs());
    }
  }
};

} // namespace
