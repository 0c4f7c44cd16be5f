//===- DeviceMemory.h - device buffers and constants ------------*- C++ -*-===//

#ifndef MP_RUNTIME_DEVICEMEMORY_H
#define MP_RUNTIME_DEVICEMEMORY_H

namespace mp {

/// Frees the device copies of the constants that live in the shared object
/// loaded at `base` (its dladdr dli_fbase): called before it is closed, as
/// another library may later be loaded at the same addresses.
void releaseConstantsOf(const void *base);

} // namespace mp

#endif // MP_RUNTIME_DEVICEMEMORY_H
