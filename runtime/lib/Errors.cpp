//===- Errors.cpp - messages and the sticky status of mgpu calls ----------===//

#include "Errors.h"

#include <cstdarg>
#include <cstdio>

namespace {

/// Set once this thread's ThreadErrors is destroyed: a library unloaded at
/// exit may still call in (mgpuModuleUnload) after that. A bool needs no
/// destructor, so it stays readable.
thread_local bool errorsDestroyed = false;

struct ThreadErrors {
  std::string lastError;
  mp_status sticky = MP_OK;
  std::string stickyMessage;
  ~ThreadErrors() { errorsDestroyed = true; }
};

/// Used after destruction, the errors go to a scratch object of no thread.
ThreadErrors &threadErrors() {
  if (errorsDestroyed) {
    static ThreadErrors *scratch = new ThreadErrors;
    return *scratch;
  }
  thread_local ThreadErrors errors;
  return errors;
}

} // namespace

std::string mp::format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(length > 0 ? size_t(length) : 0, '\0');
  if (length > 0)
    std::vsnprintf(&out[0], out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

mp_status mp::setError(mp_status status, std::string message) {
  threadErrors().lastError = std::move(message);
  return status;
}

mp_status mp::recordFailure(mp_status status, std::string message) {
  ThreadErrors &errors = threadErrors();
  if (status == MP_OK || errors.sticky != MP_OK)
    return status;
  errors.sticky = status;
  errors.stickyMessage = message;
  errors.lastError = std::move(message);
  return status;
}

mp_status mp::stickyStatus() { return threadErrors().sticky; }

extern "C" const char *mp_last_error(void) {
  return threadErrors().lastError.c_str();
}

extern "C" mp_status mp_set_error(mp_status status, const char *message) {
  return mp::setError(status, message ? message : "");
}

extern "C" mp_status mp_cuda_take_status(void) {
  ThreadErrors &errors = threadErrors();
  mp_status status = errors.sticky;
  if (status != MP_OK) {
    // Later failures may have replaced the message: the first one is the
    // one to report.
    errors.lastError = std::move(errors.stickyMessage);
    errors.stickyMessage.clear();
  }
  errors.sticky = MP_OK;
  return status;
}
