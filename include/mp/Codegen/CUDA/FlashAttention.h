//===- FlashAttention.h - split-KV flash attention kernels ---*- C++ -*-===//
//
// The CUDA target's attention kernels, built while lowering mp.attention:
// the GpuAttentionBuilder the CUDA pipeline gives mp-lower-to-linalg.
//
//===----------------------------------------------------------------------===//

#ifndef MP_CODEGEN_CUDA_FLASHATTENTION_H
#define MP_CODEGEN_CUDA_FLASHATTENTION_H

#include "mp/Conversion/AttentionLowering.h"

namespace mp {

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
mlir::Value buildFlashAttentionGpu(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::Value q, mlir::Value k, mlir::Value v,
                                   double scale, const FlashMasks &masks,
                                   mlir::Value keyLimit);

} // namespace mp

#endif // MP_CODEGEN_CUDA_FLASHATTENTION_H
