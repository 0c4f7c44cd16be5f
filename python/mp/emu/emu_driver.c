// libcuda.so.1 for the PTX emulator (mp_emu): the mp runtime loads it through
// MP_CUDA_DRIVER like the real driver. The entry points are the shared fake
// driver's (fake_driver.c, in runtime/fake/ of the mp sources; driver.py
// compiles this file with that folder on the include path); this file has
// what only the emulator's driver does: device memory is one host mapping
// that the emulator reads and writes; modules keep their PTX text; a kernel
// launch calls the function the emulator registered with mp_emu_set_launch,
// which executes the kernel's PTX. CUDA graphs are not emulated.
//
// Environment (besides the shared driver's, prefixed MP_EMU_: MP_EMU_CC,
// default 90, MP_EMU_DEVICES, MP_EMU_FAIL, ...):
//   MP_EMU_MEMORY_MB  size of the device memory mapping (default 8192; only
//                     the pages written are backed)

#include "fake_driver.c"

#include <sys/mman.h>

static const FakeFlavour *fakeFlavour(void) {
  static const FakeFlavour flavour = {"MP_EMU_", "mp_emu: ", 0, 90};
  return &flavour;
}

// --- What the emulator sees ------------------------------------------------

/// Executes `kernel` of the module whose PTX is `ptx` (module `serial`);
/// dims: grid x, y, z then block x, y, z. Returns a CUresult.
typedef int (*mp_emu_launch_fn)(uint64_t serial, const char *ptx,
                                const char *kernel, const unsigned *dims,
                                unsigned sharedBytes, void **params);

static mp_emu_launch_fn launchHook;

void mp_emu_set_launch(mp_emu_launch_fn fn) { launchHook = fn; }

/// The text cuGetErrorString gives for the next failed launch.
void mp_emu_set_error(const char *message) { fakeSetError(message); }

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

static CUresult fakeInit(void) { return mapArena() ? kSuccess : kOutOfMemory; }

// --- Memory ----------------------------------------------------------------

// A bump allocator: freed memory is never handed out again, so the emulator
// reports a kernel that reads a freed buffer instead of reading a new one.
static CUresult fakeAlloc(CUdeviceptr *pointer, size_t bytes) {
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

static CUresult fakeFree(CUdeviceptr pointer) {
  for (size_t i = 0; i < numAllocations; ++i)
    if (allocations[i].base == pointer && allocations[i].live) {
      allocations[i].live = 0;
      return kSuccess;
    }
  return kInvalidValue;
}

/// Whether [pointer, pointer + bytes) lies in one live allocation.
static int fakeIsDeviceMemory(CUdeviceptr pointer, size_t bytes) {
  for (size_t i = 0; i < numAllocations; ++i)
    if (allocations[i].live && pointer >= allocations[i].base &&
        pointer + bytes <= allocations[i].base + allocations[i].size)
      return 1;
  return 0;
}

// --- Modules and launches --------------------------------------------------

struct CUmod_st {
  uint64_t serial;
  char *ptx;
};

struct CUfunc_st {
  CUmodule module;
  char *name;
  CUfunction next;
};

static uint64_t nextSerial = 1;
static CUfunction functions;

static CUresult fakeModuleLoad(CUmodule *module, const void *image) {
  const char *text = (const char *)image;
  fakeSetError(NULL); // the message is the latest failure's

  // A cubin (an ELF file) has machine code the emulator cannot run.
  if (memcmp(text, "\x7f" "ELF", 4) == 0) {
    fakeSetError("the PTX emulator runs PTX, not cubins: compile the "
                 "library with --gpu compute_80");
    return kNoBinaryForGpu;
  }
  CUmodule m = calloc(1, sizeof(*m));
  m->serial = nextSerial++;
  m->ptx = strdup(text);
  *module = m;
  return kSuccess;
}

static CUresult fakeModuleUnload(CUmodule module) {
  for (CUfunction *f = &functions; *f;) {
    if ((*f)->module == module) {
      CUfunction dead = *f;
      *f = dead->next;
      free(dead->name);
      free(dead);
    } else {
      f = &(*f)->next;
    }
  }
  free(module->ptx);
  free(module);
  return kSuccess;
}

static CUresult fakeModuleGetFunction(CUfunction *function, CUmodule module,
                                      const char *name) {
  // An entry is declared as ".entry NAME(".
  size_t length = strlen(name);
  const char *p = module->ptx;
  while ((p = strstr(p, ".entry ")) != NULL) {
    p += 7;
    if (strncmp(p, name, length) == 0 && p[length] == '(')
      break;
  }
  if (!p)
    return kNotFound;
  CUfunction f = calloc(1, sizeof(*f));
  f->module = module;
  f->name = strdup(name);
  f->next = functions;
  functions = f;
  *function = f;
  return kSuccess;
}

static CUresult fakeLaunch(CUfunction function, const unsigned dims[6],
                           unsigned sharedBytes, CUstream stream, void **params,
                           void **extra) {
  (void)stream;
  fakeSetError(NULL);
  if (extra || !params || !launchHook) {
    fakeSetError(launchHook ? "launches with 'extra' arguments are not "
                              "emulated"
                            : "no emulator is attached to the driver");
    return kLaunchFailed;
  }
  return launchHook(function->module->serial, function->module->ptx,
                    function->name, dims, sharedBytes, params);
}

// --- Graphs: not emulated, so the runtime launches step by step ------------

static CUresult fakeCaptureBegin(CUstream stream, int mode) {
  (void)stream, (void)mode;
  return kNotSupported;
}

static CUresult fakeCaptureEnd(CUstream stream, CUgraph *graph) {
  (void)stream, (void)graph;
  return kNotSupported;
}

static CUresult fakeGraphInstantiate(CUgraphExec *exec, CUgraph graph) {
  (void)exec, (void)graph;
  return kNotSupported;
}

static CUresult fakeGraphLaunch(CUgraphExec exec, CUstream stream) {
  (void)exec, (void)stream;
  return kNotSupported;
}

static CUresult fakeGraphExecDestroy(CUgraphExec exec) {
  (void)exec;
  return kSuccess;
}

static CUresult fakeGraphDestroy(CUgraph graph) {
  (void)graph;
  return kSuccess;
}
