//===- BufferPool.cpp - reused buffers for generated code -----------------===//

#include "mp/BufferPool.h"

#include <cstdint>
#include <cstdlib>
#include "SizeClass.h"

#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

/// Every block starts with this header, 64 bytes before the pointer handed
/// out.
struct Header {
  void *raw;       // what malloc returned
  size_t sizeClass; // 0: not pooled (over-aligned), freed directly
};
constexpr size_t kHeaderBytes = 64;
static_assert(sizeof(Header) <= kHeaderBytes, "header must fit");

/// Free blocks kept at most (beyond, freed to the system).
constexpr size_t kMaxCachedBytes = size_t(512) << 20;

size_t sizeClass(size_t size) { return mp::poolSizeClass(size, 64); }

struct Pool {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void *>> free;
  size_t cachedBytes = 0;
};

Pool &pool() {
  static Pool *p = new Pool; // never destroyed: generated code may free at exit
  return *p;
}

void *carve(void *raw, size_t alignment, size_t sizeClass) {
  uintptr_t start = reinterpret_cast<uintptr_t>(raw) + kHeaderBytes;
  uintptr_t aligned = (start + alignment - 1) & ~(uintptr_t(alignment) - 1);
  auto *header = reinterpret_cast<Header *>(aligned - kHeaderBytes);
  header->raw = raw;
  header->sizeClass = sizeClass;
  return reinterpret_cast<void *>(aligned);
}

} // namespace

namespace mp {

void *poolAlloc(size_t size) { return poolAlignedAlloc(64, size); }

void *poolAlignedAlloc(size_t alignment, size_t size) {
  if (alignment > kHeaderBytes) {
    // Rare: not pooled.
    void *raw = std::malloc(size + alignment + kHeaderBytes);
    return raw ? carve(raw, alignment, 0) : nullptr;
  }
  size_t cls = sizeClass(size ? size : 1);
  {
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.free.find(cls);
    if (it != p.free.end() && !it->second.empty()) {
      void *block = it->second.back();
      it->second.pop_back();
      p.cachedBytes -= cls;
      return block;
    }
  }
  // malloc aligns to 16; the header plus rounding reaches 64.
  void *raw = std::malloc(cls + 2 * kHeaderBytes);
  return raw ? carve(raw, kHeaderBytes, cls) : nullptr;
}

void poolFree(void *ptr) {
  if (!ptr)
    return;
  auto *header = reinterpret_cast<Header *>(static_cast<char *>(ptr) -
                                            kHeaderBytes);
  size_t cls = header->sizeClass;
  if (cls != 0) {
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.cachedBytes + cls <= kMaxCachedBytes) {
      p.free[cls].push_back(ptr);
      p.cachedBytes += cls;
      return;
    }
  }
  std::free(header->raw);
}

} // namespace mp
