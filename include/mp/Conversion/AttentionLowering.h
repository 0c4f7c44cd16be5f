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
  double softcap = 0;
};

/// Builds scaled dot-product attention of q [B, Hq, S, D] over k [B, Hkv,
/// T, D], v [B, Hkv, T, Dv] as target kernels, given the scale, the masks
/// and `keyLimit` (index, may be null: T), the keys to read. Returns the
/// output [B, Hq, S, Dv] in q's element type, or null when the shapes do
/// not fit the kernels (the scores are then materialized).
/// The CUDA target's is mp::buildFlashAttentionGpu.
using GpuAttentionBuilder = std::function<mlir::Value(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value q, mlir::Value k,
    mlir::Value v, double scale, const FlashMasks &masks,
    mlir::Value keyLimit)>;

} // namespace mp

#endif // MP_CONVERSION_ATTENTIONLOWERING_H
