//===- ShapeToTensor.cpp - constants and data movement to tensor/linalg ---===//

#include "LoweringUtils.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

bool isStatic(Type t) { return cast<RankedTensorType>(t).hasStaticShape(); }

struct ConstantLowering : public OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

/// Reshape, Flatten, Squeeze, Unsqueeze: the data keeps its order.
struct ReshapeLikeLowering : public RewritePattern {
  ReshapeLikeLowering(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op))
      return failure();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!type.hasStaticShape() || !isStatic(op->getOperand(0).getType()))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    rewriter.replaceOp(op, reshapeTo(rewriter, op->getLoc(), op->getOperand(0),
                                     type));
    return success();
  }
};

struct TransposeLowering : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Value init = tensor::EmptyOp::create(rewriter, op.getLoc(),
                                         type.getShape(), type.getElementType());
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       op.getInput(), init,
                                                       op.getPerm())
                               .getResult());
    return success();
  }
};

struct ConcatLowering : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t axis = (int64_t)op.getAxis();
    if (axis < 0)
      axis += type.getRank();
    rewriter.replaceOpWithNewOp<tensor::ConcatOp>(op, type, axis,
                                                  op.getInputs());
    return success();
  }
};

/// Expand: a broadcast copy.
struct ExpandLowering : public OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpandOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (!type.hasStaticShape() || !isStatic(op.getInput().getType()))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    rewriter.replaceOp(op, elementwise(rewriter, op.getLoc(), type,
                                       op.getInput(),
                                       [](OpBuilder &, Location, ValueRange a) {
                                         return a[0];
                                       }));
    return success();
  }
};

/// Slice with constant starts/ends/axes/steps and positive steps.
struct SliceLowering : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto type = op.getType();
    if (!type.hasStaticShape() || !in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    auto starts = getConstantInts(op.getStarts());
    auto ends = getConstantInts(op.getEnds());
    std::optional<SmallVector<int64_t>> axes =
        op.getAxes() ? getConstantInts(op.getAxes())
                     : std::optional<SmallVector<int64_t>>(SmallVector<int64_t>());
    std::optional<SmallVector<int64_t>> steps =
        op.getSteps() ? getConstantInts(op.getSteps())
                      : std::optional<SmallVector<int64_t>>(
                            SmallVector<int64_t>(starts ? starts->size() : 0, 1));
    if (!starts || !ends || !axes || !steps)
      return rewriter.notifyMatchFailure(op, "non-constant slice parameters");
    if (axes->empty())
      for (size_t i = 0; i < starts->size(); ++i)
        axes->push_back(i);
    int64_t rank = in.getRank();
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    bool reversed = false;
    for (auto [i, a] : llvm::enumerate(*axes)) {
      int64_t axis = a < 0 ? a + rank : a, dim = in.getDimSize(axis);
      int64_t step = (*steps)[i];
      if (step == 0)
        return rewriter.notifyMatchFailure(op, "zero slice step");
      int64_t s = (*starts)[i];
      s = s < 0 ? s + dim : s;
      // ONNX clamps starts to [0, dim] going forward, [0, dim - 1] backward.
      offsets[axis] = std::min(std::max<int64_t>(s, 0), step > 0 ? dim : dim - 1);
      strides[axis] = step;
      reversed |= step < 0;
    }
    // An empty result reads nothing: any in-bounds offset will do.
    for (int64_t d = 0; d < rank; ++d)
      if (type.getDimSize(d) == 0)
        offsets[d] = 0;
    if (!reversed) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, type, op.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
          offsets, type.getShape(), strides);
      return success();
    }
    // Negative steps: out[i..] = in[offset + i * step ..] element by element.
    Value r = parallelGeneric(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            Value scaled = arith::MulIOp::create(
                b, l, i, arith::ConstantIndexOp::create(b, l, strides[d]));
            coords.push_back(arith::AddIOp::create(
                b, l, scaled, arith::ConstantIndexOp::create(b, l, offsets[d])));
          }
          return tensor::ExtractOp::create(b, l, op.getInput(), coords);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct SplitLowering : public OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    if (!in.hasStaticShape() ||
        !llvm::all_of(op.getResultTypes(), [](Type t) { return isStatic(t); }))
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t axis = (int64_t)op.getAxis();
    SmallVector<Value> parts;
    int64_t offset = 0;
    for (Value r : op.getResults()) {
      auto type = cast<RankedTensorType>(r.getType());
      SmallVector<int64_t> offsets(in.getRank(), 0), strides(in.getRank(), 1);
      offsets[axis] = offset;
      offset += type.getDimSize(axis);
      parts.push_back(tensor::ExtractSliceOp::create(
          rewriter, op.getLoc(), type, op.getInput(), ValueRange{},
          ValueRange{}, ValueRange{}, offsets, type.getShape(), strides));
    }
    rewriter.replaceOp(op, parts);
    return success();
  }
};

/// Gather along `axis`: out[pre.., idx.., post..] = data[pre.., i, post..].
struct GatherLowering : public OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    auto data = cast<RankedTensorType>(op.getData().getType());
    auto idx = cast<RankedTensorType>(op.getIndices().getType());
    auto type = op.getType();
    if (!type.hasStaticShape() || !data.hasStaticShape() ||
        !idx.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    MLIRContext *ctx = op.getContext();
    int64_t axis = (int64_t)op.getAxis();
    if (axis < 0)
      axis += data.getRank();
    int64_t q = idx.getRank(), rank = type.getRank();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i < q; ++i)
      idxExprs.push_back(getAffineDimExpr(axis + i, ctx));
    AffineMap idxMap = AffineMap::get(rank, 0, idxExprs, ctx);
    Location loc = op.getLoc();
    Value r = parallelGeneric(
        rewriter, loc, type, op.getIndices(), idxMap,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value i = normalizedIndex(b, l, a[0], data.getDimSize(axis));
          SmallVector<Value> coords;
          for (int64_t d = 0; d < data.getRank(); ++d) {
            if (d < axis)
              coords.push_back(linalg::IndexOp::create(b, l, d));
            else if (d == axis)
              coords.push_back(i);
            else
              coords.push_back(linalg::IndexOp::create(b, l, d - 1 + q));
          }
          return tensor::ExtractOp::create(b, l, op.getData(), coords);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Tile: output index i reads input index i mod size.
struct TileLowering : public OpRewritePattern<TileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TileOp op,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto type = op.getType();
    if (!type.hasStaticShape() || !in.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    MLIRContext *ctx = op.getContext();
    SmallVector<AffineExpr> exprs;
    for (auto [i, d] : llvm::enumerate(in.getShape()))
      exprs.push_back(getAffineDimExpr(i, ctx) % d);
    rewriter.replaceOp(
        op, parallelGeneric(rewriter, op.getLoc(), type, op.getInput(),
                            AffineMap::get(in.getRank(), 0, exprs, ctx),
                            [](OpBuilder &, Location, ValueRange a) {
                              return a[0];
                            }));
    return success();
  }
};

/// Trilu: keep [.., i, j] when j - i >= k (upper) or j - i <= k (lower).
struct TriluLowering : public OpRewritePattern<TriluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TriluOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (!type.hasStaticShape() || type.getRank() < 2)
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Value kTensor = op.getK();
    bool upper = op.getUpper();
    int64_t rank = type.getRank();
    rewriter.replaceOp(
        op, parallelGeneric(
                rewriter, op.getLoc(), type, op.getInput(),
                {rewriter.getMultiDimIdentityMap(rank)},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value i = linalg::IndexOp::create(b, l, rank - 2);
                  Value j = linalg::IndexOp::create(b, l, rank - 1);
                  Value diff = arith::SubIOp::create(
                      b, l, arith::IndexCastOp::create(b, l, b.getI64Type(), j),
                      arith::IndexCastOp::create(b, l, b.getI64Type(), i));
                  // k is a scalar tensor read at run time (0 if absent).
                  Value kv =
                      kTensor
                          ? Value(tensor::ExtractOp::create(
                                b, l, kTensor,
                                SmallVector<Value>(
                                    cast<RankedTensorType>(kTensor.getType())
                                        .getRank(),
                                    arith::ConstantIndexOp::create(b, l, 0))))
                          : scalarConst(b, l, b.getI64Type(), 0);
                  Value keep = arith::CmpIOp::create(
                      b, l,
                      upper ? arith::CmpIPredicate::sge
                            : arith::CmpIPredicate::sle,
                      diff, kv);
                  return arith::SelectOp::create(
                      b, l, keep, a[0],
                      scalarConst(b, l, a[0].getType(), 0));
                }));
    return success();
  }
};

/// Range with a static length: start + i * delta.
struct RangeLowering : public OpRewritePattern<RangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RangeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Type elt = type.getElementType();
    auto scalar = [&](OpBuilder &b, Location l, Value t) -> Value {
      SmallVector<Value> zeros(cast<RankedTensorType>(t.getType()).getRank(),
                               arith::ConstantIndexOp::create(b, l, 0));
      return tensor::ExtractOp::create(b, l, t, zeros);
    };
    rewriter.replaceOp(
        op, parallelGeneric(
                rewriter, loc, type, ValueRange{}, ArrayRef<AffineMap>{},
                [&](OpBuilder &b, Location l, ValueRange) -> Value {
                  Value i = castScalar(
                      b, l,
                      arith::IndexCastOp::create(b, l, b.getI64Type(),
                                                 linalg::IndexOp::create(b, l, 0)),
                      elt);
                  Value start = scalar(b, l, op.getStart());
                  Value delta = scalar(b, l, op.getDelta());
                  if (isa<FloatType>(elt))
                    return arith::AddFOp::create(
                        b, l, start, arith::MulFOp::create(b, l, i, delta));
                  return arith::AddIOp::create(
                      b, l, start, arith::MulIOp::create(b, l, i, delta));
                }));
    return success();
  }
};

} // namespace

void populateShapeToTensorPatterns(RewritePatternSet &patterns) {
  patterns.add<ConstantLowering, ReshapeLikeLowering, TransposeLowering,
               ConcatLowering, ExpandLowering, SliceLowering, SplitLowering,
               GatherLowering, TileLowering, TriluLowering, RangeLowering>(
      patterns.getContext());
}

} // namespace mp
