// The tests' stand-in for libcuda.so.1, loaded through MP_CUDA_DRIVER:
// "device" memory is host memory, and the kernel "fake_add" adds two float
// arrays. The entry points, the failure injection and the traces are the
// shared fake driver's (runtime/fake/fake_driver.c, whose variables start
// with FAKE_CUDA_ here: FAKE_CUDA_CC (default 80), FAKE_CUDA_DEVICES,
// FAKE_CUDA_FAIL, FAKE_CUDA_FAIL_CODE, FAKE_CUDA_TRACE_STREAMS,
// FAKE_CUDA_TRACE_COPIES); this file has what only the tests' driver does:
//   FAKE_CUDA_ANY_KERNEL  every kernel name exists (those but fake_add do
//                         nothing): compiled libraries run their launches
// Launches on a capturing stream are recorded into a graph (at most 1024)
// that cuGraphLaunch runs again.
// Module loads print the first bytes of their image (an image starting
// with BADARCH has no code for the device); memory calls print their
// sizes. Built with -DFAKE_CUDA_OMIT_LAUNCH it lacks cuLaunchKernel, like
// a driver that is too old.

#include "../../../runtime/fake/fake_driver.c"

static const FakeFlavour *fakeFlavour(void) {
  static const FakeFlavour flavour = {"FAKE_CUDA_", "fake: ", 1, 80};
  return &flavour;
}

static CUresult fakeInit(void) { return kSuccess; }

// --- Memory ----------------------------------------------------------------

static CUresult fakeAlloc(CUdeviceptr *pointer, size_t bytes) {
  *pointer = (CUdeviceptr)(uintptr_t)malloc(bytes);
  return kSuccess;
}

static CUresult fakeFree(CUdeviceptr pointer) {
  free((void *)(uintptr_t)pointer);
  return kSuccess;
}

static int fakeIsDeviceMemory(CUdeviceptr pointer, size_t bytes) {
  (void)pointer, (void)bytes;
  return 1;
}

// --- Modules ---------------------------------------------------------------

struct CUmod_st {
  char tag[32];
};

static CUresult fakeModuleLoad(CUmodule *module, const void *image) {
  const char *bytes = (const char *)image;
  CUmodule m = calloc(1, sizeof(*m));
  size_t i = 0;
  for (; i < sizeof(m->tag) - 1 && bytes[i] > ' ' && bytes[i] <= '~' &&
         bytes[i] != ';';
       ++i)
    m->tag[i] = bytes[i];
  fakePrint("cuModuleLoadData '%s'%s", m->tag,
            ((uintptr_t)image % 8) ? " (misaligned)" : "");
  if (strncmp(m->tag, "BADARCH", 7) == 0) {
    free(m);
    return kNoBinaryForGpu;
  }
  *module = m;
  return kSuccess;
}

static CUresult fakeModuleUnload(CUmodule module) {
  fakePrint("cuModuleUnload '%s'", module->tag);
  free(module);
  return kSuccess;
}

// fake_add, then (with FAKE_CUDA_ANY_KERNEL=1) any other name asked for: a
// kernel that does nothing, so that compiled libraries run their launch
// sequence. A function is its entry here, whatever its module.
struct CUfunc_st {
  const char *name;
};
static struct CUfunc_st kernels[512] = {{"fake_add"}};
static size_t numKernels = 1;

static CUresult fakeModuleGetFunction(CUfunction *function, CUmodule module,
                                      const char *name) {
  (void)module;
  for (size_t i = 0; i < numKernels; ++i)
    if (strcmp(name, kernels[i].name) == 0) {
      *function = &kernels[i];
      return kSuccess;
    }
  if (!fakeEnv("ANY_KERNEL") || numKernels == 512)
    return kNotFound;
  kernels[numKernels].name = strdup(name);
  *function = &kernels[numKernels++];
  return kSuccess;
}

// --- Launches and graphs ---------------------------------------------------

// Stream capture: launches on a capturing stream are recorded, not run, and
// a graph launch runs them again with the recorded arguments.
typedef struct {
  const float *a, *b;
  float *c;
  int32_t n;
} AddArgs;
struct CUgraph_st {
  AddArgs launches[1024]; // n < 0: a kernel that does nothing
  int count;
};
static CUgraph capturing;

static void fakeAdd(AddArgs args) {
  if (args.n < 0)
    return;
  for (int32_t i = 0; i < args.n; ++i)
    args.c[i] = args.a[i] + args.b[i];
}

// fake_add(const float *a, const float *b, float *c, int32_t n).
static CUresult fakeLaunch(CUfunction function, const unsigned dims[6],
                           unsigned sharedBytes, CUstream stream, void **params,
                           void **extra) {
  (void)stream, (void)extra;
  AddArgs args = {0, 0, 0, -1};
  if (function == &kernels[0])
    args = (AddArgs){*(const float **)params[0], *(const float **)params[1],
                     *(float **)params[2], *(int32_t *)params[3]};
  if (capturing) {
    fakePrint("captured %s", function->name);
    if (capturing->count == 1024)
      return kUnknown;
    capturing->launches[capturing->count++] = args;
    return kSuccess;
  }
  fakePrint("launch %s grid %ux%ux%u block %ux%ux%u smem %u", function->name,
            dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], sharedBytes);
  fakeAdd(args);
  return kSuccess;
}

static CUresult fakeCaptureBegin(CUstream stream, int mode) {
  (void)stream;
  fakePrint("cuStreamBeginCapture_v2 mode %d", mode);
  capturing = calloc(1, sizeof(*capturing));
  return kSuccess;
}

static CUresult fakeCaptureEnd(CUstream stream, CUgraph *graph) {
  (void)stream;
  CUgraph g = capturing;
  capturing = NULL;
  if (!graph) {
    free(g);
    return kSuccess;
  }
  fakePrint("cuStreamEndCapture (%d launches)", g->count);
  *graph = g;
  return kSuccess;
}

static CUresult fakeGraphLaunch(CUgraph g, CUstream stream) {
  (void)stream;
  fakePrint("cuGraphLaunch (%d launches)", g->count);
  for (int i = 0; i < g->count; ++i)
    fakeAdd(g->launches[i]);
  return kSuccess;
}

static CUresult fakeGraphDestroy(CUgraph graph) {
  fakePrint("cuGraphDestroy");
  free(graph);
  return kSuccess;
}

static int fakeGraphsMatch(CUgraph from, CUgraph to) {
  return from->count == to->count;
}

static int fakeCapturing(void) { return capturing != NULL; }

// This driver's graphs hold fake_add launches only: a copy or fill on a
// capturing stream fails, as an unsupported capture would.
static CUresult fakeRecordMemoryNode(const FakeMemoryNode *node) {
  (void)node;
  fakePrint("copy or fill while capturing: not supported");
  return kNotSupported;
}
