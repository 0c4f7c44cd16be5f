//===- Attention.h - pieces shared by the attention lowerings -*- C++ -*-===//
//
// Head and cache layout, the attention algorithm (materialized scores or
// streamed keys, Attend.cpp) and rotary embeddings, shared by the lowerings
// of ONNX Attention (AttentionToLinalg.cpp), the com.microsoft attention ops
// (ContribAttentionToLinalg.cpp, GroupQueryAttentionToLinalg.cpp) and the
// rotary ops (RotaryToLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_CONVERSION_MPTOLINALG_ATTENTION_H
#define MP_LIB_CONVERSION_MPTOLINALG_ATTENTION_H

#include "mp/Conversion/AttentionLowering.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mp::lowering {

using mlir::Location;
using mlir::OpBuilder;
using mlir::RankedTensorType;
using mlir::Value;

/// `x` [a, b, c, d] transposed to [a, c, b, d] (batch and sequence dims
/// may be dynamic).
Value swapMiddleDims(OpBuilder &b, Location loc, Value x);

/// [B, S, H*D] -> [B, H, S, D].
Value splitHeads(OpBuilder &b, Location loc, Value x, int64_t heads);

/// [B, H, S, D] -> [B, S, H*D].
Value mergeHeads(OpBuilder &b, Location loc, Value x);

/// Concatenates past and new along the sequence axis (2) when there is a
/// past.
Value withPast(OpBuilder &b, Location loc, Value past, Value now);

/// The fill level of a fixed-capacity cache `cacheType` [B, H, N, D] that
/// takes `fresh` new positions: `length` (i64 scalar) as an index, clamped
/// to [0, N - fresh] so that the write stays inside the cache even when the
/// caller's check was skipped.
Value cacheFillLevel(OpBuilder &b, Location loc, Value length,
                     RankedTensorType cacheType, int64_t fresh);

/// `cache` [B, H, N, D] with `fresh` [B, H, L, D] written at position `at`
/// along the sequence axis: an insert_slice, which bufferizes in place.
Value writeAt(OpBuilder &b, Location loc, Value cache, Value fresh, Value at);

/// An i64 [B] tensor holding `value` (an index) in every entry.
Value batchFilled(OpBuilder &b, Location loc, int64_t batch, Value value);

/// A mask shorter than the keys (last dim) extended to the key count of
/// `keys` [B, H, T, D] with -inf (float) or false (bool), as ONNX
/// Attention's reference pads it. A last dim of 1 broadcasts instead; when
/// it is known only at run time, so is the choice.
Value padKeys(OpBuilder &b, Location loc, Value mask, Value keys, bool isBool);

/// What masks a score [b, h, s, t] besides the causal rule.
struct MaskSpec {
  Value additive;   // float, broadcast to [B, H, S, T]
  Value keep;       // bool, broadcast to [B, H, S, T]: false masks
  Value keyPadding; // integer [B, T]: <= 0 adds `fill`
  Value fillMask;   // integer, broadcast to [B, H, S, T]: <= 0 adds `fill`
  Value kvLength;   // integer [B]: keys t >= kvLength[b] are masked
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

/// How attention lowers for the target: the algorithm, and the kernels of
/// AttentionLowering::GpuFlash.
struct AttentionTarget {
  AttentionLowering mode = AttentionLowering::Streaming;
  GpuAttentionBuilder gpuKernels;
  /// Check lengths and positions read from data at run time (off for the
  /// GPU, whose kernels keep them in device memory).
  bool indexChecks = false;
};

/// Scaled dot-product attention on 4-D q [B,Hq,S,D], k [B,Hkv,T,D],
/// v [B,Hkv,T,Dv] -> [B,Hq,S,Dv] of q's element type, with f32 scores.
/// Also returns the scores at the stage `m.qkOutputMode` names. The order is
/// ONNX Attention's reference: scale, soft cap, masks, softmax.
std::pair<Value, Value> attend(OpBuilder &b, Location loc, Value q, Value k,
                               Value v, double scale, const MaskSpec &m,
                               const AttentionTarget &target,
                               bool needScores = false,
                               Value keyLimit = Value());

/// attend() on the target's attention kernels (AttentionLowering::GpuFlash,
/// static shapes, masks they know, no scores wanted), or a null output.
/// With `pastKey`/`pastValue` (of any float type), k and v are the new keys
/// that follow the past's, and the kernels also return the joined caches
/// (present, of element types `presentKeyType`/`presentValueType`, null:
/// q's), which they write as they read the past.
FlashResult attendFlash(OpBuilder &b, Location loc, Value q, Value k, Value v,
                        Value pastKey, Value pastValue,
                        mlir::Type presentKeyType, mlir::Type presentValueType,
                        double scale, const MaskSpec &m,
                        const AttentionTarget &target, bool needScores,
                        Value keyLimit = Value());

/// Rotary position embedding of `x` ([B, S, N*D] or [B, N, S, D]): the
/// first `rotDim` (0: 2 * cache width) values of each head rotate by the
/// angles in the caches, read at [position_ids[b, s], col] or, without
/// position ids, at [b, s, col]. `interleaved` pairs (x0, x1), (x2, x3)...
/// instead of the two halves.
Value rotary(OpBuilder &rewriter, Location loc, Value x, Value pos, Value cosC,
             Value sinC, bool interleaved, int64_t numHeads, int64_t rotDim);

/// True when rotary() can lower `x` with caches `cosC`: the head width and
/// the cache width are known when compiling (batch and sequence may not be).
bool rotaryWidthsStatic(Value x, Value cosC);

/// An attention lowering, told how the target computes attention.
template <typename OpTy>
struct AttentionPattern : public mlir::OpRewritePattern<OpTy> {
  AttentionPattern(mlir::MLIRContext *ctx, AttentionTarget target)
      : mlir::OpRewritePattern<OpTy>(ctx), target(std::move(target)) {}
  AttentionTarget target;
};

} // namespace mp::lowering

#endif // MP_LIB_CONVERSION_MPTOLINALG_ATTENTION_H
