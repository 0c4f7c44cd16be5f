//===- Graphs.cpp - a run captured once, replayed as one CUDA graph -------===//
//
// A compiled model's run is a fixed sequence of kernel launches on the
// runtime's one stream, over buffers at fixed addresses (inputs and outputs
// kept by the wrapper, the activation arena, the weights). Captured once
// with stream capture, it replays with a single cuGraphLaunch instead of
// one launch call per kernel. The buffers the captured run frees belong to
// the graph until it is destroyed.
//
//===----------------------------------------------------------------------===//

#include "Graphs.h"
#include "DeviceMemory.h"

#include "CudaDriver.h"
#include "mp/mlir_abi.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

using namespace mp;
using namespace mp::cuda;

struct mp_cuda_graph {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  /// Buffers the captured run freed: its kernels use them on every launch.
  std::vector<void *> buffers;
};

namespace {

/// The capture in progress (one per process: captures use the one stream).
struct Capture {
  std::mutex mutex;
  bool active = false;
  std::vector<void *> freed;
};

Capture &capture() {
  static Capture *c = new Capture;
  return *c;
}

void releaseBuffers(std::vector<void *> &buffers) {
  for (void *buffer : buffers)
    mp_cuda_free(buffer);
  buffers.clear();
}

} // namespace

bool mp::capturing() {
  Capture &c = capture();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.active;
}

bool mp::deferFreeToCapture(void *device) {
  Capture &c = capture();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.active || !device)
    return false;
  c.freed.push_back(device);
  return true;
}

extern "C" int mp_cuda_graphs_enabled(void) {
  static const bool enabled = [] {
    const char *value = std::getenv("MP_CUDA_GRAPHS");
    return value && *value && std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

extern "C" mp_status mp_cuda_capture_begin(void) {
  void *stream = mgpuStreamCreate();
  if (!stream || !enter())
    return stickyStatus();
  Capture &c = capture();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.active)
      return setError(MP_ERROR_INVALID, "mp_cuda_capture_begin: a capture "
                                        "is already in progress");
  }
  if (!check(driver().cuStreamBeginCapture_v2(static_cast<CUstream>(stream),
                                              CU_STREAM_CAPTURE_MODE_RELAXED),
             [] { return std::string("cuStreamBeginCapture_v2"); }))
    return stickyStatus();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.active = true;
  return MP_OK;
}

extern "C" mp_cuda_graph *mp_cuda_capture_end(void) {
  Capture &c = capture();
  auto graph = new mp_cuda_graph;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.active) {
      delete graph;
      setError(MP_ERROR_INVALID, "mp_cuda_capture_end: no capture");
      return nullptr;
    }
    c.active = false;
    graph->buffers.swap(c.freed);
  }
  void *stream = mgpuStreamCreate();
  // A capture ends even after a failure inside it (the stream must leave
  // capture mode); the failure is then reported and nothing is kept.
  CUresult ended =
      driver().cuStreamEndCapture(static_cast<CUstream>(stream), &graph->graph);
  bool ok = stickyStatus() == MP_OK &&
            check(ended, [] { return std::string("cuStreamEndCapture"); }) &&
            check(driver().cuGraphInstantiateWithFlags(&graph->exec,
                                                       graph->graph, 0),
                  [] { return std::string("cuGraphInstantiateWithFlags"); });
  if (!ok) {
    mp_cuda_graph_destroy(graph);
    return nullptr;
  }
  return graph;
}

extern "C" void mp_cuda_graph_launch(mp_cuda_graph *graph) {
  if (!graph || !enter())
    return;
  if (check(driver().cuGraphLaunch(graph->exec,
                                   static_cast<CUstream>(mgpuStreamCreate())),
            [] { return std::string("cuGraphLaunch"); }))
    noteQueuedWork();
}

extern "C" void mp_cuda_graph_destroy(mp_cuda_graph *graph) {
  if (!graph)
    return;
  if (graph->exec)
    driver().cuGraphExecDestroy(graph->exec);
  if (graph->graph)
    driver().cuGraphDestroy(graph->graph);
  releaseBuffers(graph->buffers);
  delete graph;
}
