//===- ElementData.h - raw bytes of constant tensors ------------*- C++ -*-===//
//
// Constants are read straight from their raw bytes (dense attributes or
// resource blobs), which keeps large weights out of APFloat.
//
//===----------------------------------------------------------------------===//

#ifndef MP_SUPPORT_ELEMENTDATA_H
#define MP_SUPPORT_ELEMENTDATA_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"

#include <utility>

namespace mp {

/// The raw little-endian element bytes of `attr` and whether they hold a
/// single splat element; empty when the data is not there (elided blob).
std::pair<llvm::ArrayRef<char>, bool> rawElementData(mlir::ElementsAttr attr);

} // namespace mp

#endif // MP_SUPPORT_ELEMENTDATA_H
