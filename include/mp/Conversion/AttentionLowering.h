//===- AttentionLowering.h - how mp.attention lowers ------------*- C++ -*-===//
//
// The choice between attention algorithms, and the hook through which a
// target supplies its own attention kernels to mp-lower-to-linalg without
// the conversion depending on that target.
//
//===----------------------------------------------------------------------===//

#ifndef MP_CONVERSION_ATTENTIONLOWERING_H
#define MP_CONVERSION_ATTENTIONLOWERING_H

#include "mlir/IR/Builders.h"

#include <functional>

namespace mp {

/// How attention ops lower (mp-lower-to-linalg's `attention` option).
enum class AttentionLowering {
  /// Attention over 512 keys or more becomes an online-softmax loop over
  /// key blocks (the CPU's form); shorter caches materialize the scores.
  Streaming,
  /// The full score matrix, whose pieces map to generic GPU kernels.
  Materialized,
  /// The target's attention kernels (a GpuAttentionBuilder) where the masks
  /// allow, else materialized (the CUDA target).
  GpuFlash,
};

/// What target attention kernels mask besides the keys past the valid
/// length.
struct FlashMasks {
  /// Query s sees keys t <= s + offset (offsetValue, an index, if set).
  bool causal = false;
  int64_t causalOffset = 0;
  mlir::Value causalOffsetValue;
  /// i64 [B] tensor: keys t >= kvLength[b] are masked.
  mlir::Value kvLength;
  /// Float (added to the scores) and bool (false masks) tensors of rank at
  /// most 4 that broadcast to the scores [B, Hq, S, T] (sizes 1 or equal,
  /// aligned to the right), as exporters build them from attention_mask.
  mlir::Value additive;
  mlir::Value keep;
  double softcap = 0;
};

/// What the target attention kernels compute.
struct FlashOperands {
  /// q [B, Hq, S, D]; k [B, Hkv, T, D] and v [B, Hkv, T, Dv] are all the
  /// keys, or, with `pastKey`/`pastValue` [B, Hkv, P, D|Dv], the T - P new
  /// ones that follow the past's.
  mlir::Value q, k, v;
  /// The past may be stored in another float type (an fp32 model's cache
  /// around f16 attention): its values are rounded to q's type as read.
  mlir::Value pastKey, pastValue;
  /// With a past: the element types of the joined caches (null: q's), each
  /// value stored as q's type rounds it, then converted.
  mlir::Type presentKeyType, presentValueType;
  double scale = 1;
  FlashMasks masks;
  /// The keys to read (index, may be null: T), bounded on the host (a KV
  /// cache's fill level plus the new positions). Not with a past.
  mlir::Value keyLimit;
};

/// The target attention kernels' results.
struct FlashResult {
  /// [B, Hq, S, Dv] in q's element type; null when the shapes do not fit
  /// the kernels (the scores are then materialized).
  mlir::Value output;
  /// With a past: the joined caches [B, Hkv, T, D|Dv], which the kernels
  /// write as they read each key, so that the past is read once.
  mlir::Value presentKey, presentValue;
};

/// Builds scaled dot-product attention as target kernels.
/// The CUDA target's is mp::buildFlashAttentionGpu.
using GpuAttentionBuilder = std::function<FlashResult(
    mlir::OpBuilder &b, mlir::Location loc, const FlashOperands &operands)>;

} // namespace mp

#endif // MP_CONVERSION_ATTENTIONLOWERING_H
