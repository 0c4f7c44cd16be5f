//===- GroupQueryAttentionToLinalg.cpp - GroupQueryAttention to linalg ----===//
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

/// com.microsoft GroupQueryAttention, with onnxruntime's semantics: batch b
/// has seqlens_k[b] + 1 valid positions, its new tokens come after
/// past_b = seqlens_k[b] + 1 - S cached ones (0 on the first prompt, when S
/// equals total_sequence_length), are rotated at those positions, and are
/// written into the present cache there; query s sees keys t <= past_b + s
/// (and, with local_window_size w, t > past_b + s - w).
///
/// With index checks (the CPU) the run stops, as onnxruntime's kernel does,
/// unless total_sequence_length >= S, every seqlens_k[b] lies in [0, T)
/// (T the present cache's length) and, after a past cache, is at least
/// S - 1, and every rotary position lies in [0, max_pos) (the rows of the
/// cos and sin caches). Without them (the GPU) reads stay inside the
/// buffers anyway: the present cache reads clamped positions and the
/// rotation clamped cache rows.
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
    if (target.indexChecks) {
      checkAtRunTime(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, total,
                                seqSize),
          runTimeCheckMessage(op, "total_sequence_length is out of range [" +
                                      sizeOrSymbol(S, "S") +
                                      ", inf): it counts the past and the " +
                                      sizeOrSymbol(S, "S") + " new positions"));
      std::string cache =
          sizeOrSymbol(T, "T = max(past length, total_sequence_length)");
      checkValuesInRange(
          rewriter, loc, op.getSeqlensK(), indexConst(rewriter, loc, 0),
          presentLen,
          runTimeCheckMessage(op, "seqlens_k is out of range [0, " +
                                      sizeOrSymbol(T, "T") +
                                      "): seqlens_k[b] is batch b's last "
                                      "valid position in the present KV "
                                      "cache of " +
                                      cache + " positions"));
      // After a past cache the S new positions end at seqlens_k[b].
      if (S != 1) {
        Value first = arith::SelectOp::create(
            rewriter, loc, firstPrompt, indexConst(rewriter, loc, 0),
            arith::SubIOp::create(rewriter, loc, seqSize,
                                  indexConst(rewriter, loc, 1)));
        std::string lo =
            ShapedType::isDynamic(S) ? "S - 1" : std::to_string(S - 1);
        checkValuesInRange(
            rewriter, loc, op.getSeqlensK(), first, presentLen,
            runTimeCheckMessage(
                op, "seqlens_k is out of range [" + lo + ", " +
                        sizeOrSymbol(T, "T") +
                        ") after a past cache: seqlens_k[b] + 1 counts "
                        "batch b's past and " +
                        sizeOrSymbol(S, "S") + " new positions"));
      }
    } else if (ShapedType::isDynamic(T)) {
      // Unchecked, a total_sequence_length below 0 must still size an
      // empty cache, not a negative one.
      presentLen = arith::MaxSIOp::create(rewriter, loc, presentLen,
                                          indexConst(rewriter, loc, 0));
    }
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
              b, l,
              arith::AddIOp::create(b, l, a[0], scalarConst(b, l, i64, 1)),
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
      if (target.indexChecks) {
        int64_t rows = typeOf(op.getCosCache()).getDimSize(0);
        std::string r = sizeOrSymbol(rows, "max_pos");
        checkIndicesInRange(
            rewriter, loc, pos, dimValue(rewriter, loc, op.getCosCache(), 0),
            runTimeCheckMessage(
                op, std::string(op.getPositionIds()
                                    ? "a position id"
                                    : "a rotary position (the past length "
                                      "from seqlens_k plus the token's "
                                      "index)") +
                        " is out of range [0, " + r +
                        "): the cos and sin caches have " + r + " rows"),
            /*allowNegative=*/false);
      }
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
            Value start =
                arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
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
                b, l, now,
                ValueRange{idx[0], idx[1], clamp(rel, seqSize), idx[3]});
            Value result = arith::SelectOp::create(b, l, isNew, fresh,
                                                   scalarConst(b, l, elt, 0));
            if (!cache || getConstantIntValue(P) == 0)
              return result;
            Value isOld =
                arith::AndIOp::create(b, l, lt(idx[2], start), lt(idx[2], P));
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
            return arith::IndexCastOp::create(b, l, i64,
                                              linalg::IndexOp::create(b, l, i));
          };
          Value s = idx(2), t = idx(3);
          Value self = arith::AddIOp::create(b, l, a[0], s);
          Value visible = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, t, self),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, t, a[1]));
          if (window > 0) {
            Value from = arith::SubIOp::create(b, l, self,
                                               scalarConst(b, l, i64, window));
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
    Value out = attend(rewriter, loc, q, pk, pv, scale, m, target).first;
    rewriter.replaceOp(op, {mergeHeads(rewriter, loc, out), pk, pv});
    return success();
  }
};

} // namespace

void mp::populateGroupQueryAttentionToLinalgPatterns(
    RewritePatternSet &patterns, AttentionLowering attention,
    GpuAttentionBuilder gpuAttention, bool indexChecks) {
  patterns.add<GroupQueryAttentionLowering>(
      patterns.getContext(),
      AttentionTarget{attention, std::move(gpuAttention), indexChecks});
}
