//===- ConstantStats.cpp - value statistics of float constants ------------===//

#include "mp/Precision/Analysis.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace mp {

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

/// Raw little-endian bytes of the elements, and whether they are a splat.
static std::pair<ArrayRef<char>, bool> rawData(ElementsAttr attr) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return {dense.getRawData(), dense.isSplat()};
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr))
    if (AsmResourceBlob *blob = res.getRawHandle().getBlob())
      return {blob->getData(), false};
  return {{}, false};
}

ConstantStats computeConstantStats(ElementsAttr attr) {
  ConstantStats s;
  Type elt = attr.getElementType();
  auto [bytes, splat] = rawData(attr);
  unsigned width = elt.getIntOrFloatBitWidth() / 8;
  if (!isa<FloatType>(elt) || bytes.empty())
    return s;
  int64_t n = bytes.size() / width;
  double smallest = std::ldexp(1.0, -25); // fp16 rounds this and below to 0
  s.minValue = INFINITY;
  s.maxValue = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    const char *p = bytes.data() + i * width;
    double v;
    if (elt.isF32()) {
      float f;
      std::memcpy(&f, p, 4);
      v = f;
    } else if (elt.isF64()) {
      std::memcpy(&v, p, 8);
    } else if (elt.isF16()) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      v = halfToFloat(h);
    } else if (elt.isBF16()) {
      uint32_t bits = 0;
      std::memcpy(reinterpret_cast<char *>(&bits) + 2, p, 2);
      float f;
      std::memcpy(&f, &bits, 4);
      v = f;
    } else {
      return s;
    }
    double a = std::fabs(v);
    s.count++;
    if (v != 0)
      s.nonzero++;
    if (v != 0 && a <= smallest)
      s.flushToZero++;
    if (a > 65504.0 && !std::isnan(v))
      s.overflow++;
    s.maxAbs = std::max(s.maxAbs, a);
    s.minValue = std::min(s.minValue, v);
    s.maxValue = std::max(s.maxValue, v);
  }
  if (splat) {
    // One stored element stands for all of them.
    int64_t total = attr.getNumElements();
    s.nonzero = s.nonzero ? total : 0;
    s.flushToZero = s.flushToZero ? total : 0;
    s.overflow = s.overflow ? total : 0;
    s.count = total;
  }
  if (s.count == 0)
    s.minValue = s.maxValue = 0;
  return s;
}

} // namespace mp
