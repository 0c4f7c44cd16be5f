//===- Graphs.h - the capture state other runtime parts consult -*- C++ -*-===//

#ifndef MP_RUNTIME_GRAPHS_H
#define MP_RUNTIME_GRAPHS_H

namespace mp {

/// Whether a capture into a CUDA graph is in progress (stream waits are
/// skipped then: a capturing stream cannot be synchronized).
bool capturing();

/// While capturing, a buffer the captured code frees stays allocated: the
/// graph's kernels use it on every launch. Returns true when `device` was
/// taken by the capture (the caller must not free it).
bool deferFreeToCapture(void *device);

} // namespace mp

#endif // MP_RUNTIME_GRAPHS_H
