//===- FloatData.h - reading and converting raw float data ------*- C++ -*-===//
//
// Private to the precision library: constants are scanned and converted
// straight from their raw bytes (dense attributes or resource blobs), which
// keeps large weights out of APFloat.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_PRECISION_FLOATDATA_H
#define MP_LIB_PRECISION_FLOATDATA_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"

#include <cstdint>
#include <utility>

namespace mp {

/// The raw little-endian element bytes of `attr` and whether they hold a
/// single splat element; empty when the data is not there (elided blob).
std::pair<llvm::ArrayRef<char>, bool> rawElementData(mlir::ElementsAttr attr);

/// Element `i` of raw data of float type `elt` (f16, bf16, f32, f64).
double readFloatElement(const char *data, mlir::Type elt, int64_t i);

} // namespace mp

#endif // MP_LIB_PRECISION_FLOATDATA_H
