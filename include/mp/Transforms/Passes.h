//===- Passes.h - mp transformation passes ----------------------*- C++ -*-===//

#ifndef MP_TRANSFORMS_PASSES_H
#define MP_TRANSFORMS_PASSES_H

#include "mp/Dialect/Mp/IR/MpDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mp {

#define GEN_PASS_DECL
#include "mp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mp/Transforms/Passes.h.inc"

/// Adds mp-assign-precision and mp-insert-casts with shared options.
void buildMixedPrecisionPipeline(mlir::OpPassManager &pm,
                                 llvm::StringRef policy, llvm::StringRef plan,
                                 bool report, int keepIoTypes);

/// Adds the CPU lowering: mp (static shapes) -> linalg -> bufferized loops
/// -> LLVM dialect.
/// With `resultsAsOutParams`, functions write their results into buffers
/// the caller passes after the inputs (the JIT's calling convention). With
/// `pooledAllocations`, buffers come from `_mlir_memref_to_llvm_alloc` and
/// go back through `_mlir_memref_to_llvm_free`, which the caller provides
/// (the JIT binds them to mp's buffer pool).
void buildCpuPipeline(mlir::OpPassManager &pm, bool resultsAsOutParams = false,
                      bool pooledAllocations = false);

/// Registers the named pipelines (`mp-mixed-precision`, `mp-cpu-pipeline`).
void registerMpPipelines();

} // namespace mp

#endif // MP_TRANSFORMS_PASSES_H
