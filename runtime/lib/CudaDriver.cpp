//===- CudaDriver.cpp - libcuda.so.1, loaded with dlopen ------------------===//

#include "CudaDriver.h"
#include "Errors.h"

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace mp;
using namespace mp::cuda;

namespace {

/// What the one initialization found; read-only once `ready` is set.
struct State {
  std::once_flag once;
  std::atomic<bool> ready{false};
  mp_status status = MP_OK;
  std::string message;
  Driver driver;
  CUcontext context = nullptr;
  int ordinal = 0;
  int sm = 0;
  std::string arch;
};

/// Never destroyed: libraries unload their modules from static destructors,
/// possibly after this file's would have run.
State &state() {
  static State *s = new State;
  return *s;
}

std::atomic<int> requestedOrdinal{0};
std::atomic<bool> initStarted{false};

/// A context is current per thread; each thread binds it once.
thread_local bool contextBound = false;

void fail(State &s, mp_status status, std::string message) {
  s.status = status;
  s.message = std::move(message);
}

/// dlopen, dlsym of every entry point, then the device and its context.
void initialize(State &s) {
  const char *override = std::getenv("MP_CUDA_DRIVER");
  bool overridden = override && *override;
  const char *path = overridden ? override : "libcuda.so.1";
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return fail(s, MP_ERROR_NO_DRIVER,
                format("CUDA driver not found: could not load %s%s (%s); "
                       "install the NVIDIA driver or run on a machine with "
                       "a GPU",
                       path, overridden ? " (from MP_CUDA_DRIVER)" : "",
                       why ? why : "unknown error"));
  }

  Driver &d = s.driver;
  struct Symbol {
    const char *name;
    void **slot;
    bool optional;
  } symbols[] = {
#define MP_CUDA_SYMBOL(name, params)                                           \
  {#name, reinterpret_cast<void **>(&d.name), false},
#define MP_CUDA_OPTIONAL_SYMBOL(name, params)                                  \
  {#name, reinterpret_cast<void **>(&d.name), true},
#include "CudaSymbols.def"
  };
  for (const Symbol &symbol : symbols) {
    *symbol.slot = dlsym(handle, symbol.name);
    if (!*symbol.slot && !symbol.optional) {
      d = Driver();
      dlclose(handle);
      return fail(s, MP_ERROR_NO_DRIVER,
                  format("the CUDA driver %s lacks %s: it is too old (or not "
                         "NVIDIA's); install a current NVIDIA driver",
                         path, symbol.name));
    }
  }

  if (CUresult r = d.cuInit(0)) {
    // The stub is what a machine with the toolkit but no driver finds.
    if (r == CUDA_ERROR_STUB_LIBRARY)
      return fail(s, MP_ERROR_NO_DRIVER,
                  format("CUDA driver not found: %s is the CUDA toolkit's "
                         "stub (cuInit returned CUDA_ERROR_STUB_LIBRARY); "
                         "install the NVIDIA driver or run on a machine with "
                         "a GPU",
                         path));
    return fail(s, MP_ERROR_NO_DEVICE,
                callFailed("cuInit(0)", r) + "; no usable CUDA device");
  }
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count))
    return fail(s, statusOf(r), callFailed("cuDeviceGetCount", r));
  s.ordinal = requestedOrdinal.load();
  if (count == 0)
    return fail(s, MP_ERROR_NO_DEVICE,
                "the CUDA driver loaded but reports no CUDA device");
  if (s.ordinal < 0 || s.ordinal >= count)
    return fail(s, MP_ERROR_NO_DEVICE,
                format("CUDA device %d was requested but the driver reports "
                       "%d device(s)",
                       s.ordinal, count));
  CUdevice device = 0;
  if (CUresult r = d.cuDeviceGet(&device, s.ordinal))
    return fail(s, statusOf(r),
                callFailed(format("cuDeviceGet(%d)", s.ordinal), r));
  int major = 0, minor = 0;
  if (CUresult r = d.cuDeviceGetAttribute(
          &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    return fail(s, statusOf(r),
                callFailed("cuDeviceGetAttribute(compute capability)", r));
  if (CUresult r = d.cuDeviceGetAttribute(
          &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    return fail(s, statusOf(r),
                callFailed("cuDeviceGetAttribute(compute capability)", r));
  s.sm = 10 * major + minor;
  s.arch = format("sm_%d", s.sm);
  // The primary context is the one the CUDA runtime API uses too, so a
  // model shares its device state with CUDA code in the same process.
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&s.context, device))
    return fail(
        s, statusOf(r),
        callFailed(format("cuDevicePrimaryCtxRetain(device %d)", s.ordinal),
                   r));
}

} // namespace

mp_status cuda::init() {
  State &s = state();
  initStarted = true;
  std::call_once(s.once, [&s] {
    initialize(s);
    s.ready.store(true, std::memory_order_release);
  });
  if (s.status != MP_OK)
    return setError(s.status, s.message);
  if (!contextBound) {
    if (CUresult r = s.driver.cuCtxSetCurrent(s.context))
      return setError(statusOf(r), callFailed("cuCtxSetCurrent", r));
    contextBound = true;
  }
  return MP_OK;
}

const Driver &cuda::driver() { return state().driver; }

int cuda::deviceSm() { return state().sm; }

int cuda::deviceOrdinal() { return state().ordinal; }

bool cuda::requestDevice(int ordinal) {
  State &s = state();
  if (s.ready.load(std::memory_order_acquire))
    return s.ordinal == ordinal;
  if (initStarted)
    return ordinal == requestedOrdinal.load();
  requestedOrdinal = ordinal;
  return true;
}

/// Errors whose names are worth knowing when the driver cannot name them
/// (the toolkit's stub libcuda.so answers every call with error 34).
static const char *knownError(CUresult error, const char **text) {
  switch (error) {
  case CUDA_ERROR_STUB_LIBRARY:
    *text = "the CUDA driver is the toolkit's stub library, not the NVIDIA "
            "driver";
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_INSUFFICIENT_DRIVER:
    *text = "the NVIDIA driver is older than the CUDA runtime";
    return "CUDA_ERROR_INSUFFICIENT_DRIVER";
  case CUDA_ERROR_NO_DEVICE:
    *text = "no CUDA-capable device is detected";
    return "CUDA_ERROR_NO_DEVICE";
  default:
    return nullptr;
  }
}

std::string cuda::errorText(CUresult error) {
  const Driver &d = state().driver;
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName && d.cuGetErrorName(error, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(error, &text) != CUDA_SUCCESS)
    text = nullptr;
  if (!name)
    name = knownError(error, &text);
  std::string out = name ? name : format("CUDA error %d", error);
  if (text)
    out += format(" (%s)", text);
  return out;
}

mp_status cuda::statusOf(CUresult error) {
  switch (error) {
  case CUDA_SUCCESS:
    return MP_OK;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return MP_ERROR_OUT_OF_MEMORY;
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return MP_ERROR_ARCH;
  default:
    return MP_ERROR_CUDA;
  }
}

std::string cuda::callFailed(const std::string &call, CUresult error) {
  return call + " failed: " + errorText(error);
}

bool cuda::enter() {
  if (stickyStatus() != MP_OK)
    return false;
  mp_status status = init();
  if (status != MP_OK) {
    recordFailure(status, mp_last_error());
    return false;
  }
  return true;
}

bool cuda::initialized() {
  return state().ready.load(std::memory_order_acquire) &&
         state().status == MP_OK;
}

bool cuda::enterRelease(const void *handle) {
  return handle && state().ready.load(std::memory_order_acquire) &&
         state().status == MP_OK && init() == MP_OK;
}

extern "C" mp_status mp_cuda_init(void) { return cuda::init(); }

extern "C" const char *mp_cuda_device_arch(void) {
  State &s = state();
  if (!s.ready.load(std::memory_order_acquire) || s.status != MP_OK)
    return "";
  return s.arch.c_str();
}
