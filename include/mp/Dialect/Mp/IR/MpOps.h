//===- MpOps.h - the mp dialect ops -----------------------------*- C++ -*-===//

#ifndef MP_DIALECT_MP_IR_MPOPS_H
#define MP_DIALECT_MP_IR_MPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mp/Dialect/Mp/IR/MpDialect.h"
#include "mp/Dialect/Mp/IR/MpTypeInference.h"

namespace mp {
/// Marks ops that always compute in fp32 (loss scaling, optimizer updates):
/// precision passes give them no decision.
template <typename ConcreteType>
class KeepsFp32 : public mlir::OpTrait::TraitBase<ConcreteType, KeepsFp32> {};
} // namespace mp

#define GET_OP_CLASSES
#include "mp/Dialect/Mp/IR/MpOps.h.inc"

#endif // MP_DIALECT_MP_IR_MPOPS_H
