//===- MpFoldUtils.cpp - constant folding helpers -------------------------===//

#include "MpFoldUtils.h"

using namespace mlir;

namespace mp {

bool isFoldableIntType(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  return shaped && shaped.hasStaticShape() &&
         isa<IntegerType>(shaped.getElementType()) &&
         shaped.getNumElements() <= kMaxFoldedElements;
}

DenseElementsAttr makeInts(ShapedType type, ArrayRef<int64_t> values) {
  auto intType = cast<IntegerType>(type.getElementType());
  SmallVector<APInt> bits;
  bits.reserve(values.size());
  for (int64_t v : values)
    bits.push_back(APInt(intType.getWidth(), v, /*isSigned=*/true,
                         /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, bits);
}

SmallVector<int64_t> readInts(DenseIntElementsAttr attr) {
  bool isUnsigned = attr.getElementType().isUnsignedInteger();
  SmallVector<int64_t> out;
  out.reserve(attr.getNumElements());
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(isUnsigned ? (int64_t)v.getZExtValue() : v.getSExtValue());
  return out;
}

/// Row-major index into a tensor of `shape` broadcast to `outShape`.
static int64_t broadcastIndex(int64_t flat, ArrayRef<int64_t> outShape,
                              ArrayRef<int64_t> shape) {
  int64_t index = 0, stride = 1;
  size_t offset = outShape.size() - shape.size();
  for (int64_t i = outShape.size() - 1; i >= 0; --i) {
    int64_t coord = flat % outShape[i];
    flat /= outShape[i];
    if (i >= (int64_t)offset) {
      int64_t d = shape[i - offset];
      index += (d == 1 ? 0 : coord) * stride;
      stride *= d;
    }
  }
  return index;
}

Attribute
foldBinaryInts(Attribute lhs, Attribute rhs, Type resultType,
               function_ref<std::optional<int64_t>(int64_t, int64_t)> fn) {
  DenseIntElementsAttr l = asDenseInts(lhs), r = asDenseInts(rhs);
  if (!l || !r || !isFoldableIntType(resultType))
    return {};
  auto outType = cast<ShapedType>(resultType);
  SmallVector<int64_t> lv = readInts(l), rv = readInts(r);
  SmallVector<int64_t> out;
  for (int64_t i = 0, e = outType.getNumElements(); i < e; ++i) {
    std::optional<int64_t> v =
        fn(lv[broadcastIndex(i, outType.getShape(), l.getType().getShape())],
           rv[broadcastIndex(i, outType.getShape(), r.getType().getShape())]);
    if (!v)
      return {};
    out.push_back(*v);
  }
  return makeInts(outType, out);
}

} // namespace mp
