//===- GraphImporter.cpp - ONNX graph to a region of mp ops ---------------===//

#include "GraphImporter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace mp::import {

StringRef normalizeDomain(StringRef domain) {
  return domain == "ai.onnx" ? StringRef() : domain;
}

std::string displayName(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return node.name();
  for (const std::string &out : node.output())
    if (!out.empty())
      return node.op_type() + "(" + out + ")";
  return node.op_type();
}

Location GraphImporter::fileLoc(StringRef name) const {
  return NameLoc::get(StringAttr::get(ctx, name),
                      FileLineColLoc::get(ctx, modelPath, 0, 0));
}

Location GraphImporter::nodeLoc(const onnx::NodeProto &node) const {
  // The op type rides along as metadata: precision policies name op types.
  return FusedLoc::get(ctx, {fileLoc(displayName(node))},
                       StringAttr::get(ctx, node.op_type()));
}

int64_t GraphImporter::opsetOf(StringRef domain) const {
  auto it = opsets.find(normalizeDomain(domain).str());
  return it == opsets.end() ? -1 : it->second;
}

Value GraphImporter::lookup(StringRef name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return found->second;
  }
  return {};
}

FailureOr<RankedTensorType> convertValueType(const onnx::TypeProto &type,
                                             Location loc, StringRef what) {
  if (!type.has_tensor_type())
    return emitError(loc) << what << " is not a tensor (sequence, map and "
                          << "optional types are not supported)";
  const auto &tensor = type.tensor_type();
  Type elt = convertElementType(loc.getContext(), tensor.elem_type());
  if (!elt)
    return emitError(loc) << what << " has unsupported element type "
                          << onnxTypeName(tensor.elem_type());
  if (!tensor.has_shape())
    return emitError(loc) << what << " has no shape (unknown rank); mp needs "
                          << "ranked tensors";
  SmallVector<int64_t> dims;
  for (const auto &d : tensor.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() < 0)
      return emitError(loc) << what << " has negative dim " << d.dim_value();
    dims.push_back(d.has_dim_value() ? d.dim_value() : ShapedType::kDynamic);
  }
  return RankedTensorType::get(dims, elt);
}

void GraphImporter::collectUnsupported(
    const onnx::GraphProto &graph,
    std::vector<std::pair<const onnx::NodeProto *, std::string>> &bad) {
  const OpTable &table = OpTable::get();
  for (const onnx::NodeProto &node : graph.node()) {
    StringRef domain = normalizeDomain(node.domain());
    int64_t opset = opsetOf(domain);
    int64_t since = 0;
    std::string displayDomain = domain.empty() ? "ai.onnx" : domain.str();
    if (opset < 0)
      bad.push_back({&node, "the model imports no opset for domain '" +
                                displayDomain + "'"});
    else if (!table.lookup(domain, node.op_type(), opset, since))
      bad.push_back({&node, "unsupported op " + node.op_type() + " (domain " +
                                displayDomain + ", opset " +
                                std::to_string(opset) + ")"});
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.has_g())
        collectUnsupported(a.g(), bad);
      for (const onnx::GraphProto &g : a.graphs())
        collectUnsupported(g, bad);
    }
  }
}

LogicalResult GraphImporter::checkSupported(const onnx::GraphProto &graph) {
  std::vector<std::pair<const onnx::NodeProto *, std::string>> bad;
  collectUnsupported(graph, bad);
  if (bad.empty())
    return success();
  std::map<std::string, int> summary;
  for (auto &[node, why] : bad) {
    emitError(nodeLoc(*node)) << "node '" << displayName(*node) << "': " << why;
    std::string domain = normalizeDomain(node->domain()).str();
    summary[(domain.empty() ? "" : domain + "::") + node->op_type()]++;
  }
  auto diag = emitError(FileLineColLoc::get(ctx, modelPath, 0, 0))
              << bad.size() << " node(s) cannot be imported; unsupported ops:";
  for (auto &[op, n] : summary)
    diag << " " << op << " (" << n << ")";
  return failure();
}

FailureOr<Value> GraphImporter::importTensor(onnx::TensorProto &tensor,
                                             OpBuilder &b, Location loc) {
  FailureOr<ElementsAttr> attr = convertTensor(tensor, source, loc);
  if (failed(attr))
    return failure();
  return ConstantOp::create(b, loc, *attr).getResult();
}

LogicalResult GraphImporter::importBody(onnx::GraphProto &graph, OpBuilder &b) {
  if (graph.sparse_initializer_size() > 0)
    return emitError(fileLoc(graph.sparse_initializer(0).values().name()))
           << "sparse initializers are not supported";
  for (onnx::TensorProto &init : *graph.mutable_initializer()) {
    FailureOr<Value> v = importTensor(init, b, fileLoc(init.name()));
    if (failed(v))
      return failure();
    bind(init.name(), *v);
  }
  // ONNX requires topological order but exporters do not always produce it
  // (onnxruntime accepts any order): import nodes as their inputs become
  // available, keeping the file order among ready nodes.
  std::vector<onnx::NodeProto *> pending;
  for (onnx::NodeProto &node : *graph.mutable_node())
    pending.push_back(&node);
  while (!pending.empty()) {
    std::vector<onnx::NodeProto *> blocked;
    for (onnx::NodeProto *node : pending) {
      if (!isReady(*node)) {
        blocked.push_back(node);
        continue;
      }
      if (failed(importNode(*node, b)))
        return failure();
    }
    if (blocked.size() == pending.size())
      // No progress: report the first node's missing input.
      return importNode(*blocked.front(), b);
    pending = std::move(blocked);
  }
  return success();
}

void GraphImporter::collectFreeNames(const onnx::GraphProto &graph,
                                     llvm::StringSet<> &names) {
  llvm::StringSet<> defined;
  for (const auto &v : graph.input())
    defined.insert(v.name());
  for (const auto &t : graph.initializer())
    defined.insert(t.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      defined.insert(out);
  for (const onnx::NodeProto &node : graph.node()) {
    llvm::StringSet<> used;
    for (const std::string &in : node.input())
      if (!in.empty())
        used.insert(in);
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.has_g())
        collectFreeNames(a.g(), used);
      for (const onnx::GraphProto &g : a.graphs())
        collectFreeNames(g, used);
    }
    for (const auto &u : used)
      if (!defined.contains(u.getKey()))
        names.insert(u.getKey());
  }
}

bool GraphImporter::isReady(const onnx::NodeProto &node) {
  for (const std::string &in : node.input())
    if (!in.empty() && !lookup(in))
      return false;
  llvm::StringSet<> outer;
  for (const onnx::AttributeProto &a : node.attribute()) {
    if (a.has_g())
      collectFreeNames(a.g(), outer);
    for (const onnx::GraphProto &g : a.graphs())
      collectFreeNames(g, outer);
  }
  for (const auto &name : outer)
    if (!lookup(name.getKey()))
      return false;
  return true;
}

LogicalResult GraphImporter::importSubgraph(onnx::GraphProto &graph,
                                            OpBuilder &b,
                                            SmallVectorImpl<Value> &outputs,
                                            ValueRange inputs) {
  if (graph.input_size() != (int)inputs.size())
    return emitError(fileLoc(graph.name()))
           << "subgraph '" << graph.name() << "' takes " << graph.input_size()
           << " inputs but is given " << inputs.size();
  pushScope();
  llvm::scope_exit restore([&] { popScope(); });
  for (auto [in, v] : llvm::zip(graph.input(), inputs))
    bind(in.name(), v);
  if (failed(importBody(graph, b)))
    return failure();
  for (const onnx::ValueInfoProto &out : graph.output()) {
    Value v = lookup(out.name());
    if (!v)
      return emitError(fileLoc(out.name()))
             << "subgraph '" << graph.name() << "' output '" << out.name()
             << "' is not produced by any node";
    outputs.push_back(v);
  }
  return success();
}

LogicalResult GraphImporter::importNode(onnx::NodeProto &node, OpBuilder &b) {
  Location loc = nodeLoc(node);
  StringRef domain = normalizeDomain(node.domain());
  int64_t since = 0;
  const OpTable::Entry *entry =
      OpTable::get().lookup(domain, node.op_type(), opsetOf(domain), since);
  if (!entry) // checkSupported ran first; this only guards misuse.
    return emitError(loc) << "node '" << displayName(node)
                          << "': unsupported op " << node.op_type();

  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back({});
      continue;
    }
    Value v = lookup(name);
    if (!v)
      return emitError(loc) << "node '" << displayName(node) << "' ("
                            << node.op_type() << ") uses '" << name
                            << "', which no earlier node, input or initializer "
                               "defines (is the graph topologically sorted?)";
    inputs.push_back(v);
  }

  NodeContext context(b, loc, node, since, *this, inputs);
  FailureOr<ValueList> results = entry->fn(context);
  if (failed(results))
    return failure();
  if (!context.attrError.empty())
    return context.error() << context.attrError;
  for (auto [i, name] : llvm::enumerate(node.output())) {
    if (name.empty())
      continue;
    if (i >= results->size() || !(*results)[i])
      return context.error() << "output #" << i << " ('" << name
                             << "') is not supported by mp's import of "
                             << node.op_type();
    if (scopes.back().count(name))
      return context.error() << "output '" << name
                             << "' is already defined (ONNX values are "
                                "assigned once)";
    bind(name, (*results)[i]);
  }
  return success();
}

} // namespace mp::import
