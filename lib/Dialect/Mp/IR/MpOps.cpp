//===- MpOps.cpp - generated op definitions of the mp dialect -------------===//
//
// Hand-written verifiers, type inference and folders live in one file per op
// family (MpElementwiseOps.cpp, MpShapeOps.cpp, ...). This file only holds
// the generated definitions.
//
//===----------------------------------------------------------------------===//

#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mp;

#define GET_OP_CLASSES
#include "mp/Dialect/Mp/IR/MpOps.cpp.inc"
