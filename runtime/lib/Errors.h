//===- Errors.h - messages and the sticky status of mgpu calls --*- C++ -*-===//
//
// Every runtime entry point reports a failure as an mp_status plus a
// message kept per thread for mp_last_error(). The mgpu* calls of MLIR's
// GPU ABI return no status, so their first failure is also kept as the
// thread's "sticky" status until mp_cuda_take_status() collects it.
//
//===----------------------------------------------------------------------===//

#ifndef MP_RUNTIME_ERRORS_H
#define MP_RUNTIME_ERRORS_H

#include "mp/runtime.h"

#include <string>

namespace mp {

/// printf into a std::string.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/// Sets this thread's mp_last_error() message; returns `status`.
mp_status setError(mp_status status, std::string message);

/// Records the failure of an mgpu-level call: the first one of a run sets
/// the sticky status and the message, later ones are dropped (they are
/// usually consequences of the first). Returns `status`.
mp_status recordFailure(mp_status status, std::string message);

/// This thread's sticky status (MP_OK when no mgpu call failed).
mp_status stickyStatus();

} // namespace mp

#endif // MP_RUNTIME_ERRORS_H
