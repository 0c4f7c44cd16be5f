//===- CapturedDiagnostics.h - diagnostics collected as text ----*- C++ -*-===//

#ifndef MP_EXECUTION_CAPTUREDDIAGNOSTICS_H
#define MP_EXECUTION_CAPTUREDDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace mp {

/// While alive, collects the context's errors (with their notes) as text
/// formatted like mlir's SourceMgr handler: `file:line:col: error: message`,
/// or `error: message` without a file location. Warnings and remarks go to
/// stderr unless `keepWarnings`.
class CapturedDiagnostics {
public:
  explicit CapturedDiagnostics(mlir::MLIRContext *ctx,
                               bool keepWarnings = false);

  /// Every captured diagnostic, one per line.
  const std::string &text() const { return captured; }
  /// The first captured error line, or "" if none.
  std::string firstError() const;
  void clear() { captured.clear(); }

private:
  std::string captured;
  bool keepWarnings;
  mlir::ScopedDiagnosticHandler handler;
};

/// `diag` formatted as one line (notes excluded).
std::string formatDiagnostic(const mlir::Diagnostic &diag);

} // namespace mp

#endif // MP_EXECUTION_CAPTUREDDIAGNOSTICS_H
