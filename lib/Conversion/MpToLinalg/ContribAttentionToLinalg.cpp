//===- ContribAttentionToLinalg.cpp - com.microsoft attention ops to linalg
//---===//
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
    Value packedInput = qRank == 5                          ? query
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
        sizes.push_back(
            d == 3 ? OpFoldResult(rewriter.getIndexAttr(1))
                   : getAsOpFoldResult(dimValue(rewriter, loc, packed, d)));
      Value part = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get(shape, t.getElementType()),
          packed, offsets, sizes, strides);
      return reshapeTo(
          rewriter, loc, part,
          RankedTensorType::get({shape[0], shape[1], shape[2] * shape[4]},
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
        return elementwise(
            rewriter, loc, t, {x, part},
            [](OpBuilder &b, Location l, ValueRange a) {
              return arith::AddFOp::create(b, l, a[0], a[1]).getResult();
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
    Value out = attend(rewriter, loc, q, pk, pv, scale, m, target).first;
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
        Value t = arith::IndexCastOp::create(nb, l, i64,
                                             linalg::IndexOp::create(nb, l, 1));
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
    Value init = linalg::FillOp::create(
                     rewriter, loc, scalarConst(rewriter, loc, f32, 0), empty)
                     .getResult(0);
    SmallVector<utils::IteratorType> it(3, utils::IteratorType::parallel);
    it.push_back(utils::IteratorType::reduction);
    Value qkv =
        linalg::GenericOp::create(rewriter, loc, qkvType,
                                  ValueRange{op.getInput(), op.getWeights()},
                                  init,
                                  ArrayRef<AffineMap>{
                                      AffineMap::get(4, 0, {d(0), d(1), d(3)},
                                                     ctx),
                                      AffineMap::get(4, 0, {d(3), d(2)}, ctx),
                                      AffineMap::get(4, 0, {d(0), d(1), d(2)},
                                                     ctx)},
                                  it,
                                  [&](OpBuilder &nb, Location l, ValueRange a) {
                                    Value p = arith::MulFOp::create(
                                        nb, l, castScalar(nb, l, a[0], f32),
                                        castScalar(nb, l, a[1], f32));
                                    linalg::YieldOp::create(
                                        nb, l,
                                        arith::AddFOp::create(nb, l, p, a[2])
                                            .getResult());
                                  })
            .getResult(0);
    SmallVector<Value> terms = {qkv};
    if (op.getBias())
      terms.push_back(op.getBias());
    qkv = elementwise(rewriter, loc, RankedTensorType::get({B, S, H3}, elt),
                      terms, [&](OpBuilder &nb, Location l, ValueRange a) {
                        Value v = a[0];
                        if (a.size() > 1)
                          v = arith::AddFOp::create(
                              nb, l, v, castScalar(nb, l, a[1], f32));
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
        m.fillMask =
            reshapeTo(rewriter, loc, mask,
                      RankedTensorType::get({typeOf(mask).getDimSize(0), 1,
                                             typeOf(mask).getDimSize(1),
                                             typeOf(mask).getDimSize(2)},
                                            typeOf(mask).getElementType()));
    }
    m.causal = op.getUnidirectional();
    m.causalOffset = op.getPast() ? typeOf(op.getPast()).getDimSize(3) : 0;
    if (ShapedType::isDynamic(m.causalOffset))
      m.causalOffsetValue = dimValue(rewriter, loc, op.getPast(), 3);
    Value out = attend(rewriter, loc, q, k, v, scale, m, target).first;
    auto presentType = cast<RankedTensorType>(op.getPresent().getType());
    auto oneType =
        RankedTensorType::get({1, B, n, typeOf(k).getDimSize(2), widths[1] / n},
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

} // namespace

void mp::populateContribAttentionToLinalgPatterns(
    RewritePatternSet &patterns, AttentionLowering attention,
    GpuAttentionBuilder gpuAttention) {
  patterns.add<MultiHeadAttentionLowering, MsAttentionLowering>(
      patterns.getContext(),
      AttentionTarget{attention, std::move(gpuAttention)});
}
