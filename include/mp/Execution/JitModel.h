//===- JitModel.h - an ONNX model JIT-compiled for the CPU ------*- C++ -*-===//
//
// An OnnxModel whose variants are JIT-compiled for the host CPU on demand
// and run on host tensors: mp-run, its --test-dir mode and the C API (hence
// the Python package) all go through it.
//
//===----------------------------------------------------------------------===//

#ifndef MP_EXECUTION_JITMODEL_H
#define MP_EXECUTION_JITMODEL_H

#include "mp/Pipelines/OnnxModel.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mp {

class CpuRunner;

/// An ONNX model compiled for the CPU on demand: one JIT-compiled variant
/// per distinct set of input shapes (and compiled-in input values, see
/// OnnxModel). Errors are emitted as diagnostics on the context and
/// reported by a null/false return.
class JitModel {
public:
  ~JitModel();

  /// Imports `path` once to check it and learn its inputs and outputs.
  static std::unique_ptr<JitModel> load(mlir::MLIRContext *ctx,
                                        llvm::StringRef path,
                                        const ModelOptions &options);

  /// The model and how variants are built from it.
  const OnnxModel &source() const { return *model; }

  llvm::ArrayRef<TensorSpec> inputs() const { return model->inputs(); }
  llvm::ArrayRef<TensorSpec> outputs() const { return model->outputs(); }
  llvm::StringRef path() const { return model->path(); }
  bool nameInputs(std::vector<HostTensor> &inputs) const {
    return model->nameInputs(inputs);
  }
  bool checkInputs(llvm::ArrayRef<HostTensor> inputs) const {
    return model->checkInputs(inputs);
  }
  bool isCompiledIn(const HostTensor &t) const {
    return model->isCompiledIn(t);
  }

  /// Compiles the variant for these inputs unless it is cached.
  bool prepare(llvm::ArrayRef<HostTensor> inputs);

  /// Runs on named inputs (see nameInputs), compiling first if needed.
  bool run(llvm::ArrayRef<HostTensor> inputs, std::vector<HostTensor> &outputs);

  /// Number of JIT-compiled variants held.
  size_t numVariants() const { return variants.size(); }

  /// Who hears of each compile stage as it ends (see CompileProgress.h):
  /// import, fusion and precision, lowering, LLVM, cache store; or, when
  /// the compile cache has the variant, cache load.
  void setProgress(CompileProgress callback) { progress = std::move(callback); }

  /// How the last variant came to be: "compiled", "cached" (loaded from
  /// the compile cache) or "" before the first.
  llvm::StringRef lastVariantSource() const { return lastSource; }

private:
  JitModel() = default;
  CpuRunner *variantFor(llvm::ArrayRef<HostTensor> inputs);
  /// The variant from the compile cache (null on a miss), and the key to
  /// store it under; an empty key: not cacheable.
  std::unique_ptr<CpuRunner> cachedVariant(llvm::ArrayRef<HostTensor> inputs,
                                           std::string &key);
  /// Everything but the inputs that decides the compiled code; empty when
  /// it cannot be known (an unreadable file).
  const std::string &modelKey();
  void storeVariant(llvm::StringRef key, const CpuRunner &runner,
                    llvm::StringRef object, llvm::StringRef diagnostics);

  std::unique_ptr<OnnxModel> model;
  /// Compiled variants by key; the oldest is dropped past a small limit.
  std::map<std::string, std::unique_ptr<CpuRunner>> variants;
  std::vector<std::string> variantOrder;
  std::optional<std::string> modelKeyText;
  std::string lastSource;
  CompileProgress progress;
};

} // namespace mp

#endif // MP_EXECUTION_JITMODEL_H
