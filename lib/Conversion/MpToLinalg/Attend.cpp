//===- Attend.cpp - scaled dot-product attention in linalg ----------------===//
//
// Scores, masks and softmax in f32, one contraction for Q.K^T and one for
// P.V; grouped-query heads read their shared K/V head through the indexing
// maps (no copies). Long caches stream on the CPU (an online softmax over
// key blocks); the CUDA target takes its flash kernels (a
// GpuAttentionBuilder) where they apply and materializes the scores
// otherwise.
//
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

namespace {

/// Scale and soft cap (before the masks, so that -inf stays -inf), then
/// the masks and the causal rule, on f32 scores [b, h, s, t]. Key t is
/// `keyOffset` + the t index when the scores are one block of the keys (the
/// masks are then already that block's slices). Returns the scaled and
/// capped scores and the masked ones.
std::pair<Value, Value> scaleAndMask(OpBuilder &b, Location loc, Value scores,
                                     double scale, const MaskSpec &m,
                                     Value keyOffset) {
  MLIRContext *ctx = b.getContext();
  auto scoresType = cast<RankedTensorType>(scores.getType());
  Type f32 = b.getF32Type();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // Scale and soft cap (before the masks, so that -inf stays -inf), then
  // masks and the causal rule.
  // Key t of this block, as an index.
  auto keyIndex = [&](OpBuilder &nb, Location l) -> Value {
    Value t = linalg::IndexOp::create(nb, l, 3);
    return keyOffset ? Value(arith::AddIOp::create(nb, l, t, keyOffset)) : t;
  };
  Value capped = parallelGeneric(
      b, loc, scoresType, scores, {b.getMultiDimIdentityMap(4)},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value v =
            arith::MulFOp::create(nb, l, a[0], scalarConst(nb, l, f32, scale));
        if (m.softcap <= 0)
          return v;
        Value c = scalarConst(nb, l, f32, m.softcap);
        return arith::MulFOp::create(
            nb, l, c,
            math::TanhOp::create(nb, l, arith::DivFOp::create(nb, l, v, c)));
      });
  SmallVector<Value> inputs = {capped};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(4)};
  auto addMask = [&](Value mask) {
    if (!mask)
      return;
    // A dynamic mask dim may be 1 at run time where the scores' is not.
    auto mt = typeOf(mask);
    int64_t lead = 4 - mt.getRank();
    for (int64_t p = 0; p < mt.getRank(); ++p)
      if (mt.isDynamicDim(p))
        mask =
            expandUnitDim(b, loc, mask, p, dimValue(b, loc, scores, lead + p));
    inputs.push_back(mask);
    maps.push_back(
        broadcastMap(ctx, typeOf(mask).getShape(), scoresType.getShape()));
  };
  addMask(m.additive);
  addMask(m.keep);
  addMask(m.fillMask);
  if (m.keyPadding) {
    inputs.push_back(m.keyPadding);
    maps.push_back(AffineMap::get(4, 0, {d(0), d(3)}, ctx));
  }
  if (m.kvLength) {
    inputs.push_back(m.kvLength);
    maps.push_back(AffineMap::get(4, 0, {d(0)}, ctx));
  }
  Value masked = parallelGeneric(
      b, loc, scoresType, inputs, maps,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = a[0];
        unsigned i = 1;
        Value negInf = scalarConst(nb, l, f32, -INFINITY);
        if (m.additive)
          v = arith::AddFOp::create(nb, l, v, castScalar(nb, l, a[i++], f32));
        if (m.keep)
          v = arith::SelectOp::create(nb, l, a[i++], v, negInf);
        // An integer mask adds `fill` where it is not positive, as
        // onnxruntime's kernels do (a row with every key masked then keeps
        // the softmax of its scores).
        auto fillZeros = [&](Value mask) {
          Value zero = scalarConst(nb, l, mask.getType(), 0);
          Value keep = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt,
                                             mask, zero);
          v = arith::AddFOp::create(
              nb, l, v,
              arith::SelectOp::create(nb, l, keep, scalarConst(nb, l, f32, 0),
                                      scalarConst(nb, l, f32, m.fill)));
        };
        if (m.fillMask)
          fillZeros(a[i++]);
        if (m.keyPadding)
          fillZeros(a[i++]);
        if (m.kvLength) {
          Value t = arith::IndexCastOp::create(nb, l, a[i].getType(),
                                               keyIndex(nb, l));
          Value beyond = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                               t, a[i++]);
          v = arith::SelectOp::create(nb, l, beyond, negInf, v);
        }
        if (m.causal) {
          // Query s (after `causalOffset` cached positions) sees keys up to
          // its own position.
          Value s = linalg::IndexOp::create(nb, l, 2);
          Value t = keyIndex(nb, l);
          Value offset =
              m.causalOffsetValue
                  ? m.causalOffsetValue
                  : arith::ConstantIndexOp::create(nb, l, m.causalOffset);
          Value limit = arith::AddIOp::create(nb, l, s, offset);
          Value future =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt, t, limit);
          v = arith::SelectOp::create(nb, l, future, negInf, v);
        }
        return v;
      });
  return {capped, masked};
}

/// Sizes of attention on q [B, Hq, S, D], k [B, Hkv, T, D], v [B, Hkv, T,
/// Dv], and the input maps of its two contractions over contract()'s dims
/// (b, h, s, t|e, d|t): query head h reads KV head h / (Hq / Hkv).
struct AttentionShape {
  int64_t B, Hq, S, T, Dv;
  AffineMap qMap, kMap, vMap;
  AttentionShape(Value q, Value k, Value v) {
    auto qt = typeOf(q), kt = typeOf(k), vt = typeOf(v);
    B = qt.getDimSize(0), Hq = qt.getDimSize(1), S = qt.getDimSize(2);
    T = kt.getDimSize(2), Dv = vt.getDimSize(3);
    MLIRContext *ctx = q.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineExpr kvHead = d(1).floorDiv(Hq / kt.getDimSize(1));
    qMap = AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx);
    kMap = AffineMap::get(5, 0, {d(0), kvHead, d(3), d(4)}, ctx);
    vMap = AffineMap::get(5, 0, {d(0), kvHead, d(4), d(3)}, ctx);
  }
};

/// Keys per block of the streaming attention.
constexpr int64_t kKeyBlock = 256;

/// Attention as attend() computes it, without the [S, T] score matrix:
/// keys in blocks of `block` (and one shorter block for the rest) with an
/// online softmax (flash attention): per
/// query a running maximum m, a running sum l of exp(s - m) and an output
/// accumulator, both rescaled by exp(m_old - m_new) when the maximum grows.
/// Batch, query and key counts may be known only at run time: the loop then
/// runs to the run-time number of whole blocks, and the last block holds
/// the rest (possibly none).
///
/// With `keyLimit` (index), keys at or beyond it are masked by `m` already;
/// the loop stops after the block that holds the last key before it.
Value attendStreaming(OpBuilder &b, Location loc, Value q, Value k, Value v,
                      double scale, const MaskSpec &m, int64_t block,
                      Value keyLimit) {
  MLIRContext *ctx = b.getContext();
  AttentionShape a(q, k, v);
  int64_t B = a.B, Hq = a.Hq, S = a.S, T = a.T, Dv = a.Dv;
  Type f32 = b.getF32Type(), elt = typeOf(q).getElementType();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto rowType = RankedTensorType::get({B, Hq, S}, f32);
  auto accType = RankedTensorType::get({B, Hq, S, Dv}, f32);
  // Run-time sizes of the rows (q's [B, Hq, S]) and of the accumulator.
  SmallVector<Value> rowSizes, accSizes;
  for (int64_t i = 0; i < 3; ++i)
    if (rowType.isDynamicDim(i))
      rowSizes.push_back(dimValue(b, loc, q, i));
  accSizes = rowSizes;
  if (ShapedType::isDynamic(Dv))
    accSizes.push_back(dimValue(b, loc, v, 3));
  auto filled = [&](RankedTensorType t, ValueRange sizes, double value) {
    return linalg::FillOp::create(b, loc, scalarConst(b, loc, f32, value),
                                  emptyTensor(b, loc, t, sizes))
        .getResult(0);
  };
  // Row and accumulator updates: their operands always agree in shape, so
  // plain generics (no broadcast to decide, unlike elementwise()).
  AffineMap row4 = AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx);
  AffineMap id3 = b.getMultiDimIdentityMap(3),
            id4 = b.getMultiDimIdentityMap(4);
  SmallVector<int64_t> lastAxis = {3};
  Value keys = dimValue(b, loc, k, 2);
  // A mask whose key dim is known only at run time may be 1 there
  // (broadcast over the keys): expand it once, before the blocks slice it.
  MaskSpec full = m;
  for (Value *mask : {&full.additive, &full.keep, &full.fillMask}) {
    if (!*mask)
      continue;
    auto mt = typeOf(*mask);
    if (mt.getRank() > 0 && mt.isDynamicDim(mt.getRank() - 1))
      *mask = expandUnitDim(b, loc, *mask, mt.getRank() - 1, keys);
  }
  // One block of `size` keys from t0: the new (max, sum, accumulator).
  auto step = [&](OpBuilder &nb, Location l, Value t0, OpFoldResult size,
                  ValueRange iter) -> SmallVector<Value> {
    std::optional<int64_t> staticSize = getConstantIntValue(size);
    auto blockType = RankedTensorType::get(
        {B, Hq, S, staticSize ? *staticSize : ShapedType::kDynamic}, f32);
    // [t0, t0 + size) along `axis`.
    auto slice = [&](Value x, int64_t axis) -> Value {
      auto xt = typeOf(x);
      SmallVector<OpFoldResult> offsets(xt.getRank(), nb.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes,
          strides(xt.getRank(), nb.getIndexAttr(1));
      for (int64_t i = 0; i < xt.getRank(); ++i)
        sizes.push_back(getAsOpFoldResult(dimValue(nb, l, x, i)));
      offsets[axis] = t0;
      sizes[axis] = size;
      return tensor::ExtractSliceOp::create(nb, l, x, offsets, sizes, strides);
    };
    auto keysOf = [&](Value mask) -> Value {
      if (!mask || typeOf(mask).getRank() == 0 ||
          typeOf(mask).getShape().back() == 1)
        return mask; // broadcast over the keys
      return slice(mask, typeOf(mask).getRank() - 1);
    };
    MaskSpec mb = full;
    mb.additive = keysOf(full.additive);
    mb.keep = keysOf(full.keep);
    mb.keyPadding = keysOf(full.keyPadding);
    mb.fillMask = keysOf(full.fillMask);
    Value scores =
        contract(nb, l, blockType, q, a.qMap, slice(k, 2), a.kMap, f32);
    Value masked = scaleAndMask(nb, l, scores, scale, mb, t0).second;
    auto isNegInf = [&](OpBuilder &ib, Location il, Value x) -> Value {
      return arith::CmpFOp::create(ib, il, arith::CmpFPredicate::OEQ, x,
                                   scalarConst(ib, il, f32, -INFINITY));
    };
    // exp(x - max), 0 while the maximum is -inf (nothing seen yet).
    auto shiftedExp = [&](OpBuilder &ib, Location il, Value x,
                          Value max) -> Value {
      Value e =
          math::ExpOp::create(ib, il, arith::SubFOp::create(ib, il, x, max));
      return arith::SelectOp::create(ib, il, isNegInf(ib, il, max),
                                     scalarConst(ib, il, f32, 0), e);
    };
    Value blockMax =
        reduce(nb, l, masked, lastAxis, f32, -INFINITY,
               [](OpBuilder &ib, Location il, Value x, Value acc) -> Value {
                 return arith::MaximumFOp::create(ib, il, x, acc);
               });
    Value maxNew =
        parallelGeneric(nb, l, rowType, {iter[0], blockMax}, {id3, id3},
                        [](OpBuilder &ib, Location il, ValueRange a) -> Value {
                          return arith::MaximumFOp::create(ib, il, a[0], a[1]);
                        });
    Value p = withStat(nb, l, blockType, masked, maxNew, lastAxis,
                       [&](OpBuilder &ib, Location il, ValueRange a) {
                         return shiftedExp(ib, il, a[0], a[1]);
                       });
    // alpha = exp(m_old - m_new): 0 when m_old is -inf (l and the
    // accumulator are still 0 then).
    Value alpha = parallelGeneric(
        nb, l, rowType, {iter[0], maxNew}, {id3, id3},
        [&](OpBuilder &ib, Location il, ValueRange a) -> Value {
          Value e = shiftedExp(ib, il, a[0], a[1]);
          return arith::SelectOp::create(ib, il, isNegInf(ib, il, a[0]),
                                         scalarConst(ib, il, f32, 0), e);
        });
    Value blockSum =
        reduce(nb, l, p, lastAxis, f32, 0,
               [](OpBuilder &ib, Location il, Value x, Value acc) -> Value {
                 return arith::AddFOp::create(ib, il, x, acc);
               });
    Value sumNew = parallelGeneric(
        nb, l, rowType, {iter[1], alpha, blockSum}, {id3, id3, id3},
        [](OpBuilder &ib, Location il, ValueRange a) -> Value {
          return arith::AddFOp::create(
              ib, il, arith::MulFOp::create(ib, il, a[0], a[1]), a[2]);
        });
    Value pv = contract(nb, l, accType, p, a.qMap, slice(v, 2), a.vMap, f32);
    Value accNew = parallelGeneric(
        nb, l, accType, ValueRange{iter[2], alpha, pv}, {id4, row4, id4},
        [](OpBuilder &ib, Location il, ValueRange a) -> Value {
          return arith::AddFOp::create(
              ib, il, arith::MulFOp::create(ib, il, a[0], a[1]), a[2]);
        });
    return {maxNew, sumNew, accNew};
  };
  // The keys in whole blocks (folded when the key count is static).
  Value blockSize = indexConst(b, loc, block);
  Value whole = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, keys, blockSize), blockSize);
  // A sink starts each row as if it were the first key: max = sink,
  // sum = exp(sink - sink) = 1, no value.
  Value max0 = filled(rowType, rowSizes, -INFINITY),
        sum0 = filled(rowType, rowSizes, 0);
  if (m.sink) {
    max0 = parallelGeneric(
        b, loc, rowType, m.sink, {AffineMap::get(3, 0, {d(1)}, ctx)},
        [](OpBuilder &, Location, ValueRange a) { return a[0]; }, rowSizes);
    sum0 = filled(rowType, rowSizes, 1.0);
  }
  // Whole blocks past the limit add nothing (every key is masked).
  Value upper = whole;
  if (keyLimit) {
    Value rounded = arith::MulIOp::create(
        b, loc, arith::CeilDivSIOp::create(b, loc, keyLimit, blockSize),
        blockSize);
    upper = arith::MinSIOp::create(b, loc, upper, rounded);
  }
  auto loop = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), upper, blockSize,
      ValueRange{max0, sum0, filled(accType, accSizes, 0)},
      [&](OpBuilder &nb, Location l, Value t0, ValueRange iter) {
        scf::YieldOp::create(nb, l,
                             step(nb, l, t0, nb.getIndexAttr(block), iter));
      });
  SmallVector<Value> state(loop.getResults());
  // The keys after the last whole block (a decode step's new token): as
  // many as the static key count leaves, or the run-time rest.
  if (ShapedType::isDynamic(T))
    state = step(b, loc, whole,
                 arith::SubIOp::create(b, loc, keys, whole).getResult(), state);
  else if (T % block)
    state = step(b, loc, whole, b.getIndexAttr(T % block), state);
  return withStat(b, loc, RankedTensorType::get({B, Hq, S, Dv}, elt), state[2],
                  state[1], lastAxis,
                  [&](OpBuilder &ib, Location il, ValueRange a) {
                    return castScalar(
                        ib, il, arith::DivFOp::create(ib, il, a[0], a[1]), elt);
                  });
}

/// Softmax over the keys of f32 scores [B, Hq, S, T] with one extra logit
/// sink[h] per row: exp(x - m) / (exp(sink - m) + sum exp(x - m)), m the
/// maximum of the row and the sink.
Value softmaxWithSink(OpBuilder &b, Location loc, Value scores, Value sink) {
  MLIRContext *ctx = b.getContext();
  auto type = typeOf(scores);
  Type f32 = b.getF32Type();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto rowType = RankedTensorType::get(type.getShape().drop_back(), f32);
  AffineMap row = b.getMultiDimIdentityMap(3);
  AffineMap head = AffineMap::get(3, 0, {d(1)}, ctx);
  SmallVector<int64_t> keys = {3};
  Value rowMax =
      reduce(b, loc, scores, keys, f32, -INFINITY,
             [](OpBuilder &nb, Location l, Value x, Value acc) {
               return arith::MaximumFOp::create(nb, l, x, acc).getResult();
             });
  Value mx = parallelGeneric(
      b, loc, rowType, {rowMax, sink}, {row, head},
      [](OpBuilder &nb, Location l, ValueRange a) {
        return arith::MaximumFOp::create(nb, l, a[0], a[1]).getResult();
      });
  Value e = withStat(b, loc, type, scores, mx, keys,
                     [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       return math::ExpOp::create(
                           nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
                     });
  Value sum = reduce(b, loc, e, keys, f32, 0.0,
                     [](OpBuilder &nb, Location l, Value x, Value acc) {
                       return arith::AddFOp::create(nb, l, x, acc).getResult();
                     });
  Value denom =
      parallelGeneric(b, loc, rowType, {sum, sink, mx}, {row, head, row},
                      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        Value s = math::ExpOp::create(
                            nb, l, arith::SubFOp::create(nb, l, a[1], a[2]));
                        return arith::AddFOp::create(nb, l, a[0], s);
                      });
  return withStat(b, loc, type, e, denom, keys,
                  [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                    return arith::DivFOp::create(nb, l, a[0], a[1]);
                  });
}

} // namespace

namespace mp::lowering {

FlashResult attendFlash(OpBuilder &b, Location loc, Value q, Value k, Value v,
                        Value pastKey, Value pastValue, Type presentKeyType,
                        Type presentValueType, double scale, const MaskSpec &m,
                        const AttentionTarget &target, bool needScores,
                        Value keyLimit) {
  // The flash kernels are generated for static shapes; with run-time
  // lengths the GPU takes the materialized scores (generic kernels).
  auto isStatic = [](Value x) { return !x || typeOf(x).hasStaticShape(); };
  if (target.mode != AttentionLowering::GpuFlash || !target.gpuKernels ||
      needScores || !isStatic(q) || !isStatic(k) || !isStatic(v) ||
      !isStatic(pastKey) || !isStatic(pastValue))
    return {};
  // The masks the kernels know.
  if (m.keyPadding || m.fillMask || m.sink)
    return {};
  FlashOperands ops;
  ops.q = q, ops.k = k, ops.v = v;
  ops.pastKey = pastKey, ops.pastValue = pastValue;
  ops.presentKeyType = presentKeyType, ops.presentValueType = presentValueType;
  ops.scale = scale;
  ops.keyLimit = keyLimit;
  FlashMasks &masks = ops.masks;
  masks.causal = m.causal;
  masks.causalOffset = m.causalOffset;
  masks.causalOffsetValue = m.causalOffsetValue;
  masks.kvLength = m.kvLength;
  masks.additive = m.additive;
  masks.keep = m.keep;
  masks.softcap = m.softcap;
  return target.gpuKernels(b, loc, ops);
}

std::pair<Value, Value> attend(OpBuilder &b, Location loc, Value q, Value k,
                               Value v, double scale, const MaskSpec &m,
                               const AttentionTarget &target, bool needScores,
                               Value keyLimit) {
  AttentionShape a(q, k, v);
  int64_t B = a.B, Hq = a.Hq, S = a.S, T = a.T, Dv = a.Dv;
  Type f32 = b.getF32Type(), elt = typeOf(q).getElementType();
  bool streamLongCaches = target.mode == AttentionLowering::Streaming;
  if (Value out = attendFlash(b, loc, q, k, v, Value(), Value(), Type(), Type(),
                              scale, m, target, needScores, keyLimit)
                      .output)
    return {out, Value()};
  // Long caches stream: the scores exist one block of keys at a time.
  // A cache of run-time length streams whatever its length: its scores
  // could not be bounded when compiling.
  if (streamLongCaches && !needScores &&
      (ShapedType::isDynamic(T) || T >= 2 * kKeyBlock))
    return {attendStreaming(b, loc, q, k, v, scale, m, kKeyBlock, keyLimit),
            Value()};

  // scores[b, h, s, t] = sum_d q[b, h, s, d] * k[b, h / g, t, d]
  auto scoresType = RankedTensorType::get({B, Hq, S, T}, f32);
  Value scores = contract(b, loc, scoresType, q, a.qMap, k, a.kMap, f32);

  std::pair<Value, Value> stages =
      scaleAndMask(b, loc, scores, scale, m, Value());
  Value capped = stages.first, masked = stages.second;
  // Softmax over t in f32.
  SmallVector<int64_t> axis = {3};
  Value p = m.sink ? softmaxWithSink(b, loc, masked, m.sink) : [&] {
    SoftmaxParts parts = softmaxParts(b, loc, masked, axis, f32);
    return withStat(
        b, loc, scoresType, parts.exp, parts.sum, axis,
        [](OpBuilder &nb, Location l, ValueRange a) {
          return arith::DivFOp::create(nb, l, a[0], a[1]).getResult();
        });
  }();

  // out[b, h, s, e] = sum_t p[b, h, s, t] * v[b, h / g, t, e]
  auto outType = RankedTensorType::get({B, Hq, S, Dv}, f32);
  Value out = contract(b, loc, outType, p, a.qMap, v, a.vMap, f32);
  Value cast = elementwise(b, loc, RankedTensorType::get({B, Hq, S, Dv}, elt),
                           out, [&](OpBuilder &nb, Location l, ValueRange a) {
                             return castScalar(nb, l, a[0], elt);
                           });
  // As the ONNX reference computes them: modes 0 and 1 give the scaled and
  // soft-capped scores, 2 adds the masks, 3 is the softmax.
  Value stage = m.qkOutputMode == 3 ? p : m.qkOutputMode == 2 ? masked : capped;
  return {cast, stage};
}

} // namespace mp::lowering
