//===- CompiledLibrary.h - run a library written by mp-compile --*- C++ -*-===//
//
// mp-run's view of `libNAME.so`: opened and run through the mp runtime
// (runtime/include/mp/runtime.h), with inputs and outputs as HostTensors.
//
//===----------------------------------------------------------------------===//

#ifndef MP_EXECUTION_COMPILEDLIBRARY_H
#define MP_EXECUTION_COMPILEDLIBRARY_H

#include "mp/Support/HostTensor.h"

#include "mlir/IR/MLIRContext.h"

#include <memory>
#include <string>
#include <vector>

struct mp_library;

namespace mp {

/// A library written by mp-compile, opened through the mp runtime.
class CompiledLibrary {
public:
  ~CompiledLibrary();

  /// Opens `path`. On failure returns null with `status` set to the
  /// runtime's mp_status (also mp-run's exit code) and `error` to its
  /// message.
  static std::unique_ptr<CompiledLibrary> open(mlir::MLIRContext *ctx,
                                               llvm::StringRef path,
                                               int &status,
                                               std::string &error);

  /// Inputs and outputs as the library describes them (no data).
  llvm::ArrayRef<HostTensor> inputs() const { return inputSpecs; }
  llvm::ArrayRef<HostTensor> outputs() const { return outputSpecs; }
  /// "cpu" or "cuda".
  llvm::StringRef target() const { return targetName; }
  /// "fp32" or "mixed".
  llvm::StringRef precision() const { return precisionName; }

  /// Runs on inputs matched by name (each described input given once with
  /// its dtype and a shape that fits; outputs get the shapes the run
  /// produced). Sets `status` and `error` on failure.
  bool run(llvm::ArrayRef<HostTensor> inputs, std::vector<HostTensor> &out,
           int &status, std::string &error);

  /// Runs on buffers in the library's memory (device memory for a CUDA
  /// library, mp_library_run_device): uploads the inputs, runs `runs`
  /// times (at least once) without copies, waits, and downloads the
  /// outputs. `runsMs` is the wall time of the runs and the wait. Static
  /// shapes only.
  bool runOnDevice(llvm::ArrayRef<HostTensor> inputs,
                   std::vector<HostTensor> &out, unsigned runs,
                   double &runsMs, int &status, std::string &error);

private:
  CompiledLibrary() = default;
  /// Each described input in `inputs` by name, checked (dtype, and a shape
  /// that fits); false with `error` set when one is missing, unknown or
  /// does not fit.
  bool matchInputs(llvm::ArrayRef<HostTensor> inputs,
                   std::vector<const HostTensor *> &matched,
                   std::string &error) const;
  /// run() for a library with dynamic dims (mp_library_run_shaped).
  bool runShaped(llvm::ArrayRef<HostTensor> inputs,
                 std::vector<HostTensor> &out, int &status,
                 std::string &error);
  ::mp_library *library = nullptr;
  std::string targetName, precisionName;
  std::vector<HostTensor> inputSpecs, outputSpecs;
};

} // namespace mp

#endif // MP_EXECUTION_COMPILEDLIBRARY_H
