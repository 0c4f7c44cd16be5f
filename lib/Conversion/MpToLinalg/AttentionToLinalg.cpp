//===- AttentionToLinalg.cpp - attention ops to linalg (reference) --------===//
//
// Scores, masks and softmax in f32, one contraction for Q.K^T and one for
// P.V, grouped-query heads read their shared K/V head through the indexing
// maps (no copies). Long caches stream on the CPU (an online softmax over
// key blocks); the CUDA target takes the flash kernels of
// FlashAttentionGpu.cpp where they apply and materializes the scores
// otherwise.
//
//===----------------------------------------------------------------------===//

#include "FlashAttentionGpu.h"
#include "LoweringUtils.h"
#include "mp/Conversion/Passes.h"
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
using namespace mp::lowering;

namespace mp {
namespace {

/// `x` [a, b, c, d] transposed to [a, c, b, d] (batch and sequence dims
/// may be dynamic).
Value swapMiddleDims(OpBuilder &b, Location loc, Value x) {
  auto t = typeOf(x);
  auto outType = RankedTensorType::get({t.getDimSize(0), t.getDimSize(2),
                                        t.getDimSize(1), t.getDimSize(3)},
                                       t.getElementType());
  SmallVector<Value> sizes;
  for (int64_t from : {0, 2, 1, 3})
    if (t.isDynamicDim(from))
      sizes.push_back(dimValue(b, loc, x, from));
  Value init = emptyTensor(b, loc, outType, sizes);
  return linalg::TransposeOp::create(b, loc, x, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

/// [B, S, H*D] -> [B, H, S, D].
Value splitHeads(OpBuilder &b, Location loc, Value x, int64_t heads) {
  auto t = typeOf(x);
  int64_t d = t.getDimSize(2) / heads;
  Value r = reshapeTo(b, loc, x,
                      RankedTensorType::get({t.getDimSize(0), t.getDimSize(1),
                                             heads, d},
                                            t.getElementType()));
  return swapMiddleDims(b, loc, r);
}

/// [B, H, S, D] -> [B, S, H*D].
Value mergeHeads(OpBuilder &b, Location loc, Value x) {
  auto t = typeOf(x);
  Value r = swapMiddleDims(b, loc, x);
  return reshapeTo(b, loc, r,
                   RankedTensorType::get({t.getDimSize(0), t.getDimSize(2),
                                          t.getDimSize(1) * t.getDimSize(3)},
                                         t.getElementType()));
}

/// Concatenates past and new along the sequence axis (2) when there is a
/// past.
Value withPast(OpBuilder &b, Location loc, Value past, Value now) {
  if (!past)
    return now;
  auto p = typeOf(past), n = typeOf(now);
  int64_t length = p.isDynamicDim(2) || n.isDynamicDim(2)
                       ? ShapedType::kDynamic
                       : p.getDimSize(2) + n.getDimSize(2);
  auto type = RankedTensorType::get(
      {n.getDimSize(0), n.getDimSize(1), length, n.getDimSize(3)},
      n.getElementType());
  return tensor::ConcatOp::create(b, loc, type, 2, ValueRange{past, now});
}

/// The fill level of a fixed-capacity cache `cacheType` [B, H, N, D] that
/// takes `fresh` new positions: `length` (i64 scalar) as an index, clamped
/// to [0, N - fresh] so that the write stays inside the cache even when the
/// caller's check was skipped.
Value cacheFillLevel(OpBuilder &b, Location loc, Value length,
                     RankedTensorType cacheType, int64_t fresh) {
  Value raw = tensor::ExtractOp::create(b, loc, length, ValueRange{});
  Value at = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value hi = indexConst(b, loc, cacheType.getDimSize(2) - fresh);
  return arith::MaxSIOp::create(b, loc, indexConst(b, loc, 0),
                                arith::MinSIOp::create(b, loc, at, hi));
}

/// `cache` [B, H, N, D] with `fresh` [B, H, L, D] written at position `at`
/// along the sequence axis: an insert_slice, which bufferizes in place.
Value writeAt(OpBuilder &b, Location loc, Value cache, Value fresh, Value at) {
  auto t = typeOf(fresh);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                       at, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes, strides(4, b.getIndexAttr(1));
  for (int64_t d : t.getShape())
    sizes.push_back(b.getIndexAttr(d));
  return tensor::InsertSliceOp::create(b, loc, fresh, cache, offsets, sizes,
                                       strides);
}

/// An i64 [B] tensor holding `value` (an index) in every entry.
Value batchFilled(OpBuilder &b, Location loc, int64_t batch, Value value) {
  Type i64 = b.getI64Type();
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{batch}, i64);
  Value v = arith::IndexCastOp::create(b, loc, i64, value);
  return linalg::FillOp::create(b, loc, v, empty).getResult(0);
}

/// What masks a score [b, h, s, t] besides the causal rule.
struct MaskSpec {
  Value additive;    // float, broadcast to [B, H, S, T]
  Value keep;        // bool, broadcast to [B, H, S, T]: false masks
  Value keyPadding;  // integer [B, T]: <= 0 adds `fill`
  Value fillMask;    // integer, broadcast to [B, H, S, T]: <= 0 adds `fill`
  Value kvLength;    // integer [B]: keys t >= kvLength[b] are masked
  double fill = -INFINITY;
  bool causal = false;
  /// With `causal`, query s sees keys t <= s + causalOffset: the past length
  /// (ONNX Attention's reference, onnxruntime's unidirectional attention).
  int64_t causalOffset = 0;
  /// A run-time causal offset (index), used instead of `causalOffset`: the
  /// fill level of a fixed-capacity cache.
  Value causalOffsetValue;
  double softcap = 0;
  /// Per query head f32 [Hq]: one more logit in every softmax row, which
  /// takes probability mass but adds no value (onnxruntime's head_sink;
  /// smooth_softmax is a sink of 0).
  Value sink;
  /// Which scores attend() also returns (ONNX qk_matmul_output_mode, as the
  /// reference implements it): 0/1 scaled and soft-capped Q·Kᵀ, 2 plus the
  /// masks, 3 the softmax.
  int64_t qkOutputMode = 0;
};

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
        Value v = arith::MulFOp::create(nb, l, a[0],
                                        scalarConst(nb, l, f32, scale));
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
        mask = expandUnitDim(b, loc, mask, p,
                             dimValue(b, loc, scores, lead + p));
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
          Value beyond = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::sge, t, a[i++]);
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
          Value future = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::sgt, t, limit);
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
  AffineMap id3 = b.getMultiDimIdentityMap(3), id4 = b.getMultiDimIdentityMap(4);
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
          SmallVector<OpFoldResult> sizes, strides(xt.getRank(),
                                                   nb.getIndexAttr(1));
          for (int64_t i = 0; i < xt.getRank(); ++i)
            sizes.push_back(getAsOpFoldResult(dimValue(nb, l, x, i)));
          offsets[axis] = t0;
          sizes[axis] = size;
          return tensor::ExtractSliceOp::create(nb, l, x, offsets, sizes,
                                                strides);
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
        Value scores = contract(
            nb, l, blockType, q,
            a.qMap, slice(k, 2), a.kMap, f32);
        Value masked = scaleAndMask(nb, l, scores, scale, mb, t0).second;
        auto isNegInf = [&](OpBuilder &ib, Location il, Value x) -> Value {
          return arith::CmpFOp::create(ib, il, arith::CmpFPredicate::OEQ, x,
                                       scalarConst(ib, il, f32, -INFINITY));
        };
        // exp(x - max), 0 while the maximum is -inf (nothing seen yet).
        auto shiftedExp = [&](OpBuilder &ib, Location il, Value x,
                              Value max) -> Value {
          Value e = math::ExpOp::create(ib, il,
                                        arith::SubFOp::create(ib, il, x, max));
          return arith::SelectOp::create(ib, il, isNegInf(ib, il, max),
                                         scalarConst(ib, il, f32, 0), e);
        };
        Value blockMax = reduce(
            nb, l, masked, lastAxis, f32, -INFINITY,
            [](OpBuilder &ib, Location il, Value x, Value acc) -> Value {
              return arith::MaximumFOp::create(ib, il, x, acc);
            });
        Value maxNew = parallelGeneric(
            nb, l, rowType, {iter[0], blockMax}, {id3, id3},
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
        Value blockSum = reduce(
            nb, l, p, lastAxis, f32, 0,
            [](OpBuilder &ib, Location il, Value x, Value acc) -> Value {
              return arith::AddFOp::create(ib, il, x, acc);
            });
        Value sumNew = parallelGeneric(
            nb, l, rowType, {iter[1], alpha, blockSum}, {id3, id3, id3},
            [](OpBuilder &ib, Location il, ValueRange a) -> Value {
              return arith::AddFOp::create(
                  ib, il, arith::MulFOp::create(ib, il, a[0], a[1]), a[2]);
            });
        Value pv = contract(
            nb, l, accType, p,
            a.qMap, slice(v, 2), a.vMap, f32);
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
    max0 = parallelGeneric(b, loc, rowType, m.sink,
                           {AffineMap::get(3, 0, {d(1)}, ctx)},
                           [](OpBuilder &, Location, ValueRange a) {
                             return a[0];
                           },
                           rowSizes);
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
    state = step(b, loc, whole, arith::SubIOp::create(b, loc, keys, whole)
                                    .getResult(),
                 state);
  else if (T % block)
    state = step(b, loc, whole, b.getIndexAttr(T % block), state);
  return withStat(b, loc, RankedTensorType::get({B, Hq, S, Dv}, elt),
                  state[2], state[1], lastAxis,
                  [&](OpBuilder &ib, Location il, ValueRange a) {
                    return castScalar(
                        ib, il, arith::DivFOp::create(ib, il, a[0], a[1]),
                        elt);
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
  Value rowMax = reduce(b, loc, scores, keys, f32, -INFINITY,
                        [](OpBuilder &nb, Location l, Value x, Value acc) {
                          return arith::MaximumFOp::create(nb, l, x, acc)
                              .getResult();
                        });
  Value mx = parallelGeneric(b, loc, rowType, {rowMax, sink}, {row, head},
                             [](OpBuilder &nb, Location l, ValueRange a) {
                               return arith::MaximumFOp::create(nb, l, a[0],
                                                                a[1])
                                   .getResult();
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
  Value denom = parallelGeneric(
      b, loc, rowType, {sum, sink, mx}, {row, head, row},
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

/// Scaled dot-product attention on 4-D q [B,Hq,S,D], k [B,Hkv,T,D],
/// v [B,Hkv,T,Dv] -> [B,Hq,S,Dv] of q's element type, with f32 scores.
/// Also returns the scores at the stage `m.qkOutputMode` names. The order is
/// ONNX Attention's reference: scale, soft cap, masks, softmax.
std::pair<Value, Value> attend(OpBuilder &b, Location loc, Value q, Value k,
                               Value v, double scale, const MaskSpec &m,
                               AttentionKernels kernels,
                               bool needScores = false,
                               Value keyLimit = Value()) {
  AttentionShape a(q, k, v);
  int64_t B = a.B, Hq = a.Hq, S = a.S, T = a.T, Dv = a.Dv;
  Type f32 = b.getF32Type(), elt = typeOf(q).getElementType();
  bool streamLongCaches = kernels == AttentionKernels::CpuStreaming;
  // The flash kernels are generated for static shapes; with run-time
  // lengths the GPU takes the materialized scores (generic kernels).
  if (kernels == AttentionKernels::GpuFlash &&
      !(typeOf(q).hasStaticShape() && typeOf(k).hasStaticShape() &&
        typeOf(v).hasStaticShape()))
    kernels = AttentionKernels::Materialized;
  // The GPU's flash kernels take the masks they know.
  if (kernels == AttentionKernels::GpuFlash && !needScores && !m.additive &&
      !m.keep && !m.keyPadding && !m.fillMask && !m.sink) {
    FlashMasks flash;
    flash.causal = m.causal;
    flash.causalOffset = m.causalOffset;
    flash.causalOffsetValue = m.causalOffsetValue;
    flash.kvLength = m.kvLength;
    flash.softcap = m.softcap;
    if (Value out = flashAttentionGpu(b, loc, q, k, v, scale, flash, keyLimit))
      return {out, Value()};
  }
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

  std::pair<Value, Value> stages = scaleAndMask(b, loc, scores, scale, m, Value());
  Value capped = stages.first, masked = stages.second;
  // Softmax over t in f32.
  SmallVector<int64_t> axis = {3};
  Value p = m.sink ? softmaxWithSink(b, loc, masked, m.sink)
                   : [&] {
                       SoftmaxParts parts =
                           softmaxParts(b, loc, masked, axis, f32);
                       return withStat(
                           b, loc, scoresType, parts.exp, parts.sum, axis,
                           [](OpBuilder &nb, Location l, ValueRange a) {
                             return arith::DivFOp::create(nb, l, a[0], a[1])
                                 .getResult();
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
  Value stage = m.qkOutputMode == 3 ? p
                : m.qkOutputMode == 2 ? masked
                                      : capped;
  return {cast, stage};
}

/// A mask shorter than the keys (last dim) extended to the key count of
/// `keys` [B, H, T, D] with -inf (float) or false (bool), as ONNX
/// Attention's reference pads it. A last dim of 1 broadcasts instead; when
/// it is known only at run time, so is the choice.
Value padKeys(OpBuilder &b, Location loc, Value mask, Value keys,
              bool isBool) {
  auto t = typeOf(mask);
  if (t.getRank() == 0)
    return mask; // one value for every score
  int64_t rank = t.getRank();
  int64_t have = t.getShape().back(), total = typeOf(keys).getDimSize(2);
  if (have == 1 || (!ShapedType::isDynamic(have) &&
                    !ShapedType::isDynamic(total) && have >= total))
    return mask;
  SmallVector<int64_t> shape(t.getShape());
  shape.back() = total;
  auto type = RankedTensorType::get(shape, t.getElementType());
  Value haveValue = dimValue(b, loc, mask, rank - 1);
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < rank; ++i)
    if (type.isDynamicDim(i))
      sizes.push_back(i + 1 < rank ? dimValue(b, loc, mask, i)
                                   : dimValue(b, loc, keys, 2));
  Value unit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     haveValue, indexConst(b, loc, 1));
  return parallelGeneric(
      b, loc, type, {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i)
          idx.push_back(linalg::IndexOp::create(nb, l, i));
        Value inside = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                             idx.back(), haveValue);
        Value zero = indexConst(nb, l, 0);
        SmallVector<Value> at = idx;
        at.back() = arith::SelectOp::create(
            nb, l, unit, zero,
            arith::SelectOp::create(nb, l, inside, idx.back(), zero));
        Value v = tensor::ExtractOp::create(nb, l, mask, at);
        Value fill = isBool ? scalarConst(nb, l, t.getElementType(), 0)
                            : scalarConst(nb, l, t.getElementType(), -INFINITY);
        return arith::SelectOp::create(
            nb, l, arith::OrIOp::create(nb, l, unit, inside), v, fill);
      },
      sizes);
}

/// A placeholder for the qk_matmul_output nothing reads: [B, Hq, S, T] of
/// q [B, Hq, S, D] and the keys [B, Hkv, T, D].
Value unusedScores(OpBuilder &b, Location loc, AttentionOp op, Value q,
                   Value keys) {
  auto type = cast<RankedTensorType>(op.getQkMatmulOutput().getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < 4; ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(dimValue(b, loc, d == 3 ? keys : q, d == 3 ? 2 : d));
  return emptyTensor(b, loc, type, sizes);
}

/// ONNX Attention-23/24.
/// An attention lowering, told whether long caches may stream (CPU) or
/// must materialize their scores (CUDA: the pieces map to Tensor Core and
/// block-reduction kernels; a flash kernel is still to come).
template <typename OpTy>
struct AttentionPattern : public OpRewritePattern<OpTy> {
  AttentionPattern(MLIRContext *ctx, AttentionKernels kernels)
      : OpRewritePattern<OpTy>(ctx), kernels(kernels) {}
  AttentionKernels kernels;
};

struct AttentionLowering : public AttentionPattern<AttentionOp> {
  using AttentionPattern::AttentionPattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    // A fixed-capacity cache (past_length) needs static shapes.
    if (!allStatic(op) && op.getPastLength())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    if (op.getQkMatmulOutputMode() < 0 || op.getQkMatmulOutputMode() > 3)
      return rewriter.notifyMatchFailure(op, "unknown qk_matmul_output_mode");
    Location loc = op.getLoc();
    bool threeD = typeOf(op.getQ()).getRank() == 3;
    Value q = op.getQ(), k = op.getK(), v = op.getV();
    if (threeD) {
      q = splitHeads(rewriter, loc, q, op.getQNumHeads());
      k = splitHeads(rewriter, loc, k, op.getKvNumHeads());
      v = splitHeads(rewriter, loc, v, op.getKvNumHeads());
    }
    // A fixed-capacity cache takes the new K/V in place at its fill level;
    // otherwise past and new are joined.
    Value fill, validKeys;
    Value pk, pv;
    if (Value length = op.getPastLength()) {
      fill = cacheFillLevel(rewriter, loc, length, typeOf(op.getPastKey()),
                            typeOf(k).getDimSize(2));
      pk = writeAt(rewriter, loc, op.getPastKey(), k, fill);
      pv = writeAt(rewriter, loc, op.getPastValue(), v, fill);
      validKeys = arith::AddIOp::create(
          rewriter, loc, fill, indexConst(rewriter, loc, typeOf(k).getDimSize(2)));
    } else {
      pk = withPast(rewriter, loc, op.getPastKey(), k);
      pv = withPast(rewriter, loc, op.getPastValue(), v);
    }
    int64_t D = typeOf(q).getDimSize(3);
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt((double)D);
    MaskSpec m;
    if (Value mask = op.getAttnMask()) {
      bool isBool = getElementTypeOrSelf(mask.getType()).isInteger(1);
      mask = padKeys(rewriter, loc, mask, pk, isBool);
      (isBool ? m.keep : m.additive) = mask;
    }
    m.causal = op.getIsCausal();
    m.causalOffset =
        op.getPastKey() ? typeOf(op.getPastKey()).getDimSize(2) : 0;
    if (ShapedType::isDynamic(m.causalOffset))
      m.causalOffsetValue = dimValue(rewriter, loc, op.getPastKey(), 2);
    m.softcap = op.getSoftcap().convertToDouble();
    m.kvLength = op.getNonpadKvSeqlen();
    if (fill) {
      m.causalOffsetValue = fill;
      m.kvLength = batchFilled(rewriter, loc, typeOf(q).getDimSize(0),
                               validKeys);
    }
    m.qkOutputMode = op.getQkMatmulOutputMode();
    bool needScores = !op.getQkMatmulOutput().use_empty();
    auto [out, scores] = attend(rewriter, loc, q, pk, pv, scale, m,
                                kernels, needScores, validKeys);
    if (threeD)
      out = mergeHeads(rewriter, loc, out);
    // Without a consumer the scores may never have existed (streaming).
    Value qk = needScores
                   ? elementwise(
                         rewriter, loc,
                         cast<RankedTensorType>(
                             op.getQkMatmulOutput().getType()),
                         scores,
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return castScalar(
                               b, l, a[0],
                               getElementTypeOrSelf(op.getQkMatmulOutput()));
                         })
                   : unusedScores(rewriter, loc, op, q, pk);
    rewriter.replaceOp(op, {out, pk, pv, qk});
    return success();
  }
};

/// com.microsoft MultiHeadAttention (separate Q, K, V; past/present).
struct MultiHeadAttentionLowering
    : public AttentionPattern<MultiHeadAttentionOp> {
  using AttentionPattern::AttentionPattern;
  LogicalResult matchAndRewrite(MultiHeadAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
    int64_t qRank = typeOf(query).getRank();
    if ((qRank == 3 && !key) || (qRank != 3 && qRank != 5))
      return rewriter.notifyMatchFailure(op, "unsupported form");
    Value packedInput = qRank == 5 ? query
                        : key && typeOf(key).getRank() == 5 ? key
                                                             : Value();
    if (packedInput && (typeOf(packedInput).isDynamicDim(2) ||
                        typeOf(packedInput).isDynamicDim(4)))
      return rewriter.notifyMatchFailure(op, "packed heads of run-time size");
    // Checked before any IR is built: a pattern that fails after changing
    // the IR keeps the rewrite driver from converging.
    auto rankOf = [](Value v) { return v ? typeOf(v).getRank() : 0; };
    if (op.getBias() && (rankOf(key) == 4 || rankOf(value) == 4))
      return rewriter.notifyMatchFailure(op, "bias with projected K/V");
    if (Value kp = op.getKeyPaddingMask(); kp && typeOf(kp).getRank() != 2)
      return rewriter.notifyMatchFailure(op, "key_padding_mask form");
    Location loc = op.getLoc();
    int64_t n = op.getNumHeads();
    // Part i of a packed [B, L, N, parts, H] input, as [B, L, N*H] (batch
    // and length may be known only at run time; heads and width may not).
    auto unpack = [&](Value packed, int64_t i) -> Value {
      auto t = typeOf(packed);
      SmallVector<int64_t> shape(t.getShape());
      shape[3] = 1;
      SmallVector<OpFoldResult> offsets(5, rewriter.getIndexAttr(0)), sizes,
          strides(5, rewriter.getIndexAttr(1));
      offsets[3] = rewriter.getIndexAttr(i);
      for (int64_t d = 0; d < 5; ++d)
        sizes.push_back(d == 3 ? OpFoldResult(rewriter.getIndexAttr(1))
                               : getAsOpFoldResult(
                                     dimValue(rewriter, loc, packed, d)));
      Value part = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get(shape, t.getElementType()),
          packed, offsets, sizes, strides);
      return reshapeTo(rewriter, loc, part,
                       RankedTensorType::get({shape[0], shape[1],
                                              shape[2] * shape[4]},
                                             t.getElementType()));
    };
    if (qRank == 5) {
      key = unpack(query, 1);
      value = unpack(query, 2);
      query = unpack(query, 0);
    } else if (typeOf(key).getRank() == 5) {
      value = unpack(key, 1);
      key = unpack(key, 0);
    }
    // The projections' biases, [Dq + Dk + Dv], on [B, L, D] inputs.
    if (Value bias = op.getBias()) {
      int64_t offset = 0;
      auto addBias = [&](Value x) {
        auto t = typeOf(x);
        int64_t width = t.getDimSize(2);
        auto sliceType = RankedTensorType::get({width}, t.getElementType());
        Value part = tensor::ExtractSliceOp::create(
            rewriter, loc, sliceType, bias, ValueRange{}, ValueRange{},
            ValueRange{}, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{width},
            ArrayRef<int64_t>{1});
        offset += width;
        return elementwise(rewriter, loc, t, {x, part},
                           [](OpBuilder &b, Location l, ValueRange a) {
                             return arith::AddFOp::create(b, l, a[0], a[1])
                                 .getResult();
                           });
      };
      query = addBias(query);
      key = addBias(key);
      value = addBias(value);
    }
    Value q = splitHeads(rewriter, loc, query, n);
    auto heads = [&](Value x) {
      return typeOf(x).getRank() == 4 ? x : splitHeads(rewriter, loc, x, n);
    };
    Value pk = withPast(rewriter, loc, op.getPastKey(), heads(key));
    Value pv = withPast(rewriter, loc, op.getPastValue(), heads(value));
    int64_t D = typeOf(q).getDimSize(3);
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt((double)D);
    MaskSpec m;
    m.additive = op.getAttentionBias();
    if (Value kp = op.getKeyPaddingMask()) {
      m.keyPadding = kp;
      m.fill = op.getMaskFilterValue().convertToDouble();
    }
    m.causal = op.getUnidirectional();
    m.causalOffset =
        op.getPastKey() ? typeOf(op.getPastKey()).getDimSize(2) : 0;
    if (ShapedType::isDynamic(m.causalOffset))
      m.causalOffsetValue = dimValue(rewriter, loc, op.getPastKey(), 2);
    Value out = attend(rewriter, loc, q, pk, pv, scale, m, kernels).first;
    rewriter.replaceOp(op, {mergeHeads(rewriter, loc, out), pk, pv});
    return success();
  }
};

/// com.microsoft Attention's 1-D mask_index as a key padding mask i32
/// [B, T] for keys `k` [B, N, T, H]: keys from end[b] = mask[b] on are
/// masked and, when the mask holds 2B entries, keys before start[b] =
/// mask[B + b] too (right and left padding, as onnxruntime reads them).
static Value keyRangeMask(OpBuilder &b, Location loc, Value mask, Value input,
                          Value k) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value batch = dimValue(b, loc, input, 0), keys = dimValue(b, loc, k, 2);
  Value entries = dimValue(b, loc, mask, 0);
  Value hasStarts = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, entries,
      arith::MulIOp::create(b, loc, batch, indexConst(b, loc, 2)));
  auto type = RankedTensorType::get(
      {typeOf(input).getDimSize(0), typeOf(k).getDimSize(2)}, i32);
  SmallVector<Value> sizes;
  if (type.isDynamicDim(0))
    sizes.push_back(batch);
  if (type.isDynamicDim(1))
    sizes.push_back(keys);
  return parallelGeneric(
      b, loc, type, {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        Value row = linalg::IndexOp::create(nb, l, 0);
        Value t = arith::IndexCastOp::create(
            nb, l, i64, linalg::IndexOp::create(nb, l, 1));
        auto at = [&](Value i) {
          return castScalar(nb, l, tensor::ExtractOp::create(nb, l, mask, i),
                            i64);
        };
        // The start is read in bounds even when there is none.
        Value startAt = arith::MinSIOp::create(
            nb, l, arith::AddIOp::create(nb, l, row, batch),
            arith::SubIOp::create(nb, l, entries, indexConst(nb, l, 1)));
        Value start = arith::SelectOp::create(nb, l, hasStarts, at(startAt),
                                              scalarConst(nb, l, i64, 0));
        Value inside = arith::AndIOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, t, at(row)),
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, t, start));
        return arith::ExtUIOp::create(nb, l, i32, inside);
      },
      sizes);
}

/// com.microsoft Attention: packed QKV projection, past as [2, B, N, P, H].
struct MsAttentionLowering : public AttentionPattern<MsAttentionOp> {
  using AttentionPattern::AttentionPattern;
  LogicalResult matchAndRewrite(MsAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto in = typeOf(op.getInput());
    auto w = typeOf(op.getWeights());
    Type elt = in.getElementType(), f32 = rewriter.getF32Type();
    int64_t B = in.getDimSize(0), S = in.getDimSize(1);
    int64_t H3 = w.getDimSize(1), n = op.getNumHeads();
    // Q, K and V widths: equal thirds unless qkv_hidden_sizes says.
    SmallVector<int64_t> widths(3, H3 / 3);
    if (!op.getQkvHiddenSizes().empty())
      widths.assign(op.getQkvHiddenSizes().begin(),
                    op.getQkvHiddenSizes().end());
    if (op.getPast() && widths[1] != widths[2])
      return rewriter.notifyMatchFailure(op, "past with K and V of different "
                                             "widths");
    // K and V of different widths have no stacked cache (onnxruntime
    // allows them only without one).
    if (widths[1] != widths[2] && !op.getPresent().use_empty())
      return rewriter.notifyMatchFailure(
          op, "a present cache of K and V with different widths");
    // qkv[b, s, j] = sum_k x[b, s, k] * w[k, j] (+ bias[j])
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    auto qkvType = RankedTensorType::get({B, S, H3}, f32);
    // Batch and sequence may be known only at run time.
    SmallVector<Value> rows;
    for (int64_t i : {0, 1})
      if (in.isDynamicDim(i))
        rows.push_back(dimValue(rewriter, loc, op.getInput(), i));
    Value empty = emptyTensor(rewriter, loc, qkvType, rows);
    Value init = linalg::FillOp::create(rewriter, loc,
                                        scalarConst(rewriter, loc, f32, 0), empty)
                     .getResult(0);
    SmallVector<utils::IteratorType> it(3, utils::IteratorType::parallel);
    it.push_back(utils::IteratorType::reduction);
    Value qkv =
        linalg::GenericOp::create(
            rewriter, loc, qkvType, ValueRange{op.getInput(), op.getWeights()},
            init,
            ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx),
                                AffineMap::get(4, 0, {d(3), d(2)}, ctx),
                                AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)},
            it,
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value p = arith::MulFOp::create(nb, l, castScalar(nb, l, a[0], f32),
                                              castScalar(nb, l, a[1], f32));
              linalg::YieldOp::create(
                  nb, l, arith::AddFOp::create(nb, l, p, a[2]).getResult());
            })
            .getResult(0);
    SmallVector<Value> terms = {qkv};
    if (op.getBias())
      terms.push_back(op.getBias());
    qkv = elementwise(rewriter, loc, RankedTensorType::get({B, S, H3}, elt),
                      terms, [&](OpBuilder &nb, Location l, ValueRange a) {
                        Value v = a[0];
                        if (a.size() > 1)
                          v = arith::AddFOp::create(nb, l, v,
                                                    castScalar(nb, l, a[1], f32));
                        return castScalar(nb, l, v, elt);
                      });
    auto part = [&](int64_t i) {
      int64_t offset = 0;
      for (int64_t j = 0; j < i; ++j)
        offset += widths[j];
      SmallVector<OpFoldResult> sizes = {
          getAsOpFoldResult(dimValue(rewriter, loc, qkv, 0)),
          getAsOpFoldResult(dimValue(rewriter, loc, qkv, 1)),
          rewriter.getIndexAttr(widths[i])};
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, qkv,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                                 rewriter.getIndexAttr(0),
                                 rewriter.getIndexAttr(offset)},
          sizes, SmallVector<OpFoldResult>(3, rewriter.getIndexAttr(1)));
      return splitHeads(rewriter, loc, slice, n);
    };
    Value q = part(0), k = part(1), v = part(2);
    Value pk, pv;
    if (Value past = op.getPast()) {
      auto pt = typeOf(past);
      auto half = RankedTensorType::get(pt.getShape().drop_front(1),
                                        pt.getElementType());
      auto take = [&](int64_t i) {
        SmallVector<OpFoldResult> offsets(5, rewriter.getIndexAttr(0)),
            sizes = {rewriter.getIndexAttr(1)},
            strides(5, rewriter.getIndexAttr(1));
        offsets[0] = rewriter.getIndexAttr(i);
        for (int64_t d = 1; d < 5; ++d)
          sizes.push_back(getAsOpFoldResult(dimValue(rewriter, loc, past, d)));
        Value s = tensor::ExtractSliceOp::create(rewriter, loc, past, offsets,
                                                 sizes, strides);
        return reshapeTo(rewriter, loc, s, half);
      };
      pk = take(0);
      pv = take(1);
    }
    k = withPast(rewriter, loc, pk, k);
    v = withPast(rewriter, loc, pv, v);
    int64_t D = widths[0] / n;
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt((double)D);
    MaskSpec m;
    m.additive = op.getAttentionBias();
    if (Value mask = op.getMaskIndex()) {
      m.fill = op.getMaskFilterValue().convertToDouble();
      int64_t rank = typeOf(mask).getRank();
      if (rank == 1)
        m.keyPadding = keyRangeMask(rewriter, loc, mask, op.getInput(), k);
      else if (rank == 2)
        m.keyPadding = mask;
      else // [B, S, T] as [B, 1, S, T], broadcast over the heads
        m.fillMask = reshapeTo(
            rewriter, loc, mask,
            RankedTensorType::get({typeOf(mask).getDimSize(0), 1,
                                   typeOf(mask).getDimSize(1),
                                   typeOf(mask).getDimSize(2)},
                                  typeOf(mask).getElementType()));
    }
    m.causal = op.getUnidirectional();
    m.causalOffset = op.getPast() ? typeOf(op.getPast()).getDimSize(3) : 0;
    if (ShapedType::isDynamic(m.causalOffset))
      m.causalOffsetValue = dimValue(rewriter, loc, op.getPast(), 3);
    Value out = attend(rewriter, loc, q, k, v, scale, m, kernels).first;
    auto presentType = cast<RankedTensorType>(op.getPresent().getType());
    auto oneType = RankedTensorType::get(
        {1, B, n, typeOf(k).getDimSize(2), widths[1] / n},
        presentType.getElementType());
    // Without a stacked cache (K and V of different widths) the unused
    // present stays empty, sized like the keys.
    Value present;
    if (widths[1] == widths[2]) {
      present = tensor::ConcatOp::create(
          rewriter, loc, presentType, 0,
          ValueRange{reshapeTo(rewriter, loc, k, oneType),
                     reshapeTo(rewriter, loc, v, oneType)});
    } else {
      SmallVector<Value> sizes;
      for (auto [d, from] : {std::pair<int64_t, int64_t>{1, 0}, {3, 2}})
        if (presentType.isDynamicDim(d))
          sizes.push_back(dimValue(rewriter, loc, k, from));
      present = emptyTensor(rewriter, loc, presentType, sizes);
    }
    rewriter.replaceOp(op, {mergeHeads(rewriter, loc, out), present});
    return success();
  }
};

/// Rotary position embedding of `x` ([B, S, N*D] or [B, N, S, D]): the
/// first `rotDim` (0: 2 * cache width) values of each head rotate by the
/// angles in the caches, read at [position_ids[b, s], col] or, without
/// position ids, at [b, s, col]. `interleaved` pairs (x0, x1), (x2, x3)...
/// instead of the two halves.
Value rotary(OpBuilder &rewriter, Location loc, Value x, Value pos,
             Value cosC, Value sinC, bool interleaved, int64_t numHeads,
             int64_t rotDim) {
  auto t = typeOf(x);
  bool threeD = t.getRank() == 3;
  auto cacheType = typeOf(cosC);
  int64_t half = cacheType.getDimSize(cacheType.getRank() - 1);
  int64_t headDim = threeD ? (numHeads > 0 ? t.getDimSize(2) / numHeads
                                           : 2 * half)
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
  return parallelGeneric(
      rewriter, loc, t, ins, maps,
      [&](OpBuilder &b, Location l, ValueRange a) {
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i)
          idx.push_back(linalg::IndexOp::create(b, l, i));
        Value last = idx.back();
        auto cidx = [&](int64_t c) { return indexConst(b, l, c); };
        // Position within the head.
        Value j = threeD ? Value(arith::RemUIOp::create(b, l, last,
                                                        cidx(headDim)))
                         : last;
        Value headStart = arith::SubIOp::create(b, l, last, j);
        Value xv = tensor::ExtractOp::create(b, l, x, idx);
        Value inRot = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                            j, cidx(rot));
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
        if (pos)
          at = {arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]), col};
        else
          at = {idx[0], idx[seqDim], col};
        Value c = castScalar(b, l, tensor::ExtractOp::create(b, l, cosC, at),
                             f32);
        Value s = castScalar(b, l, tensor::ExtractOp::create(b, l, sinC, at),
                             f32);
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

/// True when rotary() can lower `x` with caches `cosC`: the head width and
/// the cache width are known when compiling (batch and sequence may not be).
static bool rotaryWidthsStatic(Value x, Value cosC) {
  auto t = typeOf(x), c = typeOf(cosC);
  return !t.isDynamicDim(t.getRank() - 1) && !c.isDynamicDim(c.getRank() - 1);
}

/// com.microsoft RotaryEmbedding: position ids index [max_pos, rot/2]
/// caches.
struct MsRotaryLowering : public OpRewritePattern<MsRotaryEmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
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
    rewriter.replaceOp(op, rotary(rewriter, loc, x, pos, op.getCosCache(),
                                  op.getSinCache(), op.getInterleaved(),
                                  op.getNumHeads(), op.getRotaryEmbeddingDim()));
    return success();
  }
};

/// ONNX RotaryEmbedding-23: caches indexed by position_ids, or [B, S, rot/2]
/// without them.
struct RotaryLowering : public OpRewritePattern<RotaryEmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RotaryEmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    if (!rotaryWidthsStatic(op.getInput(), op.getCosCache()))
      return rewriter.notifyMatchFailure(op, "dynamic head width");
    rewriter.replaceOp(
        op, rotary(rewriter, op.getLoc(), op.getInput(), op.getPositionIds(),
                   op.getCosCache(), op.getSinCache(), op.getInterleaved(),
                   op.getNumHeads(), op.getRotaryEmbeddingDim()));
    return success();
  }
};

/// com.microsoft GroupQueryAttention, with onnxruntime's semantics: batch b
/// has seqlens_k[b] + 1 valid positions, its new tokens come after
/// past_b = seqlens_k[b] + 1 - S cached ones (0 on the first prompt, when S
/// equals total_sequence_length), are rotated at those positions, and are
/// written into the present cache there; query s sees keys t <= past_b + s
/// (and, with local_window_size w, t > past_b + s - w).
struct GroupQueryAttentionLowering
    : public AttentionPattern<GroupQueryAttentionOp> {
  using AttentionPattern::AttentionPattern;
  LogicalResult matchAndRewrite(GroupQueryAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto qt = typeOf(op.getQuery());
    Type elt = qt.getElementType(), i64 = rewriter.getI64Type();
    int64_t B = qt.getDimSize(0), S = qt.getDimSize(1);
    int64_t n = op.getNumHeads(), kvn = op.getKvNumHeads();
    auto presentType = cast<RankedTensorType>(op.getPresentKey().getType());
    int64_t T = presentType.getDimSize(2), H = presentType.getDimSize(3);
    if (ShapedType::isDynamic(H) || qt.isDynamicDim(2))
      return rewriter.notifyMatchFailure(op, "dynamic head width");
    // Batch, sequence, cache lengths and total_sequence_length may be known
    // only at run time: their sizes as index values.
    Value batchSize = dimValue(rewriter, loc, op.getQuery(), 0);
    Value seqSize = dimValue(rewriter, loc, op.getQuery(), 1);
    Value total = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(),
        tensor::ExtractOp::create(
            rewriter, loc, op.getTotalSequenceLength(),
            SmallVector<Value>(typeOf(op.getTotalSequenceLength()).getRank(),
                               indexConst(rewriter, loc, 0))));
    // The present cache holds max(past, total) positions (onnxruntime).
    Value presentLen = indexConst(rewriter, loc, T);
    if (ShapedType::isDynamic(T)) {
      presentLen = total;
      if (Value cache = op.getPastKey())
        presentLen = arith::MaxSIOp::create(rewriter, loc, presentLen,
                                            dimValue(rewriter, loc, cache, 2));
    }
    // The first prompt fills an empty cache: S == total_sequence_length.
    Value firstPrompt = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, seqSize, total);
    Value seqLen64 = arith::IndexCastOp::create(rewriter, loc, i64, seqSize);
    auto sizesOf = [&](RankedTensorType type, ArrayRef<Value> dims) {
      SmallVector<Value> sizes;
      for (auto [i, dim] : llvm::enumerate(dims))
        if (type.isDynamicDim(i))
          sizes.push_back(dim);
      return sizes;
    };

    // Q, K, V as [B, heads, S, H]; a packed query holds all three.
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    if (!k) {
      auto part = [&](int64_t offset, int64_t width) -> Value {
        auto t = RankedTensorType::get({B, S, width}, elt);
        return tensor::ExtractSliceOp::create(
            rewriter, loc, t, op.getQuery(),
            ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                                   rewriter.getIndexAttr(0),
                                   rewriter.getIndexAttr(offset)},
            ArrayRef<OpFoldResult>{getAsOpFoldResult(batchSize),
                                   getAsOpFoldResult(seqSize),
                                   rewriter.getIndexAttr(width)},
            SmallVector<OpFoldResult>(3, rewriter.getIndexAttr(1)));
      };
      q = part(0, n * H);
      k = part(n * H, kvn * H);
      v = part((n + kvn) * H, kvn * H);
    }
    q = splitHeads(rewriter, loc, q, n);
    k = splitHeads(rewriter, loc, k, kvn);
    v = splitHeads(rewriter, loc, v, kvn);

    // past_b and the last valid position seqlens_k[b], as i64 [B].
    auto batchType = RankedTensorType::get({B}, i64);
    Value seqlens = reshapeTo(
        rewriter, loc, op.getSeqlensK(),
        RankedTensorType::get({B}, typeOf(op.getSeqlensK()).getElementType()));
    Value last = elementwise(rewriter, loc, batchType, seqlens,
                             [&](OpBuilder &b, Location l, ValueRange a) {
                               return castScalar(b, l, a[0], i64);
                             });
    Value past = elementwise(
        rewriter, loc, batchType, last,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value cached = arith::SubIOp::create(
              b, l, arith::AddIOp::create(b, l, a[0], scalarConst(b, l, i64, 1)),
              seqLen64);
          return arith::SelectOp::create(b, l, firstPrompt,
                                         scalarConst(b, l, i64, 0), cached);
        });
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };

    if (op.getDoRotary()) {
      Value pos = op.getPositionIds();
      auto posType = RankedTensorType::get({B, S}, i64);
      if (!pos)
        pos = parallelGeneric(
            rewriter, loc, posType, past, {AffineMap::get(2, 0, {d(0)}, ctx)},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              Value s = arith::IndexCastOp::create(
                  b, l, i64, linalg::IndexOp::create(b, l, 1));
              return arith::AddIOp::create(b, l, a[0], s);
            },
            sizesOf(posType, {batchSize, seqSize}));
      q = rotary(rewriter, loc, q, pos, op.getCosCache(), op.getSinCache(),
                 op.getRotaryInterleaved(), n, 0);
      k = rotary(rewriter, loc, k, pos, op.getCosCache(), op.getSinCache(),
                 op.getRotaryInterleaved(), kvn, 0);
    }

    // present[b, h, t] = past[b, h, t] for t < past_b, the new token
    // t - past_b after that, 0 beyond the last valid position.
    auto present = [&](Value cache, Value now) {
      auto type = RankedTensorType::get({B, kvn, T, H}, elt);
      Value P = cache ? dimValue(rewriter, loc, cache, 2) : Value();
      return parallelGeneric(
          rewriter, loc, type, past, {AffineMap::get(4, 0, {d(0)}, ctx)},
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            SmallVector<Value> idx;
            for (unsigned i = 0; i < 4; ++i)
              idx.push_back(linalg::IndexOp::create(b, l, i));
            Value start = arith::IndexCastOp::create(b, l, b.getIndexType(),
                                                     a[0]);
            Value rel = arith::SubIOp::create(b, l, idx[2], start);
            auto lt = [&](Value x, Value y) {
              return arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, x,
                                           y);
            };
            auto clamp = [&](Value x, Value size) -> Value {
              Value zero = indexConst(b, l, 0);
              Value hi = arith::SubIOp::create(b, l, size, indexConst(b, l, 1));
              return arith::MaxSIOp::create(
                  b, l, zero, arith::MinSIOp::create(b, l, x, hi));
            };
            Value isNew = arith::AndIOp::create(
                b, l, lt(rel, seqSize),
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, rel,
                                      indexConst(b, l, 0)));
            Value fresh = tensor::ExtractOp::create(
                b, l, now, ValueRange{idx[0], idx[1], clamp(rel, seqSize), idx[3]});
            Value result = arith::SelectOp::create(
                b, l, isNew, fresh, scalarConst(b, l, elt, 0));
            if (!cache || getConstantIntValue(P) == 0)
              return result;
            Value isOld = arith::AndIOp::create(b, l, lt(idx[2], start),
                                                lt(idx[2], P));
            auto readOld = [&](OpBuilder &rb, Location rl) -> Value {
              return tensor::ExtractOp::create(
                  rb, rl, cache,
                  ValueRange{idx[0], idx[1], clamp(idx[2], P), idx[3]});
            };
            if (getConstantIntValue(P))
              return arith::SelectOp::create(b, l, isOld, readOld(b, l),
                                             result);
            // A cache of run-time length may be empty: read it only where
            // it holds the position.
            return readWhere(b, l, isOld, readOld, result);
          },
          sizesOf(type, {batchSize, Value(), presentLen, Value()}));
    };
    Value pk = present(op.getPastKey(), k);
    Value pv = present(op.getPastValue(), v);
    auto keepType = RankedTensorType::get({B, 1, S, T}, rewriter.getI1Type());

    // Which keys each query sees: [B, 1, S, T].
    int64_t window = op.getLocalWindowSize();
    Value keep = parallelGeneric(
        rewriter, loc, keepType, ValueRange{past, last},
        {AffineMap::get(4, 0, {d(0)}, ctx), AffineMap::get(4, 0, {d(0)}, ctx)},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          auto idx = [&](unsigned i) -> Value {
            return arith::IndexCastOp::create(
                b, l, i64, linalg::IndexOp::create(b, l, i));
          };
          Value s = idx(2), t = idx(3);
          Value self = arith::AddIOp::create(b, l, a[0], s);
          Value visible = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, t, self),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, t, a[1]));
          if (window > 0) {
            Value from = arith::SubIOp::create(
                b, l, self, scalarConst(b, l, i64, window));
            visible = arith::AndIOp::create(
                b, l, visible,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, t,
                                      from));
          }
          return visible;
        },
        sizesOf(keepType, {batchSize, Value(), seqSize, presentLen}));

    MaskSpec m;
    m.keep = keep;
    m.additive = op.getAttentionBias();
    m.softcap = op.getSoftcap().convertToDouble();
    // smooth_softmax is a sink of 0 for every head.
    auto sinkType = RankedTensorType::get({n}, rewriter.getF32Type());
    if (Value sink = op.getHeadSink())
      m.sink = elementwise(rewriter, loc, sinkType, sink,
                           [](OpBuilder &b, Location l, ValueRange a) {
                             return castScalar(b, l, a[0], b.getF32Type());
                           });
    else if (op.getSmoothSoftmax())
      m.sink = arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(sinkType, rewriter.getF32FloatAttr(0.0f)));
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt((double)H);
    Value out = attend(rewriter, loc, q, pk, pv, scale, m, kernels).first;
    rewriter.replaceOp(op, {mergeHeads(rewriter, loc, out), pk, pv});
    return success();
  }
};

} // namespace

void populateAttentionToLinalgPatterns(RewritePatternSet &patterns,
                                       AttentionKernels kernels) {
  patterns.add<AttentionLowering, MultiHeadAttentionLowering,
               MsAttentionLowering, GroupQueryAttentionLowering>(
      patterns.getContext(), kernels);
  patterns.add<MsRotaryLowering, RotaryLowering>(patterns.getContext());
}

} // namespace mp
