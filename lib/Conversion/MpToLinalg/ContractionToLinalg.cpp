//===- ContractionToLinalg.cpp - MatMul and Gemm to linalg ----------------===//
//
// One linalg.generic contraction per op, broadcasting batch dims, with an
// accumulator of the type the precision plan asks for (f32 for f16 data).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/Materialize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// Accumulator type of `op` producing `elt`: f32 when the decision says so
/// or the data is half precision.
Type accumulatorFor(Operation *op, Type elt) {
  if (auto d = op->getAttrOfType<PrecisionAttr>(kPrecisionAttrName))
    if (d.getAccumulate())
      return d.getAccumulate();
  return accumulatorType(elt);
}

/// out[b.., m, n] = sum_k lhs[b.., m, k] * rhs[b.., k, n] over the
/// iteration space (b.., m, n, k); `lhsMap`/`rhsMap` read the operands.
Value contract(OpBuilder &b, Location loc, RankedTensorType outType,
               Value lhs, AffineMap lhsMap, Value rhs, AffineMap rhsMap,
               Type acc) {
  int64_t rank = outType.getRank() + 1;
  auto accType = RankedTensorType::get(outType.getShape(), acc);
  Value empty = tensor::EmptyOp::create(b, loc, outType.getShape(), acc);
  Value zero = scalarConst(b, loc, acc, 0);
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < rank - 1; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, b.getContext());
  SmallVector<utils::IteratorType> iterators(rank - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, accType, ValueRange{lhs, rhs}, init,
      ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value x = castScalar(nb, nloc, a[0], acc);
        Value y = castScalar(nb, nloc, a[1], acc);
        Value p = isa<FloatType>(acc)
                      ? Value(arith::MulFOp::create(nb, nloc, x, y))
                      : Value(arith::MulIOp::create(nb, nloc, x, y));
        Value s = isa<FloatType>(acc)
                      ? Value(arith::AddFOp::create(nb, nloc, p, a[2]))
                      : Value(arith::AddIOp::create(nb, nloc, p, a[2]));
        linalg::YieldOp::create(nb, nloc, s);
      });
  return generic.getResult(0);
}

/// Map of a [batch.., r, c] operand in the (b.., m, n, k) space: `rowDim`
/// and `colDim` name the iteration dims of its last two axes.
AffineMap operandMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                     ArrayRef<int64_t> outBatch, int64_t rowDim,
                     int64_t colDim) {
  int64_t batch = outBatch.size(), rank = batch + 3;
  int64_t offset = batch - (shape.size() - 2);
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i + 2 < (int64_t)shape.size(); ++i) {
    int64_t d = offset + i;
    exprs.push_back(shape[i] == 1 && outBatch[d] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(d, ctx));
  }
  exprs.push_back(getAffineDimExpr(rowDim, ctx));
  exprs.push_back(getAffineDimExpr(colDim, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

struct MatMulLowering : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto outType = op.getType();
    auto lt = op.getLhs().getType(), rt = op.getRhs().getType();
    if (!outType.hasStaticShape() || !lt.hasStaticShape() ||
        !rt.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    if (lt.getRank() < 2 || rt.getRank() < 2)
      return rewriter.notifyMatchFailure(op, "1-D operands");
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    ArrayRef<int64_t> batch = outType.getShape().drop_back(2);
    int64_t m = batch.size(), n = m + 1, k = m + 2;
    Type acc = accumulatorFor(op, outType.getElementType());
    Value r = contract(rewriter, loc, outType, op.getLhs(),
                       operandMap(ctx, lt.getShape(), batch, m, k),
                       op.getRhs(), operandMap(ctx, rt.getShape(), batch, k, n),
                       acc);
    if (acc != outType.getElementType())
      r = elementwise(rewriter, loc, outType, r,
                      [&](OpBuilder &b, Location l, ValueRange a) {
                        return castScalar(b, l, a[0], outType.getElementType());
                      });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct GemmLowering : public OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    auto outType = op.getType();
    if (!outType.hasStaticShape() || !op.getA().getType().hasStaticShape() ||
        !op.getB().getType().hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    // Iteration space (m, n, k).
    auto map = [&](int64_t r, int64_t c) {
      return AffineMap::get(3, 0,
                            {getAffineDimExpr(r, ctx), getAffineDimExpr(c, ctx)},
                            ctx);
    };
    AffineMap aMap = op.getTransA() ? map(2, 0) : map(0, 2);
    AffineMap bMap = op.getTransB() ? map(1, 2) : map(2, 1);
    Type elt = outType.getElementType();
    Type acc = accumulatorFor(op, elt);
    Value ab = contract(rewriter, loc, outType, op.getA(), aMap, op.getB(),
                        bMap, acc);
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    SmallVector<Value> operands = {ab};
    if (op.getC())
      operands.push_back(op.getC());
    Value r = elementwise(
        rewriter, loc, outType, operands,
        [&](OpBuilder &b, Location l, ValueRange a) {
          bool f = isa<FloatType>(acc);
          auto mul = [&](Value x, double c) -> Value {
            if (c == 1.0)
              return x;
            Value cv = scalarConst(b, l, acc, c);
            return f ? Value(arith::MulFOp::create(b, l, x, cv))
                     : Value(arith::MulIOp::create(b, l, x, cv));
          };
          Value v = mul(a[0], alpha);
          if (a.size() > 1) {
            Value cterm = mul(castScalar(b, l, a[1], acc), beta);
            v = f ? Value(arith::AddFOp::create(b, l, v, cterm))
                  : Value(arith::AddIOp::create(b, l, v, cterm));
          }
          return castScalar(b, l, v, elt);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void populateContractionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MatMulLowering, GemmLowering>(patterns.getContext());
}

} // namespace mp
