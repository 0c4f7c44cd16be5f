//===- Passes.td - mp conversion passes --------------------*- tablegen -*-===//

#ifndef MP_CONVERSION_PASSES_TD
#define MP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MpToLinalg : Pass<"mp-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower mp ops to linalg, tensor, arith and math";
  let description = [{
    Elementwise ops (with numpy broadcasting) become `linalg.generic`;
    MatMul/Gemm become contractions accumulating in f32 for f16 inputs;
    Softmax, Reduce* and LayerNorm/RMSNorm become reductions computed in f32;
    shape ops become tensor ops. Transcendental functions of f16 values are
    evaluated in f32 and rounded once. Dims may be static or dynamic; ops
    without a lowering are reported by name and ONNX node.

    How attention lowers is the `attention` option. `streaming` (the CPU's
    default): attention over 512 keys or more streams (an online softmax
    over blocks of 256 keys, the score matrix never whole), shorter caches
    materialize the scores. `materialized`: the scores are always
    materialized, so their pieces become Tensor Core and block-reduction
    kernels on the GPU. `gpu-flash` (the CUDA pipeline's): attention without
    mask tensors, sinks or requested scores becomes the target's kernels
    (split-KV flash attention, built by the CUDA code generation and passed
    to the pass; the textual pass refuses this mode), the rest is
    materialized.
  }];
  let options = [
    Option<"attention", "attention", "::mp::AttentionLowering",
           /*default=*/"::mp::AttentionLowering::Streaming",
           "How attention lowers",
           [{::llvm::cl::values(
             clEnumValN(::mp::AttentionLowering::Streaming, "streaming",
                        "stream long caches through an online softmax"),
             clEnumValN(::mp::AttentionLowering::Materialized,
                        "materialized", "materialize the scores"),
             clEnumValN(::mp::AttentionLowering::GpuFlash, "gpu-flash",
                        "the target's flash attention kernels"))}]>,
    Option<"convolution", "convolution", "::mp::ConvolutionLowering",
           /*default=*/"::mp::ConvolutionLowering::Taps",
           "How ungrouped stride-1 convolutions with static shapes lower",
           [{::llvm::cl::values(
             clEnumValN(::mp::ConvolutionLowering::Taps, "taps",
                        "one channel contraction per kernel tap, in a loop "
                        "(register-tiled on the CPU)"),
             clEnumValN(::mp::ConvolutionLowering::Direct, "direct",
                        "one contraction over channels and taps (the GPU's)"))}]>,
    Option<"indexChecks", "index-checks", "bool", /*default=*/"true",
           "Check indices read from data (Gather, GatherElements, GatherND, "
           "ScatterND, RotaryEmbedding's position ids) at run time: one out "
           "of range stops the run with a "
           "message naming the node. The CUDA pipeline turns this off: the "
           "checks read the indices on the host">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::gpu::GPUDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    // cf.assert: run-time checks of data-dependent indices.
    "::mlir::cf::ControlFlowDialect",
  ];
}

#endif // MP_CONVERSION_PASSES_TD
