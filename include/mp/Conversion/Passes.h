//===- Passes.h - mp conversion passes --------------------------*- C++ -*-===//

#ifndef MP_CONVERSION_PASSES_H
#define MP_CONVERSION_PASSES_H

#include "mp/Conversion/AttentionLowering.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mp {

/// How ungrouped stride-1 convolutions with static shapes lower: one
/// contraction per kernel tap in a loop (the form the CPU's register tiling
/// takes), or one contraction over channels and taps together (one GPU
/// kernel).
enum class ConvolutionLowering { Taps, Direct };

#define GEN_PASS_DECL
#include "mp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mp/Conversion/Passes.h.inc"

/// Patterns lowering mp ops to linalg/tensor/arith/math (static and
/// dynamic shapes). `gpuAttention` builds attention kernels with
/// AttentionLowering::GpuFlash; without it, that mode materializes.
/// `indexChecks`: check indices read from data at run time.
void populateMpToLinalgPatterns(
    mlir::RewritePatternSet &patterns,
    AttentionLowering attention = AttentionLowering::Streaming,
    GpuAttentionBuilder gpuAttention = nullptr, bool indexChecks = true,
    ConvolutionLowering convolution = ConvolutionLowering::Taps);

/// mp-lower-to-linalg whose `attention=gpu-flash` mode builds kernels with
/// `gpuAttention` (the textual pass has none and refuses that mode).
std::unique_ptr<mlir::Pass> createMpToLinalg(const MpToLinalgOptions &options,
                                             GpuAttentionBuilder gpuAttention);

} // namespace mp

#endif // MP_CONVERSION_PASSES_H
