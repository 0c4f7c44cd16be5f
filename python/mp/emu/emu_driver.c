// libcuda.so.1 for the PTX emulator (mp_emu): the mp runtime loads it through
// MP_CUDA_DRIVER like the real driver. Device memory is one host mapping that
// the emulator reads and writes; modules keep their PTX text; a kernel launch
// calls the function the emulator registered with mp_emu_set_launch, which
// executes the kernel's PTX. No CUDA headers: the types are those of the
// runtime's CudaDriver.h.
//
// Environment:
//   MP_EMU_CC         compute capability reported, as XY (default 90)
//   MP_EMU_MEMORY_MB  size of the device memory mapping (default 8192; only
//                     the pages written are backed)

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNoBinaryForGpu = 209,
  kNotFound = 500,
  kLaunchFailed = 719,
  kNotSupported = 801,
};

// --- What the emulator sees ------------------------------------------------

/// Executes `kernel` of the module whose PTX is `ptx` (module `serial`);
/// dims: grid x, y, z then block x, y, z. Returns a CUresult.
typedef int (*mp_emu_launch_fn)(uint64_t serial, const char *ptx,
                                const char *kernel, const unsigned *dims,
                                unsigned sharedBytes, void **params);

static mp_emu_launch_fn launchHook;
static char lastError[4096];

void mp_emu_set_launch(mp_emu_launch_fn fn) { launchHook = fn; }

/// The text cuGetErrorString gives for the next failed launch.
void mp_emu_set_error(const char *message) {
  snprintf(lastError, sizeof lastError, "%s", message ? message : "");
}

typedef struct {
  uint64_t base, size;
  int live;
} Allocation;

static unsigned char *arena;
static size_t arenaSize, arenaUsed;
static Allocation *allocations;
static size_t numAllocations, maxAllocations;

static int mapArena(void) {
  if (arena)
    return 1;
  const char *mb = getenv("MP_EMU_MEMORY_MB");
  arenaSize = (size_t)(mb ? atol(mb) : 8192) << 20;
  void *p = mmap(NULL, arenaSize, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return 0;
  arena = p;
  return 1;
}

/// The device memory mapping (every CUdeviceptr points into it).
void *mp_emu_arena(size_t *size) {
  if (!mapArena())
    return NULL;
  *size = arenaSize;
  return arena;
}

/// Copies up to `max` allocations (in address order) and returns how many
/// there are; `live` is 0 for freed ones.
size_t mp_emu_allocations(uint64_t *base, uint64_t *size, int32_t *live,
                          size_t max) {
  for (size_t i = 0; i < numAllocations && i < max; ++i) {
    base[i] = allocations[i].base;
    size[i] = allocations[i].size;
    live[i] = allocations[i].live;
  }
  return numAllocations;
}

// --- Errors, device, context -----------------------------------------------

static const struct {
  CUresult code;
  const char *name, *text;
} errors[] = {
    {kSuccess, "CUDA_SUCCESS", "no error"},
    {kInvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {kOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {kNoBinaryForGpu, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {kNotFound, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {kLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {kNotSupported, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

CUresult cuGetErrorName(CUresult error, const char **name) {
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i)
    if (errors[i].code == error) {
      *name = errors[i].name;
      return kSuccess;
    }
  *name = NULL;
  return kInvalidValue;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  if ((error == kLaunchFailed || error == kNoBinaryForGpu) && lastError[0]) {
    *text = lastError;
    return kSuccess;
  }
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i)
    if (errors[i].code == error) {
      *text = errors[i].text;
      return kSuccess;
    }
  *text = NULL;
  return kInvalidValue;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  return mapArena() ? kSuccess : kOutOfMemory;
}

CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? kSuccess : kInvalidValue;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  const char *cc = getenv("MP_EMU_CC");
  int xy = cc ? atoi(cc) : 90;
  if (attribute == 75) // compute capability major
    *value = xy / 10;
  else if (attribute == 76) // minor
    *value = xy % 10;
  else
    return kInvalidValue;
  return kSuccess;
}

static int context;

CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) {
  (void)device;
  *ctx = &context;
  return kSuccess;
}

CUresult cuCtxSetCurrent(void *ctx) {
  return ctx == &context ? kSuccess : kInvalidValue;
}

// Launches run to completion when they are made: every wait is a no-op.
CUresult cuCtxSynchronize(void) { return kSuccess; }

// --- Modules and launches --------------------------------------------------

typedef struct Module {
  uint64_t serial;
  char *ptx;
} Module;

typedef struct Function {
  Module *module;
  char *name;
  struct Function *next;
} Function;

static uint64_t nextSerial = 1;
static Function *functions;

CUresult cuModuleLoadData(void **module, const void *image) {
  const char *text = (const char *)image;
  lastError[0] = '\0'; // the message is the latest failure's

  // A cubin (an ELF file) has machine code the emulator cannot run.
  if (memcmp(text, "\x7f" "ELF", 4) == 0) {
    mp_emu_set_error("the PTX emulator runs PTX, not cubins: compile the "
                     "library with --gpu compute_80");
    return kNoBinaryForGpu;
  }
  Module *m = calloc(1, sizeof(Module));
  m->serial = nextSerial++;
  m->ptx = strdup(text);
  *module = m;
  return kSuccess;
}

CUresult cuModuleUnload(void *module) {
  Module *m = module;
  for (Function **f = &functions; *f;) {
    if ((*f)->module == m) {
      Function *dead = *f;
      *f = dead->next;
      free(dead->name);
      free(dead);
    } else {
      f = &(*f)->next;
    }
  }
  free(m->ptx);
  free(m);
  return kSuccess;
}

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  Module *m = module;
  // An entry is declared as ".entry NAME(".
  size_t length = strlen(name);
  const char *p = m->ptx;
  while ((p = strstr(p, ".entry ")) != NULL) {
    p += 7;
    if (strncmp(p, name, length) == 0 && p[length] == '(')
      break;
  }
  if (!p)
    return kNotFound;
  Function *f = calloc(1, sizeof(Function));
  f->module = m;
  f->name = strdup(name);
  f->next = functions;
  functions = f;
  *function = f;
  return kSuccess;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  (void)stream;
  Function *f = function;
  lastError[0] = '\0';
  if (extra || !params || !launchHook) {
    mp_emu_set_error(launchHook ? "launches with 'extra' arguments are not "
                                  "emulated"
                                : "no emulator is attached to the driver");
    return kLaunchFailed;
  }
  unsigned dims[6] = {gx, gy, gz, bx, by, bz};
  return launchHook(f->module->serial, f->module->ptx, f->name, dims, smem,
                    params);
}

// CUDA graphs are not emulated: the runtime then launches step by step.
CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)stream, (void)mode;
  return kNotSupported;
}
CUresult cuStreamEndCapture(void *stream, void **graph) {
  (void)stream, (void)graph;
  return kNotSupported;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags) {
  (void)exec, (void)graph, (void)flags;
  return kNotSupported;
}
CUresult cuGraphLaunch(void *exec, void *stream) {
  (void)exec, (void)stream;
  return kNotSupported;
}
CUresult cuGraphExecDestroy(void *exec) {
  (void)exec;
  return kSuccess;
}
CUresult cuGraphDestroy(void *graph) {
  (void)graph;
  return kSuccess;
}

// --- Streams and events ----------------------------------------------------

CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  *stream = malloc(1);
  return kSuccess;
}
CUresult cuStreamDestroy_v2(void *stream) {
  free(stream);
  return kSuccess;
}
CUresult cuStreamSynchronize(void *stream) {
  (void)stream;
  return kSuccess;
}
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  (void)stream, (void)event, (void)flags;
  return kSuccess;
}
CUresult cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  *event = malloc(1);
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *event) {
  free(event);
  return kSuccess;
}
CUresult cuEventRecord(void *event, void *stream) {
  (void)event, (void)stream;
  return kSuccess;
}
CUresult cuEventSynchronize(void *event) {
  (void)event;
  return kSuccess;
}

// --- Memory ----------------------------------------------------------------

// A bump allocator: freed memory is never handed out again, so the emulator
// reports a kernel that reads a freed buffer instead of reading a new one.
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  if (!mapArena())
    return kOutOfMemory;
  size_t start = (arenaUsed + 255) & ~(size_t)255;
  if (bytes == 0 || start + bytes > arenaSize)
    return bytes == 0 ? kInvalidValue : kOutOfMemory;
  if (numAllocations == maxAllocations) {
    size_t grown = maxAllocations ? 2 * maxAllocations : 256;
    Allocation *more = realloc(allocations, grown * sizeof(Allocation));
    if (!more)
      return kOutOfMemory;
    allocations = more;
    maxAllocations = grown;
  }
  allocations[numAllocations++] =
      (Allocation){(uint64_t)(uintptr_t)(arena + start), bytes, 1};
  arenaUsed = start + bytes;
  *pointer = (CUdeviceptr)(uintptr_t)(arena + start);
  return kSuccess;
}

CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned flags) {
  (void)flags;
  return cuMemAlloc_v2(pointer, bytes);
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  for (size_t i = 0; i < numAllocations; ++i)
    if (allocations[i].base == pointer && allocations[i].live) {
      allocations[i].live = 0;
      return kSuccess;
    }
  return kInvalidValue;
}

/// Whether [pointer, pointer + bytes) lies in one live allocation.
static int inAllocation(CUdeviceptr pointer, size_t bytes) {
  for (size_t i = 0; i < numAllocations; ++i)
    if (allocations[i].live && pointer >= allocations[i].base &&
        pointer + bytes <= allocations[i].base + allocations[i].size)
      return 1;
  return 0;
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       void *stream) {
  (void)stream;
  if (!inAllocation(dst, bytes) || !inAllocation(src, bytes))
    return kInvalidValue;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return kSuccess;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  if (!inAllocation(dst, bytes))
    return kInvalidValue;
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return kSuccess;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  if (!inAllocation(src, bytes))
    return kInvalidValue;
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return kSuccess;
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                          void *stream) {
  (void)stream;
  if (!inAllocation(dst, 4 * count))
    return kInvalidValue;
  for (size_t i = 0; i < count; ++i)
    ((uint32_t *)(uintptr_t)dst)[i] = value;
  return kSuccess;
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          void *stream) {
  (void)stream;
  if (!inAllocation(dst, 2 * count))
    return kInvalidValue;
  for (size_t i = 0; i < count; ++i)
    ((uint16_t *)(uintptr_t)dst)[i] = value;
  return kSuccess;
}
