//===- NodeContext.cpp - per-node import context and op table -------------===//

#include "NodeImporter.h"
#include "OnnxTensors.h"
#include "GraphImporter.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace mp::import {

InFlightDiagnostic NodeContext::error() const {
  StringRef domain = normalizeDomain(node.domain());
  return emitError(loc) << "node '" << displayName(node) << "' (" << node.op_type() << ", "
                        << (domain.empty() ? "ai.onnx" : domain) << " v"
                        << since << "): ";
}

FailureOr<Value> NodeContext::required(size_t i, StringRef what) const {
  if (Value v = in(i))
    return v;
  return error() << "missing required input #" << i << " (" << what << ")";
}

std::optional<SmallVector<int64_t>> NodeContext::constInts(size_t i) const {
  return getConstantInts(in(i));
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeContext::requireConstInts(size_t i, StringRef what) const {
  if (!in(i))
    return std::optional<SmallVector<int64_t>>();
  std::optional<SmallVector<int64_t>> values = constInts(i);
  if (!values)
    return error() << what << " (input #" << i
                   << ") must be a constant; computed " << what
                   << " are not supported";
  return values;
}

ValueList NodeContext::presentInputs() const {
  ValueList out;
  for (Value v : inputs)
    if (v)
      out.push_back(v);
  return out;
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

LogicalResult
NodeContext::checkAttrType(StringRef name,
                           onnx::AttributeProto::AttributeType type) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a || a->type() == type ||
      a->type() == onnx::AttributeProto::UNDEFINED)
    return success();
  return error() << "attribute '" << name << "' must be "
                 << onnx::AttributeProto::AttributeType_Name(type) << ", got "
                 << onnx::AttributeProto::AttributeType_Name(a->type());
}

const onnx::AttributeProto *
NodeContext::typedAttr(StringRef name,
                       onnx::AttributeProto::AttributeType type) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return nullptr;
  // Old writers leave `type` unset; trust the field that is filled then.
  if (a->type() == type || a->type() == onnx::AttributeProto::UNDEFINED)
    return a;
  if (attrError.empty())
    attrError = ("attribute '" + name + "' must be " +
                 onnx::AttributeProto::AttributeType_Name(type) + ", got " +
                 onnx::AttributeProto::AttributeType_Name(a->type()))
                    .str();
  return nullptr;
}

int64_t NodeContext::getInt(StringRef name, int64_t dflt) const {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::INT);
  return a ? a->i() : dflt;
}

float NodeContext::getFloat(StringRef name, float dflt) const {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : dflt;
}

std::string NodeContext::getString(StringRef name, StringRef dflt) const {
  const onnx::AttributeProto *a =
      typedAttr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : dflt.str();
}

SmallVector<int64_t> NodeContext::getInts(StringRef name) const {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::INTS);
  return a ? SmallVector<int64_t>(a->ints().begin(), a->ints().end())
           : SmallVector<int64_t>();
}

SmallVector<float> NodeContext::getFloats(StringRef name) const {
  const onnx::AttributeProto *a =
      typedAttr(name, onnx::AttributeProto::FLOATS);
  return a ? SmallVector<float>(a->floats().begin(), a->floats().end())
           : SmallVector<float>();
}

SmallVector<std::string> NodeContext::getStrings(StringRef name) const {
  const onnx::AttributeProto *a =
      typedAttr(name, onnx::AttributeProto::STRINGS);
  return a ? SmallVector<std::string>(a->strings().begin(), a->strings().end())
           : SmallVector<std::string>();
}

ValueList NodeContext::foldResults(Operation *op) {
  ValueList values(op->getResults());
  SmallVector<OpFoldResult> folded;
  if (failed(op->fold(folded)) || folded.size() != op->getNumResults())
    return values;
  for (auto [i, f] : llvm::enumerate(folded)) {
    if (auto v = dyn_cast<Value>(f)) {
      values[i] = v;
    } else if (Operation *c = op->getDialect()->materializeConstant(
                   b, cast<Attribute>(f), op->getResult(i).getType(), loc)) {
      values[i] = c->getResult(0);
    }
  }
  if (llvm::none_of(values, [&](Value v) { return v.getDefiningOp() == op; }))
    op->erase();
  return values;
}

Value NodeContext::i64Vector(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
  return ConstantOp::create(b, loc, DenseIntElementsAttr::get(type, values));
}

Value NodeContext::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (auto ft = dyn_cast<FloatType>(elementType))
    attr = DenseElementsAttr::get(type, b.getFloatAttr(ft, value));
  else
    attr = DenseElementsAttr::get(
        type, b.getIntegerAttr(elementType, (int64_t)value));
  return ConstantOp::create(b, loc, cast<ElementsAttr>(attr));
}

//===----------------------------------------------------------------------===//
// OpTable
//===----------------------------------------------------------------------===//

void OpTable::add(StringRef domain, StringRef opType, std::vector<int64_t> since,
                  ImportFn fn) {
  table[{domain.str(), opType.str()}] = Entry{std::move(since), std::move(fn)};
}

const OpTable::Entry *OpTable::lookup(StringRef domain, StringRef opType,
                                      int64_t opset, int64_t &since) const {
  auto it = table.find({domain.str(), opType.str()});
  if (it == table.end())
    return nullptr;
  since = -1;
  for (int64_t v : it->second.sinceVersions)
    if (v <= opset)
      since = v;
  return since < 0 ? nullptr : &it->second;
}

const OpTable &OpTable::get() {
  static const OpTable table = [] {
    OpTable t;
    registerElementwiseImporters(t);
    registerReductionImporters(t);
    registerNNImporters(t);
    registerShapeImporters(t);
    registerAttentionImporters(t);
    registerControlFlowImporters(t);
    registerLoopImporters(t);
    registerSequenceImporters(t);
    registerLossImporters(t);
    return t;
  }();
  return table;
}

} // namespace mp::import
