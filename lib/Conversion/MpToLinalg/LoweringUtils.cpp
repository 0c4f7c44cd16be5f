//===- LoweringUtils.cpp - shared helpers of the mp to linalg lowering ----===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

#include <cmath>

using namespace mlir;

namespace mp::lowering {

bool allStatic(Operation *op) {
  auto isStatic = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return !r || r.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

Value scalarConst(OpBuilder &b, Location loc, Type type, double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value indexConst(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value normalizedIndex(OpBuilder &b, Location loc, Value i, int64_t dim) {
  i = arith::IndexCastOp::create(b, loc, b.getIndexType(), i);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                    indexConst(b, loc, 0));
  return arith::SelectOp::create(
      b, loc, neg, arith::AddIOp::create(b, loc, i, indexConst(b, loc, dim)),
      i);
}

Value castElements(OpBuilder &b, Location loc, Value v, Type elt) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getElementType() == elt)
    return v;
  return elementwise(b, loc, RankedTensorType::get(t.getShape(), elt), v,
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       return castScalar(nb, l, a[0], elt);
                     });
}

Value castScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto ff = dyn_cast<FloatType>(from), ft = dyn_cast<FloatType>(to);
  auto fi = dyn_cast<IntegerType>(from), ti = dyn_cast<IntegerType>(to);
  if (ff && ft)
    return ft.getWidth() > ff.getWidth()
               ? Value(arith::ExtFOp::create(b, loc, to, v))
               : Value(arith::TruncFOp::create(b, loc, to, v));
  if (ti && ti.getWidth() == 1) {
    Value zero = scalarConst(b, loc, from, 0);
    return ff ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                            v, zero))
              : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            v, zero));
  }
  if (fi && ft)
    return fi.isUnsigned() || fi.getWidth() == 1
               ? Value(arith::UIToFPOp::create(b, loc, to, v))
               : Value(arith::SIToFPOp::create(b, loc, to, v));
  if (ff && ti)
    return ti.isUnsigned() ? Value(arith::FPToUIOp::create(b, loc, to, v))
                           : Value(arith::FPToSIOp::create(b, loc, to, v));
  // Integer to integer: extend by the source's signedness, or truncate.
  if (ti.getWidth() < fi.getWidth())
    return arith::TruncIOp::create(b, loc, to, v);
  if (fi.isUnsigned() || fi.getWidth() == 1)
    return arith::ExtUIOp::create(b, loc, to, v);
  return arith::ExtSIOp::create(b, loc, to, v);
}

Value parallelGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                      ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                      ScalarFn body) {
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType());
  SmallVector<AffineMap> maps(inputMaps.begin(), inputMaps.end());
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape) {
  int64_t rank = resultShape.size(), offset = rank - shape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(shape)) {
    int64_t r = resultShape[offset + i];
    exprs.push_back(d == 1 && r != 1 ? getAffineConstantExpr(0, ctx)
                                     : getAffineDimExpr(offset + i, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange operands, ScalarFn body) {
  SmallVector<AffineMap> maps;
  for (Value v : operands)
    maps.push_back(broadcastMap(b.getContext(),
                                cast<RankedTensorType>(v.getType()).getShape(),
                                resultType.getShape()));
  return parallelGeneric(b, loc, resultType, operands, maps, body);
}

AffineMap droppedAxesMap(MLIRContext *ctx, int64_t rank,
                         ArrayRef<int64_t> axes) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, i))
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value reduce(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
             Type accType, double init,
             function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> outShape;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, i))
      outShape.push_back(type.getDimSize(i));
  auto outType = RankedTensorType::get(outShape, accType);
  Value empty = tensor::EmptyOp::create(b, loc, outShape, accType);
  Value initValue = scalarConst(b, loc, accType, init);
  Value filled =
      linalg::FillOp::create(b, loc, initValue, empty).getResult(0);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 droppedAxesMap(b.getContext(), rank, axes)};
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i)
    iterators.push_back(llvm::is_contained(axes, i)
                            ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, outType, input, filled, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value x = castScalar(nb, nloc, args[0], accType);
        Value combined = combine(nb, nloc, x, args[1]);
        // Sums and products may be taken in any order: LLVM then keeps
        // several partial results in vector lanes (a tree-like order that
        // is at least as accurate as left to right).
        if (auto op = combined.getDefiningOp<arith::AddFOp>())
          op.setFastmath(arith::FastMathFlags::reassoc);
        if (auto op = combined.getDefiningOp<arith::MulFOp>())
          op.setFastmath(arith::FastMathFlags::reassoc);
        linalg::YieldOp::create(nb, nloc, combined);
      });
  return generic.getResult(0);
}

Value withStat(OpBuilder &b, Location loc, RankedTensorType resultType,
               Value full, Value stat, ArrayRef<int64_t> axes, ScalarFn fn) {
  int64_t rank = resultType.getRank();
  return parallelGeneric(b, loc, resultType, {full, stat},
                         {b.getMultiDimIdentityMap(rank),
                          droppedAxesMap(b.getContext(), rank, axes)},
                         fn);
}

SoftmaxParts softmaxParts(OpBuilder &b, Location loc, Value x,
                          ArrayRef<int64_t> axes, Type acc) {
  auto type = cast<RankedTensorType>(x.getType());
  auto accType = RankedTensorType::get(type.getShape(), acc);
  SoftmaxParts p;
  Value mx = reduce(b, loc, x, axes, acc, -INFINITY,
                    [](OpBuilder &nb, Location l, Value v, Value c) -> Value {
                      return arith::MaximumFOp::create(nb, l, v, c);
                    });
  p.shifted = withStat(b, loc, accType, x, mx, axes,
                       [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         return arith::SubFOp::create(
                             nb, l, castScalar(nb, l, a[0], acc), a[1]);
                       });
  p.exp = parallelGeneric(b, loc, accType, p.shifted,
                          {b.getMultiDimIdentityMap(type.getRank())},
                          [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                            return math::ExpOp::create(nb, l, a[0]);
                          });
  p.sum = reduce(b, loc, p.exp, axes, acc, 0.0,
                 [](OpBuilder &nb, Location l, Value v, Value c) -> Value {
                   return arith::AddFOp::create(nb, l, v, c);
                 });
  return p;
}

Value reshapeTo(OpBuilder &b, Location loc, Value value,
                RankedTensorType type) {
  if (value.getType() == type)
    return value;
  SmallVector<int64_t> dims(type.getShape());
  auto shapeType =
      RankedTensorType::get({(int64_t)dims.size()}, b.getI64Type());
  Value shape = arith::ConstantOp::create(
      b, loc, DenseIntElementsAttr::get(shapeType, dims));
  return tensor::ReshapeOp::create(b, loc, type, value, shape);
}

Type accumulatorType(Type elt) {
  if (elt.isF16() || elt.isBF16())
    return Float32Type::get(elt.getContext());
  return elt;
}

Value contract(OpBuilder &b, Location loc, RankedTensorType outType,
               Value lhs, AffineMap lhsMap, Value rhs, AffineMap rhsMap,
               Type acc, Value init) {
  int64_t rank = outType.getRank() + 1;
  auto accType = RankedTensorType::get(outType.getShape(), acc);
  if (!init)
    init = linalg::FillOp::create(
               b, loc, scalarConst(b, loc, acc, 0),
               ValueRange{tensor::EmptyOp::create(b, loc, outType.getShape(),
                                                  acc)})
               .getResult(0);
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < rank - 1; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, b.getContext());
  // Loops in the order (b.., m, k, n): the innermost loop walks a row of
  // the output and of rhs contiguously and carries no reduction, so LLVM
  // vectorizes it without reassociating sums (m == 1 in a decode step makes
  // the (.., n, k) order stride through the weights column by column).
  SmallVector<AffineExpr> swap;
  for (int64_t i = 0; i < rank - 2; ++i)
    swap.push_back(b.getAffineDimExpr(i));
  swap.push_back(b.getAffineDimExpr(rank - 1));
  swap.push_back(b.getAffineDimExpr(rank - 2));
  AffineMap toNew = AffineMap::get(rank, 0, swap, b.getContext());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[rank - 2] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, accType, ValueRange{lhs, rhs}, init,
      ArrayRef<AffineMap>{lhsMap.compose(toNew), rhsMap.compose(toNew),
                          outMap.compose(toNew)},
      iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        Value x = castScalar(nb, nloc, a[0], acc);
        Value y = castScalar(nb, nloc, a[1], acc);
        Value p = isa<FloatType>(acc)
                      ? Value(arith::MulFOp::create(nb, nloc, x, y))
                      : Value(arith::MulIOp::create(nb, nloc, x, y));
        Value s = isa<FloatType>(acc)
                      ? Value(arith::AddFOp::create(nb, nloc, p, a[2]))
                      : Value(arith::AddIOp::create(nb, nloc, p, a[2]));
        linalg::YieldOp::create(nb, nloc, s);
      });
  return generic.getResult(0);
}

} // namespace mp::lowering
