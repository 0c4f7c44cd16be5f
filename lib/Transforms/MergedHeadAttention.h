//===- MergedHeadAttention.h - attention over heads merged in the batch -*-===//
//
// transformers' BART-family attention (SpeechT5, Marian, M2M100, ...) folds
// the heads into the batch: Q, K and V are reshaped from [B, H, S, D] to
// [B*H, S, D], the scores [B*H, S, T] are reshaped to [B, H, S, T] only to
// add the mask and back, and the output is reshaped to [B, H, S, D] again.
// mp-fuse-attention lifts such a chain to the 4-D form it matches.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_TRANSFORMS_MERGEDHEADATTENTION_H
#define MP_LIB_TRANSFORMS_MERGEDHEADATTENTION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mp {

/// Rewrites each softmax over 3-D scores whose Q, K and V are [B, H, S, D]
/// tensors with the first two dims merged (proven from the shapes), and
/// whose output is split back to [B, H, S, D], into the same arithmetic on
/// the 4-D tensors: Q.K^T, the scalar scale and the added mask as they
/// were, Softmax on the last axis, P.V. The old chain is left dead. Returns
/// how many were lifted.
unsigned liftMergedHeadAttention(mlir::ModuleOp module,
                                 mlir::RewriterBase &rewriter);

} // namespace mp

#endif // MP_LIB_TRANSFORMS_MERGEDHEADATTENTION_H
