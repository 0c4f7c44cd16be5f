//===- Passes.td - CUDA code generation passes -------------*- tablegen -*-===//

#ifndef MP_CODEGEN_CUDA_PASSES_TD
#define MP_CODEGEN_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def GeneralizeLayoutOps : Pass<"mp-generalize-layout-ops", "mlir::ModuleOp"> {
  let summary = "Turn tensor transposes, broadcasts and copies into "
                "linalg.generic";
  let description = [{
    Upstream elementwise fusion joins `linalg.generic` ops only. On tensors,
    this pass rewrites `linalg.transpose`, `linalg.broadcast` and
    `linalg.copy` as the generics they stand for (a permuted or projected
    indexing map). The fusion that follows folds them into the index maps
    of their producer or consumer. On the CUDA target, a transpose of the
    heads of a projection or a repeat of shared KV heads is then no kernel
    and no buffer of its own. Fills stay named ops: the kernels of their
    consumers start from the fill's value (mp-contraction-to-mma,
    mp-reduction-to-gpu, mp-map-to-gpu).

    A `tensor.collapse_shape` of such a generic that merges dims no input
    reads into the outermost dim of their group (grouped-query attention's
    KV heads repeated, then folded into the head dim) becomes one generic
    writing the collapsed tensor, reading that dim at the collapsed index
    divided by the merged extent: fusion does not cross reshapes.

    A transpose between a `tensor.collapse_shape` and a
    `tensor.expand_shape` that splits the merged dim again along the same
    boundaries (dynamo's attention views the keys [B, H, T, D] as
    [B*H, T, D] for a batched transpose, then as [B, H, D, T]) becomes a
    transpose of the uncollapsed tensor, taking a copy that produces it (the
    repeat of KV heads) into its indexing map, followed by the merges the
    split leaves, which the fold above then takes.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ForwardExtracts : Pass<"mp-forward-extracts", "mlir::ModuleOp"> {
  let summary = "Read extracted elements from the tensors that hold them";
  let description = [{
    Exporters assemble index tensors piece by piece: torch's dynamo export
    of a decoder's attention mask concatenates a broadcast batch index and
    a broadcast key index into [B, 1, S, T, 2] and gathers attention_mask
    with it. The gather reads the pieces with `tensor.extract` at constant
    positions of the concatenated axis, so they need not exist together.
    This pass rewrites a `tensor.extract` of
    - a `tensor.insert_slice` (unit strides, static slice) to an extract of
      the inserted tensor when the position lies in the slice, or of the
      destination when it lies outside (decided by constant indices and
      dims the slice covers whole);
    - a static `tensor.expand_shape` to an extract of its source at the
      linearized position; a `tensor.collapse_shape` whose groups have at
      most one dim longer than 1 likewise;
    - a `linalg.generic` that only yields one of its inputs (a copy,
      broadcast or transpose, as mp-generalize-layout-ops writes them) and
      writes its output through a permutation, to an extract of that input
      at the mapped position.
    The index tensor, and the broadcasts that fed it, then have no use and
    no kernel, buffer or traffic of their own.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseCasts : Pass<"mp-fuse-casts", "mlir::ModuleOp"> {
  let summary = "Fuse element-type casts into every consumer";
  let description = [{
    Upstream elementwise fusion (`linalg-fuse-elementwise-ops`) joins a
    producer with its consumer only when that is its one use, so a cast
    (the f32/f16 conversions mixed precision inserts) read by several ops,
    like the input of a LayerNorm, stays a kernel with a buffer of its own.
    This pass fuses a one-input `linalg.generic` that only converts element
    types into each of its elementwise-fusable consumers, which then read
    the source and convert it themselves; once no use is left the cast is
    gone. Reading the source in each consumer moves about as many bytes as
    writing the narrow copy and reading it back, and the copy's memory is
    saved. An elementwise generic whose every use is an operand of one op
    (a rotary embedding reads its input and the input rotated by half) is
    fused into that op too: its body runs once per operand, and neither a
    kernel nor a buffer is left for it.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def HoistDestinations : Pass<"mp-hoist-destinations", "mlir::ModuleOp"> {
  let summary = "Define the tensors slices are inserted into before their "
                "producers";
  let description = [{
    Empty-tensor elimination makes an op whose result is inserted into a
    larger tensor write into that tensor's slice, but only when the larger
    tensor is defined before the op. A decode step's present KV cache is
    built after the new key row is computed: the past rows are inserted
    into a `tensor.empty` where the export's Concat stands. When the new
    row is itself a Concat (GLM's rotated and passed halves of each key),
    its halves would then be written to a buffer of their own and copied
    into the cache. This pass moves every static `tensor.empty` to the
    start of its function, and every `tensor.insert_slice` of a function
    argument into one (the past rows) right after it, so that the
    elimination reaches each half.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def ContractionToMma : Pass<"mp-contraction-to-mma", "mlir::ModuleOp"> {
  let summary = "Run f16 contractions on Tensor Cores (mma.sync m16n8k16)";
  let description = [{
    The CUDA target's kernel for MatMul-like ops, on bufferized code with
    static shapes, before `mp-map-to-gpu`. A `linalg.generic` that computes
    `out += extf(a) * extf(b)` with `a`, `b` f16 and `out` f32 (MatMul,
    Gemm, batched MatMul, attention's Q.K^T and P.V), whatever elementwise
    prologue fusion folded into `a` or `b`, becomes a `gpu.launch` of warp
    tiles: each warp owns 16 rows by `8 * subtiles` columns of the result
    and steps through the reduction 16 at a time with `nvgpu.mma.sync`
    (m16n8k16, f16 inputs, f32 accumulation; sm_80 and newer). Loop dims
    read only by `a` are the rows, only by `b` the columns, the other
    parallel ones the batch; the reduction may span several dims (a
    convolution's channels and taps: an implicit GEMM). Tiles that overhang
    an edge read zeros and store nothing there, so any shape is exact.

    Fragments are gathered from global memory in the PTX layout, with the
    prologue evaluated per element; other contractions (f32, integer) are
    left to `mp-map-to-gpu`.
  }];
  let options = [
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"4",
           "Warps (each one output tile) per thread block, in [1, 32]">,
    Option<"subtiles", "subtiles", "int64_t", /*default=*/"4",
           "8-column mma tiles per warp (reuse of each row fragment)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
    "::mlir::affine::AffineDialect",
  ];
}

def MergeLaunches : Pass<"mp-merge-launches", "mlir::ModuleOp"> {
  let summary = "Run independent kernels in one launch";
  let description = [{
    On `gpu.launch` ops with one-dimensional grids and blocks, before
    kernel outlining. Launches that write no bytes another of them reads or
    writes become one launch: their grids laid end to end, each block
    running the body of the launch it belongs to with its block index
    rebased. Each launch joins the earliest group it can move up to: past
    at most one later group, which it shares no written byte with (further
    up it would hold its buffers live longer and grow the activation
    arena), never past an op other than a launch that may touch memory;
    the merged launch runs at its first member's place. A decode step's q/k/v projections (or gate and
    up) then take one launch, also with a norm's statistic between them
    (qwen3's per-head q and k norms), which takes a launch of its own with
    the other statistics. Blocks are as wide as the widest member; a narrower member
    runs on the first threads of each block, in whole warps when it uses
    warp-level ops (`mma.sync`, shuffles). A launch with barriers or
    block-wide reductions joins only at its own block width: each block
    runs one member's body, so every thread of it reaches the barrier.
    Launches with workgroup memory, async tokens or ops that read the
    launch geometry other than through its region arguments keep their
    own launch.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def ReductionToGpu : Pass<"mp-reduction-to-gpu", "mlir::ModuleOp"> {
  let summary = "Reductions along rows as one thread block per output";
  let description = [{
    The CUDA target's kernel for Softmax, LayerNorm, RMSNorm and Reduce*, on
    bufferized code with static shapes, before `mp-map-to-gpu`. A
    `linalg.generic` that folds one f32 or i32 value per iteration into its
    accumulator with an associative combiner (`addf`, `mulf`, `maximumf`,
    `minimumf`, `maxnumf`, `minnumf`, integer add/mul/min/max/and/or/xor),
    whatever elementwise computation fusion folded in front of it, becomes a
    `gpu.launch` with one block per output element: the threads stride over
    the reduced elements folding their share in registers, then
    `gpu.all_reduce` combines the partials (warp shuffles, then shared
    memory across warps) and thread 0 folds the total into the output.
    Rows that fit a warp (at most 32 elements) take one warp each, several
    to a block, combined by butterfly shuffles alone: no barrier, so
    `mp-merge-launches` can put the kernel in a launch of any width. The
    op that reads the rows again joins the kernel even past up to four
    ops that touch neither it nor the reduction (they move above).

    It applies when at least `min-reduction` elements are reduced (at least
    `min-normalization` when the op reading the rows again joins the
    kernel: a per-head RMSNorm over rows of 16 is then one kernel, not a
    serial statistic and a separate scaling) and the
    innermost reduction dim is the innermost, unit-stride index of every
    input that depends on the reduction, so consecutive threads read
    consecutive addresses (rows of a LayerNorm, the last axis of a
    Softmax). Otherwise one thread per output, as `mp-map-to-gpu` maps it,
    is the coalesced choice and the op is left alone.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Most threads per block (a multiple of 32, at most 1024)">,
    Option<"minReduction", "min-reduction", "int64_t", /*default=*/"32",
           "Fewest reduced elements per output to use a block">,
    Option<"minNormalization", "min-normalization", "int64_t",
           /*default=*/"16",
           "Fewest reduced elements per output to use a block when the op "
           "that reads the rows again with the result joins the kernel (a "
           "normalization: one kernel instead of two)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::affine::AffineDialect",
  ];
}

def MapToGpu : Pass<"mp-map-to-gpu", "mlir::ModuleOp"> {
  let summary = "Turn bufferized linalg ops into GPU-mapped parallel loops";
  let description = [{
    The host side of the CUDA target, on bufferized code. Every linalg op
    becomes one kernel: its parallel loops are collapsed into one index
    that is split into blocks of `block-size` threads (`scf.parallel` loops
    mapped to `block_x` and `thread_x`, ready for
    `convert-parallel-loops-to-gpu`), and its reduction loops run inside
    each thread, after the parallel ones. Ops without a parallel loop (full
    reductions, rank-0 ops) run on one thread. Bounds known only at run
    time (dynamic shapes) give a grid computed on the host at run time, of
    at least one block. Host `memref.copy` becomes `linalg.copy` first, so
    it is a kernel too, and `memref.reshape` with a static result becomes
    `memref.reinterpret_cast`, so no host code reads a shape buffer.

    In a CUDA library every buffer lives in device memory. Code that would
    read or write a buffer on the host (a `memref.load` outside any loop,
    such as the condition of an ONNX `If`, or a reshape whose target shape
    was computed in a buffer) is reported by op and node: the CUDA target
    does not support it yet. The only exceptions are the lists of buffer
    addresses and ownership flags that lowering `bufferization.dealloc`
    leaves for host code, which become host stack allocations.

    Serial host code over buffers, which results sized by tensor values
    leave (NonZero's counting and compaction loops, a length loaded to size
    an allocation), runs on one thread instead: each such op without
    kernels, allocations or calls inside moves into a one-iteration loop,
    and the scalars it gives the host come back through a small device
    buffer copied to the host stack (`mp_cuda_copy_to_host`, which waits
    for the queued kernels; `memcpy` with `memory=host`).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (at most 1024)">,
    Option<"memory", "memory", "::mp::BufferMemory",
           /*default=*/"::mp::BufferMemory::Device",
           "Where the buffers live",
           [{::llvm::cl::values(
             clEnumValN(::mp::BufferMemory::Device, "device",
                        "device memory (a CUDA library)"),
             clEnumValN(::mp::BufferMemory::Host, "host",
                        "host memory (the mapping run on the CPU)"))}]>,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
  ];
}

def MergeGpuModules : Pass<"mp-merge-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    Runs after `gpu-kernel-outlining`, before targets are attached. Every
    kernel moves into one `gpu.module` (named `module-name`), taking the
    name of the module it came from, which is unique; `gpu.launch_func`
    ops follow. One module becomes one binary: ptxas runs once per
    architecture instead of once per kernel, and the runtime loads one
    module per library instead of one per kernel.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string", /*default=*/"\"mp_kernels\"",
           "Name of the merged gpu.module">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
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

#endif // MP_CODEGEN_CUDA_PASSES_TD
