//===- ControlFlowImporters.cpp - If, and folding at import
//---------------------------------------===//

#include "../GraphImporter.h"
#include "../NodeImporter.h"

#include "mlir/IR/Matchers.h"
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

  // A condition known now (from constants, compiled-in inputs or input
  // shapes) imports only the branch taken: the graph stays one block, which
  // the precision passes see whole (calibration measures every node of it).
  // Branches that declare outputs of different rank (TorchScript's
  // `squeeze(d)` when dim d may or may not be 1) cannot be one op: for them
  // the condition must be known now, as it is once the input shapes are.
  if (std::optional<bool> taken = knownCondition(*cond)) {
    SmallVector<Value> outputs;
    auto &graph =
        const_cast<onnx::GraphProto &>((*taken ? thenAttr : elseAttr)->g());
    if (failed(n.graph.importSubgraph(graph, n.b, outputs)))
      return failure();
    return ValueList(outputs.begin(), outputs.end());
  }
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
    if (t) {
      types.push_back(t);
      continue;
    }
    return n.error() << "output #" << i << " has type " << a.getType()
                     << " in then_branch and " << b.getType()
                     << " in else_branch, and the condition is not known "
                        "when importing; mp folds such an If when its "
                        "condition follows from the input shapes (mp-run, "
                        "mp.compile and mp-compile import with them; with "
                        "--dynamic-shapes, fix the dims it reads with "
                        "mp-compile --input-shape)";
  }
  auto op = IfOp::create(n.b, n.loc, types, *cond);
  op.getThenBranch().push_back(blocks[0].release());
  op.getElseBranch().push_back(blocks[1].release());
  return ValueList(op.getResults());
}

} // namespace

/// The value of `v` if folding its producers over constants gives one: the
/// shape logic in front of an If (Shape -> Gather -> Equal) folds once the
/// input shapes are known.
Attribute foldedValue(Value v, int depth) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 32 || def->getNumRegions() > 0)
    return {};
  SmallVector<Attribute> operands;
  for (Value operand : def->getOperands())
    operands.push_back(foldedValue(operand, depth + 1));
  SmallVector<OpFoldResult> results;
  if (failed(def->fold(operands, results)) || results.empty())
    return {};
  OpFoldResult r = results[cast<OpResult>(v).getResultNumber()];
  if (auto a = dyn_cast<Attribute>(r))
    return a;
  return foldedValue(cast<Value>(r), depth + 1);
}

/// The condition of an If, when it is known at import.
std::optional<bool> knownCondition(Value cond) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(foldedValue(cond));
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  if (dense.getElementType().isInteger(1))
    return *dense.getValues<bool>().begin();
  return std::nullopt;
}

bool branchesDeclareDifferentTypes(const onnx::GraphProto &a,
                                   const onnx::GraphProto &b) {
  if (a.output_size() != b.output_size())
    return false;
  for (int i = 0; i < a.output_size(); ++i) {
    const auto &ta = a.output(i).type().tensor_type();
    const auto &tb = b.output(i).type().tensor_type();
    if (ta.elem_type() != tb.elem_type() || ta.has_shape() != tb.has_shape() ||
        (ta.has_shape() && ta.shape().dim_size() != tb.shape().dim_size()))
      return true;
  }
  return false;
}

void registerControlFlowImporters(OpTable &t) {
  t.add("If", {1, 11, 13, 16, 19, 21, 23, 24, 25}, importIf);
}

} // namespace mp::import
