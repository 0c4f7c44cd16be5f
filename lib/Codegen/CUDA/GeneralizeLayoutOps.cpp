//===- GeneralizeLayoutOps.cpp - layout ops as generics for fusion --------===//
//
// Elementwise fusion only joins linalg.generic ops, so a named transpose
// between a projection and the op that reads it stays a kernel with a
// buffer of its own on the GPU. As generics, transposes, broadcasts and
// copies fold into their neighbours' indexing maps.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mp {
#define GEN_PASS_DEF_GENERALIZELAYOUTOPS
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

struct GeneralizeLayoutOpsPass
    : public mp::impl::GeneralizeLayoutOpsBase<GeneralizeLayoutOpsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::TransposeOp, linalg::BroadcastOp, linalg::CopyOp>(op) &&
          op.hasPureTensorSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op->emitOpError("has no linalg.generic form");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
