//===- BuildTrainingStep.cpp - the mp-build-training-step pass ------------===//
//
// forward graph + scalar loss -> one function computing the loss, the
// gradients of the trained weights and the optimizer's update, with every
// piece of state an argument and a result.
//
//===----------------------------------------------------------------------===//

#include "NamedSignature.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Transforms/Gradients.h"
#include "mp/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"

namespace mp {
#define GEN_PASS_DEF_BUILDTRAININGSTEP
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

/// The initializer name of a constant the importer made from one.
std::optional<std::string> initializerName(ConstantOp c) {
  auto loc = dyn_cast<NameLoc>(c.getLoc());
  if (!loc)
    return std::nullopt;
  return loc.getName().str();
}

bool isTrainable(ConstantOp c) {
  auto type = cast<RankedTensorType>(c.getType());
  return initializerName(c) && isa<FloatType>(type.getElementType()) &&
         type.getRank() >= 1;
}

struct BuildTrainingStepPass
    : public mp::impl::BuildTrainingStepBase<BuildTrainingStepPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = entryFunction(getOperation(), getArgument());
    if (!func || failed(build(func)))
      return signalPassFailure();
  }

  LogicalResult build(func::FuncOp func) {
    if (optimizer != "sgd" && optimizer != "adamw" && optimizer != "none")
      return emitError(func.getLoc())
             << getArgument() << ": unknown optimizer '" << optimizer
             << "' (expected sgd, adamw or none)";
    FailureOr<Value> lossValue = findLoss(func);
    if (failed(lossValue))
      return failure();
    FailureOr<SmallVector<ConstantOp>> trained = chooseWeights(func, *lossValue);
    if (failed(trained))
      return failure();

    // The master weights become fp32 arguments.
    SmallVector<std::string> names;
    SmallVector<Value> weights;
    OpBuilder b = OpBuilder::atBlockBegin(&func.front());
    for (ConstantOp c : *trained) {
      auto type = cast<RankedTensorType>(c.getType());
      std::string name = *initializerName(c);
      BlockArgument arg = addNamedArgument(
          func, type.clone(b.getF32Type()), name);
      Value use = arg;
      if (type.getElementType() != b.getF32Type())
        use = CastOp::create(b, c.getLoc(), arg,
                             TypeAttr::get(type.getElementType()));
      c.getResult().replaceAllUsesWith(use);
      c.erase();
      names.push_back(name);
      weights.push_back(arg);
    }

    Operation *ret = func.front().getTerminator();
    b.setInsertionPoint(ret);
    Location loc = lossValue->getLoc();
    auto lossType = cast<RankedTensorType>(lossValue->getType());
    // d(loss)/d(loss); mp-insert-loss-scaling replaces it with the scale.
    auto seed = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            lossType, b.getFloatAttr(lossType.getElementType(), 1.0)));
    seed->setAttr("mp.loss_seed", b.getUnitAttr());
    FailureOr<SmallVector<Value>> grads =
        buildGradients(b, *lossValue, seed, weights);
    if (failed(grads))
      return failure();

    SmallVector<NamedValue> results = {{loss, *lossValue}};
    SmallVector<NamedValue> gradResults;
    for (auto [name, g] : llvm::zip(names, *grads))
      gradResults.push_back({name + ".grad", g});
    if (optimizer == "sgd")
      appendSgd(func, b, names, weights, *grads, results);
    else if (optimizer == "adamw")
      appendAdamW(func, b, names, weights, *grads, results);
    if (optimizer == "none" || gradients)
      results.append(gradResults);
    setNamedResults(func, results);
    eraseDeadOps(func);
    return success();
  }

  FailureOr<Value> findLoss(func::FuncOp func) {
    SmallVector<NamedValue> outputs = namedResults(func);
    std::string known;
    for (const auto &[name, v] : outputs) {
      if (name == loss) {
        auto type = cast<RankedTensorType>(v.getType());
        if (!isa<FloatType>(type.getElementType()) ||
            !type.hasStaticShape() || type.getNumElements() != 1)
          return emitError(func.getLoc())
                 << getArgument() << ": the loss '" << loss
                 << "' must be one float element, got " << type;
        return v;
      }
      known += (known.empty() ? "'" : ", '") + name + "'";
    }
    return emitError(func.getLoc())
           << getArgument() << ": "
           << (loss.empty() ? std::string("no loss given (loss=NAME)")
                            : "the model has no output named '" + loss + "'")
           << "; its outputs are " << known;
  }

  FailureOr<SmallVector<ConstantOp>> chooseWeights(func::FuncOp func,
                                                   Value lossValue) {
    SmallVector<ConstantOp> candidates;
    func.walk([&](ConstantOp c) {
      if (isTrainable(c))
        candidates.push_back(c);
    });
    if (!weights.empty()) {
      SmallVector<ConstantOp> chosen;
      for (const std::string &name : weights) {
        auto it = llvm::find_if(candidates, [&](ConstantOp c) {
          return *initializerName(c) == name;
        });
        if (it == candidates.end())
          return emitError(func.getLoc())
                 << getArgument() << ": '" << name
                 << "' is not a float initializer of rank >= 1";
        chosen.push_back(*it);
      }
      return chosen;
    }
    // Every candidate the loss depends on through float data.
    SmallVector<Value> values = llvm::map_to_vector(
        candidates, [](ConstantOp c) -> Value { return c.getResult(); });
    llvm::SetVector<Operation *> active = activeOps(lossValue, values);
    SmallVector<ConstantOp> chosen;
    for (ConstantOp c : candidates)
      if (llvm::any_of(c->getUsers(),
                       [&](Operation *u) { return active.contains(u); }))
        chosen.push_back(c);
    if (chosen.empty())
      return emitError(func.getLoc())
             << getArgument() << ": the loss '" << loss
             << "' depends on no float initializer: nothing to train";
    return chosen;
  }

  void appendSgd(func::FuncOp func, OpBuilder &b, ArrayRef<std::string> names,
                 ArrayRef<Value> params, ArrayRef<Value> grads,
                 SmallVectorImpl<NamedValue> &results) {
    SmallVector<NamedValue> weightsNext, stateNext;
    for (auto [name, p, g] : llvm::zip(names, params, grads)) {
      BlockArgument buf =
          addNamedArgument(func, p.getType(), name + ".momentum");
      auto update = SgdUpdateOp::create(
          b, p.getLoc(), p.getType(), p.getType(), p, g, buf, Value(),
          b.getF32FloatAttr(lr), b.getF32FloatAttr(momentum),
          b.getF32FloatAttr(weightDecay));
      weightsNext.push_back({name + ".next", update.getNewParam()});
      stateNext.push_back({name + ".momentum.next",
                           update.getNewMomentumBuffer()});
    }
    results.append(weightsNext);
    results.append(stateNext);
  }

  void appendAdamW(func::FuncOp func, OpBuilder &b,
                   ArrayRef<std::string> names, ArrayRef<Value> params,
                   ArrayRef<Value> grads,
                   SmallVectorImpl<NamedValue> &results) {
    SmallVector<NamedValue> weightsNext, stateNext;
    Location loc = func.getLoc();
    auto scalarType = RankedTensorType::get({}, b.getF32Type());
    BlockArgument step = addNamedArgument(func, scalarType, "adamw.step");
    for (auto [name, p, g] : llvm::zip(names, params, grads)) {
      BlockArgument m = addNamedArgument(func, p.getType(), name + ".exp_avg");
      BlockArgument v =
          addNamedArgument(func, p.getType(), name + ".exp_avg_sq");
      auto update = AdamWUpdateOp::create(
          b, p.getLoc(), p.getType(), p.getType(), p.getType(), p, g, m, v,
          step, Value(), b.getF32FloatAttr(lr), b.getF32FloatAttr(beta1),
          b.getF32FloatAttr(beta2), b.getF32FloatAttr(eps),
          b.getF32FloatAttr(weightDecay));
      weightsNext.push_back({name + ".next", update.getNewParam()});
      stateNext.push_back({name + ".exp_avg.next", update.getNewExpAvg()});
      stateNext.push_back(
          {name + ".exp_avg_sq.next", update.getNewExpAvgSq()});
    }
    auto one = ConstantOp::create(
        b, loc, DenseElementsAttr::get(scalarType, b.getF32FloatAttr(1.0)));
    auto next = AddOp::create(b, loc, step, one);
    // mp-insert-loss-scaling makes the count skip overflowing steps.
    next->setAttr("mp.step_increment", b.getUnitAttr());
    results.append(weightsNext);
    results.push_back({"adamw.step.next", next});
    results.append(stateNext);
  }
};

} // namespace
