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

/// `op` copies its one input to its init, all loops parallel, the init
/// indexed by the loops (a transpose or broadcast as a generic).
static bool isCopyGeneric(linalg::GenericOp op) {
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) ==
             op.getMatchingBlockArgument(op.getDpsInputOperand(0));
}

/// A transpose between a reshape that merges dims and one that splits the
/// merged dim again (the dynamo export of attention: the keys [B, H, T, D]
/// viewed as [B*H, T, D] for a batched transpose, then as [B, H, D, T]) is
/// a transpose of the unmerged tensor followed by the merge of what the
/// split leaves merged. Rewritten so, the reshapes no longer stand between
/// the keys and Q·Kᵀ: a copy producing the unmerged tensor (the repeat of
/// shared KV heads) joins the transpose, and CollapseBroadcastDims takes the
/// merge that remains.
struct TransposeThroughReshapes
    : public OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto transpose = expand.getSrc().getDefiningOp<linalg::GenericOp>();
    if (!isCopyGeneric(transpose) || !transpose->hasOneUse())
      return failure();
    AffineMap perm =
        transpose.getMatchingIndexingMap(transpose.getDpsInputOperand(0));
    auto collapse =
        transpose.getDpsInputs()[0].getDefiningOp<tensor::CollapseShapeOp>();
    if (!perm.isPermutation() || !collapse || !collapse->hasOneUse() ||
        !collapse.getSrcType().hasStaticShape() ||
        !expand.getResultType().hasStaticShape() ||
        collapse.getSrcType().getRank() == collapse.getResultType().getRank())
      return failure();
    ArrayRef<int64_t> source = collapse.getSrcType().getShape();
    ArrayRef<int64_t> result = expand.getResultType().getShape();
    SmallVector<ReassociationIndices> merged =
        collapse.getReassociationIndices();
    SmallVector<ReassociationIndices> split = expand.getReassociationIndices();

    // Loop by loop of the transpose (its result dims): the source dims of
    // the collapsed dim it reads become loops of the new transpose, and the
    // split's dims of that loop must each cover consecutive ones of them.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<int64_t> loopOfSource(source.size());
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> remerge;
    for (unsigned i = 0, e = perm.getNumResults(); i < e; ++i) {
      // Collapsed dim k is read at loop i.
      unsigned k = *perm.getResultPosition(getAffineDimExpr(i, ctx));
      const ReassociationIndices &group = merged[k];
      size_t next = 0;
      for (int64_t d : split[i]) {
        int64_t size = 1;
        ReassociationIndices covered;
        // A unit dim of the split takes the group's unit dims in its place,
        // and the last dim of the split the group's trailing ones.
        while (
            next < group.size() &&
            (size < result[d] || (source[group[next]] == 1 &&
                                  (result[d] == 1 || d == split[i].back())))) {
          loopOfSource[group[next]] = shape.size();
          covered.push_back(shape.size());
          shape.push_back(source[group[next]]);
          size *= source[group[next++]];
        }
        if (size != result[d])
          return failure();    // the split cuts a merged dim
        if (covered.empty()) { // a unit dim the split adds: a loop of its own
          covered.push_back(shape.size());
          shape.push_back(1);
        }
        remerge.push_back(covered);
      }
      if (next != group.size())
        return failure();
    }

    // The new transpose reads the source, or what a copy reads to produce
    // it (that copy is then dead).
    Value input = collapse.getSrc();
    SmallVector<AffineExpr> reads;
    for (int64_t loop : loopOfSource)
      reads.push_back(getAffineDimExpr(loop, ctx));
    AffineMap map = AffineMap::get(shape.size(), 0, reads, ctx);
    auto copy = input.getDefiningOp<linalg::GenericOp>();
    if (isCopyGeneric(copy) && copy->hasOneUse()) {
      map =
          copy.getMatchingIndexingMap(copy.getDpsInputOperand(0)).compose(map);
      input = copy.getDpsInputs()[0];
    }
    Location loc = transpose.getLoc();
    Type element = expand.getResultType().getElementType();
    Value init = tensor::EmptyOp::create(rewriter, loc, shape, element);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, RankedTensorType::get(shape, element), ValueRange{input},
        ValueRange{init},
        ArrayRef<AffineMap>{map, rewriter.getMultiDimIdentityMap(shape.size())},
        SmallVector<utils::IteratorType>(shape.size(),
                                         utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    Value replacement = generic.getResult(0);
    if (remerge.size() != shape.size())
      replacement = tensor::CollapseShapeOp::create(rewriter, expand.getLoc(),
                                                    expand.getResultType(),
                                                    replacement, remerge);
    rewriter.replaceOp(expand, replacement);
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
    patterns.add<CollapseBroadcastDims, TransposeThroughReshapes>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
