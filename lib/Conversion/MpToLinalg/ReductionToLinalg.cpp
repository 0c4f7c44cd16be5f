//===- ReductionToLinalg.cpp - reductions and normalizations to linalg ----===//
//
// Sums, maxima and statistics are computed in f32 for half-precision data
// (the accumulate type of the precision plan) and rounded once at the end.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

Value addF(OpBuilder &b, Location l, Value x, Value y) {
  return arith::AddFOp::create(b, l, x, y);
}
Value mulF(OpBuilder &b, Location l, Value x, Value y) {
  return arith::MulFOp::create(b, l, x, y);
}
Value maxF(OpBuilder &b, Location l, Value x, Value y) {
  return arith::MaximumFOp::create(b, l, x, y);
}

/// Type with `elt` and the shape of `t` minus `axes`.
RankedTensorType withoutAxes(RankedTensorType t, ArrayRef<int64_t> axes,
                             Type elt) {
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(t.getShape()))
    if (!llvm::is_contained(axes, (int64_t)i))
      shape.push_back(d);
  return RankedTensorType::get(shape, elt);
}

/// Applies `fn` to each element of `v` (same shape, element type `elt`).
Value map(OpBuilder &b, Location loc, Value v, Type elt, ScalarFn fn) {
  auto t = cast<RankedTensorType>(v.getType());
  return elementwise(b, loc, RankedTensorType::get(t.getShape(), elt), v, fn);
}

template <typename OpTy>
struct SoftmaxLowering : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Type elt = type.getElementType(), acc = accumulatorType(elt);
    ArrayRef<int64_t> axes = op.getAxes();
    SoftmaxParts p = softmaxParts(rewriter, loc, op.getInput(), axes, acc);
    Value shifted = p.shifted, e = p.exp, sum = p.sum;
    bool isLog = std::is_same_v<OpTy, LogSoftmaxOp>;
    Value r = withStat(
        rewriter, loc, type, isLog ? shifted : e, sum, axes,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value v = isLog ? Value(arith::SubFOp::create(
                                b, l, a[0], math::LogOp::create(b, l, a[1])))
                          : Value(arith::DivFOp::create(b, l, a[0], a[1]));
          return castScalar(b, l, v, elt);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// log(sum(exp(x))) over `axes` in `acc` as m + log(sum(exp(x - m))) with m
/// the maximum (0 where it is -inf, so that all -inf gives -inf, not NaN).
Value logSumExp(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes,
                Type acc) {
  auto type = cast<RankedTensorType>(x.getType());
  Value m = reduce(b, loc, x, axes, acc, -INFINITY, maxF);
  m = map(b, loc, m, acc, [&](OpBuilder &nb, Location l, ValueRange a) {
    Value isInf = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, a[0],
                                        scalarConst(nb, l, acc, -INFINITY));
    return arith::SelectOp::create(nb, l, isInf, scalarConst(nb, l, acc, 0.0),
                                   a[0]);
  });
  Value e = withStat(b, loc, RankedTensorType::get(type.getShape(), acc), x, m,
                     axes, [&](OpBuilder &nb, Location l, ValueRange a) {
                       Value v = castScalar(nb, l, a[0], acc);
                       return math::ExpOp::create(
                           nb, l, arith::SubFOp::create(nb, l, v, a[1]));
                     });
  Value sum = reduce(b, loc, e, axes, acc, 0.0, addF);
  auto statType = cast<RankedTensorType>(sum.getType());
  return elementwise(b, loc, statType, {sum, m},
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       return addF(nb, l, math::LogOp::create(nb, l, a[0]),
                                   a[1]);
                     });
}

/// Reduce* ops: accumulate, finish, round, and keep dims if asked.
struct ReduceLowering : public RewritePattern {
  ReduceLowering(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), 1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
             ReduceSumSquareOp, ReduceL2Op, ReduceL1Op, ReduceLogSumOp,
             ReduceLogSumExpOp>(op))
      return failure();
    Location loc = op->getLoc();
    Value x = op->getOperand(0);
    auto inType = cast<RankedTensorType>(x.getType());
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    Type elt = outType.getElementType();
    bool isFloat = isa<FloatType>(elt);
    bool isUnsignedLike = elt.isInteger(1) || elt.isUnsignedInteger();
    Type acc = isFloat ? accumulatorType(elt) : elt;
    auto axesAttr = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    auto noop = op->getAttrOfType<BoolAttr>("noop_with_empty_axes");
    SmallVector<int64_t> axes;
    for (int64_t a : axesAttr ? axesAttr.asArrayRef() : ArrayRef<int64_t>())
      axes.push_back(a < 0 ? a + inType.getRank() : a);
    if (axes.empty() && !(noop && noop.getValue()))
      for (int64_t i = 0; i < inType.getRank(); ++i)
        axes.push_back(i);
    llvm::sort(axes);
    if (axes.empty()) { // noop_with_empty_axes
      rewriter.replaceOp(op, x);
      return success();
    }
    auto add = [&](OpBuilder &b, Location l, Value a, Value c) -> Value {
      return isFloat ? addF(b, l, a, c)
                     : Value(arith::AddIOp::create(b, l, a, c));
    };
    auto mul = [&](OpBuilder &b, Location l, Value a, Value c) -> Value {
      return isFloat ? mulF(b, l, a, c)
                     : Value(arith::MulIOp::create(b, l, a, c));
    };
    Value r = llvm::TypeSwitch<Operation *, Value>(op)
                  .Case<ReduceSumOp, ReduceMeanOp, ReduceLogSumOp>(
                      [&](Operation *) {
                        return reduce(rewriter, loc, x, axes, acc, 0.0, add);
                      })
                  .Case([&](ReduceL1Op) {
                    return reduce(
                        rewriter, loc, x, axes, acc, 0.0,
                        [&](OpBuilder &b, Location l, Value a, Value c) {
                          Value m = a;
                          if (isFloat)
                            m = math::AbsFOp::create(b, l, a);
                          else if (!isUnsignedLike)
                            m = math::AbsIOp::create(b, l, a);
                          return add(b, l, m, c);
                        });
                  })
                  .Case([&](ReduceLogSumExpOp) {
                    return logSumExp(rewriter, loc, x, axes, acc);
                  })
                  .Case([&](ReduceProdOp) {
                    return reduce(rewriter, loc, x, axes, acc, 1.0, mul);
                  })
                  .Case<ReduceSumSquareOp, ReduceL2Op>([&](Operation *) {
                    return reduce(rewriter, loc, x, axes, acc, 0.0,
                                  [&](OpBuilder &b, Location l, Value a,
                                      Value c) { return add(b, l, mul(b, l, a, a), c); });
                  })
                  .Case([&](ReduceMaxOp) {
                    // Bools (any) and unsigned ints compare unsigned.
                    return reduce(
                        rewriter, loc, x, axes, acc,
                        isFloat ? -INFINITY
                                : (isUnsignedLike ? 0.0 : (double)INT64_MIN),
                        [&](OpBuilder &b, Location l, Value a, Value c) -> Value {
                          if (isFloat)
                            return maxF(b, l, a, c);
                          return isUnsignedLike
                                     ? Value(arith::MaxUIOp::create(b, l, a, c))
                                     : Value(arith::MaxSIOp::create(b, l, a, c));
                        });
                  })
                  .Case([&](ReduceMinOp) {
                    // Bools (all) and unsigned ints compare unsigned; -1 is
                    // all ones.
                    return reduce(
                        rewriter, loc, x, axes, acc,
                        isFloat ? INFINITY
                                : (isUnsignedLike ? -1.0 : (double)INT64_MAX),
                        [&](OpBuilder &b, Location l, Value a, Value c) -> Value {
                          if (isFloat)
                            return Value(arith::MinimumFOp::create(b, l, a, c));
                          return isUnsignedLike
                                     ? Value(arith::MinUIOp::create(b, l, a, c))
                                     : Value(arith::MinSIOp::create(b, l, a, c));
                        });
                  });
    Value n = isa<ReduceMeanOp>(op) ? countOver(rewriter, loc, x, axes, acc)
                                    : Value();
    r = map(rewriter, loc, r, elt,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value v = a[0];
              if (isa<ReduceMeanOp>(op))
                v = isFloat ? Value(arith::DivFOp::create(b, l, v, n))
                            : Value(arith::DivSIOp::create(b, l, v, n));
              if (isa<ReduceL2Op>(op))
                v = math::SqrtOp::create(b, l, v);
              if (isa<ReduceLogSumOp>(op))
                v = math::LogOp::create(b, l, v);
              return castScalar(b, l, v, elt);
            });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, r, outType));
    return success();
  }
};

/// Statistics of x over `axes` in `stash`: mean (or mean of squares) and
/// 1/sqrt(var + eps).
struct Stats {
  Value mean, invStd;
};

/// 1 / sqrt(var + eps) elementwise, in `statsType` (var of any float type).
Value inverseStd(OpBuilder &b, Location loc, RankedTensorType statsType,
                 Value var, double eps) {
  Type stash = statsType.getElementType();
  return elementwise(b, loc, statsType, var,
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value v = addF(nb, l, castScalar(nb, l, a[0], stash),
                                      scalarConst(nb, l, stash, eps));
                       // 1/sqrt: libm has no rsqrt for the JIT.
                       return arith::DivFOp::create(
                           nb, l, scalarConst(nb, l, stash, 1.0),
                           math::SqrtOp::create(nb, l, v));
                     });
}

Stats normalizationStats(OpBuilder &b, Location loc, Value x,
                         ArrayRef<int64_t> axes, Type stash, double eps,
                         bool rms) {
  auto type = cast<RankedTensorType>(x.getType());
  Value n = countOver(b, loc, x, axes, stash);
  auto statsType = withoutAxes(type, axes, stash);
  auto divN = [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
    return arith::DivFOp::create(nb, l, a[0], n);
  };
  Stats s;
  if (rms) {
    Value sq = reduce(b, loc, x, axes, stash, 0.0,
                      [](OpBuilder &nb, Location l, Value v, Value c) {
                        return addF(nb, l, mulF(nb, l, v, v), c);
                      });
    s.mean = map(b, loc, sq, stash, divN);
  } else {
    Value sum = reduce(b, loc, x, axes, stash, 0.0, addF);
    s.mean = map(b, loc, sum, stash, divN);
  }
  Value centered =
      rms ? x
          : withStat(b, loc, RankedTensorType::get(type.getShape(), stash), x,
                     s.mean, axes, [&](OpBuilder &nb, Location l, ValueRange a) {
                       Value v = castScalar(nb, l, a[0], stash);
                       return arith::SubFOp::create(nb, l, v, a[1]);
                     });
  Value var = s.mean;
  if (!rms) {
    Value sq = reduce(b, loc, centered, axes, stash, 0.0,
                      [](OpBuilder &nb, Location l, Value v, Value c) {
                        return addF(nb, l, mulF(nb, l, v, v), c);
                      });
    var = map(b, loc, sq, stash, divN);
  }
  s.invStd = inverseStd(b, loc, statsType, var, eps);
  return s;
}

/// y = (x - mean) * invStd * scale (+ bias), in the stash type, rounded.
Value normalize(OpBuilder &b, Location loc, RankedTensorType outType, Value x,
                Stats s, bool subtractMean, ArrayRef<int64_t> axes,
                Value scale, Value bias, Type stash) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = outType.getRank();
  SmallVector<Value> inputs = {x, s.invStd};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 droppedAxesMap(ctx, rank, axes)};
  if (subtractMean) {
    inputs.push_back(s.mean);
    maps.push_back(droppedAxesMap(ctx, rank, axes));
  }
  for (Value p : {scale, bias})
    if (p) {
      inputs.push_back(p);
      maps.push_back(broadcastMap(
          ctx, cast<RankedTensorType>(p.getType()).getShape(),
          outType.getShape()));
    }
  return parallelGeneric(
      b, loc, outType, inputs, maps,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        unsigned i = 2;
        Value v = castScalar(nb, l, a[0], stash);
        if (subtractMean)
          v = arith::SubFOp::create(nb, l, v, a[i++]);
        v = mulF(nb, l, v, a[1]);
        v = mulF(nb, l, v, castScalar(nb, l, a[i++], stash));
        if (bias)
          v = addF(nb, l, v, castScalar(nb, l, a[i++], stash));
        return castScalar(nb, l, v, outType.getElementType());
      });
}

SmallVector<int64_t> trailingAxes(int64_t axis, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t i = axis < 0 ? axis + rank : axis; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

struct LayerNormLowering : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    SmallVector<int64_t> axes =
        trailingAxes((int64_t)op.getAxis(), outType.getRank());
    Type stash = op.getStashType();
    Stats s = normalizationStats(rewriter, loc, op.getInput(), axes, stash,
                                 op.getEpsilon().convertToDouble(), false);
    Value y = normalize(rewriter, loc, outType, op.getInput(), s, true, axes,
                        op.getScale(), op.getBias(), stash);
    rewriter.replaceOp(
        op, {y,
             reshapeTo(rewriter, loc, s.mean,
                       cast<RankedTensorType>(op.getMean().getType())),
             reshapeTo(rewriter, loc, s.invStd,
                       cast<RankedTensorType>(op.getInvStdDev().getType()))});
    return success();
  }
};

struct RMSNormLowering : public OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RMSNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    SmallVector<int64_t> axes =
        trailingAxes((int64_t)op.getAxis(), outType.getRank());
    Type stash = op.getStashType();
    Stats s = normalizationStats(rewriter, loc, op.getInput(), axes, stash,
                                 op.getEpsilon().convertToDouble(), true);
    Value y = normalize(rewriter, loc, outType, op.getInput(), s, false, axes,
                        op.getScale(), Value(), stash);
    rewriter.replaceOp(
        op, {y, reshapeTo(rewriter, loc, s.invStd,
                          cast<RankedTensorType>(op.getInvStdDev().getType()))});
    return success();
  }
};

/// `param` ([C], or [G] with groups) shaped to broadcast against a tensor
/// whose channel-like dims sit at `lead` with `trailing` dims after them.
Value channelParam(OpBuilder &b, Location loc, Value param,
                   ArrayRef<int64_t> lead, int64_t trailing) {
  SmallVector<int64_t> shape(lead.begin(), lead.end());
  shape.append(trailing, 1);
  return reshapeTo(b, loc, param,
                   RankedTensorType::get(shape, typeOf(param).getElementType()));
}

/// normalize() for [N, C, ...] data with scale and bias per channel ([C]).
Value normalizeChannels(OpBuilder &b, Location loc, RankedTensorType outType,
                        Value x, Stats s, ArrayRef<int64_t> axes, Value scale,
                        Value bias, Type stash) {
  int64_t c = outType.getDimSize(1), trailing = outType.getRank() - 2;
  return normalize(b, loc, outType, x, s, true, axes,
                   channelParam(b, loc, scale, {c}, trailing),
                   channelParam(b, loc, bias, {c}, trailing), stash);
}

/// True when the channel dim (1) of `v` is known when compiling.
bool channelsStatic(Value v) {
  auto t = typeOf(v);
  return t.getRank() >= 2 && !t.isDynamicDim(1);
}

/// Inference BatchNormalization: the statistics are inputs ([C]).
struct BatchNormLowering : public OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    // Batch and spatial dims may be dynamic; channels may not.
    if (!channelsStatic(op.getOutput()))
      return rewriter.notifyMatchFailure(op, "dynamic channels");
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    int64_t rank = outType.getRank();
    Type stash = accumulatorType(outType.getElementType());
    SmallVector<int64_t> axes = {0};
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    double eps = op.getEpsilon().convertToDouble();
    auto statType = RankedTensorType::get(typeOf(op.getMean()).getShape(), stash);
    Stats s;
    s.mean = castElements(rewriter, loc, op.getMean(), stash);
    s.invStd = inverseStd(rewriter, loc, statType, op.getVariance(), eps);
    rewriter.replaceOp(op, normalizeChannels(rewriter, loc, outType,
                                             op.getInput(), s, axes,
                                             op.getScale(), op.getBias(),
                                             stash));
    return success();
  }
};

/// InstanceNormalization: statistics over the spatial dims of each (n, c).
struct InstanceNormLowering : public OpRewritePattern<InstanceNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(InstanceNormOp op,
                                PatternRewriter &rewriter) const override {
    // Batch and spatial dims may be dynamic; channels may not.
    if (!channelsStatic(op.getOutput()))
      return rewriter.notifyMatchFailure(op, "dynamic channels");
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    int64_t rank = outType.getRank();
    Type stash = accumulatorType(outType.getElementType());
    SmallVector<int64_t> axes;
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    Stats s = normalizationStats(rewriter, loc, op.getInput(), axes, stash,
                                 op.getEpsilon().convertToDouble(), false);
    rewriter.replaceOp(op, normalizeChannels(rewriter, loc, outType,
                                             op.getInput(), s, axes,
                                             op.getScale(), op.getBias(),
                                             stash));
    return success();
  }
};

/// GroupNormalization: x viewed as [N, G, C/G, S] with statistics over the
/// last two dims; scale/bias per channel ([G, C/G, 1]) or per group
/// ([G, 1, 1], opset 18).
struct GroupNormLowering : public OpRewritePattern<GroupNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GroupNormOp op,
                                PatternRewriter &rewriter) const override {
    if (!channelsStatic(op.getOutput()))
      return rewriter.notifyMatchFailure(op, "dynamic channels");
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    int64_t n = outType.getDimSize(0), c = outType.getDimSize(1);
    int64_t g = op.getNumGroups();
    if (g <= 0 || c % g != 0)
      return rewriter.notifyMatchFailure(op, "channels not divisible");
    // The spatial dims flattened into one; a product of run-time sizes when
    // any is dynamic.
    int64_t spatial = 1;
    Value spatialSize = indexConst(rewriter, loc, 1);
    for (int64_t d = 2; d < outType.getRank(); ++d) {
      spatialSize = arith::MulIOp::create(rewriter, loc, spatialSize,
                                          dimValue(rewriter, loc, input, d));
      spatial = outType.isDynamicDim(d) || ShapedType::isDynamic(spatial)
                    ? ShapedType::kDynamic
                    : spatial * outType.getDimSize(d);
    }
    SmallVector<Value> groupedSizes;
    if (ShapedType::isDynamic(n))
      groupedSizes.push_back(dimValue(rewriter, loc, input, 0));
    if (ShapedType::isDynamic(spatial))
      groupedSizes.push_back(spatialSize);
    SmallVector<Value> outSizes = dynamicSizes(rewriter, loc, input);
    Type elt = outType.getElementType(), stash = accumulatorType(elt);
    auto grouped = RankedTensorType::get({n, g, c / g, spatial}, elt);
    Value x = reshapeTo(rewriter, loc, input, grouped, groupedSizes);
    SmallVector<int64_t> axes = {2, 3};
    Stats s = normalizationStats(rewriter, loc, x, axes, stash,
                                 op.getEpsilon().convertToDouble(), false);
    SmallVector<int64_t> lead = {g, c / g};
    int64_t trailing = 1;
    if (op.getPerGroupAffine()) {
      lead = {g};
      trailing = 2;
    }
    Value y = normalize(
        rewriter, loc, grouped, x, s, true, axes,
        channelParam(rewriter, loc, op.getScale(), lead, trailing),
        channelParam(rewriter, loc, op.getBias(), lead, trailing), stash);
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, y, outType, outSizes));
    return success();
  }
};

/// com.microsoft SkipLayerNormalization (and the simplified RMS form):
/// sum = input + skip (+ bias), then normalize over the last axis.
struct SkipLayerNormLowering : public OpRewritePattern<SkipLayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SkipLayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    Type elt = outType.getElementType(), stash = rewriter.getF32Type();
    SmallVector<Value> terms = {op.getInput(), op.getSkip()};
    if (op.getBias())
      terms.push_back(op.getBias());
    Value sum = elementwise(rewriter, loc, outType, terms,
                            [&](OpBuilder &b, Location l, ValueRange a) {
                              Value v = castScalar(b, l, a[0], stash);
                              for (Value t : a.drop_front())
                                v = addF(b, l, v, castScalar(b, l, t, stash));
                              return castScalar(b, l, v, elt);
                            });
    SmallVector<int64_t> axes = {outType.getRank() - 1};
    bool rms = op.getSimplified();
    Stats s = normalizationStats(rewriter, loc, sum, axes, stash,
                                 op.getEpsilon().convertToDouble(), rms);
    Value y = normalize(rewriter, loc, outType, sum, s, !rms, axes,
                        op.getGamma(), op.getBeta(), stash);
    auto statType = cast<RankedTensorType>(op.getMean().getType());
    rewriter.replaceOp(op, {y, reshapeTo(rewriter, loc, s.mean, statType),
                            reshapeTo(rewriter, loc, s.invStd, statType), sum});
    return success();
  }
};

/// com.microsoft EmbedLayerNormalization: word[ids] + position[pos]
/// (+ segment[seg]) then layer norm; mask_index counts nonzero mask entries.
struct EmbedLayerNormLowering : public OpRewritePattern<EmbedLayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbedLayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    Type elt = outType.getElementType(), stash = rewriter.getF32Type();
    Value ids = op.getInputIds(), pos = op.getPositionIds();
    Value seg = op.getSegmentIds();
    // Row `r` (an index scalar) of a [N, hidden] table at hidden index h.
    auto row = [&](OpBuilder &b, Location l, Value table, Value r) {
      Value i = arith::IndexCastOp::create(b, l, b.getIndexType(), r);
      Value h = linalg::IndexOp::create(b, l, 2);
      return tensor::ExtractOp::create(b, l, table, ValueRange{i, h});
    };
    MLIRContext *ctx = op.getContext();
    AffineMap bs = AffineMap::get(3, 0, {getAffineDimExpr(0, ctx),
                                         getAffineDimExpr(1, ctx)}, ctx);
    SmallVector<Value> inputs = {ids};
    SmallVector<AffineMap> maps = {bs};
    if (pos) {
      inputs.push_back(pos);
      maps.push_back(broadcastMap(
          ctx, cast<RankedTensorType>(pos.getType()).getShape(),
          outType.getShape().take_front(2)));
      maps.back() = AffineMap::get(3, 0, maps.back().getResults(), ctx);
    }
    if (seg) {
      inputs.push_back(seg);
      maps.push_back(bs);
    }
    Value sum = parallelGeneric(
        rewriter, loc, outType, inputs, maps,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value v = castScalar(b, l, row(b, l, op.getWordEmbedding(), a[0]),
                               stash);
          Value p = pos ? a[1]
                        : arith::IndexCastOp::create(
                              b, l, a[0].getType(),
                              linalg::IndexOp::create(b, l, 1));
          v = addF(b, l, v,
                   castScalar(b, l, row(b, l, op.getPositionEmbedding(), p),
                              stash));
          if (seg)
            v = addF(b, l, v,
                     castScalar(b, l, row(b, l, op.getSegmentEmbedding(),
                                          a.back()),
                                stash));
          return castScalar(b, l, v, elt);
        });
    SmallVector<int64_t> axes = {2};
    Stats s = normalizationStats(rewriter, loc, sum, axes, stash,
                                 op.getEpsilon().convertToDouble(), false);
    Value y = normalize(rewriter, loc, outType, sum, s, true, axes,
                        op.getGamma(), op.getBeta(), stash);
    auto maskType = cast<RankedTensorType>(op.getMaskIndex().getType());
    Value maskIndex;
    if (Value mask = op.getMask()) {
      maskIndex = reduce(rewriter, loc, mask, {1}, maskType.getElementType(),
                         0.0, [](OpBuilder &b, Location l, Value v, Value c) {
                           Value zero = scalarConst(b, l, v.getType(), 0);
                           Value nz = arith::CmpIOp::create(
                               b, l, arith::CmpIPredicate::ne, v, zero);
                           return arith::AddIOp::create(
                               b, l, c, arith::ExtUIOp::create(
                                            b, l, c.getType(), nz));
                         });
    } else {
      SmallVector<Value> batch;
      if (maskType.isDynamicDim(0))
        batch.push_back(dimValue(rewriter, loc, ids, 0));
      Value empty = emptyTensor(rewriter, loc, maskType, batch);
      maskIndex = linalg::FillOp::create(
                      rewriter, loc,
                      scalarConst(rewriter, loc, maskType.getElementType(), 0),
                      empty)
                      .getResult(0);
    }
    rewriter.replaceOp(op, {y, maskIndex, sum});
    return success();
  }
};

} // namespace

void populateReductionToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>,
               ReduceLowering, LayerNormLowering, RMSNormLowering,
               SkipLayerNormLowering, EmbedLayerNormLowering, BatchNormLowering,
               InstanceNormLowering, GroupNormLowering>(ctx);
}

} // namespace mp
