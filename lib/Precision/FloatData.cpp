//===- FloatData.cpp - reading and converting raw float data --------------===//

#include "FloatData.h"
#include "mp/Support/Float16.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace mp {

double readFloatElement(const char *data, Type elt, int64_t i) {
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
    return d;
  }
  uint32_t bits = 0; // bf16
  std::memcpy(reinterpret_cast<char *>(&bits) + 2, data + 2 * i, 2);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace mp
