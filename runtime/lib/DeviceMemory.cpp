//===- DeviceMemory.cpp - device buffers and constants --------------------===//
//
// The buffers of generated CUDA code. A model allocates the same sizes on
// every run, and cuMemAlloc/cuMemFree are slow (cuMemFree synchronizes the
// device), so freed blocks are kept by size class and handed out again, as
// the host BufferPool does. A block may be freed while kernels queued on
// the runtime's stream still read it (runs on device buffers return before
// their kernels finish): later kernels that get it are ordered after them
// by the stream, and copies into device memory, which are not on that
// stream, first wait for every queued kernel.
//
//===----------------------------------------------------------------------===//

#include "DeviceMemory.h"
#include "CudaDriver.h"
#include "Errors.h"
#include "SizeClass.h"
#include "Stream.h"

#include <algorithm>
#include <dlfcn.h>
#include <mutex>
#include <unordered_map>
#include <vector>

using namespace mp;
using namespace mp::cuda;

namespace {

/// Free blocks kept at most; beyond, freed to the driver.
constexpr size_t kMaxCachedBytes = size_t(1) << 30;

/// cuMemAlloc aligns to at least 256 bytes.
constexpr size_t kDeviceAlignment = 256;

size_t sizeClass(size_t size) {
  return mp::poolSizeClass(size, kDeviceAlignment);
}

struct Pool {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<CUdeviceptr>> free;
  /// The class of every block the pool handed out or keeps.
  std::unordered_map<CUdeviceptr, size_t> classOf;
  size_t cachedBytes = 0;
  /// Bytes handed out and not yet freed, and their high-water mark.
  size_t liveBytes = 0, peakBytes = 0;
};

/// Counts a block handed out (lock held).
void handOut(Pool &p, size_t cls) {
  p.liveBytes += cls;
  p.peakBytes = std::max(p.peakBytes, p.liveBytes);
}

/// Never destroyed: libraries may free at exit.
Pool &pool() {
  static Pool *p = new Pool;
  return *p;
}

/// Frees every cached block (lock held): room for a new allocation.
void trim(Pool &p) {
  for (auto &entry : p.free)
    for (CUdeviceptr block : entry.second) {
      driver().cuMemFree_v2(block);
      p.classOf.erase(block);
    }
  p.free.clear();
  p.cachedBytes = 0;
}

void *poolAlloc(size_t bytes) {
  if (bytes == 0 || !enter())
    return nullptr;
  size_t cls = sizeClass(bytes);
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  auto it = p.free.find(cls);
  if (it != p.free.end() && !it->second.empty()) {
    CUdeviceptr block = it->second.back();
    it->second.pop_back();
    p.cachedBytes -= cls;
    handOut(p, cls);
    return reinterpret_cast<void *>(block);
  }
  CUdeviceptr block = 0;
  CUresult result = driver().cuMemAlloc_v2(&block, cls);
  if (result == CUDA_ERROR_OUT_OF_MEMORY && p.cachedBytes) {
    trim(p);
    result = driver().cuMemAlloc_v2(&block, cls);
  }
  if (!check(result, [&] { return format("cuMemAlloc_v2(%zu bytes)", cls); }))
    return nullptr;
  p.classOf.emplace(block, cls);
  handOut(p, cls);
  return reinterpret_cast<void *>(block);
}

void poolFree(void *device) {
  if (!enterRelease(device))
    return;
  auto block = reinterpret_cast<CUdeviceptr>(device);
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.classOf.find(block);
    if (it != p.classOf.end()) {
      size_t cls = it->second;
      p.liveBytes -= cls;
      if (p.cachedBytes + cls <= kMaxCachedBytes) {
        p.free[cls].push_back(block);
        p.cachedBytes += cls;
        return;
      }
      p.classOf.erase(it);
    }
  }
  // Not from the pool (mgpuMemAlloc) or over the cache limit; queued
  // kernels may still read it.
  if (!finishQueuedWork("cuMemFree_v2"))
    return;
  check(driver().cuMemFree_v2(block),
        [] { return std::string("cuMemFree_v2"); });
}

/// Device copies of constants, by host address.
struct Constants {
  std::mutex mutex;
  struct Copy {
    CUdeviceptr device;
    size_t bytes;
  };
  std::unordered_map<const void *, Copy> copies;
};

Constants &constants() {
  static Constants *c = new Constants;
  return *c;
}

} // namespace

extern "C" void *mp_cuda_alloc(size_t bytes) { return poolAlloc(bytes); }

extern "C" void mp_cuda_free(void *device) { poolFree(device); }

extern "C" void *mp_cuda_memref_alloc(size_t bytes) { return poolAlloc(bytes); }

extern "C" void *mp_cuda_memref_aligned_alloc(size_t alignment, size_t bytes) {
  if (alignment > kDeviceAlignment) {
    if (stickyStatus() == MP_OK)
      recordFailure(MP_ERROR_INVALID,
                    format("mp_cuda_memref_aligned_alloc: alignment %zu is "
                           "over the %zu bytes device memory guarantees",
                           alignment, kDeviceAlignment));
    return nullptr;
  }
  return poolAlloc(bytes);
}

extern "C" void mp_cuda_memref_free(void *device) {
  // A run being captured keeps its buffers: the graph's kernels use them.
  if (!deferFreeToCapture(device))
    poolFree(device);
}

extern "C" void mp_cuda_copy_to_device(void *device, const void *host,
                                       size_t bytes) {
  if (bytes == 0 || !enter())
    return;
  // A queued kernel may still read the block (see the top of this file).
  if (!finishQueuedWork("a host-to-device copy"))
    return;
  if (!check(driver().cuMemcpyHtoD_v2(reinterpret_cast<CUdeviceptr>(device),
                                      host, bytes),
             [&] { return format("cuMemcpyHtoD_v2(%zu bytes)", bytes); }))
    return;
  // From pageable memory the copy may still be in flight on the legacy
  // stream, which the kernels' non-blocking streams do not wait for.
  check(driver().cuCtxSynchronize(), [] {
    return std::string("cuCtxSynchronize(after a host-to-device copy)");
  });
}

extern "C" void mp_cuda_copy_to_host(void *host, const void *device,
                                     size_t bytes) {
  if (bytes == 0 || !enter())
    return;
  // Kernels on any stream must be done; their failures surface here.
  if (!waitForAllWork("a device-to-host copy"))
    return;
  check(driver().cuMemcpyDtoH_v2(host, reinterpret_cast<CUdeviceptr>(device),
                                 bytes),
        [&] { return format("cuMemcpyDtoH_v2(%zu bytes)", bytes); });
}

extern "C" void *mp_cuda_constant(const void *host, int64_t bytes) {
  if (!host || bytes <= 0 || !enter())
    return nullptr;
  Constants &c = constants();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.copies.find(host);
  if (it != c.copies.end() && it->second.bytes == size_t(bytes))
    return reinterpret_cast<void *>(it->second.device);
  CUdeviceptr device = 0;
  if (!check(driver().cuMemAlloc_v2(&device, bytes), [&] {
        return format("cuMemAlloc_v2(%lld bytes, for a constant)",
                      (long long)bytes);
      }))
    return nullptr;
  if (!check(driver().cuMemcpyHtoD_v2(device, host, bytes),
             [&] {
               return format("cuMemcpyHtoD_v2(%lld bytes, for a constant)",
                             (long long)bytes);
             }) ||
      !check(driver().cuCtxSynchronize(), [] {
        return std::string("cuCtxSynchronize(after uploading a constant)");
      })) {
    driver().cuMemFree_v2(device);
    return nullptr;
  }
  if (it != c.copies.end()) {
    driver().cuMemFree_v2(it->second.device);
    c.copies.erase(it);
  }
  c.copies.emplace(host, Constants::Copy{device, size_t(bytes)});
  return reinterpret_cast<void *>(device);
}

extern "C" void mp_cuda_memory_stats(mp_memory_stats *stats) {
  if (!stats)
    return;
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    stats->buffer_bytes = p.liveBytes;
    stats->peak_buffer_bytes = p.peakBytes;
    stats->cached_bytes = p.cachedBytes;
  }
  Constants &c = constants();
  std::lock_guard<std::mutex> lock(c.mutex);
  stats->constant_bytes = 0;
  for (auto &entry : c.copies)
    stats->constant_bytes += entry.second.bytes;
}

void mp::releaseConstantsOf(const void *base) {
  if (!base)
    return;
  Constants &c = constants();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto it = c.copies.begin(); it != c.copies.end();) {
    Dl_info info;
    if (dladdr(it->first, &info) && info.dli_fbase == base) {
      if (enterRelease(reinterpret_cast<void *>(it->second.device)))
        driver().cuMemFree_v2(it->second.device);
      it = c.copies.erase(it);
    } else {
      ++it;
    }
  }
}
