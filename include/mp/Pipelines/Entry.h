//===- Entry.h - a module's entry point for one set of inputs ---*- C++ -*-===//
//
// What both targets and the JIT do before lowering: the module's function
// specialized to the inputs given (or kept dynamic), in-place caches
// recorded, a C interface asked for; and the signature callers run it by.
//
//===----------------------------------------------------------------------===//

#ifndef MP_PIPELINES_ENTRY_H
#define MP_PIPELINES_ENTRY_H

#include "mp/Support/HostTensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace mp {

/// Checks a tensor given for graph input `name` against its declared type:
/// element type, rank and every static dim. Emits an error at `loc`.
mlir::LogicalResult checkInputTensor(mlir::Location loc, llvm::StringRef name,
                                     mlir::Type declared,
                                     const HostTensor &given);

/// The entry point of a module specialized to one set of inputs.
struct EntrySignature {
  /// The C-interface symbol (`_mlir_ciface_<function>`): memref descriptor
  /// pointers for the inputs, then for the outputs.
  std::string symbol;
  /// Run-time inputs and outputs in argument order (names, types, shapes;
  /// no data).
  std::vector<HostTensor> inputs, outputs;
  /// How the model declares each of them, dim by dim: the static size or
  /// ShapedType::kDynamic (pinned to `shape` here), and the ONNX dim_param
  /// ("batch", "" when none). Parallel to `inputs` / `outputs`.
  struct DeclaredShape {
    llvm::SmallVector<int64_t> sizes;
    std::vector<std::string> names;
  };
  std::vector<DeclaredShape> declaredInputs, declaredOutputs;
  /// Per output: the input whose buffer it is after a run (a KV cache
  /// updated in place, mp-kv-cache-in-place), or -1. Such outputs are not
  /// arguments of the entry: callers pass the output's buffer, holding the
  /// input's data, in place of that input.
  std::vector<int> inPlaceOf;
  /// Fixed-capacity KV caches: the scalar input holding the filled
  /// positions, and the check callers make before a run:
  /// 0 <= length and length + newPositions <= capacity.
  struct KvCache {
    int lengthInput = -1;
    int64_t capacity = 0, newPositions = 0;
  } kvCache;
  /// Dynamic dims kept (EntryOptions::dynamicShapes), or outputs whose
  /// sizes depend on values (NonZero, lengths computed from the data) even
  /// with pinned inputs: `inputs` and `outputs` have ShapedType::kDynamic
  /// where the sizes are known only at run time, and the
  /// entry returns its outputs in buffers it allocates (the caller frees
  /// them) instead of writing into out-params, since their shapes are known
  /// only after the run. The C interface then takes a pointer to the
  /// result descriptors first.
  bool returnsOutputs = false;
  /// CUDA: the run copies device values back to the host midway (sizes of
  /// value-sized results, If conditions), so a captured CUDA graph could
  /// not replay it.
  bool readsDeviceOnHost = false;

  /// Per input: the output whose buffer is passed for it (inverse of
  /// `inPlaceOf`), or -1.
  std::vector<int> updatedBy() const;

  /// Whether `inputs` (as `run` takes them) fit the KV caches; else why not.
  bool checkKvCache(llvm::ArrayRef<HostTensor> inputs,
                    std::string &error) const;
};

/// `entry` as JSON, element types in MLIR syntax: what a compiled variant
/// is run by, kept beside its machine code in the compile cache.
llvm::json::Value toJSON(const EntrySignature &entry);

/// Reads what toJSON wrote; false with `error` when it is malformed.
bool entrySignatureFromJSON(const llvm::json::Value &value,
                            mlir::MLIRContext *ctx, EntrySignature &entry,
                            std::string &error);

/// How prepareEntry shapes the entry point beyond the input shapes.
struct EntryOptions {
  /// > 0: KV caches of this many positions updated in place
  /// (mp-kv-cache-in-place).
  int64_t maxSeqLen = 0;
  /// Keep the model's dynamic dims instead of specializing to the shapes of
  /// the inputs: one compiled entry serves every input shape. Every op on a
  /// dynamic dim needs a dynamic-shape lowering.
  bool dynamicShapes = false;
  /// With `dynamicShapes`: inputs specialized to their given shapes all
  /// the same (mp-compile's --input-shape).
  std::vector<std::string> pinnedInputs;
};

/// Whether `given` fits `spec` (name aside): element type, rank, and every
/// static dim of `spec`; else why not, in `error`.
bool fitsSpec(const HostTensor &spec, const HostTensor &given,
              std::string &error);

/// Specializes the module's first function to the shapes of `inputs`
/// (matched by ONNX input name, every argument given, checked against its
/// declared type; with `options.dynamicShapes` only checked) and prepares
/// it to be an entry point: arguments read in place, a C interface. Fails
/// with a diagnostic when an output keeps a dynamic shape after
/// specializing.
mlir::LogicalResult prepareEntry(mlir::ModuleOp module,
                                 llvm::ArrayRef<HostTensor> inputs,
                                 EntrySignature &entry,
                                 const EntryOptions &options = {});

} // namespace mp

#endif // MP_PIPELINES_ENTRY_H
