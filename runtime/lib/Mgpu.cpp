//===- Mgpu.cpp - MLIR's GPU runtime ABI on the CUDA driver ---------------===//
//
// The functions host code lowered by `gpu-to-llvm` calls. Unlike MLIR's own
// CudaRuntimeWrappers they never print and never abort: the first failure
// of a run becomes the thread's sticky status (mp_cuda_take_status), which
// the generated wrapper returns, and every later call does nothing.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "Errors.h"
#include "Stream.h"
#include "mp/gpu_binary.h"
#include "mp/mlir_abi.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

using namespace mp;
using namespace mp::cuda;

namespace {

/// State shared by all threads; never destroyed (libraries unload their
/// modules from static destructors).
struct Shared {
  std::mutex mutex;
  /// Kernel names, for messages about launches.
  std::unordered_map<CUfunction, std::string> kernelNames;
  /// Why the last module load failed: a kernel of that module is then
  /// reported with the cause, not as a null handle.
  mp_status moduleStatus = MP_OK;
  std::string moduleMessage;
};

Shared &shared() {
  static Shared *s = new Shared;
  return *s;
}

void rememberModuleFailure() {
  Shared &s = shared();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.moduleStatus = stickyStatus() != MP_OK ? stickyStatus() : MP_ERROR_CUDA;
  s.moduleMessage = mp_last_error();
}

std::string kernelName(CUfunction function) {
  Shared &s = shared();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.kernelNames.find(function);
  return it == s.kernelNames.end() ? "?" : it->second;
}

const char *imageKind(uint32_t kind) {
  return kind == MP_GPU_IMAGE_PTX ? "PTX" : "cubin";
}

const char *containerError(mp_gpu_binary_error error) {
  switch (error) {
  case MP_GPU_BINARY_BAD_VERSION:
    return "has a version this runtime does not read";
  case MP_GPU_BINARY_BAD_ENTRY:
    return "has an entry of unknown kind or PTX without its final NUL";
  default:
    return "is truncated";
  }
}

/// "sm_80, sm_90, sm_70 (PTX)".
std::string listArchs(const std::vector<mp_gpu_image_entry> &entries) {
  std::string out;
  for (const mp_gpu_image_entry &entry : entries) {
    if (!out.empty())
      out += ", ";
    out += format("sm_%u", entry.sm);
    if (entry.kind == MP_GPU_IMAGE_PTX)
      out += " (PTX)";
  }
  return out.empty() ? "no architecture" : out;
}

/// Loads `image`; `what` names it in messages.
CUmodule loadImage(const void *image, const std::string &what) {
  CUmodule module = nullptr;
  if (!check(driver().cuModuleLoadData(&module, image),
             [&] { return format("cuModuleLoadData(%s)", what.c_str()); }))
    return nullptr;
  return module;
}

/// Loads the image of a container that suits the device.
CUmodule loadFromContainer(const unsigned char *data, size_t size) {
  uint32_t count = 0;
  if (mp_gpu_binary_error error = mp_gpu_binary_check(data, size, &count)) {
    recordFailure(MP_ERROR_INVALID,
                  format("the GPU kernel container (MPGPUBIN, %zu bytes) %s: "
                         "rebuild the library with a matching mp-compile",
                         size, containerError(error)));
    return nullptr;
  }
  std::vector<mp_gpu_image_entry> entries;
  entries.reserve(count);
  for (uint32_t i = 0; i < count; ++i)
    entries.push_back(mp_gpu_binary_entry(data, i));
  int sm = deviceSm();
  int32_t index = mp_gpu_binary_select(entries.data(), count, sm);
  if (index < 0) {
    recordFailure(MP_ERROR_ARCH,
                  format("the library has kernels for %s but device %d is "
                         "sm_%d (compile with --gpu sm_%d)",
                         listArchs(entries).c_str(), deviceOrdinal(), sm, sm));
    return nullptr;
  }
  const mp_gpu_image_entry &entry = entries[index];
  const unsigned char *image = data + entry.offset;
  // The packer does not align payloads; ELF parsing wants 8-byte alignment.
  std::vector<uint64_t> copy;
  if (reinterpret_cast<uintptr_t>(image) % alignof(uint64_t) != 0) {
    copy.resize((entry.size + 7) / 8);
    std::memcpy(copy.data(), image, entry.size);
    image = reinterpret_cast<const unsigned char *>(copy.data());
  }
  return loadImage(image, format("sm_%u %s of %llu bytes for device sm_%d",
                                 entry.sm, imageKind(entry.kind),
                                 (unsigned long long)entry.size, sm));
}

/// Whether a launch dimension fits the driver's unsigned int.
bool fitsDim(intptr_t value) {
  return value >= 0 && static_cast<uintmax_t>(value) <= UINT_MAX;
}

/// After an operation on the null stream: the MLIR op had no async token,
/// so it must be complete on return (kernels run on other streams).
void finishIfSynchronous(void *stream, const char *what) {
  if (stream)
    return;
  check(driver().cuStreamSynchronize(nullptr),
        [&] { return format("cuStreamSynchronize(after %s)", what); });
}

} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  if (!enter()) {
    rememberModuleFailure();
    return nullptr;
  }
  CUmodule module;
  if (mp_gpu_binary_is_container(data, gpuBlobSize))
    module = loadFromContainer(static_cast<const unsigned char *>(data),
                               gpuBlobSize);
  else
    module = loadImage(data, format("image of %zu bytes", gpuBlobSize));
  if (!module)
    rememberModuleFailure();
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  if (!enter()) {
    rememberModuleFailure();
    return nullptr;
  }
  CUmodule module = loadImage(data, "PTX text");
  if (!module)
    rememberModuleFailure();
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  if (!enterRelease(module))
    return;
  check(driver().cuModuleUnload(static_cast<CUmodule>(module)),
        [] { return std::string("cuModuleUnload"); });
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!name)
    name = "";
  if (!module) {
    if (stickyStatus() != MP_OK)
      return nullptr;
    Shared &s = shared();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.moduleStatus != MP_OK)
      recordFailure(s.moduleStatus,
                    format("kernel '%s' cannot run: its GPU module did not "
                           "load: %s",
                           name, s.moduleMessage.c_str()));
    else
      recordFailure(MP_ERROR_INVALID,
                    format("mgpuModuleGetFunction('%s'): no module", name));
    return nullptr;
  }
  if (!enter())
    return nullptr;
  CUfunction function = nullptr;
  if (!check(driver().cuModuleGetFunction(&function,
                                          static_cast<CUmodule>(module), name),
             [&] { return format("cuModuleGetFunction('%s')", name); }))
    return nullptr;
  Shared &s = shared();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.kernelNames.find(function);
  if (it == s.kernelNames.end())
    s.kernelNames.emplace(function, name);
  return function;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  if (!function) {
    if (stickyStatus() == MP_OK)
      recordFailure(MP_ERROR_INVALID, "mgpuLaunchKernel: no kernel function");
    return;
  }
  if (!enter())
    return;
  auto *kernel = static_cast<CUfunction>(function);
  auto describe = [&] {
    return format("cuLaunchKernel(kernel '%s', grid %ldx%ldx%ld, block "
                  "%ldx%ldx%ld, %d bytes shared)",
                  kernelName(kernel).c_str(), (long)gridX, (long)gridY,
                  (long)gridZ, (long)blockX, (long)blockY, (long)blockZ, smem);
  };
  if (!fitsDim(gridX) || !fitsDim(gridY) || !fitsDim(gridZ) ||
      !fitsDim(blockX) || !fitsDim(blockY) || !fitsDim(blockZ) || smem < 0) {
    recordFailure(MP_ERROR_INVALID, describe() + ": dimensions out of range");
    return;
  }
  // A kernel over an empty tensor has nothing to do.
  if (!gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ)
    return;
  if (check(driver().cuLaunchKernel(kernel, gridX, gridY, gridZ, blockX,
                                    blockY, blockZ, smem,
                                    static_cast<CUstream>(stream), params,
                                    extra),
            describe))
    noteQueuedWork();
}

/// Every stream the generated code asks for is the runtime's one stream
/// (Stream.h).
extern "C" void *mgpuStreamCreate(void) { return runStream(); }

extern "C" void mgpuStreamDestroy(void *stream) {
  // The run stream lives as long as the process.
  if (isRunStream(stream))
    return;
  if (!enterRelease(stream))
    return;
  check(driver().cuStreamDestroy_v2(static_cast<CUstream>(stream)),
        [] { return std::string("cuStreamDestroy_v2"); });
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  if (skipsStreamWait(stream))
    return; // the copies back to the host wait for the stream
  if (!enter())
    return;
  // Asynchronous kernel failures (a bad address) surface here.
  check(driver().cuStreamSynchronize(static_cast<CUstream>(stream)),
        [] { return std::string("cuStreamSynchronize"); });
}

extern "C" void mgpuStreamWaitEvent(void *stream, void *event) {
  if (!event || !enter())
    return;
  check(driver().cuStreamWaitEvent(static_cast<CUstream>(stream),
                                   static_cast<CUevent>(event), 0),
        [] { return std::string("cuStreamWaitEvent"); });
}

extern "C" void *mgpuEventCreate(void) {
  if (!enter())
    return nullptr;
  CUevent event = nullptr;
  if (!check(driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
             [] { return std::string("cuEventCreate"); }))
    return nullptr;
  return event;
}

extern "C" void mgpuEventDestroy(void *event) {
  if (!enterRelease(event))
    return;
  check(driver().cuEventDestroy_v2(static_cast<CUevent>(event)),
        [] { return std::string("cuEventDestroy_v2"); });
}

extern "C" void mgpuEventSynchronize(void *event) {
  if (!event || !enter())
    return;
  check(driver().cuEventSynchronize(static_cast<CUevent>(event)),
        [] { return std::string("cuEventSynchronize"); });
}

extern "C" void mgpuEventRecord(void *event, void *stream) {
  if (!event || !enter())
    return;
  check(driver().cuEventRecord(static_cast<CUevent>(event),
                               static_cast<CUstream>(stream)),
        [] { return std::string("cuEventRecord"); });
}

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                              bool isHostShared) {
  if (sizeBytes == 0 || !enter())
    return nullptr;
  CUdeviceptr pointer = 0;
  CUresult result = isHostShared
                        ? driver().cuMemAllocManaged(&pointer, sizeBytes,
                                                     CU_MEM_ATTACH_GLOBAL)
                        : driver().cuMemAlloc_v2(&pointer, sizeBytes);
  if (!check(result, [&] {
        return format("%s(%llu bytes)",
                      isHostShared ? "cuMemAllocManaged" : "cuMemAlloc_v2",
                      (unsigned long long)sizeBytes);
      }))
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

extern "C" void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!enterRelease(ptr))
    return;
  check(driver().cuMemFree_v2(reinterpret_cast<CUdeviceptr>(ptr)),
        [] { return std::string("cuMemFree_v2"); });
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  if (sizeBytes == 0 || !enter())
    return;
  if (!check(driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                    reinterpret_cast<CUdeviceptr>(src),
                                    sizeBytes, static_cast<CUstream>(stream)),
             [&] { return format("cuMemcpyAsync(%zu bytes)", sizeBytes); }))
    return;
  noteQueuedWork();
  finishIfSynchronous(stream, "a copy");
}

extern "C" void mp_cuda_copy_on_device(void *dst, const void *src,
                                       size_t bytes) {
  mgpuMemcpy(dst, const_cast<void *>(src), bytes, mgpuStreamCreate());
}

extern "C" void mgpuMemset32(void *dst, unsigned int value, size_t count,
                             void *stream) {
  if (count == 0 || !enter())
    return;
  if (!check(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst),
                                       value, count,
                                       static_cast<CUstream>(stream)),
             [&] { return format("cuMemsetD32Async(%zu elements)", count); }))
    return;
  noteQueuedWork();
  finishIfSynchronous(stream, "a memset");
}

extern "C" void mgpuMemset16(void *dst, unsigned short value, size_t count,
                             void *stream) {
  if (count == 0 || !enter())
    return;
  if (!check(driver().cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst),
                                       value, count,
                                       static_cast<CUstream>(stream)),
             [&] { return format("cuMemsetD16Async(%zu elements)", count); }))
    return;
  noteQueuedWork();
  finishIfSynchronous(stream, "a memset");
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  if (!requestDevice(device))
    recordFailure(MP_ERROR_INVALID,
                  format("mgpuSetDefaultDevice(%d): CUDA already runs on "
                         "device %d in this process (one device per process)",
                         device, deviceOrdinal()));
}
