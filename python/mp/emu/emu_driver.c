// libcuda.so.1 for the PTX emulator (mp_emu): the mp runtime loads it through
// MP_CUDA_DRIVER like the real driver. The entry points are the shared fake
// driver's (fake_driver.c, in runtime/fake/ of the mp sources; driver.py
// compiles this file with that folder on the include path); this file has
// what only the emulator's driver does: device memory is one host mapping
// that the emulator reads and writes; modules keep their PTX text; a kernel
// launch calls the function the emulator registered with mp_emu_set_launch,
// which executes the kernel's PTX. Stream capture records launches (the
// emulator keeps each one's arguments, mp_emu_set_graph_hooks), copies and
// fills; a graph launch runs them again in order. An executable graph is
// updated with a graph of the same nodes (cuGraphExecUpdate_v2).
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

/// Graph hooks: `record` keeps a launch's kernel and arguments (read now, as
/// cuLaunchKernel does while capturing) and returns a handle >= 0, or a
/// negated CUresult; `replay` runs a kept launch again and returns a
/// CUresult; `forget` drops it when its graph is destroyed.
typedef int64_t (*mp_emu_record_fn)(uint64_t serial, const char *ptx,
                                    const char *kernel, const unsigned *dims,
                                    unsigned sharedBytes, void **params);
typedef int (*mp_emu_replay_fn)(int64_t handle);
typedef void (*mp_emu_forget_fn)(int64_t handle);

static mp_emu_record_fn recordHook;
static mp_emu_replay_fn replayHook;
static mp_emu_forget_fn forgetHook;

void mp_emu_set_graph_hooks(mp_emu_record_fn record, mp_emu_replay_fn replay,
                            mp_emu_forget_fn forget) {
  recordHook = record;
  replayHook = replay;
  forgetHook = forget;
}

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

// --- Graphs ------------------------------------------------------------------

/// A node of a captured graph: a launch kept by the emulator, or a copy or
/// fill.
typedef struct {
  int64_t launch; // the record hook's handle; -1 for a memory node
  FakeMemoryNode memory;
} GraphNode;

struct CUgraph_st {
  GraphNode *nodes;
  size_t count, capacity;
};

static CUgraph capturing;

static int fakeCapturing(void) { return capturing != NULL; }

static CUresult addNode(GraphNode node) {
  if (capturing->count == capturing->capacity) {
    size_t capacity = capturing->capacity ? 2 * capturing->capacity : 64;
    GraphNode *grown = realloc(capturing->nodes, capacity * sizeof(GraphNode));
    if (!grown)
      return kOutOfMemory;
    capturing->nodes = grown;
    capturing->capacity = capacity;
  }
  capturing->nodes[capturing->count++] = node;
  return kSuccess;
}

static CUresult fakeRecordMemoryNode(const FakeMemoryNode *node) {
  GraphNode n = {-1, *node};
  return addNode(n);
}

static CUresult fakeLaunch(CUfunction function, const unsigned dims[6],
                           unsigned sharedBytes, CUstream stream, void **params,
                           void **extra) {
  (void)stream;
  fakeSetError(NULL);
  int attached = capturing ? recordHook != NULL : launchHook != NULL;
  if (extra || !params || !attached) {
    fakeSetError(attached ? "launches with 'extra' arguments are not "
                            "emulated"
                          : "no emulator is attached to the driver");
    return kLaunchFailed;
  }
  if (!capturing)
    return launchHook(function->module->serial, function->module->ptx,
                      function->name, dims, sharedBytes, params);
  int64_t handle = recordHook(function->module->serial, function->module->ptx,
                              function->name, dims, sharedBytes, params);
  if (handle < 0)
    return (CUresult)-handle;
  GraphNode n = {handle, {0, 0, 0, 0, 0, 0}};
  return addNode(n);
}

static void releaseGraph(CUgraph graph) {
  if (!graph)
    return;
  for (size_t i = 0; i < graph->count; ++i)
    if (graph->nodes[i].launch >= 0 && forgetHook)
      forgetHook(graph->nodes[i].launch);
  free(graph->nodes);
  free(graph);
}

static CUresult fakeCaptureBegin(CUstream stream, int mode) {
  (void)stream, (void)mode;
  if (capturing)
    return kInvalidValue;
  capturing = calloc(1, sizeof(*capturing));
  return capturing ? kSuccess : kOutOfMemory;
}

static CUresult fakeCaptureEnd(CUstream stream, CUgraph *graph) {
  (void)stream;
  CUgraph g = capturing;
  capturing = NULL;
  if (!graph) {
    releaseGraph(g);
    return kSuccess;
  }
  if (!g)
    return kInvalidValue;
  *graph = g;
  return kSuccess;
}

static CUresult fakeGraphLaunch(CUgraph g, CUstream stream) {
  (void)stream;
  fakeSetError(NULL);
  for (size_t i = 0; i < g->count; ++i) {
    const GraphNode *n = &g->nodes[i];
    CUresult result = n->launch >= 0 ? (CUresult)replayHook(n->launch)
                                     : fakeRunMemoryNode(&n->memory);
    if (result != kSuccess)
      return result;
  }
  return kSuccess;
}

static CUresult fakeGraphDestroy(CUgraph graph) {
  releaseGraph(graph);
  return kSuccess;
}

static int fakeGraphsMatch(CUgraph from, CUgraph to) {
  if (from->count != to->count)
    return 0;
  for (size_t i = 0; i < from->count; ++i) {
    const GraphNode *a = &from->nodes[i], *b = &to->nodes[i];
    // Kernels may change (within the context); a copy stays a copy.
    if ((a->launch < 0) != (b->launch < 0) ||
        (a->launch < 0 && (a->memory.src == 0) != (b->memory.src == 0)))
      return 0;
  }
  return 1;
}
