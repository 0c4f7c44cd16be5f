//===- NNToLinalg.cpp - convolutions, pooling, padding, If ----------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// Pads the spatial dims (2..) of `x` with `value`: `low`/`high` per
/// spatial dim; negative amounts crop.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high, double value) {
  auto t = typeOf(x);
  int64_t rank = t.getRank();
  SmallVector<OpFoldResult> lo(rank, b.getIndexAttr(0)),
      hi(rank, b.getIndexAttr(0));
  SmallVector<int64_t> padded(t.getShape());
  bool any = false;
  for (size_t i = 0; i < low.size(); ++i) {
    int64_t l = std::max<int64_t>(low[i], 0), h = std::max<int64_t>(high[i], 0);
    lo[2 + i] = b.getIndexAttr(l);
    hi[2 + i] = b.getIndexAttr(h);
    if (!t.isDynamicDim(2 + i))
      padded[2 + i] += l + h;
    any |= l || h;
  }
  if (any) {
    Value pad = scalarConst(b, loc, t.getElementType(), value);
    x = tensor::PadOp::create(b, loc,
                              RankedTensorType::get(padded, t.getElementType()),
                              x, lo, hi, pad);
  }
  // Negative pads crop.
  SmallVector<int64_t> offsets(rank, 0), sizes(padded), strides(rank, 1);
  bool crop = false;
  for (size_t i = 0; i < low.size(); ++i) {
    if (low[i] < 0) {
      offsets[2 + i] = -low[i];
      sizes[2 + i] += low[i];
      crop = true;
    }
    if (high[i] < 0) {
      sizes[2 + i] += high[i];
      crop = true;
    }
  }
  if (!crop)
    return x;
  SmallVector<OpFoldResult> mixedSizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!ShapedType::isDynamic(padded[d])) {
      mixedSizes.push_back(b.getIndexAttr(sizes[d]));
      continue;
    }
    // The padded size at run time, less what the negative pads crop.
    int64_t less = d >= 2 ? std::min<int64_t>(low[d - 2], 0) +
                                std::min<int64_t>(high[d - 2], 0)
                          : 0;
    Value size = dimValue(b, loc, x, d);
    mixedSizes.push_back(
        less ? OpFoldResult(arith::AddIOp::create(b, loc, size,
                                                  indexConst(b, loc, less))
                                .getResult())
             : OpFoldResult(size));
  }
  SmallVector<OpFoldResult> mixedOffsets, mixedStrides(rank, b.getIndexAttr(1));
  for (int64_t o : offsets)
    mixedOffsets.push_back(b.getIndexAttr(o));
  return tensor::ExtractSliceOp::create(b, loc, x, mixedOffsets, mixedSizes,
                                        mixedStrides);
}

/// The ungrouped convolution as one contraction per kernel tap:
/// out[n, m, o..] += sum_c W[m, c, k..] * x[n, c, o*s + k*d] for each k..,
/// over a slice of x per tap, so each has the one reduction loop (c) and
/// the projected-permutation maps of a batched MatMul, which
/// mp-tile-and-vectorize register-tiles. `weightExprs` reads the weight in
/// the (n, m, o.., c, k..) space of `convolve`; `domain` is (C, k..).
static Value convolveByTaps(OpBuilder &b, Location loc,
                            RankedTensorType accType, Value x, Value w,
                            ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> dilations,
                            ArrayRef<int64_t> domain,
                            ArrayRef<AffineExpr> weightExprs, Value init) {
  MLIRContext *ctx = b.getContext();
  Type acc = accType.getElementType();
  int64_t spatial = accType.getRank() - 2;
  int64_t convRank = 2 + spatial + 1 + spatial;
  int64_t numM = accType.getDimSize(1), numC = domain[0];
  // 1. The weight as W[m, c, k..] in the accumulator type, once.
  SmallVector<AffineExpr> toWeightSpace(convRank,
                                        getAffineConstantExpr(0, ctx));
  toWeightSpace[1] = getAffineDimExpr(0, ctx);
  toWeightSpace[2 + spatial] = getAffineDimExpr(1, ctx);
  for (int64_t i = 0; i < spatial; ++i)
    toWeightSpace[3 + spatial + i] = getAffineDimExpr(2 + i, ctx);
  AffineMap readW =
      AffineMap::get(convRank, 0, weightExprs, ctx)
          .replaceDimsAndSymbols(toWeightSpace, {}, 2 + spatial, 0);
  SmallVector<int64_t> wShape = {numM};
  llvm::append_range(wShape, domain);
  Value weight =
      parallelGeneric(b, loc, RankedTensorType::get(wShape, acc), ValueRange{w},
                      {readW}, [&](OpBuilder &nb, Location l, ValueRange a) {
                        return castScalar(nb, l, a[0], acc);
                      });
  // 2. One contraction per tap, accumulating into `init`.
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  int64_t rank = 2 + spatial + 1, c = 2 + spatial;
  SmallVector<AffineExpr> xExprs = {d(0), d(c)}, wExprs = {d(1), d(c)},
                          outExprs;
  for (int64_t i = 0; i < spatial; ++i)
    xExprs.push_back(d(2 + i));
  for (int64_t i = 0; i < 2 + spatial; ++i)
    outExprs.push_back(d(i));
  SmallVector<utils::IteratorType> it(2 + spatial,
                                      utils::IteratorType::parallel);
  it.push_back(utils::IteratorType::reduction);
  auto xt = typeOf(x);
  SmallVector<int64_t> taps(domain.drop_front());
  int64_t numTaps = 1;
  for (int64_t k : taps)
    numTaps *= k;
  // The taps as a run-time loop: one contraction in the IR per convolution
  // (unrolled, every tap would be register-tiled and vectorized anew).
  auto loop = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, numTaps),
      indexConst(b, loc, 1), ValueRange{init},
      [&](OpBuilder &lb, Location l, Value t, ValueRange iter) {
        // Tap coordinates, row-major over the kernel dims.
        SmallVector<Value> tap(spatial);
        Value rest = t;
        for (int64_t i = spatial - 1; i >= 0; --i) {
          Value size = indexConst(lb, l, taps[i]);
          tap[i] = arith::RemUIOp::create(lb, l, rest, size);
          rest = arith::DivUIOp::create(lb, l, rest, size);
        }
        // The slice has the batch of x and the output's spatial sizes,
        // either of which may be known only at run time.
        auto sizeOf = [&](Value v, int64_t d) -> OpFoldResult {
          if (!typeOf(v).isDynamicDim(d))
            return lb.getIndexAttr(typeOf(v).getDimSize(d));
          return dimValue(lb, l, v, d);
        };
        SmallVector<OpFoldResult> xOffsets(2, lb.getIndexAttr(0)),
            xSizes = {sizeOf(x, 0), lb.getIndexAttr(numC)},
            xSteps(2, lb.getIndexAttr(1));
        SmallVector<int64_t> xSliceShape = {xt.getDimSize(0), numC};
        for (int64_t i = 0; i < spatial; ++i) {
          xOffsets.push_back(arith::MulIOp::create(
                                 lb, l, tap[i], indexConst(lb, l, dilations[i]))
                                 .getResult());
          xSizes.push_back(sizeOf(iter[0], 2 + i));
          xSteps.push_back(lb.getIndexAttr(strides[i]));
          xSliceShape.push_back(accType.getDimSize(2 + i));
        }
        Value xTap = tensor::ExtractSliceOp::create(
            lb, l, RankedTensorType::get(xSliceShape, xt.getElementType()), x,
            xOffsets, xSizes, xSteps);
        SmallVector<OpFoldResult> wOffsets(2, lb.getIndexAttr(0)),
            wSizes = {lb.getIndexAttr(numM), lb.getIndexAttr(numC)},
            wSteps(2 + spatial, lb.getIndexAttr(1));
        for (int64_t i = 0; i < spatial; ++i) {
          wOffsets.push_back(tap[i]);
          wSizes.push_back(lb.getIndexAttr(1));
        }
        Value wTap = tensor::ExtractSliceOp::create(
            lb, l, RankedTensorType::get({numM, numC}, acc), weight, wOffsets,
            wSizes, wSteps);
        Value next =
            linalg::GenericOp::create(
                lb, l, accType, ValueRange{wTap, xTap}, iter[0],
                ArrayRef<AffineMap>{AffineMap::get(rank, 0, wExprs, ctx),
                                    AffineMap::get(rank, 0, xExprs, ctx),
                                    AffineMap::get(rank, 0, outExprs, ctx)},
                it,
                [&](OpBuilder &nb, Location nl, ValueRange a) {
                  Value p = arith::MulFOp::create(
                      nb, nl, a[0], castScalar(nb, nl, a[1], acc));
                  linalg::YieldOp::create(
                      nb, nl,
                      arith::AddFOp::create(nb, nl, p, a[2]).getResult());
                })
                .getResult(0);
        scf::YieldOp::create(lb, l, next);
      });
  Value out = loop.getResult(0);
  return out;
}

/// out[n, m, o..] = sum_{c, k..} x[n, inCh(m, c), o*s + k*d] * w(m, c, k..)
/// over the padded input `x`; `weightExprs` maps (m, c, k..) dims of the
/// iteration space to the weight's indices.
Value convolve(OpBuilder &b, Location loc, RankedTensorType outType, Value x,
               Value w, int64_t group, ArrayRef<int64_t> strides,
               ArrayRef<int64_t> dilations, int64_t channelsPerGroup,
               SmallVector<AffineExpr> weightExprs, Type acc,
               ConvolutionLowering lowering) {
  MLIRContext *ctx = b.getContext();
  int64_t spatial = outType.getRank() - 2;
  int64_t rank = 2 + spatial + 1 + spatial; // n, m, o.., c, k..
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  int64_t m = 1, c = 2 + spatial, k0 = c + 1;
  int64_t outPerGroup = outType.getDimSize(1) / group;
  // Without groups the channel is c alone, so m indexes the weight only
  // (the contraction is an implicit GEMM with m as its columns).
  SmallVector<AffineExpr> xExprs = {
      d(0), group == 1
                ? d(c)
                : d(m).floorDiv(outPerGroup) * channelsPerGroup + d(c)};
  for (int64_t i = 0; i < spatial; ++i)
    xExprs.push_back(d(2 + i) * strides[i] + d(k0 + i) * dilations[i]);
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < 2 + spatial; ++i)
    outExprs.push_back(d(i));
  SmallVector<utils::IteratorType> it(2 + spatial,
                                      utils::IteratorType::parallel);
  it.append(1 + spatial, utils::IteratorType::reduction);
  auto accType = RankedTensorType::get(outType.getShape(), acc);
  // Dynamic batch and spatial sizes: out = (padded - dil*(k-1) - 1) / s + 1.
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < outType.getRank(); ++i) {
    if (!outType.isDynamicDim(i))
      continue;
    Value in = dimValue(b, loc, x, i);
    if (i >= 2) {
      int64_t k = typeOf(w).getDimSize(i);
      Value span = arith::SubIOp::create(
          b, loc, in, indexConst(b, loc, dilations[i - 2] * (k - 1) + 1));
      in = arith::AddIOp::create(
          b, loc,
          arith::DivSIOp::create(b, loc, span,
                                 indexConst(b, loc, strides[i - 2])),
          indexConst(b, loc, 1));
    }
    sizes.push_back(in);
  }
  Value empty = emptyTensor(b, loc, accType, sizes);
  Value init = linalg::FillOp::create(b, loc, scalarConst(b, loc, acc, 0), empty)
                   .getResult(0);
  // The reduction domain (c, k..) as a shape-only operand: it gives every
  // loop a plain dimension even when the weight is read through flipped or
  // regrouped indices.
  SmallVector<int64_t> domain = {channelsPerGroup};
  SmallVector<AffineExpr> domainExprs = {d(c)};
  for (int64_t i = 0; i < spatial; ++i) {
    domain.push_back(typeOf(w).getDimSize(2 + i));
    domainExprs.push_back(d(k0 + i));
  }
  // Taps read contiguous rows of x only with stride 1; other strides, and
  // single-channel or single-tap convolutions, keep the one generic.
  auto taps = ArrayRef<int64_t>(domain).drop_front();
  if (lowering == ConvolutionLowering::Taps && group == 1 &&
      llvm::all_of(strides, [](int64_t s) { return s == 1; }) &&
      outType.getDimSize(1) > 1 && channelsPerGroup > 1 &&
      llvm::any_of(taps, [](int64_t k) { return k > 1; }))
    return convolveByTaps(b, loc, accType, x, w, strides, dilations, domain,
                          weightExprs, init);
  Value window = tensor::EmptyOp::create(b, loc, domain, acc);
  return linalg::GenericOp::create(
             b, loc, accType, ValueRange{x, w, window}, init,
             ArrayRef<AffineMap>{AffineMap::get(rank, 0, xExprs, ctx),
                                 AffineMap::get(rank, 0, weightExprs, ctx),
                                 AffineMap::get(rank, 0, domainExprs, ctx),
                                 AffineMap::get(rank, 0, outExprs, ctx)},
             it,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value p = arith::MulFOp::create(nb, l, castScalar(nb, l, a[0], acc),
                                               castScalar(nb, l, a[1], acc));
               linalg::YieldOp::create(
                   nb, l, arith::AddFOp::create(nb, l, p, a[3]).getResult());
             })
      .getResult(0);
}

/// Adds the per-channel bias (if any) and rounds to the output type.
Value finish(OpBuilder &b, Location loc, RankedTensorType outType, Value acc,
             Value bias) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = outType.getRank();
  SmallVector<Value> inputs = {acc};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx));
  }
  Type accElt = getElementTypeOrSelf(acc.getType());
  return parallelGeneric(b, loc, outType, inputs, maps,
                         [&](OpBuilder &nb, Location l, ValueRange a) {
                           Value v = a[0];
                           if (a.size() > 1)
                             v = arith::AddFOp::create(
                                 nb, l, v, castScalar(nb, l, a[1], accElt));
                           return castScalar(nb, l, v,
                                             outType.getElementType());
                         });
}

struct ConvLowering : public OpRewritePattern<ConvOp> {
  ConvLowering(MLIRContext *ctx, ConvolutionLowering lowering)
      : OpRewritePattern(ctx), lowering(lowering) {}
  ConvolutionLowering lowering;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    // Batch and spatial dims may be dynamic; channels and kernel may not.
    // Input channels follow from the weight when the input's type lost them.
    auto wt = typeOf(op.getWeight());
    if (!wt.hasStaticShape() || op.getType().isDynamicDim(1) ||
        op.getAutoPad() != "NOTSET")
      return rewriter.notifyMatchFailure(op, "dynamic channels or auto_pad");
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto outType = op.getType();
    int64_t spatial = outType.getRank() - 2;
    ArrayRef<int64_t> pads = op.getPads();
    Value input = withStaticDim(rewriter, loc, op, op.getInput(), 1,
                                wt.getDimSize(1) * op.getGroup());
    Value x = padSpatial(rewriter, loc, input, pads.take_front(spatial),
                         pads.drop_front(spatial), 0.0);
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> wExprs = {d(1), d(2 + spatial)};
    for (int64_t i = 0; i < spatial; ++i)
      wExprs.push_back(d(3 + spatial + i));
    Type acc = accumulatorType(outType.getElementType());
    int64_t cPerGroup = typeOf(op.getWeight()).getDimSize(1);
    Value r = convolve(rewriter, loc, outType, x, op.getWeight(), op.getGroup(),
                       op.getStrides(), op.getDilations(), cPerGroup, wExprs,
                       acc, lowering);
    rewriter.replaceOp(op, finish(rewriter, loc, outType, r, op.getBias()));
    return success();
  }
};

/// A 1-D, ungrouped, undilated ConvTranspose of stride s > 1 as s
/// interleaved stride-1 convolutions (polyphase). Counting output positions
/// o' from before the start pad, o' = j*s + r sums the taps k = r + q*s
/// over x[j - q]. All phases run as one convolution with s*M output
/// channels and Q = ceil(K / s) taps (zero taps fill a kernel that s does
/// not divide) over x padded by Q-1 before and Q after; the bias-and-round
/// step reads the phases back interleaved. Per input position this does
/// M*C*K multiply-adds where the zero-spread input costs s times that.
static Value convTransposePolyphase(OpBuilder &b, Location loc,
                                    ConvTransposeOp op, Value input,
                                    ConvolutionLowering lowering) {
  MLIRContext *ctx = b.getContext();
  auto outType = op.getType();
  auto wt = typeOf(op.getWeight());
  auto xt = typeOf(input);
  int64_t numC = wt.getDimSize(0), numM = wt.getDimSize(1);
  int64_t s = op.getStrides()[0], numK = op.getKernelShape()[0];
  int64_t numQ = (numK + s - 1) / s;
  int64_t padBegin = op.getPads()[0];
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  // W'[m, r, c, t] = W[c, m, r + (Q-1-t)*s], zero past K; as [M*s, C, Q].
  Value w = padSpatial(b, loc, op.getWeight(), {0}, {numQ * s - numK}, 0.0);
  Type wElt = wt.getElementType();
  Value phases = parallelGeneric(
      b, loc, RankedTensorType::get({numM, s, numC, numQ}, wElt), ValueRange{w},
      {AffineMap::get(4, 0, {d(2), d(0), d(1) + (numQ - 1) * s - d(3) * s},
                      ctx)},
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  Value weight = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({numM * s, numC, numQ}, wElt), phases,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  // Y[n, m*s + r, j] over j < L + Q, which covers every o' the output keeps
  // (output_padding < s).
  Value x = padSpatial(b, loc, input, {numQ - 1}, {numQ}, 0.0);
  int64_t numJ =
      xt.isDynamicDim(2) ? ShapedType::kDynamic : xt.getDimSize(2) + numQ;
  Type acc = accumulatorType(outType.getElementType());
  auto yType = RankedTensorType::get({xt.getDimSize(0), numM * s, numJ}, acc);
  Value y = convolve(b, loc, yType, x, weight, /*group=*/1, {1}, {1}, numC,
                     {d(1), d(3), d(4)}, acc, lowering);
  // out[n, m, o] = Y[n, m*s + (o+pb) mod s, (o+pb) floordiv s] + bias[m].
  SmallVector<Value> inputs = {y};
  AffineExpr pos = d(2) + padBegin;
  SmallVector<AffineMap> maps = {
      AffineMap::get(3, 0, {d(0), d(1) * s + pos % s, pos.floorDiv(s)}, ctx)};
  if (Value bias = op.getBias()) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(3, 0, {d(1)}, ctx));
  }
  // Dynamic sizes: the batch of x; (L-1)*s + output_padding + K - pads.
  SmallVector<Value> sizes;
  if (outType.isDynamicDim(0))
    sizes.push_back(dimValue(b, loc, input, 0));
  if (outType.isDynamicDim(2)) {
    int64_t extra =
        op.getOutputPadding()[0] + numK - padBegin - op.getPads()[1] - s;
    Value len = arith::MulIOp::create(b, loc, dimValue(b, loc, input, 2),
                                      indexConst(b, loc, s));
    sizes.push_back(
        arith::AddIOp::create(b, loc, len, indexConst(b, loc, extra)));
  }
  return parallelGeneric(
      b, loc, outType, inputs, maps,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = a[0];
        if (a.size() > 1)
          v = arith::AddFOp::create(nb, l, v, castScalar(nb, l, a[1], acc));
        return castScalar(nb, l, v, outType.getElementType());
      },
      sizes);
}

/// ConvTranspose as a convolution: spread the input by the stride (zeros in
/// between), pad by dilation*(k-1) minus the ONNX pads, and convolve with
/// the kernel flipped and its channel dims swapped.
struct ConvTransposeLowering : public OpRewritePattern<ConvTransposeOp> {
  ConvTransposeLowering(MLIRContext *ctx, ConvolutionLowering lowering)
      : OpRewritePattern(ctx), lowering(lowering) {}
  ConvolutionLowering lowering;
  LogicalResult matchAndRewrite(ConvTransposeOp op,
                                PatternRewriter &rewriter) const override {
    // Batch and spatial dims may be dynamic; channels and kernel may not.
    if (!typeOf(op.getWeight()).hasStaticShape() ||
        op.getType().isDynamicDim(1) || op.getAutoPad() != "NOTSET")
      return rewriter.notifyMatchFailure(op, "dynamic channels or auto_pad");
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto outType = op.getType();
    auto wt = typeOf(op.getWeight());
    Value input =
        withStaticDim(rewriter, loc, op, op.getInput(), 1, wt.getDimSize(0));
    auto xt = typeOf(input);
    int64_t spatial = outType.getRank() - 2;
    ArrayRef<int64_t> strides = op.getStrides(), dil = op.getDilations();
    ArrayRef<int64_t> kernel = op.getKernelShape(), pads = op.getPads();
    ArrayRef<int64_t> outPad = op.getOutputPadding();
    if (spatial == 1 && op.getGroup() == 1 && strides[0] > 1 && dil[0] == 1 &&
        outPad[0] < strides[0]) {
      rewriter.replaceOp(
          op, convTransposePolyphase(rewriter, loc, op, input, lowering));
      return success();
    }
    // 1. Spread: zeros, with x inserted every `stride` elements; a spread
    // spatial dim is (size - 1) * stride + 1.
    SmallVector<int64_t> spreadShape(xt.getShape());
    SmallVector<Value> spreadSizes;
    SmallVector<OpFoldResult> inSizes;
    for (int64_t d = 0; d < xt.getRank(); ++d) {
      Value size = dimValue(rewriter, loc, input, d);
      inSizes.push_back(xt.isDynamicDim(d)
                            ? OpFoldResult(size)
                            : OpFoldResult(rewriter.getIndexAttr(
                                  xt.getDimSize(d))));
      if (d < 2) {
        if (xt.isDynamicDim(d))
          spreadSizes.push_back(size);
        continue;
      }
      int64_t s = strides[d - 2];
      if (xt.isDynamicDim(d)) {
        Value last = arith::SubIOp::create(rewriter, loc, size,
                                           indexConst(rewriter, loc, 1));
        spreadSizes.push_back(arith::AddIOp::create(
            rewriter, loc,
            arith::MulIOp::create(rewriter, loc, last,
                                  indexConst(rewriter, loc, s)),
            indexConst(rewriter, loc, 1)));
      } else {
        spreadShape[d] = (xt.getDimSize(d) - 1) * s + 1;
      }
    }
    Type elt = xt.getElementType();
    Value zeros =
        linalg::FillOp::create(
            rewriter, loc, scalarConst(rewriter, loc, elt, 0),
            ValueRange{emptyTensor(rewriter, loc,
                                   RankedTensorType::get(spreadShape, elt),
                                   spreadSizes)})
            .getResult(0);
    SmallVector<OpFoldResult> offsets(xt.getRank(), rewriter.getIndexAttr(0)),
        steps(xt.getRank(), rewriter.getIndexAttr(1));
    for (int64_t i = 0; i < spatial; ++i)
      steps[2 + i] = rewriter.getIndexAttr(strides[i]);
    Value spread = tensor::InsertSliceOp::create(rewriter, loc, input, zeros,
                                                 offsets, inSizes, steps);
    // 2. Pad: dilation*(k-1) - pad on each side (+ output_padding at the end).
    SmallVector<int64_t> low, high;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t full = dil[i] * (kernel[i] - 1);
      low.push_back(full - pads[i]);
      high.push_back(full - pads[spatial + i] + outPad[i]);
    }
    Value x = padSpatial(rewriter, loc, spread, low, high, 0.0);
    // 3. Convolve: out channel m = g*(M/G) + ml reads input channels of its
    // group; the weight is [C, M/G, k..] read at [g*Cg + c, ml, K-1-k].
    int64_t outPerGroup = wt.getDimSize(1);
    int64_t cPerGroup = wt.getDimSize(0) / op.getGroup();
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> wExprs = {
        d(1).floorDiv(outPerGroup) * cPerGroup + d(2 + spatial),
        d(1) % outPerGroup};
    if (op.getGroup() == 1)
      wExprs = {d(2 + spatial), d(1)};
    for (int64_t i = 0; i < spatial; ++i)
      wExprs.push_back(getAffineConstantExpr(kernel[i] - 1, ctx) -
                       d(3 + spatial + i));
    SmallVector<int64_t> ones(spatial, 1);
    Type acc = accumulatorType(outType.getElementType());
    Value r = convolve(rewriter, loc, outType, x, op.getWeight(), op.getGroup(),
                       ones, dil, cPerGroup, wExprs, acc, lowering);
    rewriter.replaceOp(op, finish(rewriter, loc, outType, r, op.getBias()));
    return success();
  }
};

/// MaxPool / AveragePool over windows of the padded input.
template <typename OpTy> struct PoolLowering : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    constexpr bool isMax = std::is_same_v<OpTy, MaxPoolOp>;
    if (op.getAutoPad() != "NOTSET")
      return rewriter.notifyMatchFailure(op, "auto_pad");
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    auto xt = typeOf(op.getInput());
    int64_t spatial = outType.getRank() - 2;
    bool dynamicSpatial = false;
    for (int64_t i = 2; i < xt.getRank(); ++i)
      dynamicSpatial |= xt.isDynamicDim(i) || outType.isDynamicDim(i);
    bool ceilMode = op.getCeilMode();
    ArrayRef<int64_t> pads = op.getPads(), kernel = op.getKernelShape();
    ArrayRef<int64_t> strides = op.getStrides(), dil = op.getDilations();
    Type elt = outType.getElementType();
    bool isFloat = isa<FloatType>(elt);
    Type acc = isFloat ? accumulatorType(elt) : elt;
    // Ceil mode can read past the end pad: pad enough for every window.
    SmallVector<int64_t> low(pads.take_front(spatial)), high;
    for (int64_t i = 0; i < spatial; ++i) {
      // Over run-time sizes, ceil mode's last window ends at most
      // stride - 1 past the end pad.
      if (dynamicSpatial) {
        high.push_back(pads[spatial + i] + (ceilMode ? strides[i] - 1 : 0));
        continue;
      }
      int64_t need = (outType.getDimSize(2 + i) - 1) * strides[i] +
                     (kernel[i] - 1) * dil[i] + 1;
      high.push_back(std::max(pads[spatial + i],
                              need - xt.getDimSize(2 + i) - low[i]));
    }
    double padValue = isMax ? -INFINITY : 0.0;
    if (isMax && !isFloat)
      padValue = (double)std::numeric_limits<int64_t>::min();
    Value x = padSpatial(rewriter, loc, op.getInput(), low, high, padValue);
    // Run-time sizes: the input's dims (i64, for the index math in the
    // bodies) and the output's dynamic ones: (in + pads - window) / s + 1,
    // rounded down, or up in ceil mode unless the last window would start
    // past the input and the begin pad.
    SmallVector<Value> inDims, outSizes;
    for (int64_t d = 0; d < xt.getRank(); ++d)
      inDims.push_back(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getI64Type(),
          dimValue(rewriter, loc, op.getInput(), d)));
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      if (!outType.isDynamicDim(d))
        continue;
      Value size = dimValue(rewriter, loc, op.getInput(), d);
      if (d >= 2) {
        int64_t i = d - 2;
        auto c = [&](int64_t v) { return indexConst(rewriter, loc, v); };
        Value span = arith::AddIOp::create(
            rewriter, loc, size,
            c(pads[i] + pads[spatial + i] - (kernel[i] - 1) * dil[i] - 1));
        Value steps =
            ceilMode ? Value(arith::CeilDivSIOp::create(rewriter, loc, span,
                                                        c(strides[i])))
                     : Value(arith::FloorDivSIOp::create(rewriter, loc, span,
                                                         c(strides[i])));
        if (ceilMode) {
          Value lastStart =
              arith::MulIOp::create(rewriter, loc, steps, c(strides[i]));
          Value beyond = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::sge, lastStart,
              arith::AddIOp::create(rewriter, loc, size, c(pads[i])));
          steps = arith::SelectOp::create(
              rewriter, loc, beyond,
              arith::SubIOp::create(rewriter, loc, steps, c(1)), steps);
        }
        size = arith::AddIOp::create(rewriter, loc, steps, c(1));
      }
      outSizes.push_back(size);
    }
    int64_t rank = 2 + 2 * spatial;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> xExprs = {d(0), d(1)}, outExprs = {d(0), d(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      xExprs.push_back(d(2 + i) * strides[i] + d(2 + spatial + i) * dil[i]);
      outExprs.push_back(d(2 + i));
    }
    // The window's shape is only an iteration domain: a kernel-shaped
    // tensor of anything.
    SmallVector<int64_t> kshape(kernel);
    Value window = tensor::EmptyOp::create(rewriter, loc, kshape, acc);
    SmallVector<AffineExpr> kExprs;
    for (int64_t i = 0; i < spatial; ++i)
      kExprs.push_back(d(2 + spatial + i));
    SmallVector<utils::IteratorType> it(2 + spatial,
                                        utils::IteratorType::parallel);
    it.append(spatial, utils::IteratorType::reduction);
    auto accType = RankedTensorType::get(outType.getShape(), acc);
    Value empty = emptyTensor(rewriter, loc, accType, outSizes);
    Value init = linalg::FillOp::create(
                     rewriter, loc, scalarConst(rewriter, loc, acc, padValue),
                     empty)
                     .getResult(0);
    Value r =
        linalg::GenericOp::create(
            rewriter, loc, accType, ValueRange{x, window}, init,
            ArrayRef<AffineMap>{AffineMap::get(rank, 0, xExprs, ctx),
                                AffineMap::get(rank, 0, kExprs, ctx),
                                AffineMap::get(rank, 0, outExprs, ctx)},
            it,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value v = castScalar(nb, l, a[0], acc);
              Value r = isMax ? (isFloat ? Value(arith::MaximumFOp::create(
                                               nb, l, v, a[2]))
                                         : Value(arith::MaxSIOp::create(
                                               nb, l, v, a[2])))
                              : Value(arith::AddFOp::create(nb, l, v, a[2]));
              linalg::YieldOp::create(nb, l, r);
            })
            .getResult(0);
    bool includePad = false;
    if constexpr (!isMax)
      includePad = op.getCountIncludePad();
    r = parallelGeneric(
        rewriter, loc, outType, r, {rewriter.getMultiDimIdentityMap(2 + spatial)},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          if (isMax)
            return castScalar(nb, l, a[0], elt);
          // Divisor: the window size, or only the elements inside the input
          // (ONNX pads, not ceil-mode overhang, count with count_include_pad).
          Value count = scalarConst(nb, l, acc, 1);
          for (int64_t i = 0; i < spatial; ++i) {
            Value o = arith::IndexCastOp::create(
                nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, 2 + i));
            int64_t lo = includePad ? 0 : low[i];
            Value hi = arith::AddIOp::create(
                nb, l, inDims[2 + i],
                scalarConst(nb, l, nb.getI64Type(),
                            includePad ? low[i] + pads[spatial + i]
                                       : low[i]));
            Value n = scalarConst(nb, l, nb.getI64Type(), 0);
            for (int64_t k = 0; k < kernel[i]; ++k) {
              Value pos = arith::AddIOp::create(
                  nb, l,
                  arith::MulIOp::create(nb, l, o,
                                        scalarConst(nb, l, nb.getI64Type(),
                                                    strides[i])),
                  scalarConst(nb, l, nb.getI64Type(), k * dil[i]));
              Value inLo = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::sge, pos,
                  scalarConst(nb, l, nb.getI64Type(), lo));
              Value inHi = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::slt, pos, hi);
              Value in = arith::AndIOp::create(nb, l, inLo, inHi);
              n = arith::AddIOp::create(
                  nb, l, n, arith::ExtUIOp::create(nb, l, nb.getI64Type(), in));
            }
            count = arith::MulFOp::create(
                nb, l, count, arith::SIToFPOp::create(nb, l, acc, n));
          }
          return castScalar(nb, l, arith::DivFOp::create(nb, l, a[0], count),
                            elt);
        });
    SmallVector<Value> results = {r};
    if constexpr (isMax) {
      // Indices only when used: a second pass that tracks the first maximum
      // (the value pass keeps maximumf's NaN propagation).
      Value indices = emptyTensor(
          rewriter, loc, typeOf(op.getIndices()), outSizes);
      if (!op.getIndices().use_empty())
        indices = maxIndices(rewriter, loc, x, window, inDims, outType,
                             outSizes, xExprs, kExprs, outExprs, low, strides,
                             dil, acc, padValue, op.getStorageOrder() == 1);
      results.push_back(indices);
    }
    rewriter.replaceOp(op, results);
    return success();
  }

  /// MaxPool's indices: the flat offset in the unpadded input of each
  /// window's first maximum, row-major over (n, c, spatial..) or, with
  /// storage_order 1, with the spatial dims in reverse order.
  static Value maxIndices(OpBuilder &b, Location loc, Value x, Value window,
                          ArrayRef<Value> inDims, RankedTensorType outType,
                          ValueRange outSizes, ArrayRef<AffineExpr> xExprs,
                          ArrayRef<AffineExpr> kExprs,
                          ArrayRef<AffineExpr> outExprs,
                          ArrayRef<int64_t> low, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> dil, Type acc, double padValue,
                          bool columnMajor) {
    MLIRContext *ctx = b.getContext();
    int64_t spatial = outType.getRank() - 2, rank = 2 + 2 * spatial;
    Type i64 = b.getI64Type();
    auto fill = [&](Type t, double v) {
      return linalg::FillOp::create(
                 b, loc, scalarConst(b, loc, t, v),
                 ValueRange{emptyTensor(
                     b, loc, RankedTensorType::get(outType.getShape(), t),
                     outSizes)})
          .getResult(0);
    };
    SmallVector<utils::IteratorType> it(2 + spatial,
                                        utils::IteratorType::parallel);
    it.append(spatial, utils::IteratorType::reduction);
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    auto generic = linalg::GenericOp::create(
        b, loc,
        TypeRange{RankedTensorType::get(outType.getShape(), acc),
                  RankedTensorType::get(outType.getShape(), i64)},
        ValueRange{x, window}, ValueRange{fill(acc, padValue), fill(i64, 0)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, xExprs, ctx),
                            AffineMap::get(rank, 0, kExprs, ctx), outMap,
                            outMap},
        it, [&](OpBuilder &nb, Location l, ValueRange a) {
          Value v = castScalar(nb, l, a[0], acc);
          Value better =
              isa<FloatType>(acc)
                  ? Value(arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                                v, a[2]))
                  : Value(arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt,
                                                v, a[2]));
          auto dimOf = [&](int64_t d) -> Value {
            return arith::IndexCastOp::create(nb, l, i64,
                                              linalg::IndexOp::create(nb, l, d));
          };
          auto cst = [&](int64_t v) { return scalarConst(nb, l, i64, v); };
          // Unpadded input coordinate of spatial dim i.
          auto pos = [&](int64_t i) -> Value {
            Value p = arith::AddIOp::create(
                nb, l, arith::MulIOp::create(nb, l, dimOf(2 + i), cst(strides[i])),
                arith::MulIOp::create(nb, l, dimOf(2 + spatial + i), cst(dil[i])));
            return arith::SubIOp::create(nb, l, p, cst(low[i]));
          };
          Value flat = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, dimOf(0), inDims[1]),
              dimOf(1));
          for (int64_t k = 0; k < spatial; ++k) {
            int64_t i = columnMajor ? spatial - 1 - k : k;
            flat = arith::AddIOp::create(
                nb, l, arith::MulIOp::create(nb, l, flat, inDims[2 + i]),
                pos(i));
          }
          linalg::YieldOp::create(
              nb, l,
              ValueRange{arith::SelectOp::create(nb, l, better, v, a[2]),
                         arith::SelectOp::create(nb, l, better, flat, a[3])});
        });
    return generic.getResult(1);
  }
};

struct GlobalAveragePoolLowering
    : public OpRewritePattern<GlobalAveragePoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GlobalAveragePoolOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto xt = typeOf(op.getInput());
    Type elt = xt.getElementType(), acc = accumulatorType(elt);
    SmallVector<int64_t> axes;
    for (int64_t i = 2; i < xt.getRank(); ++i)
      axes.push_back(i);
    // The window: every spatial element (counted at run time when dynamic).
    Value n = countOver(rewriter, loc, op.getInput(), axes, acc);
    Value sum = reduce(rewriter, loc, op.getInput(), axes, acc, 0.0,
                       [](OpBuilder &b, Location l, Value v, Value c) -> Value {
                         return arith::AddFOp::create(b, l, v, c);
                       });
    auto t = typeOf(sum);
    Value mean = elementwise(rewriter, loc,
                             RankedTensorType::get(t.getShape(), elt), sum,
                             [&](OpBuilder &b, Location l, ValueRange a) {
                               Value v = arith::DivFOp::create(b, l, a[0], n);
                               return castScalar(b, l, v, elt);
                             });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, mean, op.getType()));
    return success();
  }
};

/// ONNX Pad (constant, edge, reflect, wrap). Pads that are not constants
/// (exporters compute them from the input length) are read at run time.
struct PadLowering : public OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    auto outType = op.getType();
    auto xt = typeOf(op.getInput());
    auto pt = typeOf(op.getPads());
    Location loc = op.getLoc();
    int64_t rank = xt.getRank();
    // The axes the pads apply to, in order (all of them without `axes`).
    SmallVector<int64_t> axes;
    if (op.getAxes()) {
      auto constAxes = getConstantInts(op.getAxes());
      if (!constAxes)
        return rewriter.notifyMatchFailure(op, "dynamic axes");
      for (int64_t a : *constAxes)
        axes.push_back(a < 0 ? a + rank : a);
    } else {
      axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    }
    if (pt.getRank() != 1 || pt.isDynamicDim(0) ||
        pt.getDimSize(0) != 2 * (int64_t)axes.size())
      return rewriter.notifyMatchFailure(op, "pads of the wrong length");
    // Pads per dim as index values, begins then ends.
    auto pads = getConstantInts(op.getPads());
    auto padAt = [&](int64_t i) -> Value {
      if (pads)
        return indexConst(rewriter, loc, (*pads)[i]);
      Value v =
          tensor::ExtractOp::create(rewriter, loc, op.getPads(),
                                    ValueRange{indexConst(rewriter, loc, i)});
      return arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                        v);
    };
    Value zeroIdx = indexConst(rewriter, loc, 0);
    SmallVector<Value> begin(rank, zeroIdx), end(rank, zeroIdx);
    for (auto [i, a] : llvm::enumerate(axes)) {
      begin[a] = padAt(i);
      end[a] = padAt(axes.size() + i);
    }
    StringRef mode = op.getMode();
    Value x = op.getInput();
    Value value = op.getConstantValue();
    // Input dims (run-time ones read here) and the result's dynamic sizes.
    SmallVector<Value> dims, sizes;
    for (int64_t i = 0; i < rank; ++i) {
      dims.push_back(dimValue(rewriter, loc, x, i));
      if (pads && !outType.isDynamicDim(i))
        continue;
      Value size = arith::AddIOp::create(
          rewriter, loc, dims.back(),
          arith::AddIOp::create(rewriter, loc, begin[i], end[i]));
      Value size64 = arith::IndexCastOp::create(rewriter, loc,
                                                rewriter.getI64Type(), size);
      if (outType.isDynamicDim(i)) {
        sizes.push_back(checkedSize(rewriter, loc, op, size64,
                                    "padded size of axis " + Twine(i).str()));
        continue;
      }
      // Pads read at run time must give the static size the type promises.
      checkAtRunTime(
          rewriter, loc,
          arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::eq, size64,
              arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                           outType.getDimSize(i))),
          runTimeCheckMessage(op, "padded size of axis " + Twine(i).str() +
                                      " differs from the inferred " +
                                      Twine(outType.getDimSize(i)).str()));
    }
    Value r = parallelGeneric(
        rewriter, loc, outType, ValueRange{}, ArrayRef<AffineMap>{},
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          SmallVector<Value> idx;
          Value inside = scalarConst(b, l, b.getI1Type(), 1);
          for (int64_t i = 0; i < rank; ++i) {
            Value o = linalg::IndexOp::create(b, l, i);
            Value p = arith::SubIOp::create(b, l, o, begin[i]);
            Value dim = dims[i];
            Value zero = arith::ConstantIndexOp::create(b, l, 0);
            Value one = arith::ConstantIndexOp::create(b, l, 1);
            Value last = arith::SubIOp::create(b, l, dim, one);
            Value below = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                                p, zero);
            Value above = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt,
                                                p, last);
            if (mode == "edge") {
              p = arith::SelectOp::create(b, l, below, zero, p);
              p = arith::SelectOp::create(b, l, above, last, p);
            } else if (mode == "reflect") {
              Value neg = arith::SubIOp::create(b, l, zero, p);
              Value back = arith::SubIOp::create(
                  b, l, arith::AddIOp::create(b, l, last, last), p);
              p = arith::SelectOp::create(b, l, below, neg, p);
              p = arith::SelectOp::create(b, l, above, back, p);
            } else if (mode == "wrap") {
              Value d = dim;
              Value m = arith::RemSIOp::create(b, l, p, d);
              Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                                m, zero);
              p = arith::SelectOp::create(b, l, neg,
                                          arith::AddIOp::create(b, l, m, d), m);
            } else {
              Value in = arith::AndIOp::create(
                  b, l, arith::XOrIOp::create(
                            b, l, below, scalarConst(b, l, b.getI1Type(), 1)),
                  arith::XOrIOp::create(b, l, above,
                                        scalarConst(b, l, b.getI1Type(), 1)));
              inside = arith::AndIOp::create(b, l, inside, in);
              p = arith::SelectOp::create(b, l, in, p, zero);
            }
            idx.push_back(p);
          }
          Value v = tensor::ExtractOp::create(b, l, x, idx);
          if (mode != "constant")
            return v;
          Value fill = value ? Value(tensor::ExtractOp::create(
                                   b, l, value,
                                   SmallVector<Value>(
                                       typeOf(value).getRank(),
                                       arith::ConstantIndexOp::create(b, l, 0))))
                             : scalarConst(b, l, xt.getElementType(), 0);
          return arith::SelectOp::create(b, l, inside, v, fill);
        },
        sizes);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// mp.if becomes scf.if on the extracted condition (an If the specializer
/// could not fold: its condition is a run-time value, as silero's sample
/// rate in a dynamic-shape library).
struct IfLowering : public OpRewritePattern<IfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(IfOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto ct = typeOf(op.getCondition());
    SmallVector<Value> zeros(ct.getRank(),
                             arith::ConstantIndexOp::create(rewriter, loc, 0));
    Value cond = tensor::ExtractOp::create(rewriter, loc, op.getCondition(),
                                           zeros);
    auto ifOp = scf::IfOp::create(rewriter, loc, op.getResultTypes(), cond,
                                  /*addThenBlock=*/false,
                                  /*addElseBlock=*/false);
    rewriter.inlineRegionBefore(op.getThenBranch(), ifOp.getThenRegion(),
                                ifOp.getThenRegion().end());
    rewriter.inlineRegionBefore(op.getElseBranch(), ifOp.getElseRegion(),
                                ifOp.getElseRegion().end());
    for (Region *r : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
      Operation *yield = r->front().getTerminator();
      rewriter.setInsertionPoint(yield);
      // A branch may yield a more static type than the If's (where the
      // other branch differs).
      SmallVector<Value> values;
      for (auto [v, type] :
           llvm::zip(yield->getOperands(), op.getResultTypes()))
        values.push_back(v.getType() == type
                             ? v
                             : tensor::CastOp::create(rewriter, loc, type, v));
      rewriter.replaceOpWithNewOp<scf::YieldOp>(yield, values);
    }
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }
};

} // namespace

void populateNNToLinalgPatterns(RewritePatternSet &patterns,
                                ConvolutionLowering convolution) {
  patterns.add<ConvLowering, ConvTransposeLowering>(patterns.getContext(),
                                                    convolution);
  patterns.add<PoolLowering<MaxPoolOp>, PoolLowering<AveragePoolOp>,
               GlobalAveragePoolLowering, PadLowering, IfLowering>(
      patterns.getContext());
}

} // namespace mp
