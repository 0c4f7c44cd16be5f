//===- ResizeToLinalg.cpp - ONNX Resize to linalg -------------------------===//
//
// One generic over the output. Per resized axis the output coordinate maps
// back to the input (coordinate_transformation_mode, in f64 as the ONNX
// reference computes it) and picks 1 (nearest), 2 (linear) or 4 (cubic)
// neighbours with weights; the value is the sum over all neighbour
// combinations. Neighbours past an edge read the edge (the reference pads
// in "edge" mode); cubic with exclude_outside drops and renormalizes them.
// With antialias, linear and cubic filters widen by 1/scale when
// downsampling (2/scale or 4/scale taps, normalized to sum 1), as in the
// ONNX reference. Scales and sizes must be constants; sizes over a
// dynamic dim give a run-time scale (stretched, not antialiased).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Dialect/Mp/IR/MpTypeInference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// How one output axis reads the input.
struct AxisPlan {
  int64_t dim;
  /// The compile-time scale, or NaN when it is known only at run time
  /// (constant sizes over a dynamic input dim).
  double scale;
  int64_t inSize, outSize; // kDynamic when known only at run time
  double roiStart = 0, roiEnd = 1;
  /// The input size (i64), a constant when static.
  Value inSizeValue = Value();
  /// The input width, the float output width (scale * input) and the
  /// output size, as f64 (constants when static).
  Value inW = Value(), outW = Value(), outSizeF = Value();
  /// 1 / scale as f64 (a constant when the scale is).
  Value invScale = Value();
};

/// Neighbour indices (already clamped to the edge) and their weights.
struct Taps {
  SmallVector<Value> index;  // index type
  SmallVector<Value> weight; // f64
  Value outside;             // i1: tf_crop_and_resize extrapolates
};

struct ResizeLowering : public OpRewritePattern<ResizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ResizeOp op,
                                PatternRewriter &rewriter) const override {
    StringRef mode = op.getMode();
    auto in = typeOf(op.getInput());
    auto out = op.getType();
    bool isFloat = isa<FloatType>(in.getElementType());
    if (mode != "nearest" && !isFloat)
      return rewriter.notifyMatchFailure(op, "integer interpolation");
    int64_t rank = in.getRank();
    SmallVector<int64_t> axes(op.getAxes());
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i)
        axes.push_back(i);
    for (int64_t &a : axes)
      if (a < 0)
        a += rank;
    // Per-axis scale as the reference computes it.
    auto scales = op.getScales() ? getConstantFloats(op.getScales())
                                 : std::nullopt;
    auto sizes = op.getSizes() ? getConstantInts(op.getSizes()) : std::nullopt;
    if (!scales && !sizes)
      return rewriter.notifyMatchFailure(op, "non-constant scales/sizes");
    // Sizes over a run-time input size give a run-time scale, sizes / input
    // (NaN here). Keeping the aspect ratio would make the output size a
    // run-time value too, and antialiasing would size the filter by it.
    bool runtimeScale = !scales && llvm::any_of(axes, [&](int64_t a) {
      return in.isDynamicDim(a);
    });
    if (runtimeScale && op.getKeepAspectRatioPolicy() != "stretch")
      return rewriter.notifyMatchFailure(
          op, "sizes over a dynamic dim with a kept aspect ratio");
    if (runtimeScale && op.getAntialias() != 0 && mode != "nearest")
      return rewriter.notifyMatchFailure(
          op, "antialiased sizes over a dynamic dim");
    SmallVector<double> scale(rank, 1.0);
    if (scales) {
      for (auto [i, a] : llvm::enumerate(axes))
        scale[a] = (*scales)[i];
    } else {
      StringRef policy = op.getKeepAspectRatioPolicy();
      double common = policy == "not_larger" ? INFINITY : 0;
      for (auto [i, a] : llvm::enumerate(axes)) {
        scale[a] = in.isDynamicDim(a) ? NAN
                                      : double((*sizes)[i]) / in.getDimSize(a);
        common = policy == "not_larger" ? std::min(common, scale[a])
                                        : std::max(common, scale[a]);
      }
      if (policy != "stretch")
        for (int64_t a : axes)
          scale[a] = common;
    }
    StringRef ctm = op.getCoordinateTransformationMode();
    bool crop = ctm == "tf_crop_and_resize";
    std::optional<SmallVector<double>> roi;
    if (crop) {
      roi = op.getRoi() ? getConstantFloats(op.getRoi()) : std::nullopt;
      if (!roi || roi->size() != 2 * axes.size())
        return rewriter.notifyMatchFailure(op, "non-constant roi");
    }
    Location loc = op.getLoc();
    SmallVector<AxisPlan> plans;
    for (auto [i, a] : llvm::enumerate(axes)) {
      if (scale[a] == 1.0 && !crop)
        continue; // the identity in every mode
      AxisPlan p{a, scale[a], in.getDimSize(a), out.getDimSize(a)};
      // Sizes as values, known at run time on dynamic axes.
      Type f64 = rewriter.getF64Type();
      p.inSizeValue = arith::IndexCastOp::create(
          rewriter, loc, rewriter.getI64Type(),
          dimValue(rewriter, loc, op.getInput(), a));
      p.inW = arith::SIToFPOp::create(rewriter, loc, f64, p.inSizeValue);
      Value one = scalarConst(rewriter, loc, f64, 1.0);
      Value scaleValue =
          std::isnan(scale[a])
              ? Value(arith::DivFOp::create(
                    rewriter, loc,
                    scalarConst(rewriter, loc, f64, (*sizes)[i]), p.inW))
              : scalarConst(rewriter, loc, f64, scale[a]);
      p.invScale = std::isnan(scale[a])
                       ? Value(arith::DivFOp::create(rewriter, loc, one,
                                                     scaleValue))
                       : scalarConst(rewriter, loc, f64, 1.0 / scale[a]);
      p.outW = arith::MulFOp::create(rewriter, loc, p.inW, scaleValue);
      p.outSizeF = ShapedType::isDynamic(p.outSize)
                       ? Value(math::FloorOp::create(rewriter, loc, p.outW))
                       : scalarConst(rewriter, loc, f64, p.outSize);
      if (crop) {
        p.roiStart = (*roi)[i];
        p.roiEnd = (*roi)[axes.size() + i];
      }
      plans.push_back(p);
    }

    Type elt = in.getElementType();
    Type f64 = rewriter.getF64Type();
    Value x = op.getInput();
    double extrapolation = op.getExtrapolationValue().convertToDouble();
    double a = op.getCubicCoeffA().convertToDouble();
    bool exclude = op.getExcludeOutside() != 0;
    bool antialias = op.getAntialias() != 0;
    StringRef nearestMode = op.getNearestMode();

    // Run-time output sizes: floor(input * scale) on resized axes, the
    // input's elsewhere.
    SmallVector<Value> outSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!out.isDynamicDim(d))
        continue;
      Value size = dimValue(rewriter, loc, op.getInput(), d);
      if (std::isnan(scale[d])) {
        size = arith::ConstantIndexOp::create(rewriter, loc,
                                              (*sizes)[llvm::find(axes, d) -
                                                       axes.begin()]);
      } else if (scale[d] != 1.0) {
        Value f = arith::UIToFPOp::create(
            rewriter, loc, f64,
            arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                       size));
        f = math::FloorOp::create(
            rewriter, loc,
            arith::MulFOp::create(rewriter, loc, f,
                                  scalarConst(rewriter, loc, f64, scale[d])));
        size = arith::IndexCastOp::create(
            rewriter, loc, rewriter.getIndexType(),
            arith::FPToSIOp::create(rewriter, loc, rewriter.getI64Type(), f));
      }
      outSizes.push_back(size);
    }
    Value r = parallelGeneric(
        rewriter, loc, out, {}, {},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          auto c = [&](double v) { return scalarConst(b, l, f64, v); };
          SmallVector<Value> idx;
          for (int64_t d = 0; d < rank; ++d)
            idx.push_back(linalg::IndexOp::create(b, l, d));
          SmallVector<Taps> taps;
          for (const AxisPlan &p : plans)
            taps.push_back(tapsFor(b, l, p, idx[p.dim], ctm, mode, nearestMode,
                                   a, exclude, antialias));
          // Sum over every combination of neighbours.
          Value sum = c(0);
          SmallVector<int64_t> pick(plans.size(), 0);
          while (true) {
            SmallVector<Value> at = idx;
            Value w = c(1);
            for (auto [k, p] : llvm::enumerate(plans)) {
              at[p.dim] = taps[k].index[pick[k]];
              w = arith::MulFOp::create(b, l, w, taps[k].weight[pick[k]]);
            }
            Value v = tensor::ExtractOp::create(b, l, x, at);
            if (!isFloat && mode == "nearest")
              return v; // one tap per axis
            sum = arith::AddFOp::create(
                b, l, sum, arith::MulFOp::create(b, l, w, castScalar(b, l, v, f64)));
            int64_t k = 0;
            while (k < (int64_t)pick.size() &&
                   ++pick[k] == (int64_t)taps[k].index.size())
              pick[k++] = 0;
            if (k == (int64_t)pick.size())
              break;
          }
          for (const Taps &t : taps)
            if (t.outside)
              sum = arith::SelectOp::create(b, l, t.outside, c(extrapolation),
                                            sum);
          return castScalar(b, l, sum, elt);
        },
        outSizes);
    rewriter.replaceOp(op, r);
    return success();
  }

  static Taps tapsFor(OpBuilder &b, Location l, const AxisPlan &p, Value o,
                      StringRef ctm, StringRef mode, StringRef nearestMode,
                      double a, bool exclude, bool antialias) {
    Type f64 = b.getF64Type();
    auto c = [&](double v) { return scalarConst(b, l, f64, v); };
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddFOp::create(b, l, x, y);
    };
    auto sub = [&](Value x, Value y) -> Value {
      return arith::SubFOp::create(b, l, x, y);
    };
    auto mul = [&](Value x, Value y) -> Value {
      return arith::MulFOp::create(b, l, x, y);
    };
    auto div = [&](Value x, Value y) -> Value {
      return arith::DivFOp::create(b, l, x, y);
    };
    auto select = [&](Value cond, Value x, Value y) -> Value {
      return arith::SelectOp::create(b, l, cond, x, y);
    };
    Value xo = arith::SIToFPOp::create(
        b, l, f64, arith::IndexCastOp::create(b, l, b.getI64Type(), o));
    // Widths as values (constants, folded, when the axis is static).
    Value inW = p.inW, outW = p.outW; // outW: the float output width
    Value inLast = sub(inW, c(1)), outLast = sub(outW, c(1));
    Value oneWide =
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, outW, c(1));
    Taps t;
    // The input coordinate of output coordinate xo.
    Value xi;
    Value halfPixel = sub(mul(add(xo, c(0.5)), p.invScale), c(0.5));
    if (ctm == "align_corners")
      xi = select(oneWide, c(0), mul(xo, div(inLast, outLast)));
    else if (ctm == "asymmetric")
      xi = mul(xo, p.invScale);
    else if (ctm == "tf_half_pixel_for_nn") // opset 11
      xi = mul(add(xo, c(0.5)), p.invScale);
    else if (ctm == "pytorch_half_pixel")
      xi = select(oneWide, c(-0.5), halfPixel);
    else if (ctm == "half_pixel_symmetric") {
      Value adjustment = div(p.outSizeF, outW), center = div(inW, c(2));
      xi = add(mul(center, sub(c(1), adjustment)), halfPixel);
    } else if (ctm == "tf_crop_and_resize") {
      Value span = mul(c(p.roiEnd - p.roiStart), inLast);
      xi = select(oneWide, div(span, c(2)), mul(xo, div(span, outLast)));
      xi = add(xi, mul(c(p.roiStart), inLast));
      t.outside = arith::OrIOp::create(
          b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, xi, c(0)),
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, xi, inLast));
    } else {
      xi = halfPixel;
    }
    Value fl = math::FloorOp::create(b, l, xi);
    Value ratio = sub(xi, fl);
    Value base = arith::FPToSIOp::create(b, l, b.getI64Type(), fl);
    auto at = [&](int64_t offset) -> Value {
      // Edge padding: clamp into [0, inSize - 1].
      Value i = arith::AddIOp::create(
          b, l, base, arith::ConstantIntOp::create(b, l, b.getI64Type(), offset));
      i = arith::MaxSIOp::create(
          b, l, i, arith::ConstantIntOp::create(b, l, b.getI64Type(), 0));
      i = arith::MinSIOp::create(
          b, l, i,
          arith::SubIOp::create(b, l, p.inSizeValue,
                                arith::ConstantIntOp::create(
                                    b, l, b.getI64Type(), 1)));
      return arith::IndexCastOp::create(b, l, b.getIndexType(), i);
    };
    if (mode == "nearest") {
      // An exact coordinate reads itself; otherwise by nearest_mode.
      Value exact = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                          ratio, c(0));
      Value up;
      if (nearestMode == "round_prefer_ceil")
        up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, ratio,
                                   c(0.5));
      else if (nearestMode == "floor")
        up = arith::ConstantIntOp::create(b, l, b.getI1Type(), 0);
      else if (nearestMode == "ceil")
        up = arith::ConstantIntOp::create(b, l, b.getI1Type(), 1);
      else // round_prefer_floor
        up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, ratio,
                                   c(0.5));
      up = arith::AndIOp::create(
          b, l, up, arith::XOrIOp::create(
                        b, l, exact,
                        arith::ConstantIntOp::create(b, l, b.getI1Type(), 1)));
      t.index.push_back(arith::SelectOp::create(b, l, up, at(1), at(0)));
      t.weight.push_back(c(1));
      return t;
    }
    auto i64 = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, l, b.getI64Type(), v);
    };
    // Whether tap base + offset lies inside the input (exclude_outside).
    auto inside = [&](int64_t offset) -> Value {
      Value i = arith::AddIOp::create(b, l, base, i64(offset));
      return arith::AndIOp::create(
          b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i, i64(0)),
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                p.inSizeValue));
    };
    // Keys' cubic kernel at distance d >= 0 (0 from 2 on).
    auto cubic = [&](Value d) -> Value {
      Value d2 = mul(d, d), d3 = mul(d2, d);
      Value near = add(sub(mul(c(a + 2), d3), mul(c(a + 3), d2)), c(1));
      Value far = sub(add(sub(mul(c(a), d3), mul(c(5 * a), d2)), mul(c(8 * a), d)),
                      c(4 * a));
      Value isNear = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, d,
                                           c(1));
      Value isFar = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, d,
                                          c(2));
      return arith::SelectOp::create(
          b, l, isFar, c(0), arith::SelectOp::create(b, l, isNear, near, far));
    };
    // Taps base + first .. base + first + n - 1; weight of tap k from its
    // distance (k - ratio) * s, in input pixels scaled by s.
    int64_t first = mode == "linear" ? 0 : -1, n = mode == "linear" ? 2 : 4;
    double s = 1;
    // A run-time scale (NaN) never antialiases: the pattern refuses it.
    if (antialias && p.scale < 1) {
      // Downsampling widens the filter to cover 1/scale input pixels.
      s = p.scale;
      first = (int64_t)std::floor((mode == "linear" ? -1 : -2) / s) + 1;
      n = 2 - 2 * first;
    }
    SmallVector<Value> w;
    Value total = c(0);
    for (int64_t k = first; k < first + n; ++k) {
      Value d = math::AbsFOp::create(b, l, mul(sub(c(k), ratio), c(s)));
      Value weight = mode == "linear"
                         ? Value(arith::MaximumFOp::create(b, l, sub(c(1), d),
                                                           c(0)))
                         : cubic(d);
      if (exclude)
        weight = arith::SelectOp::create(b, l, inside(k), weight, c(0));
      w.push_back(weight);
      total = add(total, weight);
      t.index.push_back(at(k));
    }
    // The kernels sum to 1 over their taps except when widened or when
    // taps are excluded.
    if (exclude || s != 1)
      for (Value &v : w)
        v = arith::DivFOp::create(b, l, v, total);
    t.weight = w;
    return t;
  }
};

} // namespace

void populateResizeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ResizeLowering>(patterns.getContext());
}

} // namespace mp
