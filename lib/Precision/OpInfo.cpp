//===- OpInfo.cpp - what precision passes need to know of an op -----------===//

#include "mp/Precision/OpInfo.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/Policy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace mp {

std::string onnxNodeName(Operation *op) {
  std::string name;
  op->getLoc()->walk([&](Location loc) {
    if (auto n = dyn_cast<NameLoc>(loc)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

std::string onnxOpType(Operation *op) {
  if (auto fused = dyn_cast<FusedLoc>(op->getLoc()))
    if (auto type = dyn_cast_if_present<StringAttr>(fused.getMetadata()))
      return type.str();
  if (const DefaultPolicyEntry *e =
          findDefaultEntry(op->getName().getStringRef()))
    return e->opType;
  return op->getName().getStringRef().str();
}

static bool isFloatTensor(Type t) {
  auto shaped = dyn_cast<ShapedType>(t);
  return shaped && isa<FloatType>(shaped.getElementType());
}

bool isPrecisionNode(Operation *op) {
  if (!isa<MpDialect>(op->getDialect()) || isa<ConstantOp, YieldOp>(op) ||
      op->hasTrait<KeepsFp32>())
    return false;
  if (auto cast = dyn_cast<CastOp>(op))
    return isFloatTensor(cast.getInput().getType()) &&
           isFloatTensor(cast.getType());
  if (readsOnlyShape(op))
    return false;
  return llvm::any_of(op->getOperandTypes(), isFloatTensor) ||
         llvm::any_of(op->getResultTypes(), isFloatTensor);
}

DenseMap<Operation *, std::string> precisionNodeKeys(Operation *root) {
  DenseMap<Operation *, std::string> keys;
  std::string prefix;
  if (auto func = dyn_cast<func::FuncOp>(root))
    if (auto module = func->getParentOfType<ModuleOp>())
      if (llvm::range_size(module.getOps<func::FuncOp>()) > 1)
        prefix = ("@" + func.getName() + ":").str();
  llvm::StringSet<> seen;
  unsigned ordinal = 0;
  root->walk([&](Operation *op) {
    if (op == root || !isPrecisionNode(op))
      return;
    std::string name = onnxNodeName(op);
    if (name.empty() || !seen.insert(name).second)
      name = (name.empty() ? onnxOpType(op) : name) + "#" +
             std::to_string(ordinal);
    keys[op] = prefix + name;
    ++ordinal;
  });
  return keys;
}

bool readsOnlyShape(Operation *op) {
  // The Like forms of the random ops take only the input's shape (their
  // dtype is an attribute).
  return isa<ShapeOp, SizeOp, RandomNormalOp, RandomUniformOp>(op);
}

bool isIndexOperand(Operation *op, unsigned index) {
  auto is = [&](Value v) { return v && op->getOperand(index) == v; };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<ReshapeOp, ExpandOp>([&](auto o) { return index == 1; })
      .Case([&](TileOp o) { return is(o.getRepeats()); })
      .Case([&](ConstantOfShapeOp) { return true; })
      .Case([&](RangeOp) { return true; })
      .Case([&](SliceOp o) { return index != 0; })
      .Case([&](PadOp o) { return is(o.getPads()) || is(o.getAxes()); })
      .Case([&](ResizeOp o) { return index != 0; })
      .Case<GatherOp, GatherElementsOp, GatherNDOp, ScatterNDOp,
            ScatterElementsOp>([&](auto o) { return index == 1; })
      .Case([&](TensorScatterOp o) { return is(o.getWriteIndices()); })
      .Case([&](TriluOp o) { return is(o.getK()); })
      .Case([&](TopKOp o) { return is(o.getK()); })
      .Case([&](OneHotOp o) { return is(o.getIndices()) || is(o.getDepth()); })
      .Case([&](RotaryEmbeddingOp o) { return is(o.getPositionIds()); })
      .Case([&](MsRotaryEmbeddingOp o) { return is(o.getPositionIds()); })
      .Case([&](EmbedLayerNormOp o) {
        return is(o.getInputIds()) || is(o.getSegmentIds()) ||
               is(o.getMask()) || is(o.getPositionIds());
      })
      .Case([&](AttentionOp o) {
        return is(o.getNonpadKvSeqlen()) || is(o.getPastLength());
      })
      .Case([&](MsAttentionOp o) { return is(o.getMaskIndex()); })
      .Case([&](MultiHeadAttentionOp o) { return is(o.getKeyPaddingMask()); })
      .Case([&](GroupQueryAttentionOp o) {
        return is(o.getSeqlensK()) || is(o.getTotalSequenceLength()) ||
               is(o.getPositionIds());
      })
      .Case<LSTMOp, GRUOp, RNNOp>(
          [&](auto o) { return is(o.getSequenceLens()); })
      .Default([](Operation *) { return false; });
}

bool resultFollowsCompute(Operation *op, unsigned index) {
  if (!isFloatTensor(op->getResult(index).getType()))
    return false;
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<LayerNormOp, SkipLayerNormOp>([&](auto) {
        return index == 0 || index == 3;
      })
      .Case([&](RMSNormOp) { return index == 0; })
      .Default([](Operation *) { return true; });
}

} // namespace mp
