//===- CastPlan.cpp - where casts go for a set of decisions ---------------===//

#include "mp/Precision/CastPlan.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace mp {

Type computeType(MLIRContext *ctx, Compute c) {
  return c == Compute::F16 ? Type(Float16Type::get(ctx))
                           : Type(Float32Type::get(ctx));
}

int64_t CastPlan::numRuntimeCasts() const {
  int64_t n = 0;
  for (auto &[key, uses] : conversions)
    if (!isa_and_present<ConstantOp>(key.first.getDefiningOp()))
      ++n;
  return n;
}

int64_t CastPlan::castsInto(Operation *op) const {
  int64_t n = 0;
  for (auto &[key, uses] : conversions)
    if (!isa_and_present<ConstantOp>(key.first.getDefiningOp()))
      n += llvm::count_if(uses,
                          [&](OpOperand *u) { return u->getOwner() == op; });
  return n;
}

static bool isFloatValue(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

/// The element type `op` computes in: f16, or f32 unless the op already
/// works in f64 (precision is never lowered by an fp32 decision).
static Type decidedType(Operation *op, Compute c) {
  Type t = computeType(op->getContext(), c);
  if (c == Compute::F32)
    for (Type type : llvm::concat<Type>(llvm::to_vector(op->getOperandTypes()),
                                        llvm::to_vector(op->getResultTypes())))
      if (getElementTypeOrSelf(type).isF64())
        return getElementTypeOrSelf(type);
  return t;
}

CastPlan planCasts(func::FuncOp func, DecisionFn decisionOf, bool keepIoTypes) {
  CastPlan plan;
  MLIRContext *ctx = func.getContext();
  // The type a use asks for from its compute type alone (nullptr: none).
  auto computeRequirement = [&](OpOperand &use) -> Type {
    Operation *owner = use.getOwner();
    std::optional<Compute> c = decisionOf(owner);
    if (!c || isIndexOperand(owner, use.getOperandNumber()))
      return {};
    return decidedType(owner, *c);
  };
  // A value whose every use asks for f16 may itself be produced in f16.
  auto allUsesWantF16 = [&](Value v) {
    bool any = false;
    for (OpOperand &use : v.getUses()) {
      Type t = computeRequirement(use);
      if (!t || !t.isF16())
        return false;
      any = true;
    }
    return any;
  };

  for (BlockArgument arg : func.getArguments()) {
    if (!isFloatValue(arg))
      continue;
    plan.newElementType[arg] = !keepIoTypes && allUsesWantF16(arg)
                                   ? Float16Type::get(ctx)
                                   : getElementTypeOrSelf(arg.getType());
  }
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    std::optional<Compute> c = decisionOf(op);
    for (OpResult r : op->getResults()) {
      if (!isFloatValue(r))
        continue;
      Type elt = getElementTypeOrSelf(r.getType());
      if (c && resultFollowsCompute(op, r.getResultNumber()))
        elt = decidedType(op, *c);
      else if (isa<CastOp>(op) && allUsesWantF16(r))
        // An ONNX Cast to float whose users all run in f16 casts to f16.
        elt = Float16Type::get(ctx);
      plan.newElementType[r] = elt;
    }
  });

  auto required = [&](OpOperand &use) -> Type {
    Operation *owner = use.getOwner();
    if (isa<YieldOp>(owner))
      return plan.newElementType.lookup(
          owner->getParentOp()->getResult(use.getOperandNumber()));
    if (isa<func::ReturnOp>(owner))
      return keepIoTypes ? getElementTypeOrSelf(
                               func.getResultTypes()[use.getOperandNumber()])
                         : Type();
    // Training-state ops keep their fp32 operands; the gradients of
    // mp.unscale_and_check may come in any float type (it widens them).
    if (owner->hasTrait<KeepsFp32>())
      return isa<UnscaleAndCheckOp>(owner) && use.getOperandNumber() > 0
                 ? Type()
                 : getElementTypeOrSelf(use.get().getType());
    return computeRequirement(use);
  };
  func.walk([&](Operation *op) {
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      if (!isFloatValue(v))
        continue;
      Type want = required(use);
      Type have = plan.newElementType.count(v)
                      ? plan.newElementType.lookup(v)
                      : getElementTypeOrSelf(v.getType());
      if (want && want != have)
        plan.conversions[{v, want}].push_back(&use);
    }
  });
  return plan;
}

} // namespace mp
