//===- ControlFlowImporters.cpp - If ---------------------------------------===//

#include "../GraphImporter.h"
#include "../NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace mp::import {
namespace {

/// The most specific type compatible with both branch values, or null.
Type joinTypes(Type a, Type b) {
  if (a == b)
    return a;
  auto ta = dyn_cast<RankedTensorType>(a), tb = dyn_cast<RankedTensorType>(b);
  if (!ta || !tb || ta.getElementType() != tb.getElementType() ||
      ta.getRank() != tb.getRank())
    return {};
  SmallVector<int64_t> dims;
  for (auto [x, y] : llvm::zip(ta.getShape(), tb.getShape()))
    dims.push_back(x == y ? x : ShapedType::kDynamic);
  return RankedTensorType::get(dims, ta.getElementType());
}

FailureOr<ValueList> importIf(NodeContext &n) {
  FailureOr<Value> cond = n.required(0, "cond");
  if (failed(cond))
    return failure();
  const onnx::AttributeProto *thenAttr = n.attr("then_branch");
  const onnx::AttributeProto *elseAttr = n.attr("else_branch");
  if (!thenAttr || !elseAttr || !thenAttr->has_g() || !elseAttr->has_g())
    return n.error() << "If needs then_branch and else_branch graphs";

  // Import each branch into a detached block, then build the op around them.
  SmallVector<std::unique_ptr<Block>, 2> blocks;
  SmallVector<SmallVector<Value>, 2> yields(2);
  for (auto [i, attr] : llvm::enumerate(ArrayRef{thenAttr, elseAttr})) {
    blocks.push_back(std::make_unique<Block>());
    OpBuilder inner(n.ctx());
    inner.setInsertionPointToEnd(blocks.back().get());
    auto &graph = const_cast<onnx::GraphProto &>(attr->g());
    if (failed(n.graph.importSubgraph(graph, inner, yields[i])))
      return failure();
    YieldOp::create(inner, n.loc, yields[i]);
  }
  if (yields[0].size() != yields[1].size() ||
      yields[0].size() != (size_t)n.node.output_size())
    return n.error() << "branches yield " << yields[0].size() << " and "
                     << yields[1].size() << " values for "
                     << n.node.output_size() << " outputs";
  SmallVector<Type> types;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(yields[0], yields[1]))) {
    auto [a, b] = pair;
    Type t = joinTypes(a.getType(), b.getType());
    if (!t)
      return n.error() << "output #" << i << " has type " << a.getType()
                       << " in then_branch and " << b.getType()
                       << " in else_branch; mp needs one element type and rank";
    types.push_back(t);
  }
  auto op = IfOp::create(n.b, n.loc, types, *cond);
  op.getThenBranch().push_back(blocks[0].release());
  op.getElseBranch().push_back(blocks[1].release());
  return ValueList(op.getResults());
}

} // namespace

void registerControlFlowImporters(OpTable &t) {
  t.add("If", {1, 11, 13, 16, 19, 21, 23, 24, 25}, importIf);
}

} // namespace mp::import
