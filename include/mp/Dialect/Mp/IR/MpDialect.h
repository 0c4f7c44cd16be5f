//===- MpDialect.h - the mp dialect -----------------------------*- C++ -*-===//

#ifndef MP_DIALECT_MP_IR_MPDIALECT_H
#define MP_DIALECT_MP_IR_MPDIALECT_H

#include "mlir/IR/Dialect.h"

#include "mp/Dialect/Mp/IR/MpOpsDialect.h.inc"

#endif // MP_DIALECT_MP_IR_MPDIALECT_H
