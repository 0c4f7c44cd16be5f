//===- AttentionToLinalg.cpp - ONNX Attention to linalg -------------------===//
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

/// True when `op` is an elementwise generic whose body only converts its
/// one input between float types (what mp.cast lowers to).
bool isFloatCastGeneric(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  Operation &convert = body.front();
  return isa<arith::ExtFOp, arith::TruncFOp>(convert) &&
         convert.getOperand(0) == body.getArgument(0) &&
         body.getTerminator()->getOperand(0) == convert.getResult(0);
}

bool isFloatCast(Operation *op) {
  if (auto cast = dyn_cast_or_null<CastOp>(op))
    return isa<FloatType>(getElementTypeOrSelf(cast.getInput())) &&
           isa<FloatType>(getElementTypeOrSelf(cast.getOutput()));
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && isFloatCastGeneric(generic);
}

/// The tensor that `v` converts to its float type (an mp.cast, lowered or
/// not), or `v`.
Value beforeFloatCast(Value v) {
  Operation *op = v ? v.getDefiningOp() : nullptr;
  return isFloatCast(op) ? op->getOperand(0) : v;
}

/// The float conversion that is the only use of `v`, or null.
Operation *soleFloatCastUser(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  return isFloatCast(user) && user->getOperand(0) == v ? user : nullptr;
}

/// ONNX Attention-23/24.
struct OnnxAttentionLowering : public AttentionPattern<AttentionOp> {
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
          rewriter, loc, fill,
          indexConst(rewriter, loc, typeOf(k).getDimSize(2)));
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
    if (m.kvLength && !fill && target.indexChecks) {
      // Each batch's count of valid keys, as onnxruntime checks it: one
      // outside [0, T] would mask every key or none beyond the cache.
      int64_t T = typeOf(pk).getDimSize(2);
      std::string range = ShapedType::isDynamic(T)
                              ? "[0, T + 1)"
                              : "[0, " + std::to_string(T + 1) + ")";
      std::string keys = sizeOrSymbol(T, "T (known at run time)");
      checkValuesInRange(
          rewriter, loc, m.kvLength, indexConst(rewriter, loc, 0),
          arith::AddIOp::create(rewriter, loc, dimValue(rewriter, loc, pk, 2),
                                indexConst(rewriter, loc, 1)),
          runTimeCheckMessage(op, "nonpad_kv_seqlen is out of range " + range +
                                      ": it counts each batch's valid keys "
                                      "among the " +
                                      keys));
    }
    if (fill) {
      m.causalOffsetValue = fill;
      m.kvLength =
          batchFilled(rewriter, loc, typeOf(q).getDimSize(0), validKeys);
    }
    m.qkOutputMode = op.getQkMatmulOutputMode();
    bool needScores = !op.getQkMatmulOutput().use_empty();
    // Joining a past, the flash kernels write the joined caches as they
    // read the past (which the concatenations above then lose to dead-code
    // elimination): the past is read once. A cache kept in another float
    // type at the model's interface (an fp32 model's, around f16 attention)
    // is read and written in that type, through the casts around the op.
    FlashResult joined;
    Operation *keyCast = soleFloatCastUser(op.getPresentKey());
    Operation *valueCast = soleFloatCastUser(op.getPresentValue());
    if (op.getPastKey() && !fill && !m.kvLength)
      joined = attendFlash(
          rewriter, loc, q, k, v, beforeFloatCast(op.getPastKey()),
          beforeFloatCast(op.getPastValue()),
          keyCast ? getElementTypeOrSelf(keyCast->getResult(0)) : Type(),
          valueCast ? getElementTypeOrSelf(valueCast->getResult(0)) : Type(),
          scale, m, target, needScores);
    Value out, scores;
    if (joined.output) {
      out = joined.output;
      // The op's own present values are then unused (a placeholder).
      auto present = [&](Value joinedCache, Operation *cast, Value result) {
        if (!cast)
          return joinedCache;
        rewriter.replaceOp(cast, joinedCache);
        return Value(tensor::EmptyOp::create(rewriter, loc,
                                             typeOf(result).getShape(),
                                             typeOf(result).getElementType()));
      };
      pk = present(joined.presentKey, keyCast, op.getPresentKey());
      pv = present(joined.presentValue, valueCast, op.getPresentValue());
    } else {
      std::tie(out, scores) = attend(rewriter, loc, q, pk, pv, scale, m, target,
                                     needScores, validKeys);
    }
    if (threeD)
      out = mergeHeads(rewriter, loc, out);
    // Without a consumer the scores may never have existed (streaming).
    Value qk =
        needScores
            ? elementwise(
                  rewriter, loc,
                  cast<RankedTensorType>(op.getQkMatmulOutput().getType()),
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

} // namespace

void mp::populateAttentionToLinalgPatterns(RewritePatternSet &patterns,
                                           AttentionLowering attention,
                                           GpuAttentionBuilder gpuAttention,
                                           bool indexChecks) {
  patterns.add<OnnxAttentionLowering>(
      patterns.getContext(),
      AttentionTarget{attention, std::move(gpuAttention), indexChecks});
}
