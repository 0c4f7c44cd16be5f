//===- SizeClass.h - size classes of the buffer pools -----------*- C++ -*-===//

#ifndef MP_RUNTIME_SIZECLASS_H
#define MP_RUNTIME_SIZECLASS_H

#include <cstddef>

namespace mp {

/// `size` rounded up to a pool class: multiples of `granule` up to 4 KB,
/// then four classes per power of two (at most 25 % unused). The host pool
/// and the device pool both keep freed blocks by this class.
inline size_t poolSizeClass(size_t size, size_t granule) {
  if (size <= 4096)
    return (size + granule - 1) / granule * granule;
  size_t power = size_t(1) << (63 - __builtin_clzll(size));
  size_t step = power / 4;
  return (size + step - 1) / step * step;
}

} // namespace mp

#endif // MP_RUNTIME_SIZECLASS_H
