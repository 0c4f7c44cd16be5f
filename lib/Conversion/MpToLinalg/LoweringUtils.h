//===- LoweringUtils.h - shared helpers of the mp to linalg lowering -*- C++ -*-===//

#ifndef MP_LIB_CONVERSION_MPTOLINALG_LOWERINGUTILS_H
#define MP_LIB_CONVERSION_MPTOLINALG_LOWERINGUTILS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mp::lowering {

/// Computes one scalar result from the scalar operands of a generic.
using ScalarFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// The ranked tensor type of `v`.
inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

/// True when every tensor operand and result of `op` has a static shape
/// (what the lowering handles today).
bool allStatic(mlir::Operation *op);

/// A constant of scalar type `type` (float or integer).
mlir::Value scalarConst(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Type type, double value);

/// Converts a scalar to `to` with ONNX Cast semantics (floats round to
/// nearest, float to int truncates, int to bool is != 0).
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       mlir::Type to);

/// A parallel linalg.generic over `resultType` reading `inputs` through
/// `inputMaps` (identity output map).
mlir::Value parallelGeneric(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::RankedTensorType resultType,
                            mlir::ValueRange inputs,
                            llvm::ArrayRef<mlir::AffineMap> inputMaps,
                            ScalarFn body);

/// The map reading an operand of `shape` broadcast (numpy rules) to an
/// iteration space of `rank` dims with sizes `resultShape`.
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx,
                             llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<int64_t> resultShape);

/// Elementwise op with numpy broadcasting of `operands` to `resultType`.
mlir::Value elementwise(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType resultType,
                        mlir::ValueRange operands, ScalarFn body);

/// Reduces `input` over the sorted `axes` into a tensor without them, of
/// element type `accType`: acc = combine(pre(x), acc), starting at `init`.
mlir::Value reduce(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                   llvm::ArrayRef<int64_t> axes, mlir::Type accType,
                   double init,
                   llvm::function_ref<mlir::Value(mlir::OpBuilder &,
                                                  mlir::Location, mlir::Value,
                                                  mlir::Value)>
                       combine);

/// The map of a tensor that lacks `axes` in an iteration space of `rank`.
mlir::AffineMap droppedAxesMap(mlir::MLIRContext *ctx, int64_t rank,
                               llvm::ArrayRef<int64_t> axes);

/// The pieces of a softmax over `axes` computed in `acc`: x - max(x),
/// exp of that, and the sum of the exps (without `axes`).
struct SoftmaxParts {
  mlir::Value shifted, exp, sum;
};
SoftmaxParts softmaxParts(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value x, llvm::ArrayRef<int64_t> axes,
                          mlir::Type acc);

/// f(full, stat) elementwise over `resultType`, where `stat` lacks `axes`.
mlir::Value withStat(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::RankedTensorType resultType, mlir::Value full,
                     mlir::Value stat, llvm::ArrayRef<int64_t> axes,
                     ScalarFn fn);

/// Reshapes `value` to the static `type` (same number of elements).
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value value, mlir::RankedTensorType type);

/// An `index` constant.
mlir::Value indexConst(mlir::OpBuilder &b, mlir::Location loc, int64_t value);

/// An integer read from data as an `index`, negative values counting from
/// the end of a dim of size `dim` (ONNX gather/scatter semantics).
mlir::Value normalizedIndex(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value i, int64_t dim);

/// `v` converted elementwise to element type `elt` (`v` itself if it has
/// it): rounds accumulators back to the op's result type.
mlir::Value castElements(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                         mlir::Type elt);

/// out[b.., m, n] = init + sum_k lhs[b.., m, k] * rhs[b.., k, n] in `acc`
/// (the shape of `outType`), `lhsMap`/`rhsMap` reading the operands in terms
/// of the dims (b.., m, n, k). `init` defaults to zeros. The loops run
/// (b.., m, k, n) so that the innermost one is contiguous and reduction-free.
mlir::Value contract(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::RankedTensorType outType, mlir::Value lhs,
                     mlir::AffineMap lhsMap, mlir::Value rhs,
                     mlir::AffineMap rhsMap, mlir::Type acc,
                     mlir::Value init = {});

/// The wider type that sums and statistics of `elt` use (f32 for f16/bf16).
mlir::Type accumulatorType(mlir::Type elt);

} // namespace mp::lowering

#endif // MP_LIB_CONVERSION_MPTOLINALG_LOWERINGUTILS_H
