//===- FloatData.h - reading and converting raw float data ------*- C++ -*-===//
//
// Private to the precision library: constants are scanned and converted
// straight from their raw bytes (dense attributes or resource blobs), which
// keeps large weights out of APFloat.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_PRECISION_FLOATDATA_H
#define MP_LIB_PRECISION_FLOATDATA_H

#include "mp/Support/ElementData.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"

#include <cstdint>
#include <utility>

namespace mp {

/// Element `i` of raw data of float type `elt` (f16, bf16, f32, f64).
double readFloatElement(const char *data, mlir::Type elt, int64_t i);

} // namespace mp

#endif // MP_LIB_PRECISION_FLOATDATA_H
