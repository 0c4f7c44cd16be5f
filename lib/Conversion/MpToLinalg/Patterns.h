//===- Patterns.h - the pattern sets of mp-lower-to-linalg ------*- C++ -*-===//
//
// One populate function per file of this folder, each defined there and
// declared only here; populateMpToLinalgPatterns (Passes.h) adds them all.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_CONVERSION_MPTOLINALG_PATTERNS_H
#define MP_LIB_CONVERSION_MPTOLINALG_PATTERNS_H

#include "mp/Conversion/AttentionLowering.h"
#include "mp/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mp {

void populateElementwiseToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateContractionToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateReductionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// `indexChecks`: Gather checks its indices at run time.
void populateShapeToTensorPatterns(mlir::RewritePatternSet &patterns,
                                   bool indexChecks = true);
/// The attention lowerings; `gpuAttention` builds the kernels of
/// AttentionLowering::GpuFlash. ONNX Attention (and mp.attention);
/// `indexChecks`: nonpad_kv_seqlen is checked at run time:
void populateAttentionToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                       AttentionLowering attention,
                                       GpuAttentionBuilder gpuAttention,
                                       bool indexChecks = true);
/// com.microsoft Attention and MultiHeadAttention:
void populateContribAttentionToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                              AttentionLowering attention,
                                              GpuAttentionBuilder gpuAttention);
/// com.microsoft GroupQueryAttention; `indexChecks`: seqlens_k,
/// total_sequence_length and the rotary positions are checked at run time.
void populateGroupQueryAttentionToLinalgPatterns(
    mlir::RewritePatternSet &patterns, AttentionLowering attention,
    GpuAttentionBuilder gpuAttention, bool indexChecks = true);
/// ONNX and com.microsoft RotaryEmbedding:
/// `indexChecks`: position ids are checked against the caches at run time.
void populateRotaryToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                    bool indexChecks = true);
void populateNNToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                ConvolutionLowering convolution);
/// Ops whose result sizes depend on values (NonZero; TopK and OneHot, whose
/// k and depth may be known only at run time):
void populateDataDependentToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// `indexChecks`: GatherElements, GatherND and ScatterND check their indices
/// and TensorScatter its write indices at run time (ScatterElements always
/// does).
/// Reports every gather or scatter (Gather, GatherElements, GatherND,
/// ScatterND, ScatterElements) under `root` whose constant indices lie
/// outside the data's static sizes, naming the node; fails if any does.
mlir::LogicalResult checkConstantIndices(mlir::Operation *root);
void populateIndexingToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                      bool indexChecks = true);
void populateRecurrentToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateResizeToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateTrainingToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// RandomNormal and RandomUniform (and their Like forms):
void populateRandomToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// tensor.concat, once its operands are lowered: a rotation of one
/// tensor's own slices (rotary embeddings' rotate-half) as one generic,
/// any other as inserts into one tensor.
void populateConcatToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace mp

#endif // MP_LIB_CONVERSION_MPTOLINALG_PATTERNS_H
