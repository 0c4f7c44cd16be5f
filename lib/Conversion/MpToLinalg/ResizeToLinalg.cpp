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
// ONNX reference. Scales and sizes must be constants. Sizes over a dynamic
// dim give a run-time scale; antialiasing by it loops over a run-time
// window of taps.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Dialect/Mp/IR/MpTypeInference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
  double roiStart = 0, roiEnd = 1;
  /// The input size (i64), a constant when static.
  Value inSizeValue = Value();
  /// The input width, the float output width (scale * input) and the
  /// output size, as f64 (constants when static).
  Value inW = Value(), outW = Value(), outSizeF = Value();
  /// The scale as f64 (a constant when static).
  Value scaleValue = Value();
};

/// The neighbours an output coordinate reads along one axis: a fixed list
/// of (index, weight), or, for an antialiased filter whose width depends on
/// a run-time scale, a run-time window of taps.
struct Taps {
  SmallVector<Value> index;  // index type, clamped to the edge
  SmallVector<Value> weight; // f64
  /// The window: taps first .. first + count - 1 (index type); tap(k) gives
  /// the clamped input index and the normalized weight of tap k.
  Value first, count;
  std::function<std::pair<Value, Value>(OpBuilder &, Location, Value)> tap;
  Value outside; // i1: tf_crop_and_resize extrapolates
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
    auto scales = op.getScales() ? getConstantFloats(op.getScales())
                                 : std::nullopt;
    auto sizes = op.getSizes() ? getConstantInts(op.getSizes()) : std::nullopt;
    if (!scales && !sizes)
      return rewriter.notifyMatchFailure(op, "non-constant scales/sizes");
    StringRef ctm = op.getCoordinateTransformationMode();
    bool crop = ctm == "tf_crop_and_resize";
    std::optional<SmallVector<double>> roi;
    if (crop) {
      roi = op.getRoi() ? getConstantFloats(op.getRoi()) : std::nullopt;
      if (!roi || roi->size() != 2 * axes.size())
        return rewriter.notifyMatchFailure(op, "non-constant roi");
    }

    Location loc = op.getLoc();
    Type f64 = rewriter.getF64Type(), i64 = rewriter.getI64Type();
    auto f64Const = [&](double v) { return scalarConst(rewriter, loc, f64, v); };
    // The input width of each resized axis, as i64 and f64.
    DenseMap<int64_t, Value> inSize, inW;
    for (int64_t a : axes) {
      inSize[a] = arith::IndexCastOp::create(
          rewriter, loc, i64, dimValue(rewriter, loc, op.getInput(), a));
      inW[a] = arith::SIToFPOp::create(rewriter, loc, f64, inSize[a]);
    }
    // Per-axis scale as the reference computes it: a constant, or, for
    // sizes over a run-time input width, sizes / width at run time (NaN in
    // `scale`). Keeping the aspect ratio takes the smallest (not_larger) or
    // largest (not_smaller) of the axes' ratios for all of them.
    SmallVector<double> scale(rank, 1.0);
    DenseMap<int64_t, Value> scaleValue;
    StringRef policy = op.getKeepAspectRatioPolicy();
    if (scales) {
      for (auto [i, a] : llvm::enumerate(axes)) {
        scale[a] = (*scales)[i];
        scaleValue[a] = f64Const(scale[a]);
      }
    } else {
      bool runtime = llvm::any_of(axes, [&](int64_t a) {
        return in.isDynamicDim(a);
      });
      bool smallest = policy == "not_larger";
      double common = smallest ? INFINITY : 0;
      Value commonValue;
      for (auto [i, a] : llvm::enumerate(axes)) {
        scale[a] = in.isDynamicDim(a) ? NAN
                                      : double((*sizes)[i]) / in.getDimSize(a);
        scaleValue[a] =
            in.isDynamicDim(a)
                ? Value(arith::DivFOp::create(rewriter, loc,
                                              f64Const((*sizes)[i]), inW[a]))
                : f64Const(scale[a]);
        common = smallest ? std::min(common, scale[a])
                          : std::max(common, scale[a]);
        commonValue =
            !commonValue ? scaleValue[a]
            : smallest
                ? Value(arith::MinimumFOp::create(rewriter, loc, commonValue,
                                                  scaleValue[a]))
                : Value(arith::MaximumFOp::create(rewriter, loc, commonValue,
                                                  scaleValue[a]));
      }
      if (policy != "stretch")
        for (int64_t a : axes) {
          scale[a] = runtime ? NAN : common;
          scaleValue[a] = runtime ? commonValue : f64Const(common);
        }
    }
    SmallVector<AxisPlan> plans;
    for (auto [i, a] : llvm::enumerate(axes)) {
      if (scale[a] == 1.0 && !crop)
        continue; // the identity in every mode
      AxisPlan p{a, scale[a]};
      p.inSizeValue = inSize[a];
      p.inW = inW[a];
      p.scaleValue = scaleValue[a];
      p.outW = arith::MulFOp::create(rewriter, loc, p.inW, p.scaleValue);
      // The output size: floor(scale * input), rounded half up when the
      // aspect ratio is kept.
      bool roundHalfUp = sizes && policy != "stretch";
      p.outSizeF =
          out.isDynamicDim(a)
              ? Value(math::FloorOp::create(
                    rewriter, loc,
                    roundHalfUp ? Value(arith::AddFOp::create(
                                      rewriter, loc, p.outW, f64Const(0.5)))
                                : p.outW))
              : f64Const(out.getDimSize(a));
      if (crop) {
        p.roiStart = (*roi)[i];
        p.roiEnd = (*roi)[axes.size() + i];
      }
      plans.push_back(p);
    }

    Type elt = in.getElementType();
    Value x = op.getInput();
    double extrapolation = op.getExtrapolationValue().convertToDouble();
    double a = op.getCubicCoeffA().convertToDouble();
    bool exclude = op.getExcludeOutside() != 0;
    bool antialias = op.getAntialias() != 0;
    StringRef nearestMode = op.getNearestMode();

    // Run-time output sizes: floor(input * scale) on resized axes (rounded
    // half up when the aspect ratio is kept), the input's elsewhere.
    SmallVector<Value> outSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!out.isDynamicDim(d))
        continue;
      Value size = dimValue(rewriter, loc, op.getInput(), d);
      if (const AxisPlan *p = llvm::find_if(
              plans, [&](const AxisPlan &q) { return q.dim == d; });
          p != plans.end())
        size = arith::IndexCastOp::create(
            rewriter, loc, rewriter.getIndexType(),
            arith::FPToSIOp::create(rewriter, loc, i64, p->outSizeF));
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
          if (!isFloat) { // nearest: one tap per axis
            SmallVector<Value> at = idx;
            for (auto [k, p] : llvm::enumerate(plans))
              at[p.dim] = taps[k].index[0];
            return tensor::ExtractOp::create(b, l, x, at);
          }
          // Sum over every combination of neighbours, axis by axis.
          std::function<Value(OpBuilder &, Location, size_t, SmallVector<Value>,
                              Value, Value)>
              sumFrom = [&](OpBuilder &nb, Location nl, size_t k,
                            SmallVector<Value> at, Value w,
                            Value sum) -> Value {
            if (k == plans.size()) {
              Value v = castScalar(nb, nl, tensor::ExtractOp::create(nb, nl, x, at),
                                   f64);
              return arith::AddFOp::create(
                  nb, nl, sum, arith::MulFOp::create(nb, nl, w, v));
            }
            const Taps &t = taps[k];
            int64_t dim = plans[k].dim;
            if (!t.tap) {
              for (auto [index, weight] : llvm::zip(t.index, t.weight)) {
                at[dim] = index;
                sum = sumFrom(nb, nl, k + 1, at,
                              arith::MulFOp::create(nb, nl, w, weight), sum);
              }
              return sum;
            }
            Value last = arith::AddIOp::create(nb, nl, t.first, t.count);
            auto loop = scf::ForOp::create(
                nb, nl, t.first, last, indexConst(nb, nl, 1), ValueRange{sum},
                [&](OpBuilder &lb, Location ll, Value tapK, ValueRange acc) {
                  auto [index, weight] = t.tap(lb, ll, tapK);
                  SmallVector<Value> next = at;
                  next[dim] = index;
                  scf::YieldOp::create(
                      lb, ll,
                      sumFrom(lb, ll, k + 1, next,
                              arith::MulFOp::create(lb, ll, w, weight),
                              acc[0]));
                });
            return loop.getResult(0);
          };
          Value sum = sumFrom(b, l, 0, idx, c(1), c(0));
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
    // Divided by the scale, not multiplied by its inverse: the reference's
    // rounding, which nearest neighbours at exact and half positions see.
    Value halfPixel = sub(div(add(xo, c(0.5)), p.scaleValue), c(0.5));
    if (ctm == "align_corners")
      xi = select(oneWide, c(0), mul(xo, div(inLast, outLast)));
    else if (ctm == "asymmetric")
      xi = div(xo, p.scaleValue);
    else if (ctm == "tf_half_pixel_for_nn") // opset 11
      xi = div(add(xo, c(0.5)), p.scaleValue);
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
    auto i64 = [](OpBuilder &nb, Location nl, int64_t v) -> Value {
      return arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), v);
    };
    // Tap base + offset (i64), clamped into [0, inSize - 1] (edge padding).
    auto at = [&p, base, i64](OpBuilder &nb, Location nl, Value offset) -> Value {
      Value i = arith::AddIOp::create(nb, nl, base, offset);
      i = arith::MaxSIOp::create(nb, nl, i, i64(nb, nl, 0));
      i = arith::MinSIOp::create(
          nb, nl, i, arith::SubIOp::create(nb, nl, p.inSizeValue, i64(nb, nl, 1)));
      return arith::IndexCastOp::create(nb, nl, nb.getIndexType(), i);
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
      t.index.push_back(arith::SelectOp::create(b, l, up, at(b, l, i64(b, l, 1)),
                                                at(b, l, i64(b, l, 0))));
      t.weight.push_back(c(1));
      return t;
    }
    // The unnormalized weight of tap base + k (k as i64): the kernel at
    // distance (k - ratio) * s in input pixels scaled by s, 0 for taps
    // outside the input with exclude_outside.
    auto weightAt = [=, &p](OpBuilder &nb, Location nl, Value k,
                            Value s) -> Value {
      auto cf = [&](double v) { return scalarConst(nb, nl, f64, v); };
      auto fmul = [&](Value x, Value y) -> Value {
        return arith::MulFOp::create(nb, nl, x, y);
      };
      auto fsub = [&](Value x, Value y) -> Value {
        return arith::SubFOp::create(nb, nl, x, y);
      };
      Value kf = arith::SIToFPOp::create(nb, nl, f64, k);
      Value d = math::AbsFOp::create(nb, nl, fmul(fsub(kf, ratio), s));
      Value w;
      if (mode == "linear") {
        w = arith::MaximumFOp::create(nb, nl, fsub(cf(1), d), cf(0));
      } else {
        // Keys' cubic kernel at distance d >= 0 (0 from 2 on).
        Value d2 = fmul(d, d), d3 = fmul(d2, d);
        Value near = arith::AddFOp::create(
            nb, nl, fsub(fmul(cf(a + 2), d3), fmul(cf(a + 3), d2)), cf(1));
        Value far = fsub(
            arith::AddFOp::create(nb, nl, fsub(fmul(cf(a), d3), fmul(cf(5 * a), d2)),
                                  fmul(cf(8 * a), d)),
            cf(4 * a));
        Value isNear = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE,
                                             d, cf(1));
        Value isFar = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE,
                                            d, cf(2));
        w = arith::SelectOp::create(
            nb, nl, isFar, cf(0),
            arith::SelectOp::create(nb, nl, isNear, near, far));
      }
      if (!exclude)
        return w;
      Value i = arith::AddIOp::create(nb, nl, base, k);
      Value inside = arith::AndIOp::create(
          nb, nl,
          arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, i,
                                i64(nb, nl, 0)),
          arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i,
                                p.inSizeValue));
      return arith::SelectOp::create(nb, nl, inside, w, cf(0));
    };
    // Half the kernel's support in input pixels: 1 (linear), 2 (cubic).
    double support = mode == "linear" ? 1 : 2;
    if (antialias && std::isnan(p.scale)) {
      // Downsampling by a run-time scale widens the filter to cover
      // 1 / scale input pixels: a run-time window of taps
      // first = floor(-support / s) + 1 .. -first + 1, normalized to sum 1.
      Value s = arith::MinimumFOp::create(b, l, p.scaleValue, c(1));
      Value firstF = add(math::FloorOp::create(b, l, div(c(-support), s)), c(1));
      Value first = arith::FPToSIOp::create(b, l, b.getI64Type(), firstF);
      Value count = arith::SubIOp::create(
          b, l, i64(b, l, 2),
          arith::MulIOp::create(b, l, i64(b, l, 2), first));
      auto toIndex = [&](Value v) -> Value {
        return arith::IndexCastOp::create(b, l, b.getIndexType(), v);
      };
      t.first = toIndex(first);
      t.count = toIndex(count);
      auto asI64 = [](OpBuilder &nb, Location nl, Value k) -> Value {
        return arith::IndexCastOp::create(nb, nl, nb.getI64Type(), k);
      };
      Value end = arith::AddIOp::create(b, l, t.first, t.count);
      Value total =
          scf::ForOp::create(
              b, l, t.first, end, indexConst(b, l, 1), ValueRange{c(0)},
              [&](OpBuilder &lb, Location ll, Value k, ValueRange acc) {
                scf::YieldOp::create(
                    lb, ll,
                    ValueRange{arith::AddFOp::create(
                        lb, ll, acc[0], weightAt(lb, ll, asI64(lb, ll, k), s))});
              })
              .getResult(0);
      t.tap = [=](OpBuilder &nb, Location nl, Value k) -> std::pair<Value, Value> {
        Value k64 = asI64(nb, nl, k);
        return {at(nb, nl, k64),
                arith::DivFOp::create(nb, nl, weightAt(nb, nl, k64, s), total)};
      };
      return t;
    }
    // Taps base + first .. base + first + n - 1.
    int64_t first = 1 - (int64_t)support, n = 2 * (int64_t)support;
    double s = 1;
    if (antialias && p.scale < 1) {
      // Downsampling widens the filter to cover 1/scale input pixels.
      s = p.scale;
      first = (int64_t)std::floor(-support / s) + 1;
      n = 2 - 2 * first;
    }
    SmallVector<Value> w;
    Value total = c(0);
    for (int64_t k = first; k < first + n; ++k) {
      Value weight = weightAt(b, l, i64(b, l, k), c(s));
      w.push_back(weight);
      total = add(total, weight);
      t.index.push_back(at(b, l, i64(b, l, k)));
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
