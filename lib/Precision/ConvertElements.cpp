//===- ConvertElements.cpp - f32 <-> f16 constant conversion --------------===//

#include "mp/Precision/Analysis.h"
#include "mp/Precision/Materialize.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace mp {

/// IEEE binary32 → binary16, round to nearest even; overflow gives inf.
static uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or NaN
    return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0);
  if (absx >= 0x477ff000u) // rounds to >= 65520: inf
    return sign | 0x7c00u;
  if (absx < 0x38800000u) { // subnormal or zero in fp16
    if (absx < 0x33000000u)
      return sign;
    uint32_t man = (absx & 0x7fffffu) | 0x800000u;
    int shift = 126 - (int)(absx >> 23);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = ((absx - 0x38000000u) >> 13);
  uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
    ++half;
  return sign | half;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0)
    return (sign ? -1.0f : 1.0f) * std::ldexp((float)man, -24);
  uint32_t bits = exp == 31 ? sign | 0x7f800000u | (man << 13)
                            : sign | ((exp + 112) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Reads element `i` of raw float data of type `elt` as a float.
static float readFloat(const char *data, Type elt, int64_t i) {
  if (elt.isF32()) {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    return f;
  }
  if (elt.isF16()) {
    uint16_t h;
    std::memcpy(&h, data + 2 * i, 2);
    return halfToFloat(h);
  }
  if (elt.isF64()) {
    double d;
    std::memcpy(&d, data + 8 * i, 8);
    return (float)d;
  }
  uint32_t bits = 0; // bf16
  std::memcpy(reinterpret_cast<char *>(&bits) + 2, data + 2 * i, 2);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bool hasElementData(ElementsAttr attr) {
  if (isa<DenseElementsAttr>(attr))
    return true;
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr))
    if (AsmResourceBlob *blob = res.getRawHandle().getBlob())
      return !blob->getData().empty() || attr.getNumElements() == 0;
  return false;
}

ElementsAttr convertFloatElements(ElementsAttr attr, FloatType target,
                                  bool rewriteSentinels) {
  auto srcType = cast<ShapedType>(attr.getType());
  Type elt = srcType.getElementType();
  auto dstType = RankedTensorType::get(srcType.getShape(), target);
  ArrayRef<char> raw;
  bool splat = false;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    raw = dense.getRawData();
    splat = dense.isSplat();
  } else if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    if (AsmResourceBlob *blob = res.getRawHandle().getBlob())
      raw = blob->getData();
  }
  int64_t stored = splat ? 1 : srcType.getNumElements();
  unsigned width = target.getWidth() / 8;
  std::vector<char> out(stored * width);
  for (int64_t i = 0; i < stored; ++i) {
    float v = readFloat(raw.data(), elt, i);
    if (rewriteSentinels && v <= kSentinelThreshold)
      v = (float)kFp16SafeSentinel;
    if (target.isF16()) {
      uint16_t h = floatToHalf(v);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(out.data() + 4 * i, &v, 4);
    }
  }
  if (isa<DenseElementsAttr>(attr))
    return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(dstType, out));
  auto res = cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(out), width);
  std::string name =
      (res.getRawHandle().getKey() + (target.isF16() ? ".f16" : ".f32")).str();
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(dstType, name, std::move(blob)));
}

} // namespace mp
