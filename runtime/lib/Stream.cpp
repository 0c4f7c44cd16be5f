//===- Stream.cpp - the stream, queued work and graph capture -------------===//
//
// Generated host code creates, synchronizes and destroys a stream around
// every launch. All of them get one process-wide stream instead, and only
// the copies back to the host wait: kernels then queue back to back. One
// stream keeps them in order, which also makes reusing a pooled buffer
// freed by the host safe (its earlier kernels run first). With
// MP_CUDA_SYNC=1 every launch is waited for, so an asynchronous failure
// (a bad address) names its kernel.
//
//===----------------------------------------------------------------------===//

#include "Stream.h"
#include "CudaDriver.h"
#include "Errors.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mp;
using namespace mp::cuda;

namespace {

/// Never destroyed: libraries may launch from static destructors.
struct RunStream {
  std::once_flag once;
  CUstream stream = nullptr;
  bool syncEachLaunch = false;
};

RunStream &runStreamState() {
  static RunStream *r = new RunStream;
  return *r;
}

/// Whether work was queued on the runtime's stream since the context was
/// last synchronized.
std::atomic<bool> workQueued{false};

/// The capture in progress.
struct Capture {
  std::mutex mutex;
  bool active = false;
  /// Buffers the captured code freed.
  std::vector<void *> freed;
};

Capture &capture() {
  static Capture *c = new Capture;
  return *c;
}

} // namespace

CUstream mp::runStream() {
  if (!enter())
    return nullptr;
  RunStream &r = runStreamState();
  std::call_once(r.once, [&] {
    const char *sync = std::getenv("MP_CUDA_SYNC");
    r.syncEachLaunch = sync && *sync && std::strcmp(sync, "0") != 0;
    CUstream stream = nullptr;
    if (check(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
              [] { return std::string("cuStreamCreate"); }))
      r.stream = stream;
  });
  if (!r.stream && stickyStatus() == MP_OK)
    recordFailure(MP_ERROR_CUDA, "the runtime's CUDA stream could not be "
                                 "created (see the first failure)");
  return r.stream;
}

bool mp::isRunStream(const void *stream) {
  return stream == runStreamState().stream;
}

bool mp::skipsStreamWait(const void *stream) {
  RunStream &r = runStreamState();
  return stream == r.stream && stream && (!r.syncEachLaunch || capturing());
}

void mp::noteQueuedWork() { workQueued.store(true, std::memory_order_relaxed); }

bool mp::waitForAllWork(const char *what) {
  workQueued.store(false, std::memory_order_relaxed);
  return check(driver().cuCtxSynchronize(), [&] {
    return format("cuCtxSynchronize(waiting for the queued kernels before "
                  "%s; run with MP_CUDA_SYNC=1 to find a failing one)",
                  what);
  });
}

bool mp::finishQueuedWork(const char *what) {
  return !workQueued.load(std::memory_order_relaxed) || waitForAllWork(what);
}

void mp::waitForKernels(const char *what) {
  if (enter())
    waitForAllWork(what);
}

bool mp::capturing() {
  Capture &c = capture();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.active;
}

void mp::captureStarted() {
  Capture &c = capture();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.active = true;
}

bool mp::captureEnded(std::vector<void *> &freed) {
  Capture &c = capture();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.active)
    return false;
  c.active = false;
  freed.swap(c.freed);
  return true;
}

bool mp::deferFreeToCapture(void *device) {
  Capture &c = capture();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.active || !device)
    return false;
  c.freed.push_back(device);
  return true;
}
