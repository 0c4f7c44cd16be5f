//===- MpFoldUtils.h - constant folding helpers (private) -------*- C++ -*-===//
//
// Folding is limited to integer tensors: shape computations (Shape, Gather,
// Concat, arithmetic) fold so that static shapes become static types.
// Floating-point data is never folded, so precision decisions see the
// graph as written.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_DIALECT_MP_IR_MPFOLDUTILS_H
#define MP_LIB_DIALECT_MP_IR_MPFOLDUTILS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mp {

/// Largest integer constant (in elements) that folders will create.
constexpr int64_t kMaxFoldedElements = 4096;

/// The attribute as dense integers, if it is one.
inline mlir::DenseIntElementsAttr asDenseInts(mlir::Attribute attr) {
  return llvm::dyn_cast_if_present<mlir::DenseIntElementsAttr>(attr);
}

/// A static integer tensor type small enough to fold into.
bool isFoldableIntType(mlir::Type type);

/// Builds dense integer elements of `type` from int64 values.
mlir::DenseElementsAttr makeInts(mlir::ShapedType type,
                                 llvm::ArrayRef<int64_t> values);

/// Reads dense integer elements as int64 values (sign-extended unless the
/// element type is unsigned).
llvm::SmallVector<int64_t> readInts(mlir::DenseIntElementsAttr attr);

/// Elementwise fold of two integer constants with numpy broadcasting into
/// `resultType`; `fn` returns nullopt to give up (e.g. division by zero).
mlir::Attribute
foldBinaryInts(mlir::Attribute lhs, mlir::Attribute rhs, mlir::Type resultType,
               llvm::function_ref<std::optional<int64_t>(int64_t, int64_t)> fn);

} // namespace mp

#endif // MP_LIB_DIALECT_MP_IR_MPFOLDUTILS_H
