//===- InsertLossScaling.cpp - the mp-insert-loss-scaling pass ------------===//
//
// Scales the backward pass so that small fp16 gradients do not flush to
// zero, and undoes it before the fp32 optimizer, which skips any step whose
// gradients overflowed. Everything is decided in the graph: no host
// round trip per step.
//
//===----------------------------------------------------------------------===//

#include "NamedSignature.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mp {
#define GEN_PASS_DEF_INSERTLOSSSCALING
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

struct InsertLossScalingPass
    : public mp::impl::InsertLossScalingBase<InsertLossScalingPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = entryFunction(getOperation(), getArgument());
    if (!func || failed(insert(func)))
      return signalPassFailure();
  }

  LogicalResult insert(func::FuncOp func) {
    if (mode != "dynamic" && mode != "static")
      return emitError(func.getLoc())
             << getArgument() << ": unknown mode '" << mode
             << "' (expected dynamic or static)";
    if (!(scale > 0) || !(init > 0))
      return emitError(func.getLoc())
             << getArgument() << ": the loss scale must be > 0";
    ConstantOp seed;
    SmallVector<Operation *> updates;
    bool scaled = false;
    func.walk([&](Operation *op) {
      if (op->hasAttr("mp.loss_seed"))
        seed = cast<ConstantOp>(op);
      if (isa<SgdUpdateOp, AdamWUpdateOp>(op))
        updates.push_back(op);
      scaled |= isa<UnscaleAndCheckOp>(op);
    });
    if (scaled)
      return emitError(func.getLoc())
             << getArgument() << ": this step has loss scaling already";
    if (!seed)
      return emitError(func.getLoc())
             << getArgument()
             << ": no training step here (run mp-build-training-step first)";

    // The gradients: what the optimizer updates read, or the W.grad results.
    SmallVector<NamedValue> results = namedResults(func);
    llvm::SetVector<Value> grads;
    for (Operation *op : updates)
      grads.insert(op->getOperand(1));
    for (const auto &[name, v] : results)
      if (StringRef(name).ends_with(".grad"))
        grads.insert(v);

    OpBuilder b(seed);
    Location loc = seed.getLoc();
    auto scalarType = RankedTensorType::get({}, b.getF32Type());
    Value scaleValue, goodSteps;
    if (mode == "dynamic") {
      scaleValue = addNamedArgument(func, scalarType, "loss_scale");
      goodSteps = addNamedArgument(
          func, RankedTensorType::get({}, b.getI64Type()),
          "loss_scale.good_steps");
    } else {
      scaleValue = ConstantOp::create(
          b, loc, DenseElementsAttr::get(scalarType, b.getF32FloatAttr(scale)));
    }
    // The backward pass starts from the scale instead of 1.
    Value start = scaleValue;
    auto seedType = cast<RankedTensorType>(seed.getType());
    if (seedType.getRank() != 0) {
      auto shapeType = RankedTensorType::get({seedType.getRank()},
                                             b.getI64Type());
      start = ReshapeOp::create(
          b, loc, scaleValue,
          ConstantOp::create(b, loc,
                             DenseIntElementsAttr::get(
                                 shapeType, seedType.getShape())));
    }
    if (seedType.getElementType() != b.getF32Type())
      start = CastOp::create(b, loc, start,
                             TypeAttr::get(seedType.getElementType()));
    seed.getResult().replaceAllUsesWith(start);
    seed.erase();

    Operation *ret = func.front().getTerminator();
    b.setInsertionPoint(updates.empty() ? ret : updates.front());
    auto unscale = UnscaleAndCheckOp::create(b, loc, scaleValue,
                                             grads.getArrayRef());
    Value foundInf = unscale.getFoundInf();
    for (auto [grad, u] : llvm::zip(grads, unscale.getUnscaled()))
      Value(grad).replaceUsesWithIf(u, [&](OpOperand &use) {
        return use.getOwner() == ret ||
               isa<SgdUpdateOp, AdamWUpdateOp>(use.getOwner());
      });
    for (Operation *op : updates) {
      if (auto sgd = dyn_cast<SgdUpdateOp>(op))
        sgd.getSkipMutable().assign(foundInf);
      else
        cast<AdamWUpdateOp>(op).getSkipMutable().assign(foundInf);
    }

    b.setInsertionPoint(ret);
    results = namedResults(func);
    // AdamW counts only the steps it applied.
    for (auto &[name, v] : results) {
      Operation *def = v.getDefiningOp();
      if (def && def->hasAttr("mp.step_increment"))
        v = WhereOp::create(b, loc, foundInf, def->getOperand(0), v);
    }
    if (mode == "dynamic") {
      auto update = UpdateLossScaleOp::create(
          b, loc, scaleValue, goodSteps, foundInf, b.getF32FloatAttr(growth),
          b.getF32FloatAttr(backoff), b.getI64IntegerAttr(interval),
          b.getF32FloatAttr(minScale), b.getF32FloatAttr(maxScale));
      results.push_back({"loss_scale.next", update.getNewScale()});
      results.push_back(
          {"loss_scale.good_steps.next", update.getNewGoodSteps()});
    }
    results.push_back({"found_inf", foundInf});
    setNamedResults(func, results);
    func->setAttr("mp.loss_scale.init", b.getF32FloatAttr(
                                            mode == "dynamic" ? init : scale));
    return success();
  }
};

} // namespace
