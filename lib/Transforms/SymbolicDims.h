//===- SymbolicDims.h - dims of dynamically shaped graphs -------*- C++ -*-===//
//
// Exported decoders keep batch and sequence dynamic, and their reshapes take
// shapes computed at run time (Concat of Gather(Shape(x)) pieces, or Slices
// of a Shape), so the imported types lose even the static dims (heads, head
// size) that those shapes carry. These helpers read a dim back: a constant
// when the graph fixes it, else "dim i of value x", which compares equal to
// the same dim read through another Shape of x. mp-fuse-attention uses them
// to prove head counts and to recognize transposes and head repeats written
// as reshapes.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_TRANSFORMS_SYMBOLICDIMS_H
#define MP_LIB_TRANSFORMS_SYMBOLICDIMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mp {

/// One dim: a known size, dim `dim` of `source` (size unknown), or nothing
/// known (neither). A dim of a graph input that the model names (its
/// `mp.dims` entry: ONNX's dim_param, such as "batch") also carries the
/// name, and dims with the same name are the same size.
struct SymDim {
  std::optional<int64_t> value;
  mlir::Value source;
  int64_t dim = -1;
  mlir::StringAttr name;

  static SymDim constant(int64_t v) { return {v, {}, -1, {}}; }
  bool isConstant() const { return value.has_value(); }
  bool isKnown() const { return value || source; }
  /// Provably the same size.
  bool sameAs(const SymDim &o) const {
    if (value || o.value)
      return value && o.value && *value == *o.value;
    if (name && o.name)
      return name == o.name;
    return source && source == o.source && dim == o.dim;
  }
};

/// Reads dims and shape entries, remembering what it has read (the graph
/// must not change while one is in use).
class SymbolicDims {
public:
  /// Dim `i` (negative counts from the back) of the ranked tensor `v`.
  SymDim dimOf(mlir::Value v, int64_t i);

  /// The entries of a 0-D or 1-D i64 tensor computed from constants and
  /// shapes, or nullopt when not all of its structure is understood (an
  /// entry whose value is unknown is an unknown SymDim).
  std::optional<llvm::SmallVector<SymDim>> shapeEntries(mlir::Value v);

private:
  SymDim computeDim(mlir::Value v, int64_t i);
  std::optional<llvm::SmallVector<SymDim>> computeEntries(mlir::Value v);
  SymDim broadcastDim(mlir::Operation *op, int64_t rank, int64_t i);
  std::optional<llvm::SmallVector<SymDim>>
  combine(mlir::Operation *op,
          llvm::function_ref<SymDim(const SymDim &, const SymDim &)> f);

  llvm::DenseMap<std::pair<mlir::Value, int64_t>, SymDim> dims;
  llvm::DenseMap<mlir::Value, std::optional<llvm::SmallVector<SymDim>>> entries;
};

} // namespace mp

#endif // MP_LIB_TRANSFORMS_SYMBOLICDIMS_H
