//===- MpTypeInference.h - shape and type inference helpers -----*- C++ -*-===//
//
// Result type inference shared by the op families of the mp dialect. Dynamic
// dims are ShapedType::kDynamic; a helper that cannot decide a dim leaves it
// dynamic rather than failing, and fails only on provably invalid shapes.
//
//===----------------------------------------------------------------------===//

#ifndef MP_DIALECT_MP_IR_MPTYPEINFERENCE_H
#define MP_DIALECT_MP_IR_MPTYPEINFERENCE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mp {

using mlir::LogicalResult;

/// Declared result types are compatible with inferred ones when element
/// types are equal and shapes are compatible (either may be more static).
bool isCompatibleReturnTypes(mlir::TypeRange lhs, mlir::TypeRange rhs);

/// One result with the type of `operands[idx]`.
LogicalResult inferSameAsOperand(mlir::ValueRange operands, unsigned idx,
                                 llvm::SmallVectorImpl<mlir::Type> &types);

/// One result with the shape of `value` and element type `elementType`.
LogicalResult inferSameShape(mlir::Value value, mlir::Type elementType,
                             llvm::SmallVectorImpl<mlir::Type> &types);

/// Numpy (multidirectional) broadcasting of the given shapes. Fails when two
/// static dims differ and neither is 1.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::SmallVector<int64_t>> shapes);

/// One result: the broadcast of all operand shapes, with `elementType` or,
/// when null, the first operand's element type.
LogicalResult inferBroadcast(std::optional<mlir::Location> loc,
                             mlir::ValueRange operands, mlir::Type elementType,
                             llvm::SmallVectorImpl<mlir::Type> &types);

/// Reduction result over `axes` (empty: all axes, or none with
/// `noopWithEmptyAxes`).
LogicalResult inferReduce(std::optional<mlir::Location> loc, mlir::Value data,
                          llvm::ArrayRef<int64_t> axes, bool keepdims,
                          bool noopWithEmptyAxes,
                          llvm::SmallVectorImpl<mlir::Type> &types);

/// The integer values of `value` when it is defined by a constant (any
/// integer element type), else nullopt.
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value value);

/// The float values of `value` when it is defined by a constant or is a
/// small expression over constants (Cast, Add, Sub, Mul, Div), evaluated in
/// each op's element type; the IR is not folded.
std::optional<llvm::SmallVector<double>> getConstantFloats(mlir::Value value);

/// Normalizes a possibly negative `axis` for `rank`; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Shape of `value`'s ranked tensor type.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);

/// Element type of `value`'s shaped type.
mlir::Type elementTypeOf(mlir::Value value);

/// Product of `dims`, or kDynamic if any is dynamic.
int64_t productOf(llvm::ArrayRef<int64_t> dims);

} // namespace mp

#endif // MP_DIALECT_MP_IR_MPTYPEINFERENCE_H
