//===- FuseCasts.cpp - recompute precision casts in each consumer --------===//
//
// Upstream's elementwise fusion joins a producer with its consumer only
// when the consumer is its one use, so a precision cast read by several
// ops (a LayerNorm reads its input three times) stays a kernel of its own
// with a buffer of its own. Casts are cheaper to recompute than to store:
// reading the source in each consumer moves about as many bytes as writing
// and rereading the narrow copy, and the copy's memory is saved.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mp {
#define GEN_PASS_DEF_FUSECASTS
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// A one-input elementwise generic that only converts its element type.
bool isCast(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return false;
  for (Operation &inner : op.getBody()->without_terminator())
    if (!isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
             arith::FPToSIOp, arith::FPToUIOp, arith::ExtSIOp, arith::ExtUIOp,
             arith::TruncIOp>(inner))
      return false;
  return true;
}

/// Whether every use of `producer` is an operand of `consumer`: a rotary
/// embedding reads its input twice (x and x rotated by half). Fused, the
/// producer's elementwise body runs once per operand and its buffer goes.
bool readOnlyBy(linalg::GenericOp producer, Operation *consumer) {
  return llvm::all_of(producer->getUsers(),
                      [&](Operation *user) { return user == consumer; });
}

struct FuseCastsPass : public mp::impl::FuseCastsBase<FuseCastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
          return producer &&
                 (isCast(producer) || readOnlyBy(producer, fused->getOwner()));
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
