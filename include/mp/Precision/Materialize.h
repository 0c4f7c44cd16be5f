//===- Materialize.h - turning decisions into types and casts ---*- C++ -*-===//

#ifndef MP_PRECISION_MATERIALIZE_H
#define MP_PRECISION_MATERIALIZE_H

#include "mp/Precision/Policy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"

namespace mp {

/// Name of the discardable attribute holding an op's `#mp.precision`.
constexpr llvm::StringLiteral kPrecisionAttrName = "mp.precision";
/// Unit attribute marking constants whose mask sentinels are rewritten
/// when stored in fp16.
constexpr llvm::StringLiteral kMaskSentinelAttrName = "mp.mask_sentinel";
/// Function attribute recording keep-io-types as assign-precision decided.
constexpr llvm::StringLiteral kKeepIoTypesAttrName = "mp.keep_io_types";

/// Function attribute: float weight bytes before mp-insert-casts converted
/// them (for reports after the pass).
constexpr llvm::StringLiteral kWeightBytesAttrName = "mp.weight_bytes_fp32";

/// True when `attr` holds its element data (not an elided resource).
bool hasElementData(mlir::ElementsAttr attr);

/// The compute type recorded on `op`, if it has a decision.
std::optional<Compute> recordedCompute(mlir::Operation *op);

/// Converts float elements to `target` (f16 or f32), rounding to nearest
/// even; with `rewriteSentinels`, values at or below the sentinel threshold
/// become the fp16-safe sentinel. Large tensors stay resource blobs.
mlir::ElementsAttr convertFloatElements(mlir::ElementsAttr attr,
                                        mlir::FloatType target,
                                        bool rewriteSentinels);

/// Rewrites `func` to the recorded decisions: f16/f32 result types, casts
/// shared per (value, type), constants converted at compile time.
mlir::LogicalResult materializePrecision(mlir::func::FuncOp func,
                                         bool keepIoTypes);

} // namespace mp

#endif // MP_PRECISION_MATERIALIZE_H
