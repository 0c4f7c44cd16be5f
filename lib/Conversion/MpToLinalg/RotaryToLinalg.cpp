//===- RotaryToLinalg.cpp - rotary embeddings to linalg -------------------===//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mp;
using namespace mp::lowering;

namespace mp::lowering {

Value rotary(OpBuilder &rewriter, Location loc, Value x, Value pos, Value cosC,
             Value sinC, bool interleaved, int64_t numHeads, int64_t rotDim) {
  auto t = typeOf(x);
  bool threeD = t.getRank() == 3;
  auto cacheType = typeOf(cosC);
  int64_t half = cacheType.getDimSize(cacheType.getRank() - 1);
  int64_t headDim = threeD
                        ? (numHeads > 0 ? t.getDimSize(2) / numHeads : 2 * half)
                        : t.getDimSize(3);
  int64_t rot = rotDim > 0 ? rotDim : 2 * half;
  Type f32 = rewriter.getF32Type(), elt = t.getElementType();
  MLIRContext *ctx = rewriter.getContext();
  int64_t rank = t.getRank();
  // Sequence dim: 1 for [B, S, H*D], 2 for [B, H, S, D].
  unsigned seqDim = threeD ? 1 : 2;
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  if (pos) {
    auto posMap = broadcastMap(ctx, typeOf(pos).getShape(),
                               {t.getDimSize(0), t.getDimSize(seqDim)});
    SmallVector<AffineExpr> exprs;
    for (AffineExpr e : posMap.getResults())
      exprs.push_back(e.replaceDims(
          {getAffineDimExpr(0, ctx), getAffineDimExpr(seqDim, ctx)}));
    ins.push_back(pos);
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  // Batch and sequence may be known only at run time: x gives them.
  SmallVector<Value> dynSizes = dynamicSizes(rewriter, loc, x);
  // The last row of the caches: positions are clamped to it, so that one
  // out of range reads inside the caches where no check stopped the run
  // (the GPU; on the CPU the positions are checked first).
  Value lastRow = pos ? arith::SubIOp::create(rewriter, loc,
                                              dimValue(rewriter, loc, cosC, 0),
                                              indexConst(rewriter, loc, 1))
                            .getResult()
                      : Value();
  return parallelGeneric(
      rewriter, loc, t, ins, maps,
      [&](OpBuilder &b, Location l, ValueRange a) {
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i)
          idx.push_back(linalg::IndexOp::create(b, l, i));
        Value last = idx.back();
        auto cidx = [&](int64_t c) { return indexConst(b, l, c); };
        // Position within the head.
        Value j = threeD
                      ? Value(arith::RemUIOp::create(b, l, last, cidx(headDim)))
                      : last;
        Value headStart = arith::SubIOp::create(b, l, last, j);
        Value xv = tensor::ExtractOp::create(b, l, x, idx);
        Value inRot = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, j,
                                            cidx(rot));
        // Partner element and which cache column, by layout.
        Value col, partner, first;
        if (interleaved) {
          col = arith::DivUIOp::create(b, l, j, cidx(2));
          Value odd = arith::RemUIOp::create(b, l, j, cidx(2));
          first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, odd,
                                        cidx(0));
          partner = arith::SelectOp::create(
              b, l, first, arith::AddIOp::create(b, l, j, cidx(1)),
              arith::SubIOp::create(b, l, j, cidx(1)));
        } else {
          first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, j,
                                        cidx(rot / 2));
          col = arith::SelectOp::create(
              b, l, first, j, arith::SubIOp::create(b, l, j, cidx(rot / 2)));
          partner = arith::SelectOp::create(
              b, l, first, arith::AddIOp::create(b, l, j, cidx(rot / 2)),
              arith::SubIOp::create(b, l, j, cidx(rot / 2)));
        }
        // Outside the rotated part the index math is unused; keep it in
        // range.
        col = arith::SelectOp::create(b, l, inRot, col, cidx(0));
        partner = arith::SelectOp::create(b, l, inRot, partner, j);
        SmallVector<Value> pidx = idx;
        pidx.back() = arith::AddIOp::create(b, l, headStart, partner);
        Value xp = tensor::ExtractOp::create(b, l, x, pidx);
        SmallVector<Value> at;
        if (pos) {
          Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
          row = arith::MaxSIOp::create(
              b, l, cidx(0), arith::MinSIOp::create(b, l, row, lastRow));
          at = {row, col};
        } else {
          at = {idx[0], idx[seqDim], col};
        }
        Value c =
            castScalar(b, l, tensor::ExtractOp::create(b, l, cosC, at), f32);
        Value s =
            castScalar(b, l, tensor::ExtractOp::create(b, l, sinC, at), f32);
        Value xf = castScalar(b, l, xv, f32), pf = castScalar(b, l, xp, f32);
        // first half: x*cos - partner*sin; second: x*cos + partner*sin
        Value ps = arith::MulFOp::create(b, l, pf, s);
        Value signed_ = arith::SelectOp::create(
            b, l, first, arith::NegFOp::create(b, l, ps), ps);
        Value rotated = arith::AddFOp::create(
            b, l, arith::MulFOp::create(b, l, xf, c), signed_);
        Value y = arith::SelectOp::create(b, l, inRot, rotated, xf);
        return castScalar(b, l, y, elt);
      },
      dynSizes);
}

bool rotaryWidthsStatic(Value x, Value cosC) {
  auto t = typeOf(x), c = typeOf(cosC);
  return !t.isDynamicDim(t.getRank() - 1) && !c.isDynamicDim(c.getRank() - 1);
}

} // namespace mp::lowering

namespace {

/// Stops the run unless every position id lies in [0, max_pos), the rows of
/// the [max_pos, rot/2] caches it indexes (one pass over the ids, before
/// the rotation reads the caches).
void checkPositions(OpBuilder &b, Location loc, Operation *op, Value pos,
                    Value cosC) {
  int64_t rows = typeOf(cosC).getDimSize(0);
  bool dynamic = ShapedType::isDynamic(rows);
  std::string n = dynamic ? std::string("max_pos") : std::to_string(rows);
  checkIndicesInRange(
      b, loc, pos, dimValue(b, loc, cosC, 0),
      runTimeCheckMessage(op, "a position id is out of range [0, " + n +
                                  "): the cos and sin caches have " + n +
                                  " rows"),
      /*allowNegative=*/false);
}

/// A rotary pattern that checks the position ids when `indexChecks` (off
/// for the GPU, whose kernels keep them in device memory).
template <typename OpTy>
struct CheckedRotaryPattern : public OpRewritePattern<OpTy> {
  CheckedRotaryPattern(MLIRContext *ctx, bool indexChecks)
      : OpRewritePattern<OpTy>(ctx), indexChecks(indexChecks) {}
  bool indexChecks;
};

/// com.microsoft RotaryEmbedding: position ids index [max_pos, rot/2]
/// caches.
struct MsRotaryLowering : public CheckedRotaryPattern<MsRotaryEmbeddingOp> {
  using CheckedRotaryPattern::CheckedRotaryPattern;
  LogicalResult matchAndRewrite(MsRotaryEmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    if (!rotaryWidthsStatic(op.getInput(), op.getCosCache()))
      return rewriter.notifyMatchFailure(op, "run-time head or cache width");
    Location loc = op.getLoc();
    Value x = op.getInput(), pos = op.getPositionIds();
    if (typeOf(pos).getRank() == 1) {
      // One start position (onnxruntime's format 0): token s sits at
      // start + s, the same in every batch.
      unsigned seqDim = typeOf(x).getRank() == 3 ? 1 : 2;
      Type i64 = rewriter.getI64Type();
      auto type = RankedTensorType::get({1, typeOf(x).getDimSize(seqDim)}, i64);
      SmallVector<Value> sizes;
      if (type.isDynamicDim(1))
        sizes.push_back(dimValue(rewriter, loc, x, seqDim));
      pos = parallelGeneric(
          rewriter, loc, type, {}, {},
          [&](OpBuilder &b, Location l, ValueRange) -> Value {
            Value start = castScalar(
                b, l,
                tensor::ExtractOp::create(b, l, op.getPositionIds(),
                                          ValueRange{indexConst(b, l, 0)}),
                i64);
            Value s = arith::IndexCastOp::create(
                b, l, i64, linalg::IndexOp::create(b, l, 1));
            return arith::AddIOp::create(b, l, start, s);
          },
          sizes);
    }
    if (indexChecks)
      checkPositions(rewriter, loc, op, pos, op.getCosCache());
    rewriter.replaceOp(op,
                       rotary(rewriter, loc, x, pos, op.getCosCache(),
                              op.getSinCache(), op.getInterleaved(),
                              op.getNumHeads(), op.getRotaryEmbeddingDim()));
    return success();
  }
};

/// ONNX RotaryEmbedding-23: caches indexed by position_ids, or [B, S, rot/2]
/// without them.
struct RotaryLowering : public CheckedRotaryPattern<RotaryEmbeddingOp> {
  using CheckedRotaryPattern::CheckedRotaryPattern;
  LogicalResult matchAndRewrite(RotaryEmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    if (!rotaryWidthsStatic(op.getInput(), op.getCosCache()))
      return rewriter.notifyMatchFailure(op, "dynamic head width");
    if (indexChecks && op.getPositionIds())
      checkPositions(rewriter, op.getLoc(), op, op.getPositionIds(),
                     op.getCosCache());
    rewriter.replaceOp(
        op, rotary(rewriter, op.getLoc(), op.getInput(), op.getPositionIds(),
                   op.getCosCache(), op.getSinCache(), op.getInterleaved(),
                   op.getNumHeads(), op.getRotaryEmbeddingDim()));
    return success();
  }
};

} // namespace

void mp::populateRotaryToLinalgPatterns(RewritePatternSet &patterns,
                                        bool indexChecks) {
  patterns.add<MsRotaryLowering, RotaryLowering>(patterns.getContext(),
                                                 indexChecks);
}
