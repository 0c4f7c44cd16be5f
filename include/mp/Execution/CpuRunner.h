//===- CpuRunner.h - JIT-compile and run an mp module on the CPU -*- C++ -*-===//

#ifndef MP_EXECUTION_CPURUNNER_H
#define MP_EXECUTION_CPURUNNER_H

#include "mp/Pipelines/Entry.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mp {

/// A model compiled for the CPU for one set of input shapes.
class CpuRunner {
public:
  ~CpuRunner();

  /// Specializes the module's first function to the shapes of `inputs`
  /// (matched by ONNX input name), lowers it through the CPU pipeline and
  /// JIT-compiles it. Inputs must name every graph input with its element
  /// type; errors (unknown or missing names, wrong dtype or rank, ops
  /// without a lowering) are emitted as diagnostics. Returns null on error.
  static std::unique_ptr<CpuRunner>
  compile(mlir::OwningOpRef<mlir::ModuleOp> module,
          llvm::ArrayRef<HostTensor> inputs,
          const EntryOptions &options = {});

  /// Runs on the `inputs` named as at compile time (with the same shapes,
  /// or any fitting ones for a dynamic-shape entry; others are ignored).
  /// Their buffers are read in place, never written.
  bool run(llvm::ArrayRef<HostTensor> inputs, std::vector<HostTensor> &outputs,
           std::string &error);

  /// Graph output names and types, in order.
  llvm::ArrayRef<HostTensor> outputSpecs() const { return signature.outputs; }

private:
  CpuRunner() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::string entry;
  /// The entry's inputs and outputs (no data), in-place outputs and caches.
  EntrySignature signature;
  /// signature.updatedBy(), computed once.
  std::vector<int> updatedBy;
};

} // namespace mp

#endif // MP_EXECUTION_CPURUNNER_H
