//===- TestData.h - test tensors on disk and output checks ------*- C++ -*-===//

#ifndef MP_EXECUTION_TESTDATA_H
#define MP_EXECUTION_TESTDATA_H

#include "mp/Import/TensorFile.h"

#include <string>
#include <utility>
#include <vector>

namespace mp {

/// Writes each output as DIR/NAME.npy (characters other than letters,
/// digits, '.', '-' and '_' in NAME become '_').
bool writeOutputs(llvm::StringRef dir, llvm::ArrayRef<HostTensor> outputs,
                  std::string &error);

/// Comparison tolerances. Unset (negative) values default to fp32Rtol /
/// fp32Atol for fp32 outputs and 1e-2 / 1e-2 for f16/bf16 outputs or any
/// output of a mixed-precision run (fp16 keeps 11 significant bits).
struct Tolerances {
  double rtol = -1, atol = -1;
  bool mixed = false;
  /// Defaults for fp32 outputs of an fp32 run.
  double fp32Rtol = 1e-4, fp32Atol = 1e-5;
  std::pair<double, double> forOutput(const HostTensor &t) const;
};

/// Compares outputs[i] with the tensor in expectedFiles[i]. With `table`,
/// prints one row per output (name, type, max abs/rel error, argmax
/// agreement, PASS/FAIL). `firstFailure` describes the first output that
/// failed. Returns false with `error` set if a file cannot be read.
bool compareOutputs(llvm::ArrayRef<HostTensor> outputs,
                    llvm::ArrayRef<std::string> expectedFiles,
                    mlir::MLIRContext *ctx, const Tolerances &tolerances,
                    llvm::raw_ostream *table, bool &allPassed,
                    std::string &firstFailure, std::string &error);

} // namespace mp

#endif // MP_EXECUTION_TESTDATA_H
