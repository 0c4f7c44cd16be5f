//===- Passes.h - CUDA code generation passes -------------------*- C++ -*-===//

#ifndef MP_CODEGEN_CUDA_PASSES_H
#define MP_CODEGEN_CUDA_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mp {

/// Where the buffers of code mapped to GPU threads live: on the device (a
/// CUDA library: scalars the host needs are copied back) or on the host
/// (the GPU mapping run on the CPU, for testing).
enum class BufferMemory { Device, Host };

#define GEN_PASS_DECL
#include "mp/Codegen/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mp/Codegen/CUDA/Passes.h.inc"

/// Marks an entry argument the CUDA target keeps in host memory (a KV
/// cache's fill level): host code may load it, kernels get its value.
constexpr llvm::StringLiteral kHostResidentAttr = "mp.host_resident";

} // namespace mp

#endif // MP_CODEGEN_CUDA_PASSES_H
