//===- AttentionLayout.cpp - heads, caches and masks of attention ---------===//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mp;
using namespace mp::lowering;

namespace mp::lowering {

Value swapMiddleDims(OpBuilder &b, Location loc, Value x) {
  auto t = typeOf(x);
  auto outType = RankedTensorType::get(
      {t.getDimSize(0), t.getDimSize(2), t.getDimSize(1), t.getDimSize(3)},
      t.getElementType());
  SmallVector<Value> sizes;
  for (int64_t from : {0, 2, 1, 3})
    if (t.isDynamicDim(from))
      sizes.push_back(dimValue(b, loc, x, from));
  Value init = emptyTensor(b, loc, outType, sizes);
  return linalg::TransposeOp::create(b, loc, x, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

Value splitHeads(OpBuilder &b, Location loc, Value x, int64_t heads) {
  auto t = typeOf(x);
  int64_t d = t.getDimSize(2) / heads;
  Value r = reshapeTo(
      b, loc, x,
      RankedTensorType::get({t.getDimSize(0), t.getDimSize(1), heads, d},
                            t.getElementType()));
  return swapMiddleDims(b, loc, r);
}

Value mergeHeads(OpBuilder &b, Location loc, Value x) {
  auto t = typeOf(x);
  Value r = swapMiddleDims(b, loc, x);
  return reshapeTo(b, loc, r,
                   RankedTensorType::get({t.getDimSize(0), t.getDimSize(2),
                                          t.getDimSize(1) * t.getDimSize(3)},
                                         t.getElementType()));
}

Value withPast(OpBuilder &b, Location loc, Value past, Value now) {
  if (!past)
    return now;
  auto p = typeOf(past), n = typeOf(now);
  int64_t length = p.isDynamicDim(2) || n.isDynamicDim(2)
                       ? ShapedType::kDynamic
                       : p.getDimSize(2) + n.getDimSize(2);
  // The other dims agree; either side may know one the other does not (a
  // head size the new keys compute at run time, the cache's declared one).
  auto known = [&](int64_t d) {
    return n.isDynamicDim(d) ? p.getDimSize(d) : n.getDimSize(d);
  };
  auto type = RankedTensorType::get({known(0), known(1), length, known(3)},
                                    n.getElementType());
  return tensor::ConcatOp::create(b, loc, type, 2, ValueRange{past, now});
}

Value cacheFillLevel(OpBuilder &b, Location loc, Value length,
                     RankedTensorType cacheType, int64_t fresh) {
  Value raw = tensor::ExtractOp::create(b, loc, length, ValueRange{});
  Value at = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value hi = indexConst(b, loc, cacheType.getDimSize(2) - fresh);
  return arith::MaxSIOp::create(b, loc, indexConst(b, loc, 0),
                                arith::MinSIOp::create(b, loc, at, hi));
}

Value writeAt(OpBuilder &b, Location loc, Value cache, Value fresh, Value at) {
  auto t = typeOf(fresh);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0), at,
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes, strides(4, b.getIndexAttr(1));
  for (int64_t d : t.getShape())
    sizes.push_back(b.getIndexAttr(d));
  return tensor::InsertSliceOp::create(b, loc, fresh, cache, offsets, sizes,
                                       strides);
}

Value batchFilled(OpBuilder &b, Location loc, int64_t batch, Value value) {
  Type i64 = b.getI64Type();
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{batch}, i64);
  Value v = arith::IndexCastOp::create(b, loc, i64, value);
  return linalg::FillOp::create(b, loc, v, empty).getResult(0);
}

Value padKeys(OpBuilder &b, Location loc, Value mask, Value keys, bool isBool) {
  auto t = typeOf(mask);
  if (t.getRank() == 0)
    return mask; // one value for every score
  int64_t rank = t.getRank();
  int64_t have = t.getShape().back(), total = typeOf(keys).getDimSize(2);
  if (have == 1 || (!ShapedType::isDynamic(have) &&
                    !ShapedType::isDynamic(total) && have >= total))
    return mask;
  SmallVector<int64_t> shape(t.getShape());
  shape.back() = total;
  auto type = RankedTensorType::get(shape, t.getElementType());
  Value haveValue = dimValue(b, loc, mask, rank - 1);
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < rank; ++i)
    if (type.isDynamicDim(i))
      sizes.push_back(i + 1 < rank ? dimValue(b, loc, mask, i)
                                   : dimValue(b, loc, keys, 2));
  Value unit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     haveValue, indexConst(b, loc, 1));
  return parallelGeneric(
      b, loc, type, {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i)
          idx.push_back(linalg::IndexOp::create(nb, l, i));
        Value inside = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                             idx.back(), haveValue);
        Value zero = indexConst(nb, l, 0);
        SmallVector<Value> at = idx;
        at.back() = arith::SelectOp::create(
            nb, l, unit, zero,
            arith::SelectOp::create(nb, l, inside, idx.back(), zero));
        Value v = tensor::ExtractOp::create(nb, l, mask, at);
        Value fill = isBool ? scalarConst(nb, l, t.getElementType(), 0)
                            : scalarConst(nb, l, t.getElementType(), -INFINITY);
        return arith::SelectOp::create(
            nb, l, arith::OrIOp::create(nb, l, unit, inside), v, fill);
      },
      sizes);
}

} // namespace mp::lowering
