//===- FlashAttentionGpu.h - split-KV flash attention kernels -*- C++ -*-===//
//
// The CUDA target's attention kernels, built while lowering mp.attention.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_CONVERSION_MPTOLINALG_FLASHATTENTIONGPU_H
#define MP_LIB_CONVERSION_MPTOLINALG_FLASHATTENTIONGPU_H

#include "mlir/IR/Builders.h"

namespace mp {

/// What the kernels mask besides the keys past the valid length.
struct FlashMasks {
  /// Query s sees keys t <= s + offset (offsetValue, an index, if set).
  bool causal = false;
  int64_t causalOffset = 0;
  mlir::Value causalOffsetValue;
  /// i64 [B] tensor: keys t >= kvLength[b] are masked.
  mlir::Value kvLength;
  double softcap = 0;
};

/// Scaled dot-product attention of q [B, Hq, S, D] over k [B, Hkv, T, D],
/// v [B, Hkv, T, Dv] (f16, bf16 or f32, one type) as two GPU kernels that
/// never materialize the scores (flash attention with split KV):
///  1. one warp per (batch, KV head, key split, tile of query rows): the
///     rows are the g = Hq / Hkv query heads of the KV head times the S
///     positions, so each K/V row is read once for all of them; the warp
///     keeps an online softmax (running max, sum and f32 output per row)
///     over its keys and writes the partials;
///  2. one warp per (batch, query head, position) combines the splits.
/// Splits: ceil(keys / 64), at most enough for two blocks per SM of an
/// H200 (132 SMs) and the compile-time cap the workspace is sized for.
/// `keyLimit` (index, may be null: T) bounds the keys on the host (a KV
/// cache's fill level plus the new positions). Returns the output [B, Hq,
/// S, Dv] in q's element type, or null when the shapes do not fit the
/// kernels (dynamic, or head sizes over 256).
mlir::Value flashAttentionGpu(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value q, mlir::Value k, mlir::Value v,
                              double scale, const FlashMasks &masks,
                              mlir::Value keyLimit);

} // namespace mp

#endif // MP_LIB_CONVERSION_MPTOLINALG_FLASHATTENTIONGPU_H
