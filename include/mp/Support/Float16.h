//===- Float16.h - IEEE binary16 conversions --------------------*- C++ -*-===//
//
// Header-only so that libraries without MLIR dependencies (host tensors,
// the runtime later) share one implementation.
//
//===----------------------------------------------------------------------===//

#ifndef MP_SUPPORT_FLOAT16_H
#define MP_SUPPORT_FLOAT16_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mp {

/// IEEE binary32 to binary16, round to nearest even; overflow gives inf.
inline uint16_t floatToHalf(float f) {
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

inline float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0)
    return (sign ? -1.0f : 1.0f) * std::ldexp((float)man, -24);
  uint32_t bits = exp == 31 ? sign | 0x7f800000u | (man << 13)
                            : sign | ((exp + 112) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace mp

#endif // MP_SUPPORT_FLOAT16_H
