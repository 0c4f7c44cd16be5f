//===- MpElementwiseOps.cpp - elementwise ops: verifiers and folders ------===//

#include "MpFoldUtils.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mp;

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

LogicalResult ClipOp::verify() {
  Type elt = elementTypeOf(getInput());
  for (Value bound : {getMin(), getMax()}) {
    if (!bound)
      continue;
    if (elementTypeOf(bound) != elt)
      return emitOpError("bounds must have the input's element type ")
             << elt << ", got " << bound.getType();
    if (shapeOf(bound).size() != 0 && productOf(shapeOf(bound)) != 1)
      return emitOpError("bounds must be scalars, got ") << bound.getType();
  }
  return success();
}

LogicalResult ModOp::verify() {
  if (elementTypeOf(getLhs()) != elementTypeOf(getRhs()))
    return emitOpError("operands must have the same element type");
  if (isa<FloatType>(elementTypeOf(getLhs())) && !getFmod())
    return emitOpError("fmod must be set for floating-point operands "
                       "(ONNX Mod requires fmod=1 for floats)");
  return success();
}

LogicalResult BitShiftOp::verify() {
  if (getDirection() != "LEFT" && getDirection() != "RIGHT")
    return emitOpError("direction must be LEFT or RIGHT, got '")
           << getDirection() << "'";
  return success();
}

LogicalResult PReluOp::verify() {
  if (elementTypeOf(getInput()) != elementTypeOf(getSlope()))
    return emitOpError("slope must have the input's element type");
  // PRelu broadcasts slope to the input unidirectionally.
  if (failed(verifyCompatibleShape(shapeOf(getOutput()), shapeOf(getInput()))))
    return emitOpError("slope of shape ")
           << getSlope().getType() << " does not broadcast to the input";
  return success();
}

LogicalResult WhereOp::verify() {
  if (elementTypeOf(getX()) != elementTypeOf(getY()))
    return emitOpError("x and y must have the same element type, got ")
           << getX().getType() << " and " << getY().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Folders (integer shape arithmetic only)
//===----------------------------------------------------------------------===//

OpFoldResult IdentityOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

/// True when every value of `from` converts to `to` and back unchanged.
static bool isExactWidening(Type from, Type to) {
  auto mantissa = [](FloatType t) { return (int)t.getFPMantissaWidth(); };
  auto ff = dyn_cast<FloatType>(from), ft = dyn_cast<FloatType>(to);
  auto fi = dyn_cast<IntegerType>(from), ti = dyn_cast<IntegerType>(to);
  if (ff && ft)
    return ft.getWidth() > ff.getWidth() && mantissa(ft) >= mantissa(ff) &&
           APFloat::semanticsMaxExponent(ft.getFloatSemantics()) >=
               APFloat::semanticsMaxExponent(ff.getFloatSemantics());
  if (fi && ti)
    return ti.getWidth() >= fi.getWidth() &&
           fi.getSignedness() == ti.getSignedness();
  if (fi && ft) // integers exact in the mantissa, sign included
    return (int)fi.getWidth() <= mantissa(ft);
  return false;
}

/// Float values truncated toward zero into the integer type `type`, as Cast
/// converts them; NaN or out-of-range values (undefined in ONNX) give up.
static Attribute truncateToInts(ArrayRef<double> values, ShapedType type) {
  auto intType = cast<IntegerType>(type.getElementType());
  unsigned w = intType.getWidth();
  double lo = intType.isUnsigned() ? 0.0 : -std::ldexp(1.0, w - 1);
  double hi = std::ldexp(1.0, intType.isUnsigned() ? w : w - 1);
  SmallVector<int64_t> ints;
  for (double v : values) {
    double t = std::trunc(v);
    if (!std::isfinite(t) || t < lo || t >= hi)
      return {};
    ints.push_back((int64_t)t);
  }
  return makeInts(type, ints);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // cast(cast(x: A -> B) -> A) is x when B holds every A exactly
  // (f16 -> f32 -> f16); f32 -> f16 -> f32 rounds and is kept.
  if (auto inner = getInput().getDefiningOp<CastOp>())
    if (inner.getInput().getType() == getType() &&
        isExactWidening(elementTypeOf(inner.getInput()),
                        elementTypeOf(inner.getOutput())))
      return inner.getInput();
  if (!isFoldableIntType(getType()) || elementTypeOf(getOutput()).isInteger(1))
    return {};
  if (DenseIntElementsAttr input = asDenseInts(adaptor.getInput()))
    return makeInts(getType(), readInts(input));
  // A length computed through floats (`int(ceil(float(len) / stride))`, as
  // torch exports padding arithmetic) becomes an integer constant; the float
  // ops themselves are not folded (they are precision decisions elsewhere).
  if (isa<FloatType>(elementTypeOf(getInput())))
    if (std::optional<SmallVector<double>> values =
            getConstantFloats(getInput()))
      return truncateToInts(*values, getType());
  return {};
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  DenseIntElementsAttr input = asDenseInts(adaptor.getInput());
  if (!input || !isFoldableIntType(getType()))
    return {};
  SmallVector<int64_t> values = readInts(input);
  for (int64_t &v : values)
    v = -v;
  return makeInts(getType(), values);
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldBinaryInts(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        [](int64_t a, int64_t b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldBinaryInts(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        [](int64_t a, int64_t b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldBinaryInts(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        [](int64_t a, int64_t b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldBinaryInts(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        [](int64_t a, int64_t b) -> std::optional<int64_t> {
                          if (b == 0)
                            return std::nullopt;
                          return a / b;
                        });
}

/// Max/Min of integer constants (CenterCropPad's pad amounts), folded
/// pairwise into the result shape.
static OpFoldResult
foldVariadicInts(ArrayRef<Attribute> inputs, Type resultType,
                 function_ref<int64_t(int64_t, int64_t)> fn) {
  if (inputs.size() < 2)
    return {};
  Attribute acc = inputs.front();
  for (Attribute next : inputs.drop_front()) {
    acc = foldBinaryInts(acc, next, resultType,
                         [&](int64_t a, int64_t b) { return fn(a, b); });
    if (!acc)
      return {};
  }
  return acc;
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldVariadicInts(adaptor.getInputs(), getType(),
                          [](int64_t a, int64_t b) { return std::max(a, b); });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldVariadicInts(adaptor.getInputs(), getType(),
                          [](int64_t a, int64_t b) { return std::min(a, b); });
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  bool fmod = getFmod();
  return foldBinaryInts(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        [&](int64_t a, int64_t b) -> std::optional<int64_t> {
                          if (b == 0)
                            return std::nullopt;
                          int64_t r = a % b; // sign of the dividend (fmod)
                          if (!fmod && r != 0 && ((r < 0) != (b < 0)))
                            r += b; // sign of the divisor (Python's %)
                          return r;
                        });
}

//===----------------------------------------------------------------------===//
// Comparisons and Where on integer constants (shape logic of exporters)
//===----------------------------------------------------------------------===//

/// Folds a comparison of two integer constants into a bool constant.
static Attribute foldCompare(Attribute lhs, Attribute rhs, Type resultType,
                             function_ref<bool(int64_t, int64_t)> pred) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldedElements)
    return {};
  // Compute as i64 0/1 with the shared broadcasting helper, then re-type.
  auto i64Type = RankedTensorType::get(type.getShape(),
                                       IntegerType::get(type.getContext(), 64));
  auto ints = dyn_cast_if_present<DenseIntElementsAttr>(foldBinaryInts(
      lhs, rhs, i64Type,
      [&](int64_t a, int64_t b) -> std::optional<int64_t> {
        return pred(a, b) ? 1 : 0;
      }));
  if (!ints)
    return {};
  SmallVector<bool> bits;
  for (const APInt &v : ints.getValues<APInt>())
    bits.push_back(!v.isZero());
  return DenseElementsAttr::get(type, bits);
}

OpFoldResult EqualOp::fold(FoldAdaptor a) {
  return foldCompare(a.getLhs(), a.getRhs(), getType(),
                     [](int64_t x, int64_t y) { return x == y; });
}
OpFoldResult GreaterOp::fold(FoldAdaptor a) {
  return foldCompare(a.getLhs(), a.getRhs(), getType(),
                     [](int64_t x, int64_t y) { return x > y; });
}
OpFoldResult GreaterOrEqualOp::fold(FoldAdaptor a) {
  return foldCompare(a.getLhs(), a.getRhs(), getType(),
                     [](int64_t x, int64_t y) { return x >= y; });
}
OpFoldResult LessOp::fold(FoldAdaptor a) {
  return foldCompare(a.getLhs(), a.getRhs(), getType(),
                     [](int64_t x, int64_t y) { return x < y; });
}
OpFoldResult LessOrEqualOp::fold(FoldAdaptor a) {
  return foldCompare(a.getLhs(), a.getRhs(), getType(),
                     [](int64_t x, int64_t y) { return x <= y; });
}

// Boolean logic of exporters' shape code (e.g. "is the dim divisible").
OpFoldResult AndOp::fold(FoldAdaptor a) {
  return foldCompare(a.getLhs(), a.getRhs(), getType(),
                     [](int64_t x, int64_t y) { return x && y; });
}
OpFoldResult OrOp::fold(FoldAdaptor a) {
  return foldCompare(a.getLhs(), a.getRhs(), getType(),
                     [](int64_t x, int64_t y) { return x || y; });
}
OpFoldResult NotOp::fold(FoldAdaptor a) {
  return foldCompare(a.getInput(), a.getInput(), getType(),
                     [](int64_t x, int64_t) { return !x; });
}

OpFoldResult XorOp::fold(FoldAdaptor a) {
  return foldCompare(a.getLhs(), a.getRhs(), getType(),
                     [](int64_t x, int64_t y) { return bool(x) != bool(y); });
}

OpFoldResult WhereOp::fold(FoldAdaptor a) {
  DenseIntElementsAttr cond = asDenseInts(a.getCondition());
  if (!cond || !isFoldableIntType(getType()))
    return {};
  // select(c, x, y) = y + c * (x - y) elementwise, with broadcasting.
  auto i64Type = RankedTensorType::get(getType().getShape(),
                                       IntegerType::get(getContext(), 64));
  Attribute diff = foldBinaryInts(
      a.getX(), a.getY(), i64Type,
      [](int64_t x, int64_t y) -> std::optional<int64_t> { return x - y; });
  Attribute picked = foldBinaryInts(
      cond, diff, i64Type,
      [](int64_t c, int64_t d) -> std::optional<int64_t> { return c ? d : 0; });
  Attribute sum = foldBinaryInts(
      a.getY(), picked, i64Type,
      [](int64_t y, int64_t p) -> std::optional<int64_t> { return y + p; });
  DenseIntElementsAttr ints = asDenseInts(sum);
  if (!ints)
    return {};
  return makeInts(getType(), readInts(ints));
}
