//===- CpuRunner.h - JIT-compile and run an mp module on the CPU -*- C++ -*-===//

#ifndef MP_EXECUTION_CPURUNNER_H
#define MP_EXECUTION_CPURUNNER_H

#include "mp/Pipelines/Entry.h"
#include "mp/Support/CompileProgress.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mp {

class JitObject;

/// A model compiled for the CPU for one set of input shapes.
class CpuRunner {
public:
  ~CpuRunner();

  /// Specializes the module's first function to the shapes of `inputs`
  /// (matched by ONNX input name), lowers it through the CPU pipeline and
  /// JIT-compiles it. Inputs must name every graph input with its element
  /// type; errors (unknown or missing names, wrong dtype or rank, ops
  /// without a lowering) are emitted as diagnostics. Returns null on error.
  /// With `object`, the compiled machine code goes there too (empty, with
  /// a warning, when it cannot be had): what the compile cache keeps.
  /// `progress` hears of the lowering and of LLVM's work.
  static std::unique_ptr<CpuRunner>
  compile(mlir::OwningOpRef<mlir::ModuleOp> module,
          llvm::ArrayRef<HostTensor> inputs, const EntryOptions &options = {},
          std::string *object = nullptr, const CompileProgress &progress = {});

  /// A runner for machine code `compile` produced, with the signature it
  /// had: what a compile cache hit loads. Checks `inputs` as `compile`
  /// does (null with a diagnostic at `loc` when they do not fit); null with
  /// `linkError` set, and no diagnostic, when the code cannot be linked.
  static std::unique_ptr<CpuRunner>
  load(llvm::StringRef object, EntrySignature signature,
       llvm::ArrayRef<HostTensor> inputs, const EntryOptions &options,
       mlir::Location loc, std::string &linkError);

  /// The entry's signature (what the compile cache keeps with the code).
  const EntrySignature &entrySignature() const { return signature; }

  /// Runs on the `inputs` named as at compile time (with the same shapes,
  /// or any fitting ones for a dynamic-shape entry; others are ignored).
  /// Their buffers are read in place, never written.
  bool run(llvm::ArrayRef<HostTensor> inputs, std::vector<HostTensor> &outputs,
           std::string &error);

  /// Graph output names and types, in order.
  llvm::ArrayRef<HostTensor> outputSpecs() const { return signature.outputs; }

private:
  CpuRunner() = default;
  /// The code: compiled here, or loaded from the compile cache.
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::unique_ptr<JitObject> object;
  /// The packed entry (`_mlir_` + signature.symbol) in either.
  void (*entry)(void **) = nullptr;
  /// The entry's inputs and outputs (no data), in-place outputs and caches.
  EntrySignature signature;
  /// signature.updatedBy(), computed once.
  std::vector<int> updatedBy;
};

} // namespace mp

#endif // MP_EXECUTION_CPURUNNER_H
