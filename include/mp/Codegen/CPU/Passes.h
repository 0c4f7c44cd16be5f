//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//

#ifndef MP_CODEGEN_CPU_PASSES_H
#define MP_CODEGEN_CPU_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mp {

#define GEN_PASS_DECL
#include "mp/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mp/Codegen/CPU/Passes.h.inc"

} // namespace mp

#endif // MP_CODEGEN_CPU_PASSES_H
