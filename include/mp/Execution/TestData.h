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
/// fp32Atol for fp32 outputs of an fp32 run. For f16/bf16 outputs, or any
/// output of a mixed-precision run (fp16 keeps 11 significant bits), they
/// default to rtol 1e-2 and atol 1e-2 * clamp(max |expected|, 1e-3, 1): an
/// absolute 1e-2 would pass any answer for an output of size 0.004.
struct Tolerances {
  double rtol = -1, atol = -1;
  bool mixed = false;
  /// Defaults for fp32 outputs of an fp32 run.
  double fp32Rtol = 1e-4, fp32Atol = 1e-5;
  /// (rtol, atol) for `actual` checked against `expected`.
  std::pair<double, double> forOutput(const HostTensor &actual,
                                      const HostTensor &expected) const;
};

/// Compares each output with the reference tensor of the same name among
/// `expectedFiles` (ONNX test data, output_N.pb); a reference without a
/// name stands for outputs[N]. An output without a reference, a reference
/// that names no output, or a reference count that differs from the output
/// count fails the comparison. With `table`, prints one row per output
/// (name, type, max abs/rel error, argmax agreement, PASS/FAIL).
/// `firstFailure` describes the first failure. Returns false with `error`
/// set if a file cannot be read.
bool compareOutputs(llvm::ArrayRef<HostTensor> outputs,
                    llvm::ArrayRef<std::string> expectedFiles,
                    mlir::MLIRContext *ctx, const Tolerances &tolerances,
                    llvm::raw_ostream *table, bool &allPassed,
                    std::string &firstFailure, std::string &error);

} // namespace mp

#endif // MP_EXECUTION_TESTDATA_H
