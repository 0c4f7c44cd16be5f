//===- Model.h - an ONNX model compiled for the CPU on demand ---*- C++ -*-===//
//
// The one place that turns "a model file, a precision and some input
// tensors" into outputs: mp-run, its --test-dir mode and the C API (hence
// the Python package) all go through it.
//
//===----------------------------------------------------------------------===//

#ifndef MP_EXECUTION_MODEL_H
#define MP_EXECUTION_MODEL_H

#include "mp/Execution/HostTensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mp {

class CpuRunner;

/// How a model is compiled.
struct ModelOptions {
  /// Assign mixed precision (the default policy, or `policyFile`).
  bool mixed = false;
  /// A precision policy JSON file; only with `mixed`.
  std::string policyFile;
  /// Replace decomposed attention with mp.attention (mp-fuse-attention)
  /// before assigning precision.
  bool fuseAttention = false;
  /// Options of mp-build-training-step ("loss=NAME optimizer=adamw ..."):
  /// when set, the model runs as that training step (its inputs and
  /// outputs are the step's, see docs/training.md).
  std::string trainingStep;
  /// Options of mp-insert-loss-scaling ("mode=dynamic ..."); only with
  /// `trainingStep`.
  std::string lossScaling;
  /// > 0: KV caches of fused attention in buffers of this many positions,
  /// updated in place, with the extra input `past_sequence_length`
  /// (mp-kv-cache-in-place); needs `fuseAttention`.
  int64_t maxSeqLen = 0;
  /// One variant for every input shape: the model's dynamic dims stay
  /// dynamic through the lowering (EntryOptions::dynamicShapes) instead of
  /// being specialized per shape. Inputs compiled in as constants still
  /// key variants by value.
  bool dynamicShapes = false;
};

/// A graph input or output as the model declares it: dynamic dims are
/// ShapedType::kDynamic.
struct TensorSpec {
  std::string name;
  mlir::Type elementType;
  llvm::SmallVector<int64_t> shape;
};

/// Registers what importing, lowering and JIT-compiling an mp module needs.
void registerModelDialects(mlir::DialectRegistry &registry);

/// An ONNX model compiled for the CPU on demand: one JIT-compiled variant per
/// distinct set of input shapes. Small inputs whose values decide shapes
/// (target shapes, repeats, Range bounds, Resize scales) or which branch of
/// an If runs are compiled in as constants, so their values are part of the variant's key and the shapes
/// they decide are static; other inputs, such as token ids, stay run-time
/// arguments. When the model only imports with input values (axes or
/// training flags given as inputs), every small integer and bool input is
/// compiled in.
///
/// Errors are emitted as diagnostics on the context (attach a handler to
/// print or capture them) and reported by a null/false return.
class Model {
public:
  ~Model();

  /// Imports `path` once to check it and learn its inputs and outputs.
  static std::unique_ptr<Model> load(mlir::MLIRContext *ctx,
                                     llvm::StringRef path,
                                     const ModelOptions &options);

  llvm::ArrayRef<TensorSpec> inputs() const { return inputSpecs; }
  llvm::ArrayRef<TensorSpec> outputs() const { return outputSpecs; }
  llvm::StringRef path() const { return modelPath; }

  /// Gives inputs without a name the graph input names in order.
  /// Fails (with a diagnostic) when there are more tensors than inputs.
  bool nameInputs(std::vector<HostTensor> &inputs) const;

  /// Checks `inputs` against the graph inputs by name: every input given
  /// once, element type, rank and static dims as declared. Emits one
  /// diagnostic naming the first problem.
  bool checkInputs(llvm::ArrayRef<HostTensor> inputs) const;

  /// Compiles the variant for these inputs unless it is cached.
  bool prepare(llvm::ArrayRef<HostTensor> inputs);

  /// Runs on named inputs (see nameInputs), compiling first if needed.
  bool run(llvm::ArrayRef<HostTensor> inputs,
           std::vector<HostTensor> &outputs);

  /// Imports the model for these (checked) inputs with the ones that decide
  /// shapes compiled in as constants, then fuses attention and assigns mixed
  /// precision as the options say. `runtimeInputs` receives the inputs that
  /// stay arguments, in the order given. Null (with a diagnostic) on error.
  mlir::OwningOpRef<mlir::ModuleOp>
  buildVariant(llvm::ArrayRef<HostTensor> inputs,
               std::vector<HostTensor> &runtimeInputs);

  /// Whether `t` is compiled in as a constant (its value decides shapes or
  /// an If's branch).
  bool isCompiledIn(const HostTensor &t) const;

  /// Number of JIT-compiled variants held.
  size_t numVariants() const { return variants.size(); }

private:
  Model() = default;
  /// The variant key and the inputs that stay run-time arguments.
  std::string variantKey(llvm::ArrayRef<HostTensor> inputs) const;
  /// Records the small inputs whose values decide shapes (Reshape targets,
  /// Range bounds, Resize scales, Slice and Pad parameters, directly or
  /// through integer arithmetic): they are compiled in.
  void findShapeInputs(mlir::ModuleOp module);
  /// Builds the training step on an imported module, as the options say.
  mlir::LogicalResult buildTrainingStep(mlir::ModuleOp module) const;
  /// With `maxSeqLen`: the cache inputs and outputs in the type the fused
  /// attention stores them in, and the fill-level input, as the compiled
  /// variants take them.
  mlir::LogicalResult describeInPlaceCaches(mlir::ModuleOp probe);
  /// Where errors about the model as a whole point: `path:0:0`.
  mlir::Location fileLoc() const;
  CpuRunner *variantFor(llvm::ArrayRef<HostTensor> inputs);

  mlir::MLIRContext *ctx = nullptr;
  std::string modelPath;
  ModelOptions options;
  std::vector<TensorSpec> inputSpecs, outputSpecs;
  /// Inputs compiled in because they decide shapes; only meaningful when
  /// the model imported without input values (`knowsShapeInputs`).
  llvm::StringSet<> shapeInputs;
  bool knowsShapeInputs = false;
  /// The import done at load, until the first variant takes (or drops) it.
  mlir::OwningOpRef<mlir::ModuleOp> firstImport;
  /// Compiled variants by key; the oldest is dropped past a small limit.
  std::map<std::string, std::unique_ptr<CpuRunner>> variants;
  std::vector<std::string> variantOrder;
};

} // namespace mp

#endif // MP_EXECUTION_MODEL_H
