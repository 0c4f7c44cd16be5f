//===- CompileProgress.h - telling users where a compile is -----*- C++ -*-===//
//
// Compiling a large model takes seconds to minutes; the JIT reports each
// stage as it ends (mp-run --progress, the C API's progress callback, the
// Python package's logger) so a long compile never looks hung.
//
//===----------------------------------------------------------------------===//

#ifndef MP_SUPPORT_COMPILEPROGRESS_H
#define MP_SUPPORT_COMPILEPROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <functional>

namespace mp {

/// Called when a compile stage ends, with its name ("import", "lowering",
/// ...) and wall time in milliseconds.
using CompileProgress =
    std::function<void(llvm::StringRef stage, double milliseconds)>;

/// Times consecutive stages: each `done` reports the time since the last.
class StageTimer {
public:
  explicit StageTimer(const CompileProgress &progress)
      : progress(progress), start(Clock::now()) {}

  /// Reports `stage` as ended now (when anyone listens).
  void done(llvm::StringRef stage) {
    Clock::time_point now = Clock::now();
    if (progress)
      progress(stage,
               std::chrono::duration<double, std::milli>(now - start).count());
    start = now;
  }

private:
  using Clock = std::chrono::steady_clock;
  const CompileProgress &progress;
  Clock::time_point start;
};

} // namespace mp

#endif // MP_SUPPORT_COMPILEPROGRESS_H
