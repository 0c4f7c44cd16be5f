//===- NodeImporter.h - per-node import context and op table ----*- C++ -*-===//
//
// Private to the importer. Each ONNX op is imported by a function
// `FailureOr<SmallVector<Value>> (NodeContext &)` registered in the op table
// under (domain, op_type) with the ONNX since-versions it was reviewed
// against. `NodeContext::since` is the since-version in force for the
// model's opset, so handlers branch on semantics, not on raw opsets.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_IMPORT_NODEIMPORTER_H
#define MP_LIB_IMPORT_NODEIMPORTER_H

#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <map>

namespace mp::import {

using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::Type;
using mlir::Value;
using ValueList = llvm::SmallVector<Value, 4>;

class GraphImporter;

/// What a handler sees of one ONNX node.
class NodeContext {
public:
  NodeContext(mlir::OpBuilder &builder, mlir::Location loc,
              const onnx::NodeProto &node, int64_t since, GraphImporter &graph,
              llvm::ArrayRef<Value> inputs)
      : b(builder), loc(loc), node(node), since(since), graph(graph),
        inputs(inputs) {}

  mlir::OpBuilder &b;
  mlir::Location loc;
  const onnx::NodeProto &node;
  /// The ONNX since-version of this op in force for the model's opset.
  int64_t since;
  GraphImporter &graph;

  mlir::MLIRContext *ctx() const { return b.getContext(); }

  /// Emits an error naming the node, its op type and opset.
  mlir::InFlightDiagnostic error() const;

  //===--- inputs ---------------------------------------------------------===//
  /// Number of inputs the node lists (including empty optional slots).
  size_t numInputs() const { return inputs.size(); }
  /// Input `i`, or a null Value when absent or empty.
  Value in(size_t i) const { return i < inputs.size() ? inputs[i] : Value(); }
  /// Input `i`; reports an error when absent.
  FailureOr<Value> required(size_t i, llvm::StringRef what) const;
  /// The integer values of input `i` when it is a constant (after folding).
  std::optional<llvm::SmallVector<int64_t>> constInts(size_t i) const;
  /// Like constInts but reports an error naming `what` when the input is
  /// present and not constant. Returns nullopt (no error) when absent.
  FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  requireConstInts(size_t i, llvm::StringRef what) const;
  /// All present inputs, in order.
  ValueList presentInputs() const;

  //===--- attributes -----------------------------------------------------===//
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  /// Checks that attribute `name`, if present, has type `type`.
  LogicalResult checkAttrType(llvm::StringRef name,
                              onnx::AttributeProto::AttributeType type) const;
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  int64_t getInt(llvm::StringRef name, int64_t dflt) const;
  float getFloat(llvm::StringRef name, float dflt) const;
  std::string getString(llvm::StringRef name, llvm::StringRef dflt) const;
  llvm::SmallVector<int64_t> getInts(llvm::StringRef name) const;
  llvm::SmallVector<float> getFloats(llvm::StringRef name) const;
  llvm::SmallVector<std::string> getStrings(llvm::StringRef name) const;

  mlir::IntegerAttr i64Attr(llvm::StringRef name, int64_t dflt) const {
    return b.getI64IntegerAttr(getInt(name, dflt));
  }
  mlir::FloatAttr f32Attr(llvm::StringRef name, float dflt) const {
    return b.getF32FloatAttr(getFloat(name, dflt));
  }
  mlir::BoolAttr boolAttr(llvm::StringRef name, bool dflt) const {
    return b.getBoolAttr(getInt(name, dflt) != 0);
  }
  mlir::StringAttr strAttr(llvm::StringRef name, llvm::StringRef dflt) const {
    return b.getStringAttr(getString(name, dflt));
  }
  mlir::DenseI64ArrayAttr intsAttr(llvm::ArrayRef<int64_t> values) const {
    return b.getDenseI64ArrayAttr(values);
  }

  //===--- building -------------------------------------------------------===//
  /// Creates `OpTy` with inferred result types. Arguments are those of the
  /// ODS builder that takes result types, without them. Type inference
  /// errors are reported at the node (no crash) and give failure.
  template <typename OpTy, typename... Args>
  FailureOr<OpTy> create(Args &&...args) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    llvm::SmallVector<Type, 4> placeholders(numFixedResults<OpTy>(),
                                            b.getNoneType());
    OpTy::build(b, state, mlir::TypeRange(placeholders),
                std::forward<Args>(args)...);
    // Inference reads attributes before the op exists: give it defaults.
    if constexpr (!std::is_same_v<typename OpTy::Properties,
                                  mlir::EmptyProperties>) {
      state.getOrAddProperties<typename OpTy::Properties>();
      state.name.populateDefaultProperties(state.getRawProperties());
    }
    if (failed(inferTypes<OpTy>(state)))
      return mlir::failure();
    return mlir::cast<OpTy>(b.create(state));
  }

  /// Creates `OpTy` and returns its results, folded to constants where the
  /// op folds (static shape computations), so that later ops see them.
  template <typename OpTy, typename... Args>
  FailureOr<ValueList> results(Args &&...args) {
    FailureOr<OpTy> op = create<OpTy>(std::forward<Args>(args)...);
    if (failed(op))
      return mlir::failure();
    return foldResults(*op);
  }

  /// The results of `op`, replaced by constants or existing values where it
  /// folds (the op is erased if nothing uses it any more).
  ValueList foldResults(mlir::Operation *op);

  /// A constant i64 vector (for shapes, axes, pads).
  Value i64Vector(llvm::ArrayRef<int64_t> values);
  /// A rank-0 constant of `elementType` holding `value`.
  Value scalar(Type elementType, double value);

private:
  template <typename OpTy> static unsigned numFixedResults() {
    using namespace mlir::OpTrait;
    if constexpr (OpTy::template hasTrait<OneResult>())
      return 1;
    else if constexpr (OpTy::template hasTrait<NResults<2>::Impl>())
      return 2;
    else if constexpr (OpTy::template hasTrait<NResults<3>::Impl>())
      return 3;
    else if constexpr (OpTy::template hasTrait<NResults<4>::Impl>())
      return 4;
    else
      return 0;
  }

  template <typename OpTy> LogicalResult inferTypes(mlir::OperationState &state) {
    // mp ops take ranked tensors; inference reads shapes and would crash on
    // anything else. The only other values while importing are ONNX
    // sequences (tuples behind a marker, SequenceImporters.cpp).
    for (auto [i, v] : llvm::enumerate(state.operands))
      if (!mlir::isa<mlir::RankedTensorType>(v.getType()))
        return error() << "operand #" << i << " of " << OpTy::getOperationName()
                       << " is " << v.getType()
                       << ", not a tensor: mp reads ONNX sequences only in "
                          "the sequence ops, Loop and Scan";
    llvm::SmallVector<Type, 4> types;
    std::string message;
    LogicalResult inferred = mlir::success();
    {
      // Re-emit inference errors prefixed with the node, op type and opset.
      mlir::ScopedDiagnosticHandler capture(ctx(), [&](mlir::Diagnostic &d) {
        if (message.empty())
          message = d.str();
        return mlir::success();
      });
      inferred = OpTy::inferReturnTypes(
          ctx(), loc, state.operands, state.attributes.getDictionary(ctx()),
          state.getRawProperties(), state.regions, types);
    }
    if (failed(inferred))
      return error() << (message.empty() ? "type inference failed" : message);
    state.types.assign(types.begin(), types.end());
    return mlir::success();
  }

  /// Attribute `name` if present with type `type`; records a type error
  /// (reported after the handler) otherwise.
  const onnx::AttributeProto *
  typedAttr(llvm::StringRef name,
            onnx::AttributeProto::AttributeType type) const;

  llvm::ArrayRef<Value> inputs;

public:
  /// The first attribute type error a getter saw, if any.
  mutable std::string attrError;
};

/// An op handler. Returns one Value per ONNX output (null for outputs the
/// op does not produce); trailing outputs may be omitted.
using ImportFn = std::function<FailureOr<ValueList>(NodeContext &)>;

/// The (domain, op_type) → handler table.
class OpTable {
public:
  struct Entry {
    std::vector<int64_t> sinceVersions;
    ImportFn fn;
  };

  /// Registers `opType` of `domain` ("" is ai.onnx) reviewed against the ONNX
  /// since-versions `since` (ascending).
  void add(llvm::StringRef domain, llvm::StringRef opType,
           std::vector<int64_t> since, ImportFn fn);
  void add(llvm::StringRef opType, std::vector<int64_t> since, ImportFn fn) {
    add("", opType, std::move(since), std::move(fn));
  }

  /// The entry and the since-version in force for `opset`, if supported.
  const Entry *lookup(llvm::StringRef domain, llvm::StringRef opType,
                      int64_t opset, int64_t &since) const;

  const std::map<std::pair<std::string, std::string>, Entry> &entries() const {
    return table;
  }

  /// The table with every family registered.
  static const OpTable &get();

private:
  std::map<std::pair<std::string, std::string>, Entry> table;
};

/// The name diagnostics use for `node`: its ONNX name, else
/// "OpType(first output)".
std::string displayName(const onnx::NodeProto &node);

/// Normalized ONNX domain name ("ai.onnx" → "").
llvm::StringRef normalizeDomain(llvm::StringRef domain);

/// The MLIR element type of an ONNX TensorProto data type, or null.
Type convertElementType(mlir::MLIRContext *ctx, int32_t onnxType);

/// Registration of one op family each (lib/Import/Ops/*.cpp).
void registerElementwiseImporters(OpTable &table);
void registerReductionImporters(OpTable &table);
void registerNNImporters(OpTable &table);
void registerShapeImporters(OpTable &table);
void registerAttentionImporters(OpTable &table);
void registerControlFlowImporters(OpTable &table);
void registerLoopImporters(OpTable &table);
void registerSequenceImporters(OpTable &table);
void registerLossImporters(OpTable &table);

} // namespace mp::import

#endif // MP_LIB_IMPORT_NODEIMPORTER_H
