//===- ConvertElements.cpp - f32 <-> f16 constant conversion --------------===//

#include "FloatData.h"
#include "mp/Support/Float16.h"
#include "mp/Precision/Analysis.h"
#include "mp/Precision/Materialize.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace mp {

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
  auto [raw, splat] = rawElementData(attr);
  int64_t stored = splat ? 1 : srcType.getNumElements();
  unsigned width = target.getWidth() / 8;
  std::vector<char> out(stored * width);
  for (int64_t i = 0; i < stored; ++i) {
    float v = (float)readFloatElement(raw.data(), elt, i);
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
