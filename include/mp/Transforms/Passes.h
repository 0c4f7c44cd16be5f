//===- Passes.h - passes on the mp graph ------------------------*- C++ -*-===//

#ifndef MP_TRANSFORMS_PASSES_H
#define MP_TRANSFORMS_PASSES_H

#include "mp/Dialect/Mp/IR/MpDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mp {

/// Whether graph inputs and outputs keep their element types under mixed
/// precision (the passes' `keep-io-types`): as the policy (or an earlier
/// decision) says, or forced.
enum class KeepIoTypes { Policy, Yes, No };

/// How far back the shape/index guard reaches (the passes' `index-guard`):
/// as the policy's `index_guard` says (default arithmetic), or forced.
enum class IndexGuardChoice { Policy, Arithmetic, Exact };

#define GEN_PASS_DECL
#include "mp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mp/Transforms/Passes.h.inc"

/// Marks each TensorScatter (ONNX-24's KV cache write) whose cache is a
/// graph input read only there and whose result is returned once, and
/// whose lowering writes only the update (TensorScatterOp::writesSlices),
/// as updated in place: `mp.updated_in_place` on the input and
/// `mp.in_place_of` on the output, as mp-kv-cache-in-place marks its
/// caches. The entry then takes one buffer for both (prepareEntry).
void markInPlaceTensorScatters(mlir::func::FuncOp func);

/// The name mp-expose-values gives output `result` of the node named `key`
/// (precisionNodeKeys): "result:key".
std::string exposedValueName(llvm::StringRef key, unsigned result);

/// The key mp-shadow-fp16 gives the fp16 clone of the node named `key`.
std::string shadowKey(llvm::StringRef key);

/// Splits a name made by exposedValueName; false for any other name.
bool parseExposedValueName(llvm::StringRef name, llvm::StringRef &key,
                           unsigned &result);

} // namespace mp

#endif // MP_TRANSFORMS_PASSES_H
