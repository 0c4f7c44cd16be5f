//===- CapturedDiagnostics.cpp - diagnostics collected as text ------------===//

#include "mp/Execution/CapturedDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mp {

static StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

std::string formatDiagnostic(const Diagnostic &diag) {
  std::string s;
  llvm::raw_string_ostream os(s);
  Location loc = diag.getLocation();
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn() << ": ";
  else if (!isa<UnknownLoc>(loc))
    os << loc << ": ";
  os << severityName(diag.getSeverity()) << ": " << diag.str();
  return s;
}

CapturedDiagnostics::CapturedDiagnostics(MLIRContext *ctx, bool keepWarnings)
    : keepWarnings(keepWarnings),
      handler(ctx, [this](Diagnostic &diag) {
        if (diag.getSeverity() != DiagnosticSeverity::Error &&
            !this->keepWarnings) {
          llvm::errs() << formatDiagnostic(diag) << "\n";
          return success();
        }
        captured += formatDiagnostic(diag) + "\n";
        for (const Diagnostic &note : diag.getNotes())
          captured += formatDiagnostic(note) + "\n";
        return success();
      }) {}

std::string CapturedDiagnostics::firstError() const {
  size_t at = captured.find("error: ");
  if (at == std::string::npos)
    return "";
  size_t begin = captured.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return captured.substr(begin, captured.find('\n', at) - begin);
}

} // namespace mp
