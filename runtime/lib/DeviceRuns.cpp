//===- DeviceRuns.cpp - runs on buffers in the library's memory -----------===//
//
// mp_library_run_device and its buffers. A CUDA library's buffers are device
// memory and its runs copy nothing between host and device; a CPU library's
// are host memory, so one decode loop serves both targets.
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "Library.h"
#include "Stream.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace mp;

namespace {

/// Upload or download: checks a library and non-null pointers for a copy
/// of any bytes, then copies (a CUDA library's `deviceCopy` waits for the
/// queued runs first).
mp_status copy(const char *caller, const mp_library *lib, void *to,
               const void *from, size_t bytes,
               void (*deviceCopy)(void *, const void *, size_t)) {
  if (!lib)
    return setError(MP_ERROR_INVALID, format("%s: null library", caller));
  if (bytes && (!to || !from))
    return setError(MP_ERROR_INVALID,
                    format("%s: null buffer for %zu bytes", caller, bytes));
  if (!bytes)
    return MP_OK;
  if (!isCudaLibrary(*lib)) {
    std::memmove(to, from, bytes);
    return MP_OK;
  }
  LibraryLock lock(*lib, /*image=*/false);
  // A failure left over from earlier calls is not this one's.
  mp_cuda_take_status();
  deviceCopy(to, from, bytes);
  return mp_cuda_take_status();
}

} // namespace

extern "C" mp_status mp_library_device_alloc(mp_library *lib, size_t bytes,
                                             void **out) {
  if (!lib || !out)
    return setError(MP_ERROR_INVALID,
                    "mp_library_device_alloc: null library or result pointer");
  *out = nullptr;
  bytes = std::max<size_t>(bytes, 1);
  if (isCudaLibrary(*lib)) {
    LibraryLock lock(*lib, /*image=*/false);
    mp_cuda_take_status();
    *out = mp_cuda_alloc(bytes);
    return mp_cuda_take_status();
  }
  *out = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!*out)
    return setError(MP_ERROR_OUT_OF_MEMORY,
                    format("mp_library_device_alloc: no host memory for %zu "
                           "bytes",
                           bytes));
  return MP_OK;
}

extern "C" void mp_library_device_free(mp_library *lib, void *buffer) {
  if (!lib || !buffer)
    return;
  if (!isCudaLibrary(*lib)) {
    std::free(buffer);
    return;
  }
  // Queued kernels may still read it: the pool hands it only to later
  // kernels on their stream and to copies that wait for them.
  LibraryLock lock(*lib, /*image=*/false);
  mp_cuda_free(buffer);
  mp_cuda_take_status();
}

extern "C" mp_status mp_library_upload(mp_library *lib, void *buffer,
                                       const void *host, size_t bytes) {
  return copy("mp_library_upload", lib, buffer, host, bytes,
              mp_cuda_copy_to_device);
}

extern "C" mp_status mp_library_download(mp_library *lib, void *host,
                                         const void *buffer, size_t bytes) {
  return copy("mp_library_download", lib, host, buffer, bytes,
              mp_cuda_copy_to_host);
}

extern "C" mp_status mp_library_synchronize(mp_library *lib) {
  if (!lib)
    return setError(MP_ERROR_INVALID, "mp_library_synchronize: null library");
  if (!isCudaLibrary(*lib))
    return MP_OK;
  LibraryLock lock(*lib, /*image=*/false);
  mp_cuda_take_status();
  waitForKernels("mp_library_synchronize returns");
  return mp_cuda_take_status();
}

extern "C" int mp_library_input_on_host(const mp_library *lib, int32_t input) {
  return lib && isCudaLibrary(*lib) &&
         std::find(lib->hostInputs.begin(), lib->hostInputs.end(), input) !=
             lib->hostInputs.end();
}

extern "C" mp_status mp_library_run_device(mp_library *lib,
                                           const void *const *inputs,
                                           void *const *outputs) {
  const char *caller = "mp_library_run_device";
  if (!lib)
    return setError(MP_ERROR_INVALID, format("%s: null library", caller));
  if (mp_library_has_dynamic_shapes(lib))
    return setError(MP_ERROR_INVALID,
                    format("%s: '%s' has dims fixed at run time: run it with "
                           "mp_library_run_shaped",
                           caller, lib->path.c_str()));
  if (!isCudaLibrary(*lib)) // host memory is the CPU library's own
    return runEntry(caller, lib, lib->run, MP_MODEL_RUN_SYMBOL, inputs,
                    outputs);
  if (!lib->runDevice)
    return setError(MP_ERROR_INVALID,
                    format("%s: '%s' lacks %s: rebuild it with this "
                           "mp-compile",
                           caller, lib->path.c_str(),
                           MP_MODEL_RUN_DEVICE_SYMBOL));
  return runEntry(caller, lib, lib->runDevice, MP_MODEL_RUN_DEVICE_SYMBOL,
                  inputs, outputs);
}
