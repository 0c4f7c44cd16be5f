//===- SpecializeShapes.cpp - pin graph-input dims and re-infer shapes ----===//

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Support/ShapeSyntax.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mp {
#define GEN_PASS_DEF_SPECIALIZESHAPES
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

/// Sets every result type of `op` to its inferred type where that is more
/// static. Returns true if something changed.
bool refine(Operation *op) {
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  SmallVector<Type> types;
  if (infer) {
    if (failed(infer.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      return false;
  } else if (auto ifOp = dyn_cast<IfOp>(op)) {
    auto thenYield = ifOp.getThenBranch().front().getTerminator();
    auto elseYield = ifOp.getElseBranch().front().getTerminator();
    for (auto [a, b] : llvm::zip(thenYield->getOperandTypes(),
                                 elseYield->getOperandTypes()))
      types.push_back(a == b ? a : Type());
  } else {
    return false;
  }
  bool changed = false;
  for (auto [result, type] : llvm::zip(op->getResults(), types)) {
    if (!type || type == result.getType())
      continue;
    auto now = cast<ShapedType>(result.getType());
    auto inferred = cast<ShapedType>(type);
    if (inferred.getElementType() != now.getElementType() ||
        failed(verifyCompatibleShape(inferred, now)) ||
        inferred.getNumDynamicDims() >= now.getNumDynamicDims())
      continue;
    result.setType(type);
    changed = true;
  }
  return changed;
}

struct SpecializeShapesPass
    : public mp::impl::SpecializeShapesBase<SpecializeShapesPass> {
  using SpecializeShapesBase::SpecializeShapesBase;

  void runOnOperation() override {
    llvm::StringMap<SmallVector<int64_t>> pins;
    for (const std::string &entry : shapes) {
      auto [name, dims] = StringRef(entry).rsplit('=');
      std::optional<SmallVector<int64_t>> parsed = mp::parseShape(dims);
      if (name.empty() || !StringRef(entry).contains('=') || !parsed) {
        emitError(getOperation().getLoc())
            << "bad shape '" << entry << "' (expected NAME=DxDxD)";
        return signalPassFailure();
      }
      pins[name] = *parsed;
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(specialize(func, pins)))
        return signalPassFailure();
    for (auto &[name, dims] : pins)
      if (!used.contains(name)) {
        emitError(getOperation().getLoc())
            << "no graph input named '" << name << "'";
        return signalPassFailure();
      }
  }

  LogicalResult specialize(func::FuncOp func,
                           const llvm::StringMap<SmallVector<int64_t>> &pins) {
    if (func.isDeclaration())
      return success();
    for (BlockArgument arg : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    "mp.name");
      if (!name || !pins.count(name.getValue()))
        continue;
      used.insert(name.getValue());
      auto type = cast<RankedTensorType>(arg.getType());
      auto pinned = RankedTensorType::get(pins.lookup(name.getValue()),
                                          type.getElementType());
      if (failed(verifyCompatibleShape(type, pinned)))
        return emitError(func.getLoc())
               << "input '" << name.getValue() << "' of type " << type
               << " cannot take the shape " << pinned;
      arg.setType(pinned);
    }
    // Re-infer and fold until the types stop changing: folded shape
    // computations make more results static, and newly static types let
    // more fold. Every round removes a dynamic dim or folds ops away, so
    // this ends; deep vocoders chain one padding computation per layer
    // and need a round per layer.
    // No patterns: the greedy driver still folds every op.
    FrozenRewritePatternSet noPatterns{RewritePatternSet(&getContext())};
    bool changed = true;
    while (changed) {
      changed = false;
      func.walk<WalkOrder::PostOrder>(
          [&](Operation *op) { changed |= refine(op); });
      bool folded = false;
      (void)applyPatternsGreedily(func.getOperation(), noPatterns,
                                  GreedyRewriteConfig(), &folded);
      changed |= folded;
    }
    Operation *ret = func.getBody().front().getTerminator();
    func.setType(FunctionType::get(&getContext(),
                                   func.getBody().getArgumentTypes(),
                                   ret->getOperandTypes()));
    return success();
  }

  llvm::StringSet<> used;
};

} // namespace
