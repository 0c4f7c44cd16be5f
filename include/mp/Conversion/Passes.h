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

/// How attention ops lower.
enum class AttentionKernels {
  /// Attention over 512 keys or more becomes an online-softmax loop over
  /// key blocks (the CPU's form); shorter caches materialize the scores.
  CpuStreaming,
  /// The full score matrix, whose pieces map to generic GPU kernels.
  Materialized,
  /// Split-KV flash attention kernels (gpu.launch) where the masks allow,
  /// else materialized (the CUDA target).
  GpuFlash,
};

/// Patterns lowering mp ops with static shapes to linalg/tensor/arith/math.
void populateMpToLinalgPatterns(
    mlir::RewritePatternSet &patterns,
    AttentionKernels attention = AttentionKernels::CpuStreaming);

} // namespace mp

#endif // MP_CONVERSION_PASSES_H
