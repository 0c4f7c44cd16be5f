//===- Library.h - write a model as a shared library ------------*- C++ -*-===//
//
// mp-compile's back half: a module specialized to one set of input shapes
// (see prepareEntry) becomes `libNAME.so` + `libNAME.h` + `libNAME.json`
// that need only the mp runtime (runtime/, no MLIR) to run.
//
//===----------------------------------------------------------------------===//

#ifndef MP_COMPILE_LIBRARY_H
#define MP_COMPILE_LIBRARY_H

#include "mp/Pipelines/Entry.h"
#include "mp/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mp {

/// What to produce and for which target.
struct LibraryOptions {
  enum class Target { Cpu, Cuda };
  enum class Emit { Library, Mlir, Llvm, Ptx };
  Target target = Target::Cpu;
  Emit emit = Emit::Library;
  /// CUDA target: architectures, PTX features, toolkit.
  CudaPipelineOptions cuda;
  /// Recorded in the library's description.
  std::string precision = "fp32";
  std::string sourcePath;
  /// The .so to write (Emit::Library), or the file for the stage's text
  /// ("-" for stdout).
  std::string outputPath;
  /// C compiler/linker driver for the wrapper and the link; empty: $MP_CC,
  /// else clang-22, clang or cc from PATH.
  std::string hostCompiler;
  /// The CPU the host code is compiled for, an LLVM CPU name (x86-64-v3);
  /// empty: this machine's CPU with all its features.
  std::string hostCpu;
};

/// The activation arena mp-plan-arena planned for the entry (zeros when
/// it planned none).
struct ArenaStats {
  int64_t bytes = 0;       ///< the arena: one allocation per run
  int64_t buffers = 0;     ///< temporaries placed in it
  int64_t bufferBytes = 0; ///< their sizes summed
  int64_t peakBytes = 0;   ///< most bytes live at once
};

/// Lowers `module` (entry prepared by prepareEntry) for the target and
/// writes the library with its header and JSON description next to it, or
/// the requested stage. Progress lines go to `progress`; errors are emitted
/// as diagnostics.
mlir::LogicalResult writeLibrary(mlir::ModuleOp module,
                                 const EntrySignature &entry,
                                 const LibraryOptions &options,
                                 llvm::raw_ostream &progress);

/// The files of a library build: the library at `outputPath` (made
/// absolute), `NAME.h` and `NAME.json` beside it.
struct LibraryPaths {
  std::string library, header, description;
};
LibraryPaths libraryPaths(llvm::StringRef outputPath);

/// What decides the bytes writeLibrary writes besides the module and
/// `options`, as text for mp-compile's compile cache key: the LLVM version
/// and the shared LLVM and MLIR libraries this process runs with, the host
/// compiler, the runtime's header and library (and their folders, which the
/// library's rpath names) and, for the CUDA target, the toolkit's ptxas and
/// libdevice. Programs and shared libraries are identified by their real
/// path, size and modification time (a reinstall changes them), the
/// runtime's files and libdevice by their hash.
std::string libraryToolchainKey(const LibraryOptions &options);

/// The C source of the exported `mp_model_describe` / `mp_model_run`
/// wrapper around the entry's C interface.
std::string wrapperSource(const EntrySignature &entry,
                          const LibraryOptions &options);

/// `libNAME.h`: the exported functions and the inputs/outputs as comments.
std::string headerSource(const EntrySignature &entry,
                         const LibraryOptions &options,
                         llvm::StringRef guardName);

/// `libNAME.json`: target, architectures, inputs, outputs and the
/// activation arena.
std::string descriptionJson(const EntrySignature &entry,
                            const LibraryOptions &options,
                            const ArenaStats &arena);

} // namespace mp

#endif // MP_COMPILE_LIBRARY_H
