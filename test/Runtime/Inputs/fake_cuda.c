// A stand-in for libcuda.so.1, loaded through MP_CUDA_DRIVER: "device"
// memory is host memory, and the kernel "fake_add" adds two float arrays.
// Environment:
//   FAKE_CUDA_DEVICES   number of devices (default 1)
//   FAKE_CUDA_CC        compute capability as XY (default 80)
//   FAKE_CUDA_FAIL      the entry point that fails (e.g. cuMemAlloc_v2)
//   FAKE_CUDA_FAIL_CODE its CUresult (default: out of memory for
//                       cuMemAlloc*, CUDA_ERROR_UNKNOWN otherwise)
//   FAKE_CUDA_TRACE_STREAMS  print stream creations and synchronizations
//   FAKE_CUDA_TRACE_COPIES   print copies (direction and bytes)
//   FAKE_CUDA_ANY_KERNEL  every kernel name exists (those but fake_add do
//                         nothing): compiled libraries run their launches
// Launches on a capturing stream are recorded into a graph (at most 1024)
// that cuGraphLaunch runs again.
// Module loads print the first bytes of their image; memory calls print
// their sizes. Built with -DFAKE_CUDA_OMIT_LAUNCH it lacks cuLaunchKernel,
// like a driver that is too old.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static int failing(const char *name) {
  const char *fail = getenv("FAKE_CUDA_FAIL");
  return fail && strcmp(fail, name) == 0;
}

static CUresult failCode(const char *name) {
  const char *code = getenv("FAKE_CUDA_FAIL_CODE");
  if (code)
    return atoi(code);
  return strncmp(name, "cuMemAlloc", 10) == 0 ? 2 : 999;
}

#define FAKE_ENTRY(name)                                                       \
  do {                                                                         \
    if (failing(#name))                                                        \
      return failCode(#name);                                                  \
  } while (0)

static int envInt(const char *name, int fallback) {
  const char *value = getenv(name);
  return value ? atoi(value) : fallback;
}

static const struct {
  CUresult code;
  const char *name, *text;
} errors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

CUresult cuGetErrorName(CUresult error, const char **name) {
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i)
    if (errors[i].code == error) {
      *name = errors[i].name;
      return 0;
    }
  *name = NULL;
  return 1;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i)
    if (errors[i].code == error) {
      *text = errors[i].text;
      return 0;
    }
  *text = NULL;
  return 1;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  FAKE_ENTRY(cuInit);
  return 0;
}

CUresult cuDeviceGetCount(int *count) {
  FAKE_ENTRY(cuDeviceGetCount);
  *count = envInt("FAKE_CUDA_DEVICES", 1);
  return 0;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  FAKE_ENTRY(cuDeviceGet);
  *device = ordinal;
  return 0;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  FAKE_ENTRY(cuDeviceGetAttribute);
  int cc = envInt("FAKE_CUDA_CC", 80);
  if (attribute == 75)
    *value = cc / 10;
  else if (attribute == 76)
    *value = cc % 10;
  else
    return 1;
  return 0;
}

static int context;

CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) {
  (void)device;
  FAKE_ENTRY(cuDevicePrimaryCtxRetain);
  *ctx = &context;
  return 0;
}

CUresult cuCtxSetCurrent(void *ctx) {
  FAKE_ENTRY(cuCtxSetCurrent);
  return ctx == &context ? 0 : 1;
}

CUresult cuCtxSynchronize(void) {
  FAKE_ENTRY(cuCtxSynchronize);
  return 0;
}

// --- Modules ---------------------------------------------------------------

typedef struct Module {
  char tag[32];
} Module;

CUresult cuModuleLoadData(void **module, const void *image) {
  FAKE_ENTRY(cuModuleLoadData);
  const char *bytes = (const char *)image;
  Module *m = calloc(1, sizeof(Module));
  size_t i = 0;
  for (; i < sizeof(m->tag) - 1 && bytes[i] > ' ' && bytes[i] <= '~' &&
         bytes[i] != ';';
       ++i)
    m->tag[i] = bytes[i];
  printf("fake: cuModuleLoadData '%s'%s\n", m->tag,
         ((uintptr_t)image % 8) ? " (misaligned)" : "");
  if (strncmp(m->tag, "BADARCH", 7) == 0) {
    free(m);
    return 209;
  }
  *module = m;
  return 0;
}

CUresult cuModuleUnload(void *module) {
  FAKE_ENTRY(cuModuleUnload);
  printf("fake: cuModuleUnload '%s'\n", ((Module *)module)->tag);
  free(module);
  return 0;
}

// fake_add, then (with FAKE_CUDA_ANY_KERNEL=1) any other name asked for: a
// kernel that does nothing, so that compiled libraries run their launch
// sequence.
static const char *kernels[512] = {"fake_add"};
static size_t numKernels = 1;

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  (void)module;
  FAKE_ENTRY(cuModuleGetFunction);
  for (size_t i = 0; i < numKernels; ++i)
    if (strcmp(name, kernels[i]) == 0) {
      *function = (void *)&kernels[i];
      return 0;
    }
  if (!getenv("FAKE_CUDA_ANY_KERNEL") || numKernels == 512)
    return 500;
  kernels[numKernels] = strdup(name);
  *function = (void *)&kernels[numKernels++];
  return 0;
}

// Stream capture: launches on a capturing stream are recorded, not run, and
// a graph launch runs them again with the recorded arguments.
typedef struct {
  const float *a, *b;
  float *c;
  int32_t n;
} AddArgs;
typedef struct {
  AddArgs launches[1024]; // n < 0: a kernel that does nothing
  int count;
} Graph;
static Graph *capturing;

static void fakeAdd(AddArgs args) {
  if (args.n < 0)
    return;
  for (int32_t i = 0; i < args.n; ++i)
    args.c[i] = args.a[i] + args.b[i];
}

#ifndef FAKE_CUDA_OMIT_LAUNCH
// fake_add(const float *a, const float *b, float *c, int32_t n).
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  (void)stream;
  (void)extra;
  FAKE_ENTRY(cuLaunchKernel);
  AddArgs args = {0, 0, 0, -1};
  if (function == (void *)&kernels[0])
    args = (AddArgs){*(const float **)params[0], *(const float **)params[1],
                     *(float **)params[2], *(int32_t *)params[3]};
  if (capturing) {
    printf("fake: captured %s\n", *(const char **)function);
    if (capturing->count == 1024)
      return 999;
    capturing->launches[capturing->count++] = args;
    return 0;
  }
  printf("fake: launch %s grid %ux%ux%u block %ux%ux%u smem %u\n",
         *(const char **)function, gx, gy, gz, bx, by, bz, smem);
  fakeAdd(args);
  return 0;
}
#endif

CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)stream;
  FAKE_ENTRY(cuStreamBeginCapture_v2);
  printf("fake: cuStreamBeginCapture_v2 mode %d\n", mode);
  capturing = calloc(1, sizeof(Graph));
  return 0;
}

CUresult cuStreamEndCapture(void *stream, void **graph) {
  (void)stream;
  Graph *g = capturing;
  capturing = NULL;
  if (failing("cuStreamEndCapture")) {
    free(g);
    return failCode("cuStreamEndCapture");
  }
  printf("fake: cuStreamEndCapture (%d launches)\n", g->count);
  *graph = g;
  return 0;
}

CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags) {
  (void)flags;
  FAKE_ENTRY(cuGraphInstantiateWithFlags);
  *exec = graph;
  return 0;
}

CUresult cuGraphLaunch(void *exec, void *stream) {
  (void)stream;
  FAKE_ENTRY(cuGraphLaunch);
  Graph *g = exec;
  printf("fake: cuGraphLaunch (%d launches)\n", g->count);
  for (int i = 0; i < g->count; ++i)
    fakeAdd(g->launches[i]);
  return 0;
}

CUresult cuGraphExecDestroy(void *exec) {
  (void)exec; // the graph itself owns the launches
  FAKE_ENTRY(cuGraphExecDestroy);
  return 0;
}

CUresult cuGraphDestroy(void *graph) {
  FAKE_ENTRY(cuGraphDestroy);
  printf("fake: cuGraphDestroy\n");
  free(graph);
  return 0;
}

// --- Streams and events ----------------------------------------------------

CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  FAKE_ENTRY(cuStreamCreate);
  if (getenv("FAKE_CUDA_TRACE_STREAMS"))
    printf("fake: cuStreamCreate\n");
  *stream = malloc(1);
  return 0;
}

CUresult cuStreamDestroy_v2(void *stream) {
  FAKE_ENTRY(cuStreamDestroy_v2);
  free(stream);
  return 0;
}

CUresult cuStreamSynchronize(void *stream) {
  (void)stream;
  FAKE_ENTRY(cuStreamSynchronize);
  if (getenv("FAKE_CUDA_TRACE_STREAMS"))
    printf("fake: cuStreamSynchronize\n");
  return 0;
}

CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  (void)stream, (void)event, (void)flags;
  FAKE_ENTRY(cuStreamWaitEvent);
  return 0;
}

CUresult cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  FAKE_ENTRY(cuEventCreate);
  *event = malloc(1);
  return 0;
}

CUresult cuEventDestroy_v2(void *event) {
  FAKE_ENTRY(cuEventDestroy_v2);
  free(event);
  return 0;
}

CUresult cuEventRecord(void *event, void *stream) {
  (void)event, (void)stream;
  FAKE_ENTRY(cuEventRecord);
  return 0;
}

CUresult cuEventSynchronize(void *event) {
  (void)event;
  FAKE_ENTRY(cuEventSynchronize);
  return 0;
}

// --- Memory ----------------------------------------------------------------

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  FAKE_ENTRY(cuMemAlloc_v2);
  printf("fake: cuMemAlloc_v2 %zu bytes\n", bytes);
  *pointer = (CUdeviceptr)(uintptr_t)malloc(bytes);
  return 0;
}

CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned flags) {
  (void)flags;
  FAKE_ENTRY(cuMemAllocManaged);
  printf("fake: cuMemAllocManaged %zu bytes\n", bytes);
  *pointer = (CUdeviceptr)(uintptr_t)malloc(bytes);
  return 0;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  FAKE_ENTRY(cuMemFree_v2);
  printf("fake: cuMemFree_v2\n");
  free((void *)(uintptr_t)pointer);
  return 0;
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       void *stream) {
  (void)stream;
  FAKE_ENTRY(cuMemcpyAsync);
  if (getenv("FAKE_CUDA_TRACE_COPIES"))
    printf("fake: copy DtoD %zu bytes\n", bytes);
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  FAKE_ENTRY(cuMemcpyHtoD_v2);
  if (getenv("FAKE_CUDA_TRACE_COPIES"))
    printf("fake: copy HtoD %zu bytes\n", bytes);
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return 0;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  FAKE_ENTRY(cuMemcpyDtoH_v2);
  if (getenv("FAKE_CUDA_TRACE_COPIES"))
    printf("fake: copy DtoH %zu bytes\n", bytes);
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                          void *stream) {
  (void)stream;
  FAKE_ENTRY(cuMemsetD32Async);
  for (size_t i = 0; i < count; ++i)
    ((uint32_t *)(uintptr_t)dst)[i] = value;
  return 0;
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          void *stream) {
  (void)stream;
  FAKE_ENTRY(cuMemsetD16Async);
  for (size_t i = 0; i < count; ++i)
    ((uint16_t *)(uintptr_t)dst)[i] = value;
  return 0;
}
