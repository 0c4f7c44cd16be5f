//===- OnnxModel.h - an ONNX model and the modules built from it -*- C++
//-*-===//
//
// The one place that turns "a model file, options and some input tensors"
// into the mp module to compile for them: the JIT (JitModel: mp-run, the C
// API and Python) and mp-compile's libraries, for either target, all start
// here.
//
//===----------------------------------------------------------------------===//

#ifndef MP_PIPELINES_ONNXMODEL_H
#define MP_PIPELINES_ONNXMODEL_H

#include "mp/Pipelines/Entry.h"
#include "mp/Support/CompileProgress.h"
#include "mp/Support/HostTensor.h"
#include "mp/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringSet.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mp {

/// How a model is compiled.
struct ModelOptions {
  /// Assign mixed precision (the default policy, or `policyFile`).
  bool mixed = false;
  /// A precision policy JSON file; only with `mixed`.
  std::string policyFile;
  /// Value ranges from calibration (mp-assign-precision's `ranges`); only
  /// with `mixed`.
  std::string rangesFile;
  /// Write the precision plan here (mp-assign-precision's `plan`); only with
  /// `mixed`.
  std::string planFile;
  /// Return every node's float outputs after the graph's own
  /// (mp-expose-values, before precision is assigned): what calibration and
  /// the precision diff observe.
  bool exposeValues = false;
  /// With `mixed`: every node decided f16 computes in fp32 and, beside it,
  /// in fp16 from the fp32 inputs; both are returned (mp-shadow-fp16): each
  /// node's own fp16 error in one run.
  bool shadowFp16 = false;
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
  /// Where JIT-compiled variants are kept between processes (see
  /// CompileCache.h; defaultCacheDir() is the usual choice); empty: they
  /// are not. Runs that write a plan compile regardless.
  std::string cacheDir;
};

/// A graph input or output as the model declares it: dynamic dims are
/// ShapedType::kDynamic.
struct TensorSpec {
  std::string name;
  mlir::Type elementType;
  llvm::SmallVector<int64_t> shape;
};

/// What the files a compile of `modelPath` reads hold, for a compile cache
/// key: the BLAKE3 of the model, of each external data file (named
/// relative to the model) and of the policy and ranges files when given.
/// Nothing when one of them cannot be read (the compile says why).
std::optional<std::string> modelFilesKey(mlir::MLIRContext *ctx,
                                         llvm::StringRef modelPath,
                                         llvm::StringRef policyFile,
                                         llvm::StringRef rangesFile);

/// Registers what importing, lowering and compiling an mp module needs.
void registerModelDialects(mlir::DialectRegistry &registry);

/// An ONNX model as the compiler sees it: its inputs and outputs, and the
/// module to compile for a set of input tensors (a variant). Small inputs
/// whose values decide shapes (target shapes, repeats, Range bounds, Resize
/// scales) or which branch of an If runs are compiled in as constants, so
/// their values are part of the variant's key and the shapes they decide
/// are static; other inputs, such as token ids, stay run-time arguments.
/// When the model only imports with input values (axes or training flags
/// given as inputs), every small integer and bool input is compiled in.
///
/// Errors are emitted as diagnostics on the context (attach a handler to
/// print or capture them) and reported by a null/false return.
class OnnxModel {
public:
  /// Imports `path` once to check it and learn its inputs and outputs.
  static std::unique_ptr<OnnxModel> load(mlir::MLIRContext *ctx,
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

  const ModelOptions &options() const { return modelOptions; }

  /// Imports the model for these (checked) inputs with the ones that decide
  /// shapes compiled in as constants, then fuses attention and assigns mixed
  /// precision as the options say. `runtimeInputs` receives the inputs that
  /// stay arguments, in the order given. Null (with a diagnostic) on error.
  /// `progress` hears of the import and of fusion and precision.
  mlir::OwningOpRef<mlir::ModuleOp>
  buildVariant(llvm::ArrayRef<HostTensor> inputs,
               std::vector<HostTensor> &runtimeInputs,
               const CompileProgress &progress = {});

  /// With `dynamicShapes`: the inputs whose shapes are fixed although the
  /// model declares dynamic dims (mp-compile --input-shape). Every variant
  /// imports them with these shapes, so that an If whose branches differ in
  /// rank folds when its condition reads only them. A model that could not
  /// be imported at load without shapes is imported now, which finds the
  /// inputs that decide shapes or reports why it cannot be imported (the If
  /// that still needs a shape). Fails with a diagnostic.
  mlir::LogicalResult pinShapes(llvm::ArrayRef<HostTensor> pinned);

  /// Whether `t` is compiled in as a constant (its value decides shapes or
  /// an If's branch).
  bool isCompiledIn(const HostTensor &t) const;

  /// What distinguishes the variant for these (checked) inputs: the shapes
  /// of the run-time inputs (their ranks with dynamic shapes) and the
  /// values of the compiled-in ones.
  std::string variantKey(llvm::ArrayRef<HostTensor> inputs) const;

  /// How prepareEntry shapes the variants' entry (caches, dynamic shapes).
  EntryOptions entryOptions() const;

  /// How mixed precision is assigned: policy, ranges and plan as the
  /// options say, graph inputs and outputs kept in their types.
  AssignPrecisionOptions assignOptions() const;

  /// Where errors about the model as a whole point: `path:0:0`.
  mlir::Location fileLoc() const;

private:
  OnnxModel() = default;
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
  mlir::MLIRContext *ctx = nullptr;
  std::string modelPath;
  ModelOptions modelOptions;
  std::vector<TensorSpec> inputSpecs, outputSpecs;
  /// Inputs compiled in because they decide shapes; only meaningful when
  /// the model imported without input values (`knowsShapeInputs`).
  llvm::StringSet<> shapeInputs;
  bool knowsShapeInputs = false;
  /// The import at load stopped for want of input shapes (an If whose
  /// branches differ in rank, a Loop).
  bool importNeedsShapes = false;
  /// Shapes every import uses under dynamic shapes (pinShapes).
  llvm::StringMap<llvm::SmallVector<int64_t>> pinnedShapes;
  /// The import done at load, until the first variant takes (or drops) it.
  mlir::OwningOpRef<mlir::ModuleOp> firstImport;
};

} // namespace mp

#endif // MP_PIPELINES_ONNXMODEL_H
