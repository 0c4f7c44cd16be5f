//===- Passes.h - mp conversion passes --------------------------*- C++ -*-===//

#ifndef MP_CONVERSION_PASSES_H
#define MP_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mp {

#define GEN_PASS_DECL
#include "mp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mp/Conversion/Passes.h.inc"

/// Marks an entry argument the CUDA target keeps in host memory (a KV
/// cache's fill level): host code may load it, kernels get its value.
constexpr llvm::StringLiteral kHostResidentAttr = "mp.host_resident";

/// Patterns lowering mp ops with static shapes to linalg/tensor/arith/math.
/// With `streamLongCaches`, attention over 512 keys or more becomes an
/// online-softmax loop over key blocks (the CPU's form); without, it keeps
/// the full score matrix (the CUDA target's form, until its flash kernel).
void populateMpToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                bool streamLongCaches = true);

} // namespace mp

#endif // MP_CONVERSION_PASSES_H
