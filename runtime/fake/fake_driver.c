// The fake CUDA drivers' shared core: a libcuda.so.1 without a GPU, which
// the mp runtime loads through MP_CUDA_DRIVER like the real driver. Two
// flavours include this file (it is not compiled on its own):
//   test/Runtime/Inputs/fake_cuda.c  the tests' driver: host malloc, one
//                                    kernel (fake_add), captured graphs
//   python/mp/emu/emu_driver.c       the PTX emulator's driver: one memory
//                                    mapping, launches run by the emulator
// Every driver entry point the runtime uses is defined here once, with the
// signature of runtime/lib/CudaSymbols.def (a mismatch does not compile):
// a new one is added there and here. What differs between the flavours is
// left to the hooks declared below, which the flavour defines after
// including this file. Entry points missing from a flavour's build make
// the runtime fail to load the driver, naming them.
//
// Environment, with the flavour's prefix P (FakeFlavour::envPrefix):
//   P CC             compute capability as XY (default: the flavour's)
//   P DEVICES        number of devices (default 1)
//   P FAIL           the entry point that fails (e.g. cuMemAlloc_v2)
//   P FAIL_CODE      its CUresult (default: out of memory for cuMemAlloc*,
//                    CUDA_ERROR_UNKNOWN otherwise)
//   P TRACE_STREAMS  print stream creations and synchronizations
//   P TRACE_COPIES   print copies (direction and bytes)
//   P TRACE_GRAPHS   print graph instantiations and updates
// Built with -DFAKE_CUDA_OMIT_GRAPH_UPDATE the driver lacks
// cuGraphExecUpdate_v2, as those older than CUDA 12 do.
// Prints go to stdout, each line starting with the flavour's prefix.
//
// No CUDA headers: the types are those of the runtime's CudaDriver.h.

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;    // defined by the flavour
typedef struct CUfunc_st *CUfunction; // defined by the flavour
typedef struct CUstream_st *CUstream; // never dereferenced
typedef struct CUevent_st *CUevent;   // never dereferenced
typedef struct CUgraph_st *CUgraph;   // defined by the flavour
typedef struct CUgraphExec_st *CUgraphExec; // defined here
typedef struct CUgraphNode_st *CUgraphNode; // never dereferenced
typedef struct {
  int result;
  CUgraphNode errorNode, errorFromNode;
} CUgraphExecUpdateResultInfo;

#define MP_CUDA_SYMBOL(name, params) CUresult name params;
#include "../lib/CudaSymbols.def"

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNoDevice = 100,
  kNoBinaryForGpu = 209,
  kNotFound = 500,
  kLaunchFailed = 719,
  kNotSupported = 801,
  kGraphExecUpdateFailure = 910,
  kUnknown = 999,
};
/// CUgraphExecUpdateResult: the graph has other nodes.
enum { kUpdateTopologyChanged = 2 };

// --- What a flavour defines ------------------------------------------------

typedef struct FakeFlavour {
  /// Starts the names of the environment variables (see above).
  const char *envPrefix;
  /// Starts every printed line.
  const char *printPrefix;
  /// Whether module loads, memory calls and launches are printed (the
  /// tests check them), not only the traces asked for.
  int printCalls;
  /// The compute capability (XY) reported by default.
  int defaultCc;
} FakeFlavour;

static const FakeFlavour *fakeFlavour(void);

/// cuInit after the failure injection.
static CUresult fakeInit(void);

/// Device memory: `bytes` (> 0 for the runtime) at *pointer; freeing;
/// whether [pointer, pointer + bytes) is device memory copies may use.
static CUresult fakeAlloc(CUdeviceptr *pointer, size_t bytes);
static CUresult fakeFree(CUdeviceptr pointer);
static int fakeIsDeviceMemory(CUdeviceptr pointer, size_t bytes);

/// Modules, their functions, and launches (`dims`: grid x, y, z then block
/// x, y, z).
static CUresult fakeModuleLoad(CUmodule *module, const void *image);
static CUresult fakeModuleUnload(CUmodule module);
static CUresult fakeModuleGetFunction(CUfunction *function, CUmodule module,
                                      const char *name);
// (Unused where cuLaunchKernel is left out.)
__attribute__((unused)) static CUresult
fakeLaunch(CUfunction function, const unsigned dims[6], unsigned sharedBytes,
           CUstream stream, void **params, void **extra);

/// Stream capture and graphs. fakeCaptureEnd runs even when the failure
/// injection fails cuStreamEndCapture (with graph NULL): the stream leaves
/// capture mode either way.
static CUresult fakeCaptureBegin(CUstream stream, int mode);
static CUresult fakeCaptureEnd(CUstream stream, CUgraph *graph);
/// A graph launch runs the nodes of the graph the executable graph was
/// instantiated from or last updated with.
static CUresult fakeGraphLaunch(CUgraph graph, CUstream stream);
static CUresult fakeGraphDestroy(CUgraph graph);
/// Whether an executable graph of `from` can be updated with `to`: the same
/// nodes in the same order, kernels and copies differing in parameters
/// only (cuGraphExecUpdate's topology rule).
static int fakeGraphsMatch(CUgraph from, CUgraph to);

/// An asynchronous copy (`src` set) or fill (`count` elements of
/// `elementBytes`, 2 or 4, set to `value`) queued on a stream.
typedef struct FakeMemoryNode {
  CUdeviceptr dst, src;
  size_t bytes;
  unsigned value;
  size_t count, elementBytes;
} FakeMemoryNode;
/// Whether a stream is being captured: copies and fills queued then are
/// given to fakeRecordMemoryNode, as real capture records them, not run.
static int fakeCapturing(void);
/// Records `node` into the graph being captured, or fails the call (a
/// flavour whose graphs hold only launches).
static CUresult fakeRecordMemoryNode(const FakeMemoryNode *node);

// --- Helpers for the flavours ----------------------------------------------

/// The value of environment variable <prefix><name>, or NULL.
static const char *fakeEnv(const char *name) {
  char full[128];
  snprintf(full, sizeof full, "%s%s", fakeFlavour()->envPrefix, name);
  return getenv(full);
}

static int fakeEnvInt(const char *name, int fallback) {
  const char *value = fakeEnv(name);
  return value ? atoi(value) : fallback;
}

static void printLine(const char *fmt, va_list args) {
  fputs(fakeFlavour()->printPrefix, stdout);
  vprintf(fmt, args);
  fputc('\n', stdout);
}

/// Prints "<printPrefix><message>" when the flavour prints its calls.
__attribute__((format(printf, 1, 2))) static void fakePrint(const char *fmt,
                                                            ...) {
  if (!fakeFlavour()->printCalls)
    return;
  va_list args;
  va_start(args, fmt);
  printLine(fmt, args);
  va_end(args);
}

/// Prints "<printPrefix><message>" when <envPrefix><what> is set.
__attribute__((format(printf, 2, 3))) static void
fakeTrace(const char *what, const char *fmt, ...) {
  if (!fakeEnv(what))
    return;
  va_list args;
  va_start(args, fmt);
  printLine(fmt, args);
  va_end(args);
}

static char lastError[4096];

/// The text cuGetErrorString gives for a launch failure or a missing binary
/// until the next call; NULL clears it (a flavour that sets it clears it
/// at every module load and launch).
__attribute__((unused)) static void fakeSetError(const char *message) {
  snprintf(lastError, sizeof lastError, "%s", message ? message : "");
}

// --- Failure injection -----------------------------------------------------

static int failing(const char *name) {
  const char *fail = fakeEnv("FAIL");
  return fail && strcmp(fail, name) == 0;
}

static CUresult failCode(const char *name) {
  const char *code = fakeEnv("FAIL_CODE");
  if (code)
    return atoi(code);
  return strncmp(name, "cuMemAlloc", 10) == 0 ? kOutOfMemory : kUnknown;
}

#define FAKE_ENTRY(name)                                                       \
  do {                                                                         \
    if (failing(#name))                                                        \
      return failCode(#name);                                                  \
  } while (0)

// --- Errors, device, context -----------------------------------------------

typedef struct {
  CUresult code;
  const char *name, *text;
} ErrorInfo;

static const ErrorInfo errors[] = {
    {kSuccess, "CUDA_SUCCESS", "no error"},
    {kInvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {kOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {kNoDevice, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {kNoBinaryForGpu, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {kNotFound, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {kLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {kNotSupported, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {kGraphExecUpdateFailure, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
     "the graph update was not performed because it included changes which "
     "violated constraints specific to instantiated graph update"},
    {kUnknown, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/// The entry of `error`, or NULL for a code the fake does not know.
static const ErrorInfo *errorInfo(CUresult error) {
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); ++i)
    if (errors[i].code == error)
      return &errors[i];
  return NULL;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  const ErrorInfo *info = errorInfo(error);
  *name = info ? info->name : NULL;
  return info ? kSuccess : kInvalidValue;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  if ((error == kLaunchFailed || error == kNoBinaryForGpu) && lastError[0]) {
    *text = lastError;
    return kSuccess;
  }
  const ErrorInfo *info = errorInfo(error);
  *text = info ? info->text : NULL;
  return info ? kSuccess : kInvalidValue;
}

CUresult cuInit(unsigned int flags) {
  (void)flags;
  FAKE_ENTRY(cuInit);
  return fakeInit();
}

CUresult cuDeviceGetCount(int *count) {
  FAKE_ENTRY(cuDeviceGetCount);
  *count = fakeEnvInt("DEVICES", 1);
  return kSuccess;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  FAKE_ENTRY(cuDeviceGet);
  *device = ordinal;
  return ordinal >= 0 && ordinal < fakeEnvInt("DEVICES", 1) ? kSuccess
                                                            : kInvalidValue;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  (void)device;
  FAKE_ENTRY(cuDeviceGetAttribute);
  int cc = fakeEnvInt("CC", fakeFlavour()->defaultCc);
  if (attribute == 75) // compute capability major
    *value = cc / 10;
  else if (attribute == 76) // minor
    *value = cc % 10;
  else
    return kInvalidValue;
  return kSuccess;
}

static int context;

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice device) {
  (void)device;
  FAKE_ENTRY(cuDevicePrimaryCtxRetain);
  *ctx = (CUcontext)&context;
  return kSuccess;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  FAKE_ENTRY(cuCtxSetCurrent);
  return ctx == (CUcontext)&context ? kSuccess : kInvalidValue;
}

// Launches run to completion when they are made: every wait is a no-op.
CUresult cuCtxSynchronize(void) {
  FAKE_ENTRY(cuCtxSynchronize);
  return kSuccess;
}

// --- Modules and launches --------------------------------------------------

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  FAKE_ENTRY(cuModuleLoadData);
  return fakeModuleLoad(module, image);
}

CUresult cuModuleUnload(CUmodule module) {
  FAKE_ENTRY(cuModuleUnload);
  return fakeModuleUnload(module);
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  FAKE_ENTRY(cuModuleGetFunction);
  return fakeModuleGetFunction(function, module, name);
}

// Built with -DFAKE_CUDA_OMIT_LAUNCH the driver lacks cuLaunchKernel, like
// one that is too old.
#ifndef FAKE_CUDA_OMIT_LAUNCH
CUresult cuLaunchKernel(CUfunction function, unsigned int gridX,
                        unsigned int gridY, unsigned int gridZ,
                        unsigned int blockX, unsigned int blockY,
                        unsigned int blockZ, unsigned int sharedBytes,
                        CUstream stream, void **params, void **extra) {
  FAKE_ENTRY(cuLaunchKernel);
  unsigned dims[6] = {gridX, gridY, gridZ, blockX, blockY, blockZ};
  return fakeLaunch(function, dims, sharedBytes, stream, params, extra);
}
#endif

// --- Stream capture and graphs ---------------------------------------------

CUresult cuStreamBeginCapture_v2(CUstream stream, int mode) {
  FAKE_ENTRY(cuStreamBeginCapture_v2);
  return fakeCaptureBegin(stream, mode);
}

CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  if (failing("cuStreamEndCapture")) {
    fakeCaptureEnd(stream, NULL);
    return failCode("cuStreamEndCapture");
  }
  return fakeCaptureEnd(stream, graph);
}

// An executable graph runs the nodes of a graph (they do not change after
// the capture). The graph it runs lives as long as it does: one destroyed
// before is released with it (or when an update replaces it).
struct CUgraphExec_st {
  CUgraph graph;
  int ownsGraph;
  CUgraphExec next; // the live executable graphs
};
static CUgraphExec liveExecs;

static void dropExecGraph(CUgraphExec exec) {
  if (exec->ownsGraph)
    fakeGraphDestroy(exec->graph);
  exec->graph = NULL;
  exec->ownsGraph = 0;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                     unsigned long long flags) {
  (void)flags;
  FAKE_ENTRY(cuGraphInstantiateWithFlags);
  CUgraphExec e = calloc(1, sizeof(*e));
  if (!e)
    return kOutOfMemory;
  fakeTrace("TRACE_GRAPHS", "cuGraphInstantiateWithFlags");
  e->graph = graph;
  e->next = liveExecs;
  liveExecs = e;
  *exec = e;
  return kSuccess;
}

#ifndef FAKE_CUDA_OMIT_GRAPH_UPDATE
CUresult cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph,
                              CUgraphExecUpdateResultInfo *info) {
  FAKE_ENTRY(cuGraphExecUpdate_v2);
  if (!exec || !graph || !info)
    return kInvalidValue;
  memset(info, 0, sizeof(*info));
  if (!fakeGraphsMatch(exec->graph, graph)) {
    fakeTrace("TRACE_GRAPHS", "cuGraphExecUpdate_v2: topology changed");
    info->result = kUpdateTopologyChanged;
    return kGraphExecUpdateFailure;
  }
  fakeTrace("TRACE_GRAPHS", "cuGraphExecUpdate_v2: updated");
  dropExecGraph(exec);
  exec->graph = graph;
  return kSuccess;
}
#endif

CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  FAKE_ENTRY(cuGraphLaunch);
  return fakeGraphLaunch(exec->graph, stream);
}

CUresult cuGraphExecDestroy(CUgraphExec exec) {
  FAKE_ENTRY(cuGraphExecDestroy);
  for (CUgraphExec *e = &liveExecs; *e; e = &(*e)->next)
    if (*e == exec) {
      *e = exec->next;
      break;
    }
  dropExecGraph(exec);
  free(exec);
  return kSuccess;
}

CUresult cuGraphDestroy(CUgraph graph) {
  FAKE_ENTRY(cuGraphDestroy);
  for (CUgraphExec e = liveExecs; e; e = e->next)
    if (e->graph == graph) {
      e->ownsGraph = 1;
      return kSuccess;
    }
  return fakeGraphDestroy(graph);
}

// --- Streams and events (handles only: work runs when it is queued) --------

CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  (void)flags;
  FAKE_ENTRY(cuStreamCreate);
  fakeTrace("TRACE_STREAMS", "cuStreamCreate");
  *stream = malloc(1);
  return kSuccess;
}

CUresult cuStreamDestroy_v2(CUstream stream) {
  FAKE_ENTRY(cuStreamDestroy_v2);
  free(stream);
  return kSuccess;
}

CUresult cuStreamSynchronize(CUstream stream) {
  (void)stream;
  FAKE_ENTRY(cuStreamSynchronize);
  fakeTrace("TRACE_STREAMS", "cuStreamSynchronize");
  return kSuccess;
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  (void)stream, (void)event, (void)flags;
  FAKE_ENTRY(cuStreamWaitEvent);
  return kSuccess;
}

CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  (void)flags;
  FAKE_ENTRY(cuEventCreate);
  *event = malloc(1);
  return kSuccess;
}

CUresult cuEventDestroy_v2(CUevent event) {
  FAKE_ENTRY(cuEventDestroy_v2);
  free(event);
  return kSuccess;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  (void)event, (void)stream;
  FAKE_ENTRY(cuEventRecord);
  return kSuccess;
}

CUresult cuEventSynchronize(CUevent event) {
  (void)event;
  FAKE_ENTRY(cuEventSynchronize);
  return kSuccess;
}

// --- Memory ----------------------------------------------------------------

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  FAKE_ENTRY(cuMemAlloc_v2);
  fakePrint("cuMemAlloc_v2 %zu bytes", bytes);
  return fakeAlloc(pointer, bytes);
}

CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes,
                           unsigned int flags) {
  (void)flags;
  FAKE_ENTRY(cuMemAllocManaged);
  fakePrint("cuMemAllocManaged %zu bytes", bytes);
  return fakeAlloc(pointer, bytes);
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  FAKE_ENTRY(cuMemFree_v2);
  fakePrint("cuMemFree_v2");
  return fakeFree(pointer);
}

/// Runs a copy or fill (at once, or when a graph holding it is launched).
static CUresult fakeRunMemoryNode(const FakeMemoryNode *node) {
  if (node->src) {
    memmove((void *)(uintptr_t)node->dst, (const void *)(uintptr_t)node->src,
            node->bytes);
    return kSuccess;
  }
  for (size_t i = 0; i < node->count; ++i)
    if (node->elementBytes == 4)
      ((uint32_t *)(uintptr_t)node->dst)[i] = node->value;
    else
      ((uint16_t *)(uintptr_t)node->dst)[i] = (uint16_t)node->value;
  return kSuccess;
}

/// Checks `node`'s memory, then runs it or, while a stream is captured,
/// records it.
static CUresult queueMemoryNode(const FakeMemoryNode *node) {
  if (!fakeIsDeviceMemory(node->dst, node->bytes) ||
      (node->src && !fakeIsDeviceMemory(node->src, node->bytes)))
    return kInvalidValue;
  if (node->src)
    fakeTrace("TRACE_COPIES", "copy DtoD %zu bytes", node->bytes);
  if (fakeCapturing())
    return fakeRecordMemoryNode(node);
  return fakeRunMemoryNode(node);
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream stream) {
  (void)stream;
  FAKE_ENTRY(cuMemcpyAsync);
  FakeMemoryNode node = {dst, src, bytes, 0, 0, 0};
  return queueMemoryNode(&node);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  FAKE_ENTRY(cuMemcpyHtoD_v2);
  if (!fakeIsDeviceMemory(dst, bytes))
    return kInvalidValue;
  fakeTrace("TRACE_COPIES", "copy HtoD %zu bytes", bytes);
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return kSuccess;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  FAKE_ENTRY(cuMemcpyDtoH_v2);
  if (!fakeIsDeviceMemory(src, bytes))
    return kInvalidValue;
  fakeTrace("TRACE_COPIES", "copy DtoH %zu bytes", bytes);
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return kSuccess;
}

/// Sets `count` elements of `size` bytes (2 or 4) at `dst` to `value`.
static CUresult fill(CUdeviceptr dst, unsigned value, size_t count,
                     size_t size) {
  FakeMemoryNode node = {dst, 0, size * count, value, count, size};
  return queueMemoryNode(&node);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count,
                          CUstream stream) {
  (void)stream;
  FAKE_ENTRY(cuMemsetD32Async);
  return fill(dst, value, count, 4);
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          CUstream stream) {
  (void)stream;
  FAKE_ENTRY(cuMemsetD16Async);
  return fill(dst, value, count, 2);
}
