//===- LoweringUtils.cpp - shared helpers of the mp to linalg lowering ----===//

#include "LoweringUtils.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Matchers.h"

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

std::string runTimeCheckMessage(Operation *op, StringRef what) {
  std::string node = onnxNodeName(op), type = onnxOpType(op);
  return "mp: " + type + (node.empty() ? "" : " (node '" + node + "')") + ": " +
         what.str();
}

void checkAtRunTime(OpBuilder &b, Location loc, Value ok, StringRef message) {
  cf::AssertOp::create(b, loc, ok, message);
}

Value withStaticDim(OpBuilder &b, Location loc, Operation *op, Value v,
                    int64_t d, int64_t size) {
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.isDynamicDim(d))
    return v;
  Value actual = tensor::DimOp::create(b, loc, v, d);
  checkAtRunTime(b, loc,
                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, actual,
                                       indexConst(b, loc, size)),
                 runTimeCheckMessage(op, "input dim " + std::to_string(d) +
                                             " is not " +
                                             std::to_string(size)));
  SmallVector<int64_t> shape(t.getShape());
  shape[d] = size;
  return tensor::CastOp::create(b, loc, t.clone(shape), v);
}

Value checkedSize(OpBuilder &b, Location loc, Operation *op, Value size,
                  StringRef what) {
  Value zero = arith::ConstantIntOp::create(b, loc, size.getType(), 0);
  checkAtRunTime(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size, zero),
      runTimeCheckMessage(op, (what + " is negative").str()));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), size);
}

Value normalizedIndex(OpBuilder &b, Location loc, Value i, int64_t dim) {
  return normalizedIndex(b, loc, i, indexConst(b, loc, dim));
}

Value normalizedIndex(OpBuilder &b, Location loc, Value i, Value dim) {
  i = arith::IndexCastOp::create(b, loc, b.getIndexType(), i);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                    indexConst(b, loc, 0));
  return arith::SelectOp::create(b, loc, neg,
                                 arith::AddIOp::create(b, loc, i, dim), i);
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

Value dimValue(OpBuilder &b, Location loc, Value v, int64_t d) {
  int64_t size = cast<RankedTensorType>(v.getType()).getDimSize(d);
  if (!ShapedType::isDynamic(size))
    return indexConst(b, loc, size);
  return tensor::DimOp::create(b, loc, v, d);
}

FailureOr<SmallVector<Value>> inferDynamicSizes(OpBuilder &b, Location loc,
                                                RankedTensorType type,
                                                ValueRange inputs,
                                                ArrayRef<AffineMap> maps) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value size;
    AffineExpr loop = b.getAffineDimExpr(d);
    for (auto [v, map] : llvm::zip(inputs, maps)) {
      for (auto [p, e] : llvm::enumerate(map.getResults()))
        if (e == loop) {
          size = dimValue(b, loc, v, p);
          break;
        }
      if (size)
        break;
    }
    if (!size)
      return failure();
    sizes.push_back(size);
  }
  return sizes;
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynSizes) {
  return tensor::EmptyOp::create(b, loc, type, dynSizes);
}

Value parallelGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                      ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                      ScalarFn body, ValueRange dynSizes) {
  SmallVector<Value> sizes(dynSizes);
  if (sizes.empty() && !resultType.hasStaticShape()) {
    FailureOr<SmallVector<Value>> inferred =
        inferDynamicSizes(b, loc, resultType, inputs, inputMaps);
    if (failed(inferred))
      llvm::report_fatal_error("parallelGeneric: no input gives a dynamic dim");
    sizes = std::move(*inferred);
  }
  Value init = emptyTensor(b, loc, resultType, sizes);
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

Value readWhere(OpBuilder &b, Location loc, Value cond,
                function_ref<Value(OpBuilder &, Location)> read,
                Value otherwise) {
  return scf::IfOp::create(
             b, loc, cond,
             [&](OpBuilder &tb, Location tl) {
               scf::YieldOp::create(tb, tl, read(tb, tl));
             },
             [&](OpBuilder &eb, Location el) {
               scf::YieldOp::create(eb, el, otherwise);
             })
      .getResult(0);
}

SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc, Value v) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < typeOf(v).getRank(); ++d)
    if (typeOf(v).isDynamicDim(d))
      sizes.push_back(dimValue(b, loc, v, d));
  return sizes;
}

Value expandUnitDim(OpBuilder &b, Location loc, Value x, int64_t p,
                    Value size) {
  auto type = cast<RankedTensorType>(x.getType());
  Value one = indexConst(b, loc, 1);
  Value isUnit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       dimValue(b, loc, x, p), one);
  Value grows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, size,
                                      one);
  Value cond = arith::AndIOp::create(b, loc, isUnit, grows);
  auto ifOp = scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &tb, Location l) {
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(d == p ? size : dimValue(tb, l, x, d));
        SmallVector<AffineExpr> exprs;
        for (int64_t d = 0; d < type.getRank(); ++d)
          exprs.push_back(d == p ? tb.getAffineConstantExpr(0)
                                 : tb.getAffineDimExpr(d));
        AffineMap map = AffineMap::get(type.getRank(), 0, exprs,
                                       tb.getContext());
        Value expanded = parallelGeneric(
            tb, l, type, x, map,
            [](OpBuilder &, Location, ValueRange a) { return a[0]; }, sizes);
        scf::YieldOp::create(tb, l, expanded);
      },
      [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, x); });
  return ifOp.getResult(0);
}

Broadcast broadcastDynamic(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                           ValueRange operands, int64_t trailing) {
  Broadcast r;
  r.operands.assign(operands.begin(), operands.end());
  int64_t rank = shape.size();
  // Operand dim aligned (numpy: from the right) with result dim d, or -1.
  auto aligned = [&](Value v, int64_t d) -> int64_t {
    int64_t p = d - (rank - typeOf(v).getRank());
    return p >= 0 ? p : -1;
  };
  for (int64_t d = 0; d < rank - trailing; ++d) {
    // Who may set the size of dim d: operands not statically 1 there.
    SmallVector<std::pair<unsigned, int64_t>> sources;
    for (auto [i, v] : llvm::enumerate(operands)) {
      int64_t p = aligned(v, d);
      if (p >= 0 && typeOf(v).getDimSize(p) != 1)
        sources.push_back({(unsigned)i, p});
    }
    bool anyDynamic = llvm::any_of(sources, [&](auto source) {
      return typeOf(operands[source.first]).isDynamicDim(source.second);
    });
    if (!anyDynamic) {
      // Static operand dims under a dynamic result dim (a result type
      // inferred less precisely): the largest of them.
      if (ShapedType::isDynamic(shape[d])) {
        int64_t largest = 1;
        for (auto [i, p] : sources)
          largest = std::max(largest, typeOf(operands[i]).getDimSize(p));
        r.dynSizes.push_back(indexConst(b, loc, largest));
      }
      continue;
    }
    Value size;
    if (!ShapedType::isDynamic(shape[d])) {
      size = indexConst(b, loc, shape[d]);
    } else {
      for (auto [i, p] : sources) {
        Value s = dimValue(b, loc, operands[i], p);
        size = size ? Value(arith::MaxUIOp::create(b, loc, size, s)) : s;
      }
      if (!size) // Every operand is 1 there.
        size = indexConst(b, loc, 1);
      r.dynSizes.push_back(size);
    }
    // A dynamic operand dim sharing the result dim with others may be 1 at
    // run time while the result's is larger: expand it first.
    if (sources.size() < 2 && ShapedType::isDynamic(shape[d]))
      continue;
    for (auto [i, p] : sources)
      if (typeOf(operands[i]).isDynamicDim(p))
        r.operands[i] = expandUnitDim(b, loc, r.operands[i], p, size);
  }
  return r;
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
  Broadcast bc = broadcastDynamic(b, loc, resultType.getShape(), operands);
  SmallVector<AffineMap> maps;
  for (Value v : bc.operands)
    maps.push_back(broadcastMap(b.getContext(), typeOf(v).getShape(),
                                resultType.getShape()));
  return parallelGeneric(b, loc, resultType, bc.operands, maps, body,
                         bc.dynSizes);
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
  SmallVector<Value> outSizes;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, i) && type.isDynamicDim(i))
      outSizes.push_back(dimValue(b, loc, input, i));
  Value empty = emptyTensor(b, loc, outType, outSizes);
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
                RankedTensorType type, ValueRange dynSizes) {
  if (value.getType() == type)
    return value;
  auto from = typeOf(value);
  SmallVector<Value> sizes(dynSizes);
  if (sizes.empty() && type.getNumDynamicDims() > 0) {
    // The dynamic dims correspond in order (static ones may split, merge,
    // or be unit dims added or removed).
    SmallVector<int64_t> dynamic;
    for (int64_t d = 0; d < from.getRank(); ++d)
      if (from.isDynamicDim(d))
        dynamic.push_back(d);
    if (dynamic.size() == type.getNumDynamicDims()) {
      for (int64_t d : dynamic)
        sizes.push_back(dimValue(b, loc, value, d));
    } else if (type.getNumDynamicDims() == 1) {
      // One unknown: the element count over the static dims' product.
      int64_t known = 1;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (!type.isDynamicDim(d))
          known *= type.getDimSize(d);
      Value count = indexConst(b, loc, 1);
      for (int64_t d = 0; d < from.getRank(); ++d)
        count =
            arith::MulIOp::create(b, loc, count, dimValue(b, loc, value, d));
      sizes.push_back(
          arith::DivUIOp::create(b, loc, count, indexConst(b, loc, known)));
    } else {
      llvm::report_fatal_error("reshapeTo: dynamic dims do not correspond");
    }
  }
  // Dims that only split or merge: an expand_shape or collapse_shape, which
  // bufferize to views (of strided slices too) and fold with their
  // neighbours.
  auto groups = getReassociationIndicesForReshape(from, type);
  // A group that expands into two or more dynamic dims has a run-time
  // stride, which memref's expand-strided-metadata (LLVM 22) crashes on:
  // such reshapes take the memref.reshape path below.
  auto splitsDynamic = [&](const ReassociationIndices &group) {
    return llvm::count_if(group, [&](int64_t d) {
             return type.isDynamicDim(d);
           }) > 1;
  };
  if (groups && type.getRank() > from.getRank() &&
      llvm::any_of(*groups, splitsDynamic))
    groups.reset();
  if (groups) {
    if (type.getRank() > from.getRank()) {
      SmallVector<OpFoldResult> outSizes;
      size_t next = 0;
      for (int64_t d = 0; d < type.getRank(); ++d)
        outSizes.push_back(
            type.isDynamicDim(d)
                ? OpFoldResult(sizes[next++])
                : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
      return tensor::ExpandShapeOp::create(b, loc, type, value, *groups,
                                           outSizes);
    }
    Value collapsed = tensor::CollapseShapeOp::create(b, loc, value, *groups);
    return collapsed.getType() == type
               ? collapsed
               : Value(tensor::CastOp::create(b, loc, type, collapsed));
  }
  // Otherwise a memref.reshape once bufferized, which needs a contiguous
  // source (a copy of a strided one).
  if (from.hasStaticShape() && type.hasStaticShape()) {
    SmallVector<int64_t> dims(type.getShape());
    auto shapeType =
        RankedTensorType::get({(int64_t)dims.size()}, b.getI64Type());
    Value shape = arith::ConstantOp::create(
        b, loc, DenseIntElementsAttr::get(shapeType, dims));
    return tensor::ReshapeOp::create(b, loc, type, value, shape);
  }
  return reshapeToSizes(b, loc, value, type, sizes);
}

Value reshapeToSizes(OpBuilder &b, Location loc, Value value,
                     RankedTensorType type, ValueRange sizes) {
  SmallVector<Value> dims;
  size_t next = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    Value size = type.isDynamicDim(d) ? sizes[next++]
                                      : indexConst(b, loc, type.getDimSize(d));
    dims.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), size));
  }
  Value shape = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({type.getRank()}, b.getI64Type()), dims);
  return tensor::ReshapeOp::create(b, loc, type, value, shape);
}

Value countOver(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> axes,
                Type type) {
  auto t = typeOf(v);
  int64_t known = 1;
  Value n;
  for (int64_t a : axes) {
    if (!t.isDynamicDim(a)) {
      known *= t.getDimSize(a);
      continue;
    }
    Value d = dimValue(b, loc, v, a);
    n = n ? Value(arith::MulIOp::create(b, loc, n, d)) : d;
  }
  if (!n)
    return scalarConst(b, loc, type, (double)known);
  n = arith::MulIOp::create(b, loc, n, indexConst(b, loc, known));
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), n);
  return isa<FloatType>(type)
             ? Value(arith::SIToFPOp::create(b, loc, type, i64))
             : castScalar(b, loc, i64, type);
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
  if (!init) {
    FailureOr<SmallVector<Value>> sizes =
        inferDynamicSizes(b, loc, accType, {lhs, rhs}, {lhsMap, rhsMap});
    if (failed(sizes))
      llvm::report_fatal_error("contract: no operand gives a dynamic dim");
    init = linalg::FillOp::create(b, loc, scalarConst(b, loc, acc, 0),
                                  ValueRange{emptyTensor(b, loc, accType,
                                                         *sizes)})
               .getResult(0);
  }
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

/// An i1 that is true iff `pred` holds for every element of the integer
/// tensor `values` (each element cast to index first): an all-reduction.
static Value
allElementsSatisfy(OpBuilder &b, Location loc, Value values,
                   function_ref<Value(OpBuilder &, Location, Value)> pred) {
  int64_t rank = cast<RankedTensorType>(values.getType()).getRank();
  Type i1 = b.getI1Type();
  Value init =
      linalg::FillOp::create(
          b, loc, arith::ConstantIntOp::create(b, loc, i1, 1).getResult(),
          ValueRange{tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i1)
                         .getResult()})
          .getResult(0);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, {}, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  auto all = linalg::GenericOp::create(
      b, loc, RankedTensorType::get({}, i1), values, init, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::AndIOp::create(nb, l, a[1], pred(nb, l, v))});
      });
  return tensor::ExtractOp::create(b, loc, all.getResult(0), ValueRange{});
}

void checkIndicesInRange(OpBuilder &b, Location loc, Value indices,
                         ArrayRef<Value> bounds, StringRef message,
                         bool allowNegative) {
  auto type = cast<RankedTensorType>(indices.getType());
  int64_t rank = type.getRank();
  // Constant indices and bounds in range need no check (mp-lower-to-linalg
  // reports constants out of range first: checkConstantIndices).
  DenseIntElementsAttr constant;
  SmallVector<int64_t> staticBounds;
  for (Value bound : bounds)
    if (std::optional<int64_t> c = getConstantIntValue(bound))
      staticBounds.push_back(*c);
  if (staticBounds.size() == bounds.size() &&
      matchPattern(indices, m_Constant(&constant))) {
    bool inRange = true;
    int64_t last = rank ? type.getDimSize(rank - 1) : 1, flat = 0;
    for (const APInt &v : constant.getValues<APInt>()) {
      int64_t i = v.getSExtValue();
      int64_t d = staticBounds[bounds.size() == 1 ? 0 : flat % last];
      inRange &= i >= (allowNegative ? -d : 0) && i < d;
      ++flat;
    }
    if (inRange)
      return;
  }
  // -d outside the loop: the bounds are loop-invariant.
  SmallVector<Value> negBounds;
  for (Value d : bounds)
    negBounds.push_back(allowNegative ? Value(arith::SubIOp::create(
                                            b, loc, indexConst(b, loc, 0), d))
                                      : indexConst(b, loc, 0));
  Value ok = allElementsSatisfy(
      b, loc, indices, [&](OpBuilder &nb, Location l, Value i) {
        Value d = bounds[0], negD = negBounds[0];
        if (bounds.size() > 1) {
          // The bound of this tuple entry: bounds[j], j along the last dim.
          Value j = linalg::IndexOp::create(nb, l, rank - 1);
          for (size_t k = 1; k < bounds.size(); ++k) {
            Value isK = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                              j, indexConst(nb, l, k));
            d = arith::SelectOp::create(nb, l, isK, bounds[k], d);
            negD = arith::SelectOp::create(nb, l, isK, negBounds[k], negD);
          }
        }
        return arith::AndIOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, i, negD),
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, d));
      });
  checkAtRunTime(b, loc, ok, message);
}

std::string sizeOrSymbol(int64_t size, StringRef symbol) {
  return ShapedType::isDynamic(size) ? symbol.str() : std::to_string(size);
}

void checkValuesInRange(OpBuilder &b, Location loc, Value values, Value lo,
                        Value hi, StringRef message) {
  Value ok = allElementsSatisfy(
      b, loc, values, [&](OpBuilder &nb, Location l, Value v) {
        Value inRange =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, v, lo);
        if (hi)
          inRange = arith::AndIOp::create(
              nb, l, inRange,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, v, hi));
        return inRange;
      });
  checkAtRunTime(b, loc, ok, message);
}

std::string indexRangeMessage(Operation *op, int64_t firstAxis,
                              ArrayRef<int64_t> sizes) {
  auto size = [](int64_t d) {
    return ShapedType::isDynamic(d) ? std::string("d (known at run time)")
                                    : std::to_string(d);
  };
  auto range = [](int64_t d) {
    return ShapedType::isDynamic(d)
               ? std::string("[-d, d)")
               : "[" + std::to_string(-d) + ", " + std::to_string(d) + ")";
  };
  if (sizes.size() == 1)
    return runTimeCheckMessage(op,
                               "an index is out of range " + range(sizes[0]) +
                                   " for axis " + std::to_string(firstAxis) +
                                   " of the data, of size " + size(sizes[0]));
  std::string what = "an index tuple is out of range: its entry j must lie "
                     "in [-d_j, d_j) for the data's axes " +
                     std::to_string(firstAxis) + ".." +
                     std::to_string(firstAxis + sizes.size() - 1) +
                     " of sizes d_j = (";
  for (auto [j, d] : llvm::enumerate(sizes))
    what += (j ? ", " : "") +
            (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return runTimeCheckMessage(op, what + ")");
}

} // namespace mp::lowering
