//===- Stream.h - the stream, queued work and graph capture -----*- C++ -*-===//
//
// The CUDA state the device memory, the launches (Mgpu.cpp) and the CUDA
// graphs share: the one stream every kernel is queued on, whether work was
// queued since the context last waited, and the capture into a graph in
// progress. It depends only on the driver and the errors, so that those
// three parts depend on it and not on each other.
//
//===----------------------------------------------------------------------===//

#ifndef MP_RUNTIME_STREAM_H
#define MP_RUNTIME_STREAM_H

#include "CudaDriver.h"

#include <vector>

namespace mp {

//===----------------------------------------------------------------------===//
// The runtime's stream
//===----------------------------------------------------------------------===//

/// The process-wide stream every launch, copy and graph goes on, created on
/// first use. Enters like an mgpu call: nullptr, with the failure recorded,
/// when CUDA is unusable, an earlier call of the run failed, or the stream
/// could not be created.
cuda::CUstream runStream();

/// Whether `stream` is the runtime's stream (it lives as long as the
/// process). Creates nothing.
bool isRunStream(const void *stream);

/// Whether a wait for `stream` may be skipped: on the runtime's stream only
/// the copies back to the host wait (unless MP_CUDA_SYNC=1 asks to wait for
/// every launch), and a capturing stream cannot be waited for.
bool skipsStreamWait(const void *stream);

//===----------------------------------------------------------------------===//
// Queued work
//===----------------------------------------------------------------------===//

/// Records that work (a kernel, an asynchronous copy, a graph) was queued
/// on the runtime's stream.
void noteQueuedWork();

/// Waits for every queued kernel on any stream (cuCtxSynchronize) before
/// `what`, for callers that already entered; false after a failure
/// (recorded).
bool waitForAllWork(const char *what);

/// waitForAllWork, skipped when nothing was queued since the last wait.
bool finishQueuedWork(const char *what);

/// waitForAllWork for callers that did not enter; a failure is recorded as
/// for the mgpu* calls.
void waitForKernels(const char *what);

//===----------------------------------------------------------------------===//
// Capture into a CUDA graph (one at a time: captures use the one stream)
//===----------------------------------------------------------------------===//

/// Whether a capture is in progress (stream waits are skipped then: a
/// capturing stream cannot be synchronized).
bool capturing();

/// Marks the capture begun, once the stream is in capture mode.
void captureStarted();

/// Marks the capture ended and hands over the buffers it kept (see
/// deferFreeToCapture); false when no capture was in progress.
bool captureEnded(std::vector<void *> &freed);

/// While capturing, a buffer the captured code frees stays allocated: the
/// graph's kernels use it on every launch. Returns true when `device` was
/// taken by the capture (the caller must not free it).
bool deferFreeToCapture(void *device);

} // namespace mp

#endif // MP_RUNTIME_STREAM_H
