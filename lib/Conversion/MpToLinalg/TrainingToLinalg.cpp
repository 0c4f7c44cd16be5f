//===- TrainingToLinalg.cpp - loss scaling and optimizers to linalg -------===//
//
// Every op here is elementwise over fp32 state with rank-0 scalars (scale,
// step, skip flag) broadcast in; a skipped step selects the old values, so
// the decision never leaves the device.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// Builds scalar arithmetic inside a generic body.
struct Scalar {
  OpBuilder &b;
  Location loc;
  Value c(double v) const { return scalarConst(b, loc, b.getF32Type(), v); }
  Value add(Value x, Value y) const { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) const { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) const { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) const { return arith::DivFOp::create(b, loc, x, y); }
  Value select(Value cond, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  /// `value`, or `old` when the step is skipped (`skip` may be null).
  Value unlessSkipped(Value skip, Value old, Value value) const {
    return skip ? select(skip, old, value) : value;
  }
};

RankedTensorType f32Like(Value v) {
  return RankedTensorType::get(typeOf(v).getShape(),
                               Float32Type::get(v.getContext()));
}

struct UnscaleAndCheckLowering : OpRewritePattern<UnscaleAndCheckOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UnscaleAndCheckOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    SmallVector<Value> results;
    Value anyBad;
    for (Value g : op.getGrads()) {
      results.push_back(elementwise(
          rewriter, loc, f32Like(g), {g, op.getScale()},
          [&](OpBuilder &b, Location l, ValueRange a) {
            return Scalar{b, l}.div(castScalar(b, l, a[0], f32), a[1]);
          }));
      // 1 where an element is inf or NaN (|x| >= inf is unordered for NaN),
      // reduced by max over the whole gradient.
      SmallVector<int64_t> all =
          llvm::to_vector(llvm::seq<int64_t>(0, typeOf(g).getRank()));
      Value bad = reduce(
          rewriter, loc, g, all, f32, 0.0,
          [&](OpBuilder &b, Location l, Value x, Value acc) {
            Scalar s{b, l};
            Value notFinite = arith::CmpFOp::create(
                b, l, arith::CmpFPredicate::UGE, math::AbsFOp::create(b, l, x),
                s.c(std::numeric_limits<double>::infinity()));
            return s.select(notFinite, s.c(1.0), acc);
          });
      anyBad = !anyBad ? bad
                       : elementwise(rewriter, loc, typeOf(bad), {anyBad, bad},
                                     [](OpBuilder &b, Location l, ValueRange a) {
                                       return arith::MaximumFOp::create(
                                           b, l, a[0], a[1]);
                                     });
    }
    results.push_back(elementwise(
        rewriter, loc, cast<RankedTensorType>(op.getFoundInf().getType()),
        anyBad, [](OpBuilder &b, Location l, ValueRange a) {
          return arith::CmpFOp::create(b, l, arith::CmpFPredicate::ONE, a[0],
                                       Scalar{b, l}.c(0.0));
        }));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct UpdateLossScaleLowering : OpRewritePattern<UpdateLossScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UpdateLossScaleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    float growth = op.getGrowthFactor().convertToFloat();
    float backoff = op.getBackoffFactor().convertToFloat();
    float lo = op.getMinScale().convertToFloat();
    float hi = op.getMaxScale().convertToFloat();
    int64_t interval = op.getGrowthInterval();
    ValueRange state = op->getOperands(); // scale, good_steps, found_inf
    // The counter after this step, before a growth resets it.
    auto counted = [&](OpBuilder &b, Location l, ValueRange a) {
      Type i64 = b.getI64Type();
      Value next = arith::AddIOp::create(b, l, a[1], scalarConst(b, l, i64, 1));
      return arith::SelectOp::create(b, l, a[2], scalarConst(b, l, i64, 0),
                                     next)
          .getResult();
    };
    auto grows = [&](OpBuilder &b, Location l, Value count) {
      return arith::CmpIOp::create(
          b, l, arith::CmpIPredicate::sge, count,
          scalarConst(b, l, b.getI64Type(), (double)interval));
    };
    Value scale = elementwise(
        rewriter, loc, typeOf(op.getScale()), state,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Scalar s{b, l};
          Value down = arith::MaximumFOp::create(b, l, s.mul(a[0], s.c(backoff)),
                                                 s.c(lo));
          Value up = arith::MinimumFOp::create(b, l, s.mul(a[0], s.c(growth)),
                                               s.c(hi));
          Value kept = s.select(grows(b, l, counted(b, l, a)), up, a[0]);
          return s.select(a[2], down, kept);
        });
    Value good = elementwise(
        rewriter, loc, typeOf(op.getGoodSteps()), state,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value count = counted(b, l, a);
          return arith::SelectOp::create(
                     b, l, grows(b, l, count),
                     scalarConst(b, l, b.getI64Type(), 0), count)
              .getResult();
        });
    rewriter.replaceOp(op, {scale, good});
    return success();
  }
};

struct SgdUpdateLowering : OpRewritePattern<SgdUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SgdUpdateOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    float lr = op.getLr().convertToFloat();
    float momentum = op.getMomentum().convertToFloat();
    float decay = op.getWeightDecay().convertToFloat();
    SmallVector<Value> operands = {op.getParam(), op.getGrad(),
                                   op.getMomentumBuffer()};
    if (op.getSkip())
      operands.push_back(op.getSkip());
    RankedTensorType type = typeOf(op.getParam());
    // buf = momentum * buf + (g + decay * p)
    auto buffer = [&](Scalar s, ValueRange a) {
      return s.add(s.mul(s.c(momentum), a[2]),
                   s.add(a[1], s.mul(s.c(decay), a[0])));
    };
    auto skipOf = [&](ValueRange a) { return a.size() > 3 ? a[3] : Value(); };
    Value newBuf = elementwise(rewriter, loc, type, operands,
                               [&](OpBuilder &b, Location l, ValueRange a) {
                                 Scalar s{b, l};
                                 return s.unlessSkipped(skipOf(a), a[2],
                                                        buffer(s, a));
                               });
    Value newParam = elementwise(
        rewriter, loc, type, operands,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Scalar s{b, l};
          Value p = s.sub(a[0], s.mul(s.c(lr), buffer(s, a)));
          return s.unlessSkipped(skipOf(a), a[0], p);
        });
    rewriter.replaceOp(op, {newParam, newBuf});
    return success();
  }
};

struct AdamWUpdateLowering : OpRewritePattern<AdamWUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AdamWUpdateOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    float lr = op.getLr().convertToFloat();
    float beta1 = op.getBeta1().convertToFloat();
    float beta2 = op.getBeta2().convertToFloat();
    float eps = op.getEps().convertToFloat();
    float decay = op.getWeightDecay().convertToFloat();
    RankedTensorType type = typeOf(op.getParam());
    Value skip = op.getSkip();
    auto withSkip = [&](SmallVector<Value> operands) {
      if (skip)
        operands.push_back(skip);
      return operands;
    };
    auto skipAt = [&](ValueRange a, size_t i) {
      return skip ? a[i] : Value();
    };
    // The bias corrections 1 - beta^t, t = step + 1, once per call.
    auto correction = [&](float beta) {
      return elementwise(rewriter, loc, typeOf(op.getStep()), op.getStep(),
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           Scalar s{b, l};
                           Value t = s.add(a[0], s.c(1.0));
                           return s.sub(s.c(1.0), math::PowFOp::create(
                                                      b, l, s.c(beta), t));
                         });
    };
    Value c1 = correction(beta1), c2 = correction(beta2);
    Value m = elementwise(
        rewriter, loc, type, withSkip({op.getGrad(), op.getExpAvg()}),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Scalar s{b, l};
          Value v = s.add(s.mul(s.c(beta1), a[1]), s.mul(s.c(1 - beta1), a[0]));
          return s.unlessSkipped(skipAt(a, 2), a[1], v);
        });
    Value v = elementwise(
        rewriter, loc, type, withSkip({op.getGrad(), op.getExpAvgSq()}),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Scalar s{b, l};
          Value r = s.add(s.mul(s.c(beta2), a[1]),
                          s.mul(s.c(1 - beta2), s.mul(a[0], a[0])));
          return s.unlessSkipped(skipAt(a, 2), a[1], r);
        });
    Value p = elementwise(
        rewriter, loc, type, withSkip({op.getParam(), m, v, c1, c2}),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Scalar s{b, l};
          Value decayed = s.mul(a[0], s.c(1 - lr * decay));
          Value denom = s.add(
              math::SqrtOp::create(b, l, s.div(a[2], a[4])), s.c(eps));
          Value r = s.sub(decayed, s.mul(s.c(lr), s.div(s.div(a[1], a[3]),
                                                        denom)));
          return s.unlessSkipped(skipAt(a, 5), a[0], r);
        });
    rewriter.replaceOp(op, {p, m, v});
    return success();
  }
};

} // namespace

void populateTrainingToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<UnscaleAndCheckLowering, UpdateLossScaleLowering,
               SgdUpdateLowering, AdamWUpdateLowering>(patterns.getContext());
}

} // namespace mp
