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
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mp {
#define GEN_PASS_DEF_GENERALIZELAYOUTOPS
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// A broadcast merged into the dim it repeats (grouped-query attention's
/// repeat of each KV head for its query heads: unsqueeze, expand, then a
/// reshape folding the copies into the head dim) is a reshape between the
/// broadcast and its readers, which elementwise fusion does not cross. The
/// generic computes the collapsed tensor directly instead: where the
/// collapsed dims besides the outermost are ones no input reads (the
/// copies, or unit dims), the outermost is the collapsed index divided by
/// their extent.
struct CollapseBroadcastDims
    : public OpRewritePattern<tensor::CollapseShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::CollapseShapeOp collapse,
                                PatternRewriter &rewriter) const override {
    auto op = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
    auto type = dyn_cast<RankedTensorType>(collapse.getSrcType());
    if (!op || !op->hasOneUse() || op.getNumDpsInits() != 1 || !type ||
        !type.hasStaticShape() ||
        op.getNumParallelLoops() != op.getNumLoops() ||
        !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
        !op.getMatchingBlockArgument(op.getDpsInitOperand(0)).use_empty() ||
        !op.getBody()->getOps<linalg::IndexOp>().empty())
      return failure();
    auto usedByInputs = [&](int64_t d) {
      return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
        return op.getMatchingIndexingMap(in).isFunctionOfDim(d);
      });
    };
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> dims; // each old loop in the collapsed loops
    bool merged = false;
    for (auto [c, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      int64_t rest = 1;
      for (int64_t d : llvm::drop_begin(group)) {
        if (type.getDimSize(d) != 1 && usedByInputs(d))
          return failure(); // a real dim split, not copies
        rest *= type.getDimSize(d);
      }
      merged |= group.size() > 1;
      AffineExpr index = getAffineDimExpr(c, ctx);
      dims.push_back(rest == 1 ? index : index.floorDiv(rest));
      for (size_t i = 1; i < group.size(); ++i)
        dims.push_back(getAffineConstantExpr(0, ctx));
    }
    if (!merged)
      return failure();
    auto collapsedType = cast<RankedTensorType>(collapse.getType());
    int64_t rank = collapsedType.getRank();
    SmallVector<AffineMap> maps;
    for (OpOperand *in : op.getDpsInputOperands())
      maps.push_back(op.getMatchingIndexingMap(in).compose(
          AffineMap::get(rank, 0, dims, ctx)));
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    Value init = tensor::EmptyOp::create(rewriter, collapse.getLoc(),
                                         collapsedType.getShape(),
                                         collapsedType.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), collapsedType, op.getDpsInputs(),
        ValueRange{init}, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
    IRMapping mapping;
    op.getRegion().cloneInto(&generic.getRegion(), mapping);
    rewriter.replaceOp(collapse, generic.getResult(0));
    rewriter.eraseOp(op);
    return success();
  }
};

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
    RewritePatternSet patterns(&getContext());
    patterns.add<CollapseBroadcastDims>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
