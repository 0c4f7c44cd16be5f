//===- JitObject.h - a compiled variant's machine code, loaded --*- C++ -*-===//
//
// The JIT's object code for one variant, as the compile cache keeps it,
// linked into this process the way MLIR's ExecutionEngine links the code
// it compiles: the same symbols (MLIR's C runner utilities, the process,
// the buffer pool and run-time checks), so a cached variant runs the very
// code a fresh compile would.
//
//===----------------------------------------------------------------------===//

#ifndef MP_EXECUTION_JITOBJECT_H
#define MP_EXECUTION_JITOBJECT_H

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

#include <memory>
#include <string>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mp {

/// The symbols compiled code takes from mp rather than from the process:
/// buffer-pool allocation and the run-time check hooks (CpuRunner.cpp).
llvm::orc::SymbolMap jitRuntimeSymbols(llvm::orc::MangleAndInterner interner);

/// Registers the host target with LLVM, once per process (the registry is
/// not thread-safe to fill).
void initializeJitTarget();

/// An object file linked into this process.
class JitObject {
public:
  ~JitObject();

  /// Links `object` (an ELF object for this host). Null with `error` when
  /// it cannot be linked.
  static std::unique_ptr<JitObject> load(llvm::StringRef object,
                                         std::string &error);

  /// The packed wrapper of function `name` (`_mlir_<name>`, which takes
  /// pointers to the arguments), or null with `error`.
  using PackedFunction = void (*)(void **);
  PackedFunction lookupPacked(llvm::StringRef name, std::string &error);

private:
  JitObject() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

} // namespace mp

#endif // MP_EXECUTION_JITOBJECT_H
