//===- Materialize.cpp - turning decisions into types and casts -----------===//

#include "mp/Precision/Materialize.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/CastPlan.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace mp {

std::optional<Compute> recordedCompute(Operation *op) {
  auto attr = op->getAttrOfType<PrecisionAttr>(kPrecisionAttrName);
  if (!attr)
    return std::nullopt;
  return attr.getCompute().isF16() ? Compute::F16 : Compute::F32;
}

static Type withElementType(Type type, Type elt) {
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    return ranked.clone(elt);
  return type;
}

LogicalResult materializePrecision(func::FuncOp func, bool keepIoTypes) {
  CastPlan plan = planCasts(func, recordedCompute, keepIoTypes);
  MLIRContext *ctx = func.getContext();

  // Weights before conversion, for reports after this pass.
  int64_t weightBytes = 0;
  func.walk([&](ConstantOp c) {
    auto type = cast<ShapedType>(c.getType());
    if (isa<FloatType>(type.getElementType()))
      weightBytes += type.getNumElements() *
                     (type.getElementType().getIntOrFloatBitWidth() / 8);
  });
  func->setAttr(kWeightBytesAttrName,
                IntegerAttr::get(IntegerType::get(ctx, 64), weightBytes));
  func->setAttr(kKeepIoTypesAttrName, BoolAttr::get(ctx, keepIoTypes));

  // Constants whose data is not there (elided resources) cannot convert.
  for (auto &[key, uses] : plan.conversions)
    if (auto c = dyn_cast_if_present<ConstantOp>(key.first.getDefiningOp()))
      if (!hasElementData(c.getValue()))
        return c.emitError("constant has no data (an elided resource?); it "
                           "cannot be converted to ")
               << key.second;

  // 1. Retype values in place: results of decided ops, retargeted ONNX
  // casts, and (without keep-io-types) graph inputs.
  for (auto &[value, elt] : plan.newElementType) {
    if (getElementTypeOrSelf(value.getType()) == elt)
      continue;
    value.setType(withElementType(value.getType(), elt));
    Operation *def = value.getDefiningOp();
    if (auto cast = dyn_cast_if_present<CastOp>(def))
      cast.setToAttr(TypeAttr::get(elt));
    if (auto fill = dyn_cast_if_present<ConstantOfShapeOp>(def))
      fill.setValueAttr(convertFloatElements(
          fill.getValue(), cast<FloatType>(elt),
          elt.isF16() && fill->hasAttr(kMaskSentinelAttrName)));
  }

  // 2. One conversion per (value, type), shared by its users.
  OpBuilder b(ctx);
  for (auto &[key, uses] : plan.conversions) {
    auto [value, elt] = key;
    Type type = withElementType(value.getType(), elt);
    Value converted;
    if (auto constant = dyn_cast_if_present<ConstantOp>(value.getDefiningOp())) {
      // Weights are converted once, at compile time.
      b.setInsertionPointAfter(constant);
      converted = ConstantOp::create(
          b, constant.getLoc(),
          convertFloatElements(constant.getValue(), cast<FloatType>(elt),
                               elt.isF16() &&
                                   constant->hasAttr(kMaskSentinelAttrName)));
    } else {
      if (auto arg = dyn_cast<BlockArgument>(value))
        b.setInsertionPointToStart(arg.getOwner());
      else
        b.setInsertionPointAfter(value.getDefiningOp());
      converted = CastOp::create(b, value.getLoc(), type, value,
                                 TypeAttr::get(elt));
    }
    for (OpOperand *use : uses)
      use->set(converted);
  }

  // 3. Mask sentinels of constants that are already f16 (fp16 models) are
  // rewritten in place: their -65504 would add up to -inf.
  func.walk([&](ConstantOp c) {
    if (c->hasAttr(kMaskSentinelAttrName) &&
        getElementTypeOrSelf(c.getType()).isF16() && hasElementData(c.getValue()))
      c.setValueAttr(convertFloatElements(c.getValue(),
                                          Float16Type::get(ctx), true));
  });
  func.walk([&](ConstantOfShapeOp c) {
    if (c->hasAttr(kMaskSentinelAttrName) &&
        getElementTypeOrSelf(c.getType()).isF16())
      c.setValueAttr(convertFloatElements(c.getValue(),
                                          Float16Type::get(ctx), true));
  });

  // 4. Constants nobody uses any more go away.
  func.walk([&](ConstantOp c) {
    if (c->use_empty())
      c->erase();
  });

  // 5. The function signature follows its arguments and returned values.
  Operation *ret = func.getBody().front().getTerminator();
  func.setType(FunctionType::get(ctx, func.getBody().getArgumentTypes(),
                                 ret->getOperandTypes()));
  return success();
}

} // namespace mp
