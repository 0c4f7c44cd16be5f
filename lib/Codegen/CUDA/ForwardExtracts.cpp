//===- ForwardExtracts.cpp - read elements where they are produced -------===//
//
// An element read with tensor.extract from a tensor that only moves
// elements around (an insert_slice, a reshape, a copy or broadcast generic)
// is read from the tensor that holds it instead. Index tensors that
// exporters assemble for a gather then never exist in memory.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mp {
#define GEN_PASS_DEF_FORWARDEXTRACTS
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

Value indexConstant(PatternRewriter &rewriter, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(rewriter, loc, v);
}

/// extract(insert_slice(src into dest), i): src at i - offset when i lies in
/// the slice, dest at i when it lies outside.
struct ExtractOfInsertSlice : public OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp op,
                                PatternRewriter &rewriter) const override {
    auto insert = op.getTensor().getDefiningOp<tensor::InsertSliceOp>();
    if (!insert ||
        insert.getSourceType().getRank() != insert.getType().getRank())
      return rewriter.notifyMatchFailure(op, "not a same-rank insert_slice");
    std::optional<SmallVector<int64_t>> offsets =
        getConstantIntValues(insert.getMixedOffsets());
    std::optional<SmallVector<int64_t>> sizes =
        getConstantIntValues(insert.getMixedSizes());
    if (!offsets || !sizes || !insert.hasUnitStride())
      return rewriter.notifyMatchFailure(op, "dynamic or strided slice");
    ArrayRef<int64_t> whole = insert.getType().getShape();
    // One constant position outside the slice decides; inside needs every
    // dim decided.
    bool outside = false, undecided = false;
    for (auto [d, index] : llvm::enumerate(op.getIndices())) {
      bool covers = (*offsets)[d] == 0 && (*sizes)[d] == whole[d] &&
                    !ShapedType::isDynamic(whole[d]);
      if (covers)
        continue;
      std::optional<int64_t> at = getConstantIntValue(index);
      if (!at)
        undecided = true;
      else if (*at < (*offsets)[d] || *at >= (*offsets)[d] + (*sizes)[d])
        outside = true;
    }
    if (!outside && undecided)
      return rewriter.notifyMatchFailure(op, "position not known in a dim "
                                             "the slice does not cover");
    if (outside) {
      rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, insert.getDest(),
                                                     op.getIndices());
      return success();
    }
    SmallVector<Value> at;
    for (auto [d, index] : llvm::enumerate(op.getIndices()))
      at.push_back(
          (*offsets)[d] == 0
              ? index
              : indexConstant(rewriter, op.getLoc(),
                              *getConstantIntValue(index) - (*offsets)[d]));
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, insert.getSource(), at);
    return success();
  }
};

/// extract(expand_shape(x), i): x at each group's row-major linear index.
struct ExtractOfExpandShape : public OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getTensor().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || !expand.getResultType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static expand_shape");
    Location loc = op.getLoc();
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    SmallVector<Value> at;
    for (ReassociationIndices group : expand.getReassociationIndices()) {
      Value linear;
      int64_t stride = 1;
      for (int64_t d : llvm::reverse(group)) {
        Value index = op.getIndices()[d];
        if (shape[d] != 1) {
          Value term = stride == 1 ? index
                                   : rewriter.createOrFold<arith::MulIOp>(
                                         loc, index,
                                         indexConstant(rewriter, loc, stride));
          linear = linear
                       ? rewriter.createOrFold<arith::AddIOp>(loc, linear, term)
                       : term;
        }
        stride *= shape[d];
      }
      at.push_back(linear ? linear : indexConstant(rewriter, loc, 0));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, expand.getSrc(), at);
    return success();
  }
};

/// extract(collapse_shape(x), i) where each group has at most one dim
/// longer than 1: x at i in that dim and 0 in the others.
struct ExtractOfCollapseShape : public OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp op,
                                PatternRewriter &rewriter) const override {
    auto collapse = op.getTensor().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !collapse.getSrcType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static collapse_shape");
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    if (llvm::any_of(groups, [&](const ReassociationIndices &group) {
          return llvm::count_if(group,
                                [&](int64_t d) { return shape[d] != 1; }) > 1;
        }))
      return rewriter.notifyMatchFailure(op, "a group merges long dims");
    // Unit dims read index 0, also those of no group (a collapse to rank 0).
    SmallVector<Value> at(shape.size(),
                          indexConstant(rewriter, op.getLoc(), 0));
    for (auto [g, group] : llvm::enumerate(groups))
      for (int64_t d : group)
        if (shape[d] != 1)
          at[d] = op.getIndices()[g];
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, collapse.getSrc(), at);
    return success();
  }
};

/// extract(generic yielding input k, written through a permutation, i):
/// input k at its indexing map applied to the loop point of i.
struct ExtractOfCopyGeneric : public OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp op,
                                PatternRewriter &rewriter) const override {
    auto generic = op.getTensor().getDefiningOp<linalg::GenericOp>();
    if (!generic || generic.getNumDpsInits() != 1 ||
        generic.getNumParallelLoops() != generic.getNumLoops())
      return rewriter.notifyMatchFailure(op, "not an all-parallel generic");
    Block *body = generic.getBody();
    auto yielded =
        dyn_cast<BlockArgument>(body->getTerminator()->getOperand(0));
    if (body->getOperations().size() != 1 || !yielded ||
        yielded.getArgNumber() >= generic.getNumDpsInputs())
      return rewriter.notifyMatchFailure(op, "does not yield an input as is");
    AffineMap out =
        generic.getIndexingMapMatchingResult(cast<OpResult>(op.getTensor()));
    if (!out.isPermutation())
      return rewriter.notifyMatchFailure(op, "output not a permutation");
    OpOperand *input = generic.getDpsInputOperand(yielded.getArgNumber());
    AffineMap in = generic.getMatchingIndexingMap(input);
    SmallVector<Value> point(generic.getNumLoops());
    for (auto [r, expr] : llvm::enumerate(out.getResults()))
      point[cast<AffineDimExpr>(expr).getPosition()] = op.getIndices()[r];
    if (!llvm::all_of(in.getResults(), [](AffineExpr e) {
          return isa<AffineDimExpr, AffineConstantExpr>(e);
        }))
      return rewriter.notifyMatchFailure(op, "input map not dims or constants");
    SmallVector<Value> at;
    for (AffineExpr expr : in.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        at.push_back(point[dim.getPosition()]);
      else
        at.push_back(indexConstant(rewriter, op.getLoc(),
                                   cast<AffineConstantExpr>(expr).getValue()));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(op, input->get(), at);
    return success();
  }
};

struct ForwardExtractsPass
    : public mp::impl::ForwardExtractsBase<ForwardExtractsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExtractOfInsertSlice, ExtractOfExpandShape,
                 ExtractOfCollapseShape, ExtractOfCopyGeneric>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
