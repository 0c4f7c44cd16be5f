//===- SerialToKernels.h - host code on device memory into kernels -*- C++ -*-===//
//
// Results sized by tensor values (NonZero, lengths computed from durations,
// k of TopK) leave serial code on the host after bufferization: scalar loops
// that count or compact elements, and loads of a computed size. On the CUDA
// target every buffer lives in device memory, so mp-map-to-gpu moves such
// code into single-thread kernels and copies the scalars the host needs
// (allocation sizes, loop bounds) back, as TensorRT's output allocator does.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_CODEGEN_CUDA_SERIALTOKERNELS_H
#define MP_LIB_CODEGEN_CUDA_SERIALTOKERNELS_H

#include "mp/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

namespace mp {

/// Moves the host ops of `func` that load or store device memory (buffers
/// for which `onHost` is false), and that contain no kernels, allocations or
/// calls, into one-iteration `scf.parallel` loops (kernels once mapped).
/// Their scalar results that the host uses come back through a small device
/// buffer, copied by `mp_cuda_copy_to_host` into a host alloca (added to
/// `hostBuffers`; `memcpy` where `memory` says buffers live on the host).
/// Ops that cannot move stay, for mp-map-to-gpu to report.
void moveSerialCodeToKernels(mlir::func::FuncOp func,
                             llvm::function_ref<bool(mlir::Value)> onHost,
                             llvm::DenseSet<mlir::Value> &hostBuffers,
                             BufferMemory memory,
                             mlir::RewriterBase &rewriter);

} // namespace mp

#endif // MP_LIB_CODEGEN_CUDA_SERIALTOKERNELS_H
