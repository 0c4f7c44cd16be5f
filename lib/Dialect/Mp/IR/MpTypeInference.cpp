//===- MpTypeInference.cpp - shape and type inference helpers -------------===//

#include "mp/Dialect/Mp/IR/MpTypeInference.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace mp {

bool isCompatibleReturnTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip(lhs, rhs)) {
    if (l == r)
      continue;
    auto ls = dyn_cast<ShapedType>(l), rs = dyn_cast<ShapedType>(r);
    if (!ls || !rs || ls.getElementType() != rs.getElementType() ||
        failed(verifyCompatibleShape(ls, rs)))
      return false;
  }
  return true;
}

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

Type elementTypeOf(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

int64_t productOf(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    n *= d;
  }
  return n;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult inferSameAsOperand(ValueRange operands, unsigned idx,
                                 SmallVectorImpl<Type> &types) {
  if (idx >= operands.size())
    return failure();
  types.push_back(operands[idx].getType());
  return success();
}

LogicalResult inferSameShape(Value value, Type elementType,
                             SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get(shapeOf(value), elementType));
  return success();
}

FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<SmallVector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> result(rank, 1);
  // Track dims known only to be "dynamic or 1" per position.
  SmallVector<bool> sawDynamic(rank, false);
  for (const auto &s : shapes) {
    size_t offset = rank - s.size();
    for (auto [i, d] : llvm::enumerate(s)) {
      int64_t &r = result[offset + i];
      if (ShapedType::isDynamic(d)) {
        sawDynamic[offset + i] = true;
        continue;
      }
      if (d == 1)
        continue;
      if (r != 1 && r != d)
        return failure();
      r = d;
    }
  }
  // A dim that is dynamic in some operand and 1 in all the others is dynamic.
  for (size_t i = 0; i < rank; ++i)
    if (sawDynamic[i] && result[i] == 1)
      result[i] = ShapedType::kDynamic;
  return result;
}

LogicalResult inferBroadcast(std::optional<Location> loc, ValueRange operands,
                             Type elementType, SmallVectorImpl<Type> &types) {
  if (operands.empty())
    return emitOptionalError(loc, "expects at least one operand");
  SmallVector<SmallVector<int64_t>> shapes;
  for (Value v : operands)
    shapes.push_back(llvm::to_vector(shapeOf(v)));
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (failed(shape)) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    llvm::interleave(
        operands, os,
        [&](Value v) { os << v.getType(); }, ", ");
    return emitOptionalError(loc, "operand shapes do not broadcast: ", msg);
  }
  types.push_back(RankedTensorType::get(
      *shape, elementType ? elementType : elementTypeOf(operands.front())));
  return success();
}

LogicalResult inferReduce(std::optional<Location> loc, Value data,
                          ArrayRef<int64_t> axes, bool keepdims,
                          bool noopWithEmptyAxes,
                          SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> shape = shapeOf(data);
  int64_t rank = shape.size();
  SmallVector<bool> reduced(rank, axes.empty() && !noopWithEmptyAxes);
  for (int64_t a : axes) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n)
      return emitOptionalError(loc, "reduction axis ", a,
                               " is out of range for rank ", rank);
    if (reduced[*n] && !(axes.empty() && !noopWithEmptyAxes))
      return emitOptionalError(loc, "reduction axis ", a, " is repeated");
    reduced[*n] = true;
  }
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      out.push_back(shape[i]);
    else if (keepdims)
      out.push_back(1);
  }
  types.push_back(RankedTensorType::get(out, elementTypeOf(data)));
  return success();
}

std::optional<SmallVector<int64_t>> getConstantInts(Value value) {
  DenseIntElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> out;
  bool isUnsigned = attr.getElementType().isUnsignedInteger();
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(isUnsigned ? (int64_t)v.getZExtValue() : v.getSExtValue());
  return out;
}

/// Largest float expression (in elements) shape inference evaluates.
constexpr int64_t kMaxEvaluatedFloats = 64;

/// The values of a small float expression over constants: Cast of an
/// integer or float constant, Ceil/Floor/Neg, and Add/Sub/Mul/Div with
/// broadcasting of single values, each computed in its result's element type as
/// the op computes it at run time. This serves shape inference (a Range over a
/// window length cast to float) without folding the IR, whose float ops
/// are precision decisions.
static std::optional<SmallVector<APFloat>> evaluateFloats(Value value,
                                                          int depth) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxEvaluatedFloats || depth > 16)
    return std::nullopt;
  auto floatType = dyn_cast<FloatType>(type.getElementType());
  if (!floatType)
    return std::nullopt;
  const llvm::fltSemantics &sem = floatType.getFloatSemantics();
  auto converted = [&](APFloat v) {
    bool losesInfo;
    v.convert(sem, APFloat::rmNearestTiesToEven, &losesInfo);
    return v;
  };
  DenseFPElementsAttr attr;
  if (matchPattern(value, m_Constant(&attr)))
    return SmallVector<APFloat>(attr.getValues<APFloat>());
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  int64_t n = type.getNumElements();
  if (auto cast = dyn_cast<CastOp>(def)) {
    SmallVector<APFloat> out;
    DenseIntElementsAttr ints;
    if (matchPattern(cast.getInput(), m_Constant(&ints))) {
      bool isSigned = !ints.getElementType().isUnsignedInteger();
      for (const APInt &v : ints.getValues<APInt>()) {
        APFloat f(sem);
        f.convertFromAPInt(v, isSigned, APFloat::rmNearestTiesToEven);
        out.push_back(f);
      }
    } else if (auto floats = evaluateFloats(cast.getInput(), depth + 1)) {
      for (const APFloat &v : *floats)
        out.push_back(converted(v));
    }
    if ((int64_t)out.size() != n)
      return std::nullopt;
    return out;
  }
  if (isa<CeilOp, FloorOp, NegOp>(def)) {
    auto input = evaluateFloats(def->getOperand(0), depth + 1);
    if (!input || (int64_t)input->size() != n)
      return std::nullopt;
    SmallVector<APFloat> out;
    for (APFloat v : *input) {
      if (isa<NegOp>(def))
        v.changeSign();
      else
        v.roundToIntegral(isa<CeilOp>(def) ? APFloat::rmTowardPositive
                                           : APFloat::rmTowardNegative);
      out.push_back(v);
    }
    return out;
  }
  if (!isa<AddOp, SubOp, MulOp, DivOp>(def))
    return std::nullopt;
  auto lhs = evaluateFloats(def->getOperand(0), depth + 1);
  auto rhs = evaluateFloats(def->getOperand(1), depth + 1);
  auto fits = [&](const SmallVector<APFloat> &v) {
    return (int64_t)v.size() == n || v.size() == 1;
  };
  if (!lhs || !rhs || !fits(*lhs) || !fits(*rhs))
    return std::nullopt;
  SmallVector<APFloat> out;
  for (int64_t i = 0; i < n; ++i) {
    APFloat a = converted((*lhs)[lhs->size() == 1 ? 0 : i]);
    APFloat b = converted((*rhs)[rhs->size() == 1 ? 0 : i]);
    if (isa<AddOp>(def))
      a.add(b, APFloat::rmNearestTiesToEven);
    else if (isa<SubOp>(def))
      a.subtract(b, APFloat::rmNearestTiesToEven);
    else if (isa<MulOp>(def))
      a.multiply(b, APFloat::rmNearestTiesToEven);
    else
      a.divide(b, APFloat::rmNearestTiesToEven);
    out.push_back(a);
  }
  return out;
}

std::optional<SmallVector<double>> getConstantFloats(Value value) {
  if (!value)
    return std::nullopt;
  std::optional<SmallVector<APFloat>> values = evaluateFloats(value, 0);
  if (!values)
    return std::nullopt;
  SmallVector<double> out;
  for (APFloat v : *values) {
    bool losesInfo = false;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
    out.push_back(v.convertToDouble());
  }
  return out;
}

} // namespace mp
