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
///     over its keys, adding or applying the masks as it reads them, and
///     writes the partials. With a past, a key t < P is read from the past
///     and the others from k/v, and the first row tile's warp stores each
///     row it reads into the joined caches: the past is read once, not
///     copied and then read again;
///  2. one warp per (batch, query head, position) combines the splits.
/// Splits: ceil(keys / 64), at most enough for two blocks per SM of an
/// H200 (132 SMs) and the compile-time cap the workspace is sized for.
/// The output is null when the shapes or masks do not fit the kernels
/// (dynamic shapes, head sizes over 256, a mask that does not broadcast,
/// a past together with a bound on the keys).
FlashResult buildFlashAttentionGpu(mlir::OpBuilder &b, mlir::Location loc,
                                   const FlashOperands &operands);

} // namespace mp

#endif // MP_CODEGEN_CUDA_FLASHATTENTION_H
