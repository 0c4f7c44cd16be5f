//===- CausalMask.h - recognize constant causal attention masks -*- C++ -*-===//
//
// Exporters build causal masks as constants: a triangle sliced to the
// current lengths (HF's causal_mask[:, :, :S, :T]), Trilu of a constant
// filled with -inf, or a bool tril. mp-fuse-attention turns those into the
// is_causal flag, so kernels skip the masked keys instead of reading a mask.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_TRANSFORMS_CAUSALMASK_H
#define MP_LIB_TRANSFORMS_CAUSALMASK_H

#include "mlir/IR/Value.h"

namespace mp {

/// How a mask enters the scores.
enum class MaskKind {
  /// bool, true = attend (Where(keep, scores, -inf)).
  Keep,
  /// bool, true = masked (Where(drop, -inf, scores)).
  Drop,
  /// float, added to the scores.
  Additive,
};

/// True when `mask` evaluates, at compile time, to exactly the causal rule
/// on [queries, keys] scores, query i seeing keys j <= i + `offset`, in
/// every leading slice (mp.attention's is_causal without a past has offset
/// 0): an additive mask must hold 0 and -inf (or a fill <= -1e30, such as
/// the float minimum) only.
bool isCausalMask(mlir::Value mask, MaskKind kind, int64_t queries,
                  int64_t keys, int64_t offset);

} // namespace mp

#endif // MP_LIB_TRANSFORMS_CAUSALMASK_H
