//===- Pipelines.h - mp's pass pipelines ------------------------*- C++ -*-===//
//
// The pass pipelines of the two targets (and of mixed precision), built
// from the mp graph passes, the conversion to linalg and each target's code
// generation passes.
//
//===----------------------------------------------------------------------===//

#ifndef MP_PIPELINES_PIPELINES_H
#define MP_PIPELINES_PIPELINES_H

#include "mp/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace mp {

/// Adds mp-assign-precision with `assign` and mp-insert-casts with the same
/// keep-io-types.
void buildMixedPrecisionPipeline(mlir::OpPassManager &pm,
                                 const AssignPrecisionOptions &assign);

/// Adds the CPU lowering: mp -> linalg -> bufferized loops -> LLVM dialect.
/// With `resultsAsOutParams`, functions write their results into buffers
/// the caller passes after the inputs (the JIT's calling convention). With
/// `pooledAllocations`, buffers come from `_mlir_memref_to_llvm_alloc` and
/// go back through `_mlir_memref_to_llvm_free`, which the caller provides
/// (the JIT binds them to mp's buffer pool).
void buildCpuPipeline(mlir::OpPassManager &pm, bool resultsAsOutParams = false,
                      bool pooledAllocations = false);

/// How the CUDA target compiles.
struct CudaPipelineOptions {
  /// One image per architecture: "sm_XY" for a cubin (ptxas), or
  /// "compute_XY" for PTX that the driver compiles for the device it runs
  /// on (as nvcc names virtual architectures). One kind for every chip.
  std::vector<std::string> chips = {"sm_90"};
  /// PTX ISA features (sm_90 needs PTX 8.0).
  std::string features = "+ptx80";
  /// Keep PTX text in the binaries instead of running ptxas (--emit ptx).
  bool assembly = false;
  /// Threads per block of the generic kernels.
  int64_t blockSize = 256;
  /// f16 contractions on Tensor Cores (mma.sync); ignored unless every
  /// chip is sm_80 or newer.
  bool tensorCores = true;
  /// Attention as split-KV flash attention kernels where it has no mask
  /// tensors; otherwise (or false) the scores are materialized.
  bool flashAttention = true;
  /// CUDA toolkit root; empty: findCudaToolkit().
  std::string toolkit;
  /// The public entry writes its results into buffers its caller passes
  /// (static shapes); false: it returns them, allocated on the device (the
  /// form of dynamic shapes, whose sizes are known at run time only).
  bool resultsAsOutParams = true;
};

/// Testing the CUDA target without a GPU: its front (every op lowered as
/// for CUDA, with materialized attention scores) and mp-map-to-gpu, whose
/// block and thread loops then run as plain loops on the host CPU. The
/// index arithmetic of the generic kernels (grids sized at run time
/// included) thus executes against references; the specialized kernels
/// (Tensor Cores, block reductions, flash attention) are not used.
void buildGpuMappingOnCpuPipeline(mlir::OpPassManager &pm,
                                  bool resultsAsOutParams = false,
                                  bool pooledAllocations = false);

/// Adds the CUDA lowering: mp -> linalg -> bufferized buffers -> one kernel
/// per linalg op -> NVVM -> cubins (per chip, packed for the mp runtime),
/// and host code in the LLVM dialect that launches them through the mgpu*
/// ABI. The entry point writes its results into buffers the caller passes
/// after the inputs (or returns them, `resultsAsOutParams` false); all
/// buffers are device memory. Dynamic shapes take the generic kernels.
void buildCudaPipeline(mlir::OpPassManager &pm,
                       const CudaPipelineOptions &options);

/// Registers the named pipelines (`mp-mixed-precision`, `mp-cpu-pipeline`,
/// `mp-lower-to-nvvm`, `mp-test-gpu-mapping-on-cpu`).
void registerMpPipelines();

/// Registers every mp pass (graph passes, conversion, both targets' code
/// generation) and the named pipelines, for textual pass pipelines.
void registerAllMpPasses();

} // namespace mp

#endif // MP_PIPELINES_PIPELINES_H
