//===- Passes.td - mp conversion passes --------------------*- tablegen -*-===//

#ifndef MP_CONVERSION_PASSES_TD
#define MP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MpToLinalg : Pass<"mp-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower mp ops on static shapes to linalg, tensor, arith and math";
  let description = [{
    Elementwise ops (with numpy broadcasting) become `linalg.generic`;
    MatMul/Gemm become contractions accumulating in f32 for f16 inputs;
    Softmax, Reduce* and LayerNorm/RMSNorm become reductions computed in f32;
    shape ops become tensor ops. Transcendental functions of f16 values are
    evaluated in f32 and rounded once. Ops with dynamic shapes or not yet
    lowered are reported by name and node (run `mp-specialize-shapes` first
    to pin dynamic dims).
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def MapToGpu : Pass<"mp-map-to-gpu", "mlir::ModuleOp"> {
  let summary = "Turn bufferized linalg ops into GPU-mapped parallel loops";
  let description = [{
    The host side of the CUDA target, on bufferized code with static
    shapes. Every linalg op becomes one kernel: its parallel loops are
    collapsed into one index that is split into blocks of `block-size`
    threads (`scf.parallel` loops mapped to `block_x` and `thread_x`, ready
    for `convert-parallel-loops-to-gpu`), and its reduction loops run
    inside each thread, after the parallel ones. Ops without a parallel
    loop (full reductions, rank-0 ops) run on one thread. Host `memref.copy`
    becomes `linalg.copy` first, so it is a kernel too, and `memref.reshape`
    with a static result becomes `memref.reinterpret_cast`, so no host code
    reads a shape buffer.

    In a CUDA library every buffer lives in device memory. Code that would
    read or write a buffer on the host (a `memref.load` outside any loop,
    such as the condition of an ONNX `If`) is reported by op and node: the
    CUDA target does not support it yet.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (at most 1024)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::linalg::LinalgDialect",
  ];
}

def BindCudaRuntime : Pass<"mp-bind-cuda-runtime", "mlir::ModuleOp"> {
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
  let summary = "Point host buffers and constants at the mp CUDA runtime";
  let description = [{
    Runs on the host code of the CUDA target after it reached the LLVM
    dialect. Buffers allocated through `_mlir_memref_to_llvm_alloc` /
    `_mlir_memref_to_llvm_free` (finalize-memref-to-llvm with generic
    functions) come from `mp_cuda_memref_alloc` / `mp_cuda_memref_free`,
    the runtime's pool of device memory. Every address taken of a constant
    global (weights, small constants) becomes
    `mp_cuda_constant(host_address, bytes)`, which uploads the data once
    per process and returns its device copy. Kernels thus only ever see
    device pointers.
  }];
}

def PackGpuBinaries : Pass<"mp-pack-gpu-binaries", "mlir::ModuleOp"> {
  let summary = "Pack the per-architecture objects of each gpu.binary into one";
  let description = [{
    `gpu-module-to-binary` gives a `gpu.binary` one object per target
    (`sm_80`, `sm_90`, ...), but the host lowering embeds only one. This
    pass replaces them with a single object holding an `MPGPUBIN` container
    (runtime/include/mp/gpu_binary.h) of every cubin, from which the mp
    runtime's `mgpuModuleLoad` picks the image for the device it runs on.
  }];
}

#endif // MP_CONVERSION_PASSES_TD
