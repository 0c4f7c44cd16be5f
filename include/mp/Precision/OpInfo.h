//===- OpInfo.h - what precision passes need to know of an op ---*- C++ -*-===//

#ifndef MP_PRECISION_OPINFO_H
#define MP_PRECISION_OPINFO_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

namespace mp {

/// The ONNX node name of `op` (from its location), or "" if it has none.
std::string onnxNodeName(mlir::Operation *op);

/// The ONNX op type of `op`: recorded by the importer in the location, or
/// derived from the mp op name through the default policy table.
std::string onnxOpType(mlir::Operation *op);

/// True for ops that get a precision decision: mp ops (other than constants,
/// yields and casts between float and non-float types) with a float operand
/// or result.
bool isPrecisionNode(mlir::Operation *op);

/// The names plans and policies use for the precision nodes under `root`
/// (a function): the ONNX node name, or "OpType#k" for unnamed and
/// repeated names (k counts nodes in walk order); prefixed with "@func:"
/// when the module has several functions. Deterministic for one IR.
llvm::DenseMap<mlir::Operation *, std::string>
precisionNodeKeys(mlir::Operation *root);

/// True when operand `index` of `op` is a shape, index or count operand
/// (Reshape shape, Slice starts, Gather indices, Resize scales, ...): its
/// value must never change type.
bool isIndexOperand(mlir::Operation *op, unsigned index);

/// True when result `index` of `op` follows the op's compute type (false for
/// normalization statistics, which keep their stash type, and non-floats).
bool resultFollowsCompute(mlir::Operation *op, unsigned index);

/// True for ops that only read the shape of their input (Shape, Size).
bool readsOnlyShape(mlir::Operation *op);

} // namespace mp

#endif // MP_PRECISION_OPINFO_H
