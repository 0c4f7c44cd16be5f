//===- MpDialect.h - the mp dialect -----------------------------*- C++ -*-===//

#ifndef MP_DIALECT_MP_IR_MPDIALECT_H
#define MP_DIALECT_MP_IR_MPDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "mp/Dialect/Mp/IR/MpOpsDialect.h.inc"

#include "mp/Dialect/Mp/IR/MpEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mp/Dialect/Mp/IR/MpAttrs.h.inc"

#endif // MP_DIALECT_MP_IR_MPDIALECT_H
