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

#define GET_OP_CLASSES
#include "mp/Dialect/Mp/IR/MpOps.h.inc"

#endif // MP_DIALECT_MP_IR_MPOPS_H
