//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//

#ifndef MP_CODEGEN_CPU_PASSES_TD
#define MP_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def OutlineKernels : Pass<"mp-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Move each top-level linalg op into its own noinline function";
  let description = [{
    Every linalg op directly in a function body or an `scf.if` branch (on
    tensors, before bufferization) becomes a call to a private function
    `<function>_kernel_<N>` holding that op, the `tensor.empty` it writes
    into and a `linalg.fill` that only it uses; small scalar constants it
    captures are cloned, tensors are passed. An `scf.for` there whose body
    holds linalg ops (a convolution's loop over its taps) becomes one
    kernel with everything inside it. The kernels are marked
    `noinline` (`passthrough`, kept by func-to-llvm), so LLVM optimizes many small loop nests instead of one
    function with thousands of loops (whose loop passes grow much faster
    than linearly), and the CPU code has the structure the GPU backend
    needs: one kernel per linalg op.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def TileAndVectorize : Pass<"mp-tile-and-vectorize", "mlir::ModuleOp"> {
  let summary = "Register-tile and vectorize MatMul-like contractions";
  let description = [{
    Every `linalg.generic` on tensors that contracts one reduction
    loop `k` into an output whose innermost loop `n` also walks the second
    input contiguously (MatMul, Gemm, batched MatMul, the projections of
    attention and LSTM) is tiled into `tile-m` x `tile-n` output blocks
    (smaller when the size does not divide) with `k` innermost, and each
    block is vectorized. When `n` has a run-time size (a convolution over
    a data-dependent length), its loop is peeled: full `tile-n` blocks are
    vectorized and the one partial block keeps scalar loops. The output
    block then stays in vector registers
    for the whole `k` loop: per step one row of the second input is loaded,
    the first input's column is broadcast, and both are multiplied into the
    accumulators. Ops that do not match are left as they are (LLVM's loop
    vectorizer still handles their innermost loops).
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"4",
           "Output rows per register tile">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"16",
           "Output columns per register tile (a multiple of the SIMD width)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ExpandStridedCopies : Pass<"mp-expand-strided-copies", "mlir::ModuleOp"> {
  let summary = "Turn copies between non-contiguous buffers into linalg.copy";
  let description = [{
    The LLVM lowering of `memref.copy` calls the runtime's `memrefCopy`
    when either buffer is not one contiguous row-major block (a KV cache
    written into a slice of the concatenated cache, a transposed view); that
    function walks the elements one at a time through generic index
    arithmetic. As a `linalg.copy` the copy becomes a loop nest whose
    innermost loop is contiguous, which LLVM vectorizes. Contiguous copies
    are left alone: they already become `memcpy`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // MP_CODEGEN_CPU_PASSES_TD
