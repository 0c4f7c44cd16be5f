//===- OnnxImporter.h - ONNX model to mp dialect ----------------*- C++ -*-===//
//
// Public entry points of the ONNX importer. No protobuf or ONNX types appear
// here: the importer's translation units are the only ones built with C++
// exceptions (ONNX headers need them; LLVM/MLIR are built without).
//
//===----------------------------------------------------------------------===//

#ifndef MP_IMPORT_ONNXIMPORTER_H
#define MP_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mp {

/// Options of the ONNX importer.
struct ImportOptions {
  /// Name of the imported function.
  std::string functionName = "main_graph";
  /// Initializers with at least this many bytes become `dense_resource`
  /// blobs that own the model's bytes; smaller ones are `dense` attributes.
  int64_t resourceThresholdBytes = 1024;
  /// Graph inputs imported as constants with these values (by ONNX input
  /// name) instead of function arguments: a runner that knows the values
  /// of small integer inputs (axes, shapes) compiles them in so that the
  /// shapes they determine are static.
  llvm::StringMap<mlir::DenseElementsAttr> constantInputs;
  /// The shapes the graph inputs will have (by ONNX input name), from a
  /// runner that knows its inputs. Used only for graphs with an If whose
  /// branches differ in rank, or with a Loop or Scan: their inputs are
  /// imported with these shapes, so that the condition (shape logic) folds
  /// and only the branch taken is imported, and loops unroll.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// When set and such a graph comes without `inputShapes`, the import
  /// stops quietly (no diagnostic) and sets `*needsInputShapes`: a runner
  /// probing a model before it knows its inputs imports it later.
  bool *needsInputShapes = nullptr;
};

/// True when `path` names an ONNX model the importer reads (`.onnx`,
/// `.onnxtext`, `.onnxtxt`).
bool isOnnxFile(llvm::StringRef path);

/// Imports the model at `path`: binary protobuf, or ONNX text syntax when the
/// extension is `.onnxtext`/`.onnxtxt`. External data is resolved relative to
/// the model's directory. Errors are reported through the context's
/// diagnostic handler; returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext *context,
               const ImportOptions &options = {});

/// A graph input or output: its name and, where the model declares it, its
/// type (null for outputs declared without element type or shape).
struct GraphValueInfo {
  std::string name;
  mlir::RankedTensorType type;
};

/// Reads the graph's inputs (initializers excluded) and outputs without
/// importing any node. Errors (unreadable or malformed file, inputs of
/// unsupported types) are reported through the context's diagnostic handler.
mlir::LogicalResult readOnnxSignature(llvm::StringRef path,
                                      mlir::MLIRContext *context,
                                      std::vector<GraphValueInfo> &inputs,
                                      std::vector<GraphValueInfo> &outputs);

/// The external data files of the model at `path` (as the importer resolves
/// them: relative to the model's directory), sorted and unique. Reads the
/// model without importing it; fails with a diagnostic when it cannot.
mlir::LogicalResult listExternalDataFiles(llvm::StringRef path,
                                          mlir::MLIRContext *context,
                                          std::vector<std::string> &files);

/// Prints the ONNX ops the importer handles, one per line:
/// `domain op_type since_version,since_version,...`.
void printSupportedOnnxOps(llvm::raw_ostream &os);

} // namespace mp

#endif // MP_IMPORT_ONNXIMPORTER_H
