//===- DeviceMemory.h - device buffers and constants ------------*- C++ -*-===//

#ifndef MP_RUNTIME_DEVICEMEMORY_H
#define MP_RUNTIME_DEVICEMEMORY_H

namespace mp {

/// Frees the device copies of the constants that live in the shared object
/// loaded at `base` (its dladdr dli_fbase): called before it is closed, as
/// another library may later be loaded at the same addresses.
void releaseConstantsOf(const void *base);

/// Waits for every queued kernel (cuCtxSynchronize) before `what`; a
/// failure is recorded as for the mgpu* calls.
void waitForKernels(const char *what);

/// Records that work (a kernel, an asynchronous copy, a graph) was queued
/// on the runtime's stream.
void noteQueuedWork();

/// waitForKernels for callers that already entered, skipped when nothing
/// was queued since the last wait; false after a failure (recorded).
bool finishQueuedWork(const char *what);

} // namespace mp

#endif // MP_RUNTIME_DEVICEMEMORY_H
