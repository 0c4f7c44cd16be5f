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
/// (what the patterns without a dynamic-shape lowering require).
bool allStatic(mlir::Operation *op);

/// The size of dim `d` of tensor `v` as an `index` (a constant when static).
mlir::Value dimValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                     int64_t d);

/// The run-time sizes of the dynamic dims of `type`, an iteration space
/// whose dims `inputs` read through `maps`: each from the first input that
/// reads the dim directly (`tensor.dim`). Returns failure when some input
/// must provide a dim and none does.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
inferDynamicSizes(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type, mlir::ValueRange inputs,
                  llvm::ArrayRef<mlir::AffineMap> maps);

/// The sizes of the dynamic dims of `v`, in order (the `dynSizes` of a
/// tensor shaped like `v`).
llvm::SmallVector<mlir::Value> dynamicSizes(mlir::OpBuilder &b,
                                            mlir::Location loc, mlir::Value v);

/// A `tensor.empty` of `type`; `dynSizes` are its dynamic dims in order.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type,
                        mlir::ValueRange dynSizes = {});

/// Numpy broadcasting of `operands` to the shape of `type` when dims are
/// dynamic: the run-time size of each dynamic result dim (the largest of the
/// operands' sizes), and the operands with any dynamic dim that is 1 at run
/// time where the result's is not expanded along it (an `scf.if`, so that
/// the maps can read every dynamic dim directly). Only the leading
/// `shape.size() - trailing` dims are handled (`dynSizes` has theirs); the
/// last `trailing` dims of each operand are left alone (matrix dims of
/// MatMul).
/// `x` expanded along its dynamic dim `p` to `size` when it is 1 there at
/// run time and `size` is not; `x` otherwise (an `scf.if`, same type).
mlir::Value expandUnitDim(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value x, int64_t p, mlir::Value size);

struct Broadcast {
  llvm::SmallVector<mlir::Value> operands, dynSizes;
};
Broadcast broadcastDynamic(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::ArrayRef<int64_t> shape,
                           mlir::ValueRange operands, int64_t trailing = 0);

/// `read()` where `cond` holds, `otherwise` elsewhere, with the read done
/// only where `cond` holds (an `scf.if`): for tensors that may be empty.
mlir::Value readWhere(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value cond,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location)> read,
    mlir::Value otherwise);

/// A constant of scalar type `type` (float or integer).
mlir::Value scalarConst(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Type type, double value);

/// Converts a scalar to `to` with ONNX Cast semantics (floats round to
/// nearest, float to int truncates, int to bool is != 0).
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       mlir::Type to);

/// A parallel linalg.generic over `resultType` reading `inputs` through
/// `inputMaps` (identity output map). Dynamic dims of `resultType` take
/// `dynSizes`, or when none are given the sizes of the inputs that read
/// them directly (there must be one).
mlir::Value parallelGeneric(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::RankedTensorType resultType,
                            mlir::ValueRange inputs,
                            llvm::ArrayRef<mlir::AffineMap> inputMaps,
                            ScalarFn body, mlir::ValueRange dynSizes = {});

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

/// Reshapes `value` to `type` (same number of elements, row-major order).
/// Dynamic dims of `type` take `dynSizes`; without them, the dynamic dims
/// of `type` are those of `value`, in order.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value value, mlir::RankedTensorType type,
                      mlir::ValueRange dynSizes = {});

/// Reshapes `value` to `type` whose dynamic dims are `sizes`, through a
/// shape tensor (memref.reshape once bufferized): for sizes computed at run
/// time when the static types do not say which dims split or merge.
mlir::Value reshapeToSizes(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value, mlir::RankedTensorType type,
                           mlir::ValueRange sizes);

/// The number of elements over `axes` of `v`, as a scalar of float or
/// integer type `type` (computed at run time when a dim is dynamic).
mlir::Value countOver(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      llvm::ArrayRef<int64_t> axes, mlir::Type type);

/// An `index` constant.
mlir::Value indexConst(mlir::OpBuilder &b, mlir::Location loc, int64_t value);

/// The message of a run-time check of `op`: "mp: OpType (node 'name'): "
/// followed by `what`, so that a failed check names the ONNX node.
std::string runTimeCheckMessage(mlir::Operation *op, llvm::StringRef what);

/// Stops the run with `message` unless `ok` (an i1) holds: a `cf.assert`,
/// which the JIT and a CPU library report as the run's error.
void checkAtRunTime(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ok,
                    llvm::StringRef message);

/// A size computed from data (an integer scalar) as an `index`, checked at
/// run time to be non-negative: a negative one would allocate ~2^64 elements.
mlir::Value checkedSize(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Operation *op, mlir::Value size,
                        llvm::StringRef what);

/// `v` with dim `d` cast to the static `size` the op needs (e.g. the channels
/// a Conv's weight fixes behind a Pad whose pads are read at run time),
/// checked at run time; `v` itself when that dim is already static.
mlir::Value withStaticDim(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Operation *op, mlir::Value v, int64_t d,
                          int64_t size);

/// An integer read from data as an `index`, negative values counting from
/// the end of a dim of size `dim` (ONNX gather/scatter semantics).
mlir::Value normalizedIndex(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value i, int64_t dim);
/// The same for a dim whose size is known at run time (`index`).
mlir::Value normalizedIndex(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value i, mlir::Value dim);

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

/// Stops the run with `message` unless every element of the integer tensor
/// `indices` lies in [-d, d): one and-reduction over the indices and one
/// check, before the op that reads or writes through them, so that its
/// loops stay free of checks. `bounds` holds d (`index` values): one for
/// every element, or one per position along the last dim of `indices`
/// (the index tuples of GatherND and ScatterND). Emits nothing when the
/// indices and the bounds are constants in range. Without `allowNegative`
/// the range is [0, d) (positions, which do not count from the end).
void checkIndicesInRange(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value indices,
                         llvm::ArrayRef<mlir::Value> bounds,
                         llvm::StringRef message, bool allowNegative = true);

/// Stops the run with `message` unless every element of the integer tensor
/// `values` lies in [lo, hi) (`index` values; no upper bound when `hi` is
/// null): one and-reduction over the values and one check, like
/// checkIndicesInRange, for run-time values whose valid range is not an
/// axis of a tensor (sequence lengths, cache positions).
void checkValuesInRange(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value values, mlir::Value lo, mlir::Value hi,
                        llvm::StringRef message);

/// `size` in decimal, or `symbol` when it is dynamic: the sizes in run-time
/// check messages ("[0, 16)" or "[0, T)").
std::string sizeOrSymbol(int64_t size, llvm::StringRef symbol);

/// What a failed checkIndicesInRange says for `op`: "an index is out of
/// range [-d, d) for axis A of the data, of size d", the sizes spelled out
/// where static (`sizes` are those of the data's axes `firstAxis`..).
std::string indexRangeMessage(mlir::Operation *op, int64_t firstAxis,
                              llvm::ArrayRef<int64_t> sizes);

} // namespace mp::lowering

#endif // MP_LIB_CONVERSION_MPTOLINALG_LOWERINGUTILS_H
