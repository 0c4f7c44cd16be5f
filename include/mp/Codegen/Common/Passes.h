//===- Passes.h - passes shared by both targets -----------------*- C++ -*-===//

#ifndef MP_CODEGEN_COMMON_PASSES_H
#define MP_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mp {

#define GEN_PASS_DECL
#include "mp/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mp/Codegen/Common/Passes.h.inc"

} // namespace mp

#endif // MP_CODEGEN_COMMON_PASSES_H
