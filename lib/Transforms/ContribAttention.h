//===- ContribAttention.h - contrib attention as mp.attention --*- C++ -*-===//
//
// Models optimized by onnxruntime's transformer tools (and onnxruntime-genai's
// builder) arrive with attention already fused into com.microsoft ops.
// mp-fuse-attention rewrites those whose semantics mp.attention holds, so
// that they get the same kernels and in-place caches as fused exports.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_TRANSFORMS_CONTRIBATTENTION_H
#define MP_LIB_TRANSFORMS_CONTRIBATTENTION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/JSON.h"

namespace mp {

/// Rewrites each com.microsoft MultiHeadAttention and Attention of `module`
/// into mp.attention where it fits: 3-D Q/K/V (Attention: its packed
/// projection as MatMul, Add and Slice), a past and present of [B, N, P, H]
/// (Attention's [2, B, N, P, H] split and stacked around the op), an
/// additive attention_bias, a 2-D key padding mask (mask_filter_value where
/// it is <= 0) and `unidirectional` as is_causal. Appends to `fused` one
/// entry per rewritten op (node, pattern) and to `kept` one per op left for
/// its own lowering, with the reason (GroupQueryAttention always: its
/// seqlens_k, total_sequence_length and rotary inputs have no mp.attention
/// form).
void rewriteContribAttention(mlir::ModuleOp module,
                             mlir::RewriterBase &rewriter,
                             llvm::json::Array &fused,
                             llvm::json::Array &kept);

} // namespace mp

#endif // MP_LIB_TRANSFORMS_CONTRIBATTENTION_H
