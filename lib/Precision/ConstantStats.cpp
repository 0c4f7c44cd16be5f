//===- ConstantStats.cpp - value statistics of float constants ------------===//

#include "FloatData.h"
#include "mp/Precision/Analysis.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace mp {

ConstantStats computeConstantStats(ElementsAttr attr) {
  ConstantStats s;
  Type elt = attr.getElementType();
  auto [bytes, splat] = rawElementData(attr);
  if (!(elt.isF16() || elt.isBF16() || elt.isF32() || elt.isF64()) ||
      bytes.empty())
    return s;
  unsigned width = elt.getIntOrFloatBitWidth() / 8;
  int64_t n = bytes.size() / width;
  double smallest = std::ldexp(1.0, -25); // fp16 rounds this and below to 0
  s.minValue = INFINITY;
  s.maxValue = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    double v = readFloatElement(bytes.data(), elt, i);
    double a = std::fabs(v);
    s.count++;
    if (v != 0)
      s.nonzero++;
    if (v != 0 && a <= smallest)
      s.flushToZero++;
    // From 65520 on, rounding to fp16 gives inf; below it rounds to a
    // finite value (65504 at most), an ordinary rounding.
    if (a >= 65520.0 && !std::isnan(v))
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
