//===- ShapeSyntax.h - "1x16x80" shapes on command lines --------*- C++ -*-===//

#ifndef MP_SUPPORT_SHAPESYNTAX_H
#define MP_SUPPORT_SHAPESYNTAX_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mp {

/// Parses dims written "1x16x80" (`--input-shape`, `mp-specialize-shapes`);
/// "" or "scalar" is rank 0. Null on anything but non-negative integers.
inline std::optional<llvm::SmallVector<int64_t>> parseShape(llvm::StringRef text) {
  llvm::SmallVector<int64_t> dims;
  if (text.empty() || text == "scalar")
    return dims;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, 'x');
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0)
      return std::nullopt;
    dims.push_back(d);
  }
  return dims;
}

} // namespace mp

#endif // MP_SUPPORT_SHAPESYNTAX_H
