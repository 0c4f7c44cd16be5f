//===- GraphImporter.h - ONNX graph to a region of mp ops -------*- C++ -*-===//

#ifndef MP_LIB_IMPORT_GRAPHIMPORTER_H
#define MP_LIB_IMPORT_GRAPHIMPORTER_H

#include "NodeImporter.h"
#include "OnnxTensors.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mp::import {

/// Imports ONNX graphs (the main graph and If branches) into mp ops. Names
/// resolve through a stack of scopes so that subgraphs see outer values.
class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext *ctx, std::string modelPath,
                std::map<std::string, int64_t> opsets, TensorSource source)
      : ctx(ctx), modelPath(std::move(modelPath)), opsets(std::move(opsets)),
        source(std::move(source)) {}

  /// Location of `node`: its ONNX name (or its first output's) in the model.
  mlir::Location nodeLoc(const onnx::NodeProto &node) const;
  /// Location for graph-level entities (inputs, initializers).
  mlir::Location fileLoc(llvm::StringRef name) const;

  /// The opset the model imports for `domain`, or -1.
  int64_t opsetOf(llvm::StringRef domain) const;

  /// Checks every node of `graph` (and nested graphs) against the op table;
  /// reports each unsupported node and a summary. Fails if any.
  mlir::LogicalResult checkSupported(const onnx::GraphProto &graph);

  /// Binds `name` to `value` in the innermost scope.
  void bind(llvm::StringRef name, mlir::Value value) {
    scopes.back()[name] = value;
  }
  /// The value named `name` in the innermost scope that has it.
  mlir::Value lookup(llvm::StringRef name) const;

  /// Imports the initializers and nodes of `graph` at `b`'s insertion point.
  mlir::LogicalResult importBody(onnx::GraphProto &graph, mlir::OpBuilder &b);

  /// Imports a subgraph in a new scope, its inputs bound to `inputs` (one
  /// each: If branches take none, an unrolled Loop or Scan iteration its
  /// state), and returns its outputs.
  mlir::LogicalResult
  importSubgraph(onnx::GraphProto &graph, mlir::OpBuilder &b,
                 llvm::SmallVectorImpl<mlir::Value> &outputs,
                 mlir::ValueRange inputs = {});

  /// Imports a tensor as an `mp.constant`.
  mlir::FailureOr<mlir::Value> importTensor(onnx::TensorProto &tensor,
                                            mlir::OpBuilder &b,
                                            mlir::Location loc);

  /// Imports `body` once per call (an unrolled Loop or Scan iteration):
  /// like importSubgraph, but the body's tensors stay in the proto for the
  /// next iteration.
  mlir::LogicalResult
  importIteration(onnx::GraphProto &body, mlir::OpBuilder &b,
                  llvm::SmallVectorImpl<mlir::Value> &outputs,
                  mlir::ValueRange inputs) {
    bool take = source.takeRawData;
    source.takeRawData = false;
    mlir::LogicalResult result = importSubgraph(body, b, outputs, inputs);
    source.takeRawData = take;
    return result;
  }

  void pushScope() { scopes.emplace_back(); }
  void popScope() { scopes.pop_back(); }

  const std::string &path() const { return modelPath; }

private:
  mlir::LogicalResult importNode(onnx::NodeProto &node, mlir::OpBuilder &b);
  /// True when every value `node` reads (inputs and the outer names its
  /// subgraphs use) is defined.
  bool isReady(const onnx::NodeProto &node);
  /// Adds the names `graph` uses but does not define.
  static void collectFreeNames(const onnx::GraphProto &graph,
                               llvm::StringSet<> &names);
  void collectUnsupported(
      const onnx::GraphProto &graph,
      std::vector<std::pair<const onnx::NodeProto *, std::string>> &bad);

  mlir::MLIRContext *ctx;
  std::string modelPath;
  std::map<std::string, int64_t> opsets;
  TensorSource source;
  std::vector<llvm::StringMap<mlir::Value>> scopes;
};

/// Whether two If branches declare outputs of different element types or
/// ranks (then only the branch taken can be imported).
bool branchesDeclareDifferentTypes(const onnx::GraphProto &thenBranch,
                                   const onnx::GraphProto &elseBranch);

/// The value of `v` if folding its producers over constants gives one: the
/// shape logic in front of an If or a Loop folds once the input shapes are
/// known.
mlir::Attribute foldedValue(mlir::Value v, int depth = 0);

/// The value of a boolean scalar (an If or Loop condition) when it is known
/// at import.
std::optional<bool> knownCondition(mlir::Value cond);

/// ONNX sequences while importing: a list of tensors behind a marker op that
/// the sequence ops read and build (SequenceImporters.cpp).
mlir::Value makeSequence(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::ValueRange elements);
/// The elements of `v` if it is a sequence.
std::optional<mlir::ValueRange> sequenceElements(mlir::Value v);
/// Erases the sequence markers under `root` once the graph is imported;
/// fails (naming the op) where a sequence reaches an op that takes tensors.
mlir::LogicalResult eraseSequences(mlir::Operation *root);

/// Converts an ONNX type to a ranked tensor type; dynamic dims are `?`.
/// Fails (with an error at `loc`) for non-tensor or unranked types.
mlir::FailureOr<mlir::RankedTensorType>
convertValueType(const onnx::TypeProto &type, mlir::Location loc,
                 llvm::StringRef what);

} // namespace mp::import

#endif // MP_LIB_IMPORT_GRAPHIMPORTER_H
