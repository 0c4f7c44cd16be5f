//===- ElementData.cpp - raw bytes of constant tensors --------------------===//

#include "mp/Support/ElementData.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

std::pair<ArrayRef<char>, bool> mp::rawElementData(ElementsAttr attr) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return {dense.getRawData(), dense.isSplat()};
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr))
    if (AsmResourceBlob *blob = res.getRawHandle().getBlob())
      return {blob->getData(), false};
  return {{}, false};
}
