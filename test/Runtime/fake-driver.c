// The CUDA side of the runtime against a fake driver (Inputs/fake_cuda.c):
// initialization failures, picking the image of an MPGPUBIN container,
// the sticky status of failing mgpu calls, and a launch end to end.
//
// RUN: %host_cc -shared -fPIC %S/Inputs/fake_cuda.c -o %t.fake.so
// RUN: %host_cc -DFAKE_CUDA_OMIT_LAUNCH -shared -fPIC %S/Inputs/fake_cuda.c -o %t.old.so
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_runtime_include -I%S/Inputs \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib -o %t
//
// RUN: env MP_CUDA_DRIVER=%t.fake.so %t init | FileCheck %s --check-prefix=INIT
// INIT: init: 0 arch=sm_80
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_CC=90 %t init | FileCheck %s --check-prefix=INIT90
// INIT90: init: 0 arch=sm_90
//
// Zero devices, cuInit failing, a too old driver, another failing call.
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_DEVICES=0 not %t init | FileCheck %s --check-prefix=NODEV
// NODEV: init: 4 arch= the CUDA driver loaded but reports no CUDA device
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_FAIL=cuInit FAKE_CUDA_FAIL_CODE=100 not %t init \
// RUN:   | FileCheck %s --check-prefix=CUINIT
// CUINIT: init: 4 arch= cuInit(0) failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected); no usable CUDA device
// RUN: env MP_CUDA_DRIVER=%t.old.so not %t init | FileCheck %s --check-prefix=OLD
// OLD: init: 3 arch= the CUDA driver {{.*}}.old.so lacks cuLaunchKernel: it is too old (or not NVIDIA's); install a current NVIDIA driver
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_FAIL=cuDevicePrimaryCtxRetain not %t init \
// RUN:   | FileCheck %s --check-prefix=CTX
// CTX: init: 6 arch= cuDevicePrimaryCtxRetain(device 0) failed: CUDA_ERROR_UNKNOWN (unknown error)
//
// Image selection: exact cubin, same major, PTX, nothing.
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_CC=90 %t load cubin:80,cubin:90,ptx:70 \
// RUN:   | FileCheck %s --check-prefix=EXACT
// EXACT: fake: cuModuleLoadData 'cubin-sm90'{{$}}
// EXACT-NEXT: module: loaded
// EXACT-NEXT: status: 0
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_CC=89 %t load cubin:80,cubin:86,cubin:90,ptx:89 \
// RUN:   | FileCheck %s --check-prefix=MAJOR
// MAJOR: fake: cuModuleLoadData 'cubin-sm86'
// MAJOR-NEXT: module: loaded
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_CC=100 %t load cubin:80,ptx:80,cubin:90,ptx:90 \
// RUN:   | FileCheck %s --check-prefix=PTX
// PTX: fake: cuModuleLoadData 'ptx-sm90'
// PTX-NEXT: module: loaded
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_CC=75 not %t load cubin:80,cubin:90 \
// RUN:   | FileCheck %s --check-prefix=ARCH
// ARCH-NOT: fake: cuModuleLoadData
// ARCH: module: null
// ARCH-NEXT: status: 5 the library has kernels for sm_80, sm_90 but device 0 is sm_75 (compile with --gpu sm_75)
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_CC=75 not %t load ptx:80 | FileCheck %s --check-prefix=ARCHPTX
// ARCHPTX: status: 5 the library has kernels for sm_80 (PTX) but device 0 is sm_75 (compile with --gpu sm_75)
//
// Not a container: handed to the driver as is, and its errors mapped.
// RUN: env MP_CUDA_DRIVER=%t.fake.so %t raw RAWIMAGE | FileCheck %s --check-prefix=RAW
// RAW: fake: cuModuleLoadData 'RAWIMAGE'
// RAW-NEXT: module: loaded
// RUN: env MP_CUDA_DRIVER=%t.fake.so not %t raw BADARCH | FileCheck %s --check-prefix=BADARCH
// BADARCH: status: 5 cuModuleLoadData(image of 8 bytes) failed: CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available for execution on the device)
// RUN: env MP_CUDA_DRIVER=%t.fake.so not %t truncated | FileCheck %s --check-prefix=TRUNC
// TRUNC: status: 2 the GPU kernel container (MPGPUBIN, 40 bytes) is truncated: rebuild the library with a matching mp-compile
//
// A failing call: the first failure sticks, later calls do nothing.
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_FAIL=cuMemAlloc_v2 not %t alloc-fail \
// RUN:   | FileCheck %s --check-prefix=OOM
// OOM: alloc: null
// OOM-NOT: fake: launch
// OOM: status: 7 cuMemAlloc_v2(1048576 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)
// OOM-NEXT: after take: 0
// RUN: env MP_CUDA_DRIVER=%t.fake.so not %t missing-kernel | FileCheck %s --check-prefix=NOKERNEL
// NOKERNEL: status: 6 cuModuleGetFunction('nope') failed: CUDA_ERROR_NOT_FOUND (named symbol not found)
//
// The happy path; device blocks are reused from the pool.
// RUN: env MP_CUDA_DRIVER=%t.fake.so %t happy | FileCheck %s --check-prefix=HAPPY
// HAPPY: fake: cuModuleLoadData 'cubin-sm80'
// HAPPY-COUNT-3: fake: cuMemAlloc_v2 256 bytes
// HAPPY-NEXT: fake: launch fake_add grid 1x1x1 block 4x1x1 smem 0
// HAPPY-NEXT: c = 11 22 33 44
// HAPPY-NEXT: fake: launch fake_add grid 1x1x1 block 4x1x1 smem 0
// HAPPY-NEXT: c = 11 22 33 44
// HAPPY-NEXT: memset32: 7 7 7 7
// HAPPY-NEXT: memset16: 0x1234 0x1234
// HAPPY-NEXT: fake: cuMemAllocManaged 64 bytes
// HAPPY-NEXT: fake: cuMemFree_v2
// HAPPY-NEXT: fake: cuModuleUnload 'cubin-sm80'
// HAPPY-NEXT: status: 0
//
// Launches share one stream and are not waited for one by one (the copy
// back to the host waits); MP_CUDA_SYNC=1 waits after each launch.
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_TRACE_STREAMS=1 %t happy | FileCheck %s --check-prefix=ASYNC
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_TRACE_STREAMS=1 MP_CUDA_SYNC=1 %t happy | FileCheck %s --check-prefix=SYNC
// ASYNC: fake: cuStreamCreate
// ASYNC-NEXT: fake: launch fake_add
// ASYNC-NEXT: c = 11 22 33 44
// ASYNC-NEXT: fake: launch fake_add
// ASYNC-NEXT: c = 11 22 33 44
// ASYNC: status: 0
// SYNC: fake: cuStreamCreate
// SYNC-NEXT: fake: launch fake_add
// SYNC-NEXT: fake: cuStreamSynchronize
// SYNC-NOT: fake: cuStreamCreate
// SYNC: fake: launch fake_add
// SYNC-NEXT: fake: cuStreamSynchronize

//
// A run captured into a graph: launches are recorded, not run; each graph
// launch runs them on the buffers' current contents; a buffer freed during
// the capture stays allocated until the graph is destroyed. A failing end
// of capture gives no graph and a status naming the call.
// RUN: env MP_CUDA_DRIVER=%t.fake.so %t graph | FileCheck %s --check-prefix=GRAPH
// GRAPH: fake: cuStreamBeginCapture_v2 mode 2
// GRAPH-NEXT: fake: captured fake_add
// GRAPH-NEXT: fake: cuStreamEndCapture (1 launches)
// GRAPH-NEXT: after capture: c = 0 0 0 0, scratch kept: 1
// GRAPH-NEXT: fake: cuGraphLaunch (1 launches)
// GRAPH-NEXT: c = 11 22 33 44
// GRAPH-NEXT: fake: cuGraphLaunch (1 launches)
// GRAPH-NEXT: c = 110 220 330 440
// GRAPH-NEXT: fake: cuGraphDestroy
// GRAPH-NEXT: scratch kept: 0
// GRAPH-NEXT: status: 0
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_FAIL=cuStreamEndCapture not %t graph \
// RUN:   | FileCheck %s --check-prefix=GRAPHFAIL
// GRAPHFAIL: graph: null
// GRAPHFAIL-NEXT: status: 6 cuStreamEndCapture failed: CUDA_ERROR_UNKNOWN (unknown error)
//
// A graph captured again with other arguments (a KV cache's fill level):
// the same launches update the executable graph in place; other launches
// (here two instead of one) instantiate it again, as does a driver without
// cuGraphExecUpdate_v2 (older than CUDA 12) or an update that fails. Each
// replay computes what was last captured.
// RUN: %host_cc -DFAKE_CUDA_OMIT_GRAPH_UPDATE -shared -fPIC %S/Inputs/fake_cuda.c \
// RUN:   -o %t.cuda11.so
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_TRACE_GRAPHS=1 %t graph-update \
// RUN:   | FileCheck %s --check-prefixes=UPDATE,UPDATED
// RUN: env MP_CUDA_DRIVER=%t.cuda11.so FAKE_CUDA_TRACE_GRAPHS=1 %t graph-update \
// RUN:   | FileCheck %s --check-prefixes=UPDATE,REINST
// RUN: env MP_CUDA_DRIVER=%t.fake.so FAKE_CUDA_TRACE_GRAPHS=1 \
// RUN:   FAKE_CUDA_FAIL=cuGraphExecUpdate_v2 %t graph-update \
// RUN:   | FileCheck %s --check-prefixes=UPDATE,REINST
// UPDATE: fake: cuGraphInstantiateWithFlags
// UPDATE: n = 4, 1 launch(es): c = 11 22 33 44
// UPDATE: fake: cuStreamEndCapture (1 launches)
// UPDATED-NEXT: fake: cuGraphExecUpdate_v2: updated
// REINST-NEXT: fake: cuGraphInstantiateWithFlags
// UPDATE-NEXT: fake: cuGraphDestroy
// UPDATE-NEXT: update: 1
// UPDATE: n = 2, 1 launch(es): c = 11 22 0 0
// UPDATE: fake: cuStreamEndCapture (2 launches)
// UPDATED-NEXT: fake: cuGraphExecUpdate_v2: topology changed
// UPDATE-NEXT: fake: cuGraphInstantiateWithFlags
// UPDATE-NEXT: fake: cuGraphDestroy
// UPDATE-NEXT: update: 1
// UPDATE: n = 3, 2 launch(es): c = 11 22 33 0
// UPDATE-NEXT: fake: cuGraphDestroy
// UPDATE-NEXT: status: 0
// RUN: env MP_CUDA_DRIVER=%t.fake.so not %t update-without-capture \
// RUN:   | FileCheck %s --check-prefix=NOCAPTURE
// NOCAPTURE: update: 0
// NOCAPTURE-NEXT: status: 2 mp_cuda_capture_update: no capture

#include "container.h"
#include "mp/mlir_abi.h"
#include "mp/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int report(void) {
  int status = mp_cuda_take_status();
  printf("status: %d %s\n", status, status ? mp_last_error() : "");
  return status;
}

static void *load(const char *spec) {
  size_t size;
  unsigned char *container = buildContainer(spec, &size);
  void *module = mgpuModuleLoad(container, size);
  free(container);
  printf("module: %s\n", module ? "loaded" : "null");
  return module;
}

/// Device buffers for c = a + b: a = 1 2 3 4, b = 10 20 30 40, c.
typedef struct {
  void *a, *b, *c;
} AddBuffers;

static AddBuffers addBuffers(void) {
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  AddBuffers d = {mp_cuda_alloc(sizeof(a)), mp_cuda_alloc(sizeof(b)),
                  mp_cuda_alloc(sizeof(a))};
  mp_cuda_copy_to_device(d.a, a, sizeof(a));
  mp_cuda_copy_to_device(d.b, b, sizeof(b));
  return d;
}

static void freeAddBuffers(AddBuffers d) {
  mp_cuda_free(d.a);
  mp_cuda_free(d.b);
  mp_cuda_free(d.c);
}

/// Runs fake_add on c = a + b through the runtime, as generated code does.
static void add(void *function) {
  AddBuffers d = addBuffers();
  float c[4] = {0};
  int32_t n = 4;
  void *params[] = {&d.a, &d.b, &d.c, &n};
  void *stream = mgpuStreamCreate();
  mgpuLaunchKernel(function, 1, 1, 1, 4, 1, 1, 0, stream, params, NULL, 4);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  mp_cuda_copy_to_host(c, d.c, sizeof(c));
  printf("c = %g %g %g %g\n", c[0], c[1], c[2], c[3]);
  freeAddBuffers(d);
}

/// Captures c = a + b into a graph and replays it twice, changing a.
static int graph(void *function) {
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, c[4] = {0};
  void *da = mp_cuda_alloc(sizeof(a)), *db = mp_cuda_alloc(sizeof(b));
  void *dc = mp_cuda_alloc(sizeof(c));
  mp_cuda_copy_to_device(da, a, sizeof(a));
  mp_cuda_copy_to_device(db, b, sizeof(b));
  mp_cuda_copy_to_device(dc, c, sizeof(c));
  void *scratch = mp_cuda_memref_alloc(64);
  mp_memory_stats before, after;
  mp_cuda_memory_stats(&before);
  int32_t n = 4;
  void *params[] = {&da, &db, &dc, &n};
  void *stream = mgpuStreamCreate();
  mp_cuda_capture_begin();
  mgpuLaunchKernel(function, 1, 1, 1, 4, 1, 1, 0, stream, params, NULL, 4);
  mgpuStreamSynchronize(stream); // skipped while capturing
  mp_cuda_memref_free(scratch);  // kept for the graph
  mp_cuda_graph *g = mp_cuda_capture_end();
  if (!g) {
    printf("graph: null\n");
    return report();
  }
  mp_cuda_copy_to_host(c, dc, sizeof(c));
  mp_cuda_memory_stats(&after);
  printf("after capture: c = %g %g %g %g, scratch kept: %d\n", c[0], c[1], c[2],
         c[3], after.buffer_bytes == before.buffer_bytes);
  for (int round = 0; round < 2; ++round) {
    mp_cuda_graph_launch(g);
    mp_cuda_copy_to_host(c, dc, sizeof(c));
    printf("c = %g %g %g %g\n", c[0], c[1], c[2], c[3]);
    // New inputs in place: the next launch reads them.
    float next[4] = {100, 200, 300, 400};
    mp_cuda_copy_to_device(da, next, sizeof(next));
  }
  mp_cuda_graph_destroy(g);
  mp_cuda_memory_stats(&after);
  printf("scratch kept: %d\n", after.buffer_bytes == before.buffer_bytes);
  mp_cuda_free(da);
  mp_cuda_free(db);
  mp_cuda_free(dc);
  return report();
}

/// Captures c = a + b over `n` elements in `launches` launches, into `g`
/// (updated) or into a new graph.
static mp_cuda_graph *captureAdd(void *function, mp_cuda_graph *g,
                                 void **params, int launches) {
  void *stream = mgpuStreamCreate();
  mp_cuda_capture_begin();
  for (int i = 0; i < launches; ++i)
    mgpuLaunchKernel(function, 1, 1, 1, 4, 1, 1, 0, stream, params, NULL, 4);
  if (!g)
    return mp_cuda_capture_end();
  printf("update: %d\n", mp_cuda_capture_update(g));
  return g;
}

/// Replays c = a + b captured over 4 elements, then captured again over 2
/// (the same launch: an update), then over 3 in two launches.
static int graphUpdate(void *function) {
  AddBuffers d = addBuffers();
  float c[4] = {0};
  int32_t n = 4;
  void *params[] = {&d.a, &d.b, &d.c, &n};
  mp_cuda_graph *g = NULL;
  for (int round = 0; round < 3; ++round) {
    static const int32_t sizes[] = {4, 2, 3};
    n = sizes[round];
    int launches = round == 2 ? 2 : 1;
    g = captureAdd(function, g, params, launches);
    float zero[4] = {0};
    mp_cuda_copy_to_device(d.c, zero, sizeof(zero));
    mp_cuda_graph_launch(g);
    mp_cuda_copy_to_host(c, d.c, sizeof(c));
    printf("n = %d, %d launch(es): c = %g %g %g %g\n", n, launches, c[0], c[1],
           c[2], c[3]);
  }
  mp_cuda_graph_destroy(g);
  freeAddBuffers(d);
  return report();
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "init")) {
    int status = mp_cuda_init();
    printf("init: %d arch=%s %s\n", status, mp_cuda_device_arch(),
           status ? mp_last_error() : "");
    return status;
  }
  if (!strcmp(mode, "load") && argc > 2) {
    void *module = load(argv[2]);
    int status = report();
    mgpuModuleUnload(module);
    return status;
  }
  if (!strcmp(mode, "raw") && argc > 2) {
    void *module = mgpuModuleLoad(argv[2], strlen(argv[2]) + 1);
    printf("module: %s\n", module ? "loaded" : "null");
    return report();
  }
  if (!strcmp(mode, "truncated")) {
    size_t size;
    unsigned char *container = buildContainer("cubin:80", &size);
    // The entry, without its payload.
    void *module = mgpuModuleLoad(
        container, MP_GPU_BINARY_HEADER_SIZE + MP_GPU_BINARY_ENTRY_SIZE);
    free(container);
    printf("module: %s\n", module ? "loaded" : "null");
    return report();
  }
  if (!strcmp(mode, "alloc-fail")) {
    void *module = load("cubin:80");
    void *function = mgpuModuleGetFunction(module, "fake_add");
    void *p = mgpuMemAlloc(1 << 20, NULL, false);
    printf("alloc: %s\n", p ? "ok" : "null");
    // All of these must do nothing now.
    mgpuMemcpy(p, p, 16, NULL);
    mgpuMemset32(p, 0, 4, NULL);
    void *params[] = {&p, &p, &p, &p};
    mgpuLaunchKernel(function, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 4);
    mgpuLaunchKernel(NULL, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 4);
    mgpuMemFree(p, NULL);
    int status = report();
    printf("after take: %d\n", mp_cuda_take_status());
    return status;
  }
  if (!strcmp(mode, "missing-kernel")) {
    void *module = load("cubin:80");
    void *function = mgpuModuleGetFunction(module, "nope");
    mgpuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL, 0);
    return report();
  }
  if (!strcmp(mode, "happy")) {
    void *module = load("cubin:80,cubin:90");
    void *function = mgpuModuleGetFunction(module, "fake_add");
    add(function);
    add(function); // the second run reuses the first one's blocks
    uint32_t words[4];
    uint16_t halves[2];
    void *d = mp_cuda_alloc(sizeof(words));
    mgpuMemset32(d, 7, 4, NULL);
    mgpuMemcpy(words, d, sizeof(words), NULL);
    printf("memset32: %u %u %u %u\n", words[0], words[1], words[2], words[3]);
    mgpuMemset16(d, 0x1234, 2, NULL);
    mgpuMemcpy(halves, d, sizeof(halves), NULL);
    printf("memset16: %#x %#x\n", halves[0], halves[1]);
    mp_cuda_free(d);
    void *managed = mgpuMemAlloc(64, NULL, true);
    mgpuMemFree(managed, NULL);
    void *event = mgpuEventCreate();
    mgpuEventRecord(event, NULL);
    mgpuEventSynchronize(event);
    mgpuEventDestroy(event);
    mgpuModuleUnload(module);
    return report();
  }
  if (!strcmp(mode, "graph")) {
    void *module = load("cubin:80");
    return graph(mgpuModuleGetFunction(module, "fake_add"));
  }
  if (!strcmp(mode, "graph-update")) {
    void *module = load("cubin:80");
    return graphUpdate(mgpuModuleGetFunction(module, "fake_add"));
  }
  if (!strcmp(mode, "update-without-capture")) {
    mp_cuda_init();
    printf("update: %d\n", mp_cuda_capture_update(NULL));
    return report();
  }
  fprintf(stderr,
          "usage: %s init|load SPEC|raw TEXT|truncated|alloc-fail|"
          "missing-kernel|happy|graph|graph-update|"
          "update-without-capture\n",
          argv[0]);
  return 1;
}
