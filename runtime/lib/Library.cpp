//===- Library.cpp - open and run libraries written by mp-compile ---------===//

#include "CudaDriver.h"
#include "DeviceMemory.h"
#include "Errors.h"
#include "Library.h"
#include "Stream.h"
#include "mp/gpu_binary.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <new>
#include <sys/stat.h>
#include <vector>

using namespace mp;

namespace {

/// An architecture name of `gpu_archs`: "sm_XY" (a cubin) or "compute_XY"
/// (PTX, as nvcc names virtual architectures); false for anything else.
bool parseArch(const char *name, mp_gpu_image_entry &entry) {
  const char *digits = nullptr;
  if (std::strncmp(name, "sm_", 3) == 0) {
    entry.kind = MP_GPU_IMAGE_CUBIN;
    digits = name + 3;
  } else if (std::strncmp(name, "compute_", 8) == 0) {
    entry.kind = MP_GPU_IMAGE_PTX;
    digits = name + 8;
  } else {
    return false;
  }
  entry.sm = 0;
  if (*digits < '0' || *digits > '9')
    return false;
  // A suffix ("sm_90a") names the same major and minor.
  for (; *digits >= '0' && *digits <= '9'; ++digits)
    entry.sm = entry.sm * 10 + (*digits - '0');
  entry.offset = entry.size = 0;
  return true;
}

/// Whether the device can run one of the library's images (the rule of
/// mp/gpu_binary.h, which mgpuModuleLoad applies again when loading).
mp_status checkArch(const mp_model_desc &desc, const std::string &path) {
  std::vector<mp_gpu_image_entry> entries;
  std::string names;
  for (int32_t i = 0; i < desc.num_gpu_archs; ++i) {
    const char *name =
        desc.gpu_archs && desc.gpu_archs[i] ? desc.gpu_archs[i] : "(null)";
    mp_gpu_image_entry entry;
    if (!parseArch(name, entry))
      return setError(MP_ERROR_INVALID,
                      format("'%s' names an unknown GPU architecture '%s' "
                             "(expected sm_XY or compute_XY)",
                             path.c_str(), name));
    entries.push_back(entry);
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  int sm = cuda::deviceSm();
  if (mp_gpu_binary_select(entries.data(), entries.size(), sm) >= 0)
    return MP_OK;
  return setError(MP_ERROR_ARCH,
                  format("the library has kernels for %s but device %d is "
                         "sm_%d (compile with --gpu sm_%d)",
                         names.empty() ? "no architecture" : names.c_str(),
                         cuda::deviceOrdinal(), sm, sm));
}

/// The lock of the image `handle` (from dlopen), shared by every open
/// handle of it.
std::shared_ptr<std::mutex> imageMutexOf(void *handle) {
  static std::mutex *registryMutex = new std::mutex;
  static auto *registry = new std::map<void *, std::weak_ptr<std::mutex>>;
  std::lock_guard<std::mutex> lock(*registryMutex);
  for (auto it = registry->begin(); it != registry->end();)
    it = it->second.expired() ? registry->erase(it) : std::next(it);
  std::weak_ptr<std::mutex> &entry = (*registry)[handle];
  std::shared_ptr<std::mutex> mutex = entry.lock();
  if (!mutex)
    entry = mutex = std::make_shared<std::mutex>();
  return mutex;
}

/// dlopen and the checks of mp_library_open; on failure the handle stays
/// in `lib` for the caller to close.
mp_status open(mp_library &lib) {
  const char *path = lib.path.c_str();
  struct stat info;
  if (stat(path, &info) != 0)
    return setError(MP_ERROR_INVALID, format("cannot open library '%s': %s",
                                             path, std::strerror(errno)));
  // Module loads run in the library's constructors: only their failures
  // must be in the sticky status afterwards.
  mp_cuda_take_status();
  // A bare file name is a file here, not a name for dlopen's search path.
  std::string file = std::strchr(path, '/') ? path : std::string("./") + path;
  lib.handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    const char *why = dlerror();
    return setError(MP_ERROR_INVALID,
                    format("cannot load library '%s': %s", path,
                           why ? why : "unknown error"));
  }
  lib.imageMutex = imageMutexOf(lib.handle);
  auto describe = reinterpret_cast<mp_model_describe_fn>(
      dlsym(lib.handle, MP_MODEL_DESCRIBE_SYMBOL));
  lib.run =
      reinterpret_cast<mp_model_run_fn>(dlsym(lib.handle, MP_MODEL_RUN_SYMBOL));
  if (!describe || !lib.run) {
    mp_cuda_take_status();
    return setError(
        MP_ERROR_INVALID,
        format("'%s' is not an mp library: it lacks %s (build "
               "it with mp-compile)",
               path,
               describe ? MP_MODEL_RUN_SYMBOL : MP_MODEL_DESCRIBE_SYMBOL));
  }
  lib.runShaped = reinterpret_cast<mp_model_run_shaped_fn>(
      dlsym(lib.handle, MP_MODEL_RUN_SHAPED_SYMBOL));
  lib.runDevice = reinterpret_cast<mp_model_run_device_fn>(
      dlsym(lib.handle, MP_MODEL_RUN_DEVICE_SYMBOL));
  if (auto hostInputs = reinterpret_cast<mp_model_host_inputs_fn>(
          dlsym(lib.handle, MP_MODEL_HOST_INPUTS_SYMBOL)))
    for (const int32_t *i = hostInputs(); i && *i >= 0; ++i)
      lib.hostInputs.push_back(*i);
  lib.desc = describe();
  if (!lib.desc) {
    mp_cuda_take_status();
    return setError(MP_ERROR_INVALID, format("'%s': %s() returned null", path,
                                             MP_MODEL_DESCRIBE_SYMBOL));
  }
  if (lib.desc->abi_version != MP_ABI_VERSION) {
    mp_cuda_take_status();
    return setError(MP_ERROR_INVALID,
                    format("'%s' was built for mp runtime ABI %u, this "
                           "runtime implements ABI %u: rebuild it with a "
                           "matching mp-compile",
                           path, lib.desc->abi_version, MP_ABI_VERSION));
  }
  if (mp_status status = mp_cuda_take_status())
    return status; // e.g. no driver for the kernels: the message is set
  const char *target = lib.desc->target ? lib.desc->target : "(null)";
  if (std::strcmp(target, "cpu") == 0)
    return MP_OK;
  if (std::strcmp(target, "cuda") != 0)
    return setError(MP_ERROR_INVALID,
                    format("'%s' targets '%s'; this runtime runs \"cpu\" and "
                           "\"cuda\" libraries",
                           path, target));
  if (mp_status status = mp_cuda_init())
    return status;
  return checkArch(*lib.desc, lib.path);
}

} // namespace

bool mp::isCudaLibrary(const mp_library &lib) {
  return lib.desc && lib.desc->target &&
         std::strcmp(lib.desc->target, "cuda") == 0;
}

mp::LibraryLock::LibraryLock(const mp_library &lib, bool image) {
  if (isCudaLibrary(lib) && mp_cuda_graphs_enabled()) {
    static std::mutex *streamMutex = new std::mutex;
    stream = std::unique_lock<std::mutex>(*streamMutex);
  }
  if (image && lib.imageMutex)
    imageLock = std::unique_lock<std::mutex>(*lib.imageMutex);
}

extern "C" mp_status mp_library_open(const char *path, mp_library **out) {
  if (!out)
    return setError(MP_ERROR_INVALID, "mp_library_open: null result pointer");
  *out = nullptr;
  if (!path || !*path)
    return setError(MP_ERROR_INVALID, "mp_library_open: no path");
  auto *lib = new (std::nothrow) mp_library;
  if (!lib)
    return setError(MP_ERROR_OUT_OF_MEMORY, "mp_library_open: out of memory");
  lib->path = path;
  if (mp_status status = open(*lib)) {
    mp_library_close(lib);
    return status;
  }
  *out = lib;
  return MP_OK;
}

extern "C" const mp_model_desc *mp_library_describe(const mp_library *lib) {
  return lib ? lib->desc : nullptr;
}

mp_status mp::runEntry(const char *caller, mp_library *lib,
                       mp_model_run_fn entry, const char *symbol,
                       const void *const *inputs, void *const *outputs) {
  if (!lib)
    return setError(MP_ERROR_INVALID, format("%s: null library", caller));
  if ((lib->desc->num_inputs > 0 && !inputs) ||
      (lib->desc->num_outputs > 0 && !outputs))
    return setError(MP_ERROR_INVALID,
                    format("%s: null input or output array", caller));
  LibraryLock lock(*lib);
  // A failure left over from earlier calls is not this run's.
  mp_cuda_take_status();
  setError(MP_OK, "");
  int32_t result = entry(inputs, outputs);
  mp_status sticky = mp_cuda_take_status();
  if (result == MP_OK && sticky != MP_OK)
    return sticky; // a wrapper that did not collect the status itself
  if (result != MP_OK && !*mp_last_error())
    setError(static_cast<mp_status>(result),
             format("'%s': %s returned %d", lib->path.c_str(), symbol,
                    result));
  return static_cast<mp_status>(result);
}

extern "C" mp_status mp_library_run(mp_library *lib, const void *const *inputs,
                                    void *const *outputs) {
  return runEntry("mp_library_run", lib, lib ? lib->run : nullptr,
                  MP_MODEL_RUN_SYMBOL, inputs, outputs);
}

extern "C" int mp_library_has_dynamic_shapes(const mp_library *lib) {
  if (!lib)
    return 0;
  auto dynamic = [](const mp_tensor_desc *list, int32_t n) {
    for (int32_t i = 0; i < n; ++i)
      for (int32_t d = 0; d < list[i].rank; ++d)
        if (list[i].shape[d] < 0)
          return true;
    return false;
  };
  return dynamic(lib->desc->inputs, lib->desc->num_inputs) ||
         dynamic(lib->desc->outputs, lib->desc->num_outputs);
}

/// Checks `inputs` against the description: rank, and every static dim.
static mp_status checkShapes(const mp_library &lib,
                             const mp_shaped_tensor *inputs) {
  for (int32_t i = 0; i < lib.desc->num_inputs; ++i) {
    const mp_tensor_desc &desc = lib.desc->inputs[i];
    if (desc.rank > MP_MAX_RANK)
      return setError(MP_ERROR_INVALID,
                      format("input '%s' has rank %d, more than MP_MAX_RANK",
                             desc.name, desc.rank));
    for (int32_t d = 0; d < desc.rank; ++d)
      if (inputs[i].shape[d] < 0 ||
          (desc.shape[d] >= 0 && inputs[i].shape[d] != desc.shape[d]))
        return setError(
            MP_ERROR_INVALID,
            format("input '%s' dim %d is %lld, the library takes %lld",
                   desc.name, d, (long long)inputs[i].shape[d],
                   (long long)desc.shape[d]));
  }
  return MP_OK;
}

extern "C" mp_status mp_library_run_shaped(mp_library *lib,
                                           const mp_shaped_tensor *inputs,
                                           mp_shaped_tensor *outputs) {
  if (!lib)
    return setError(MP_ERROR_INVALID, "mp_library_run_shaped: null library");
  const mp_model_desc &desc = *lib->desc;
  if ((desc.num_inputs > 0 && !inputs) || (desc.num_outputs > 0 && !outputs))
    return setError(MP_ERROR_INVALID,
                    "mp_library_run_shaped: null input or output array");
  if (mp_status status = checkShapes(*lib, inputs))
    return status;
  if (lib->runShaped) {
    LibraryLock lock(*lib);
    mp_cuda_take_status();
    setError(MP_OK, "");
    int32_t result = lib->runShaped(inputs, outputs);
    if (result != MP_OK && !*mp_last_error())
      setError(static_cast<mp_status>(result),
               format("'%s': %s returned %d", lib->path.c_str(),
                      MP_MODEL_RUN_SHAPED_SYMBOL, result));
    return static_cast<mp_status>(result);
  }
  // A library of static shapes: buffers of the described sizes.
  std::vector<const void *> in(desc.num_inputs);
  std::vector<void *> out(desc.num_outputs);
  for (int32_t i = 0; i < desc.num_inputs; ++i)
    in[i] = inputs[i].data;
  for (int32_t j = 0; j < desc.num_outputs; ++j) {
    const mp_tensor_desc &o = desc.outputs[j];
    size_t bytes = mp_dtype_size(o.dtype);
    for (int32_t d = 0; d < o.rank; ++d) {
      bytes *= o.shape[d];
      outputs[j].shape[d] = o.shape[d];
    }
    out[j] = outputs[j].data = std::malloc(bytes ? bytes : 1);
    if (!out[j]) {
      for (int32_t k = 0; k < j; ++k)
        std::free(out[k]);
      return setError(MP_ERROR_OUT_OF_MEMORY,
                      format("mp_library_run_shaped: no memory for output "
                             "'%s' (%zu bytes)",
                             o.name, bytes));
    }
  }
  mp_status status = mp_library_run(lib, in.data(), out.data());
  if (status != MP_OK)
    for (int32_t j = 0; j < desc.num_outputs; ++j) {
      std::free(out[j]);
      outputs[j].data = nullptr;
    }
  return status;
}

extern "C" void mp_free(void *data) { std::free(data); }

extern "C" void mp_library_close(mp_library *lib) {
  if (!lib)
    return;
  if (lib->handle) {
    // Other handles of the image may be running: what the runs keep goes
    // between their runs.
    LibraryLock lock(*lib);
    // Runs on device buffers may still be queued: they finish before their
    // graph, buffers and kernels go.
    if (cuda::initialized() && isCudaLibrary(*lib)) {
      waitForKernels("closing the library");
      mp_cuda_take_status();
    }
    // What its runs kept (a CUDA graph, device buffers) goes first.
    if (auto release = reinterpret_cast<mp_model_release_fn>(
            dlsym(lib->handle, MP_MODEL_RELEASE_SYMBOL)))
      release();
    // Constants uploaded for this library die with it.
    Dl_info info;
    void *symbol = dlsym(lib->handle, MP_MODEL_DESCRIBE_SYMBOL);
    if (symbol && dladdr(symbol, &info))
      releaseConstantsOf(info.dli_fbase);
    dlclose(lib->handle);
  }
  delete lib;
}

extern "C" size_t mp_dtype_size(int32_t dtype) {
  switch (dtype) {
  case MP_DTYPE_UINT8:
  case MP_DTYPE_INT8:
  case MP_DTYPE_BOOL:
    return 1;
  case MP_DTYPE_UINT16:
  case MP_DTYPE_INT16:
  case MP_DTYPE_FLOAT16:
  case MP_DTYPE_BFLOAT16:
    return 2;
  case MP_DTYPE_FLOAT32:
  case MP_DTYPE_INT32:
  case MP_DTYPE_UINT32:
    return 4;
  case MP_DTYPE_INT64:
  case MP_DTYPE_FLOAT64:
  case MP_DTYPE_UINT64:
    return 8;
  default:
    return 0;
  }
}
