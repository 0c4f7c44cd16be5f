//===- Graphs.cpp - a run captured once, replayed as one CUDA graph -------===//
//
// A compiled model's run is a fixed sequence of kernel launches on the
// runtime's one stream, over buffers at fixed addresses (inputs and outputs
// kept by the wrapper, the activation arena, the weights). Captured once
// with stream capture, it replays with a single cuGraphLaunch instead of
// one launch call per kernel. The buffers the captured run frees belong to
// the graph until it is destroyed. A run whose launch arguments change from
// call to call (a KV cache's fill level) is captured again each time and
// updates the executable graph.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "Errors.h"
#include "Stream.h"
#include "mp/mlir_abi.h"

#include <cstdlib>
#include <cstring>
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

void releaseBuffers(std::vector<void *> &buffers) {
  for (void *buffer : buffers)
    mp_cuda_free(buffer);
  buffers.clear();
}

} // namespace

extern "C" int mp_cuda_graphs_enabled(void) {
  // On unless MP_CUDA_GRAPHS=0: a run that cannot be captured falls back to
  // plain launches.
  static const bool enabled = [] {
    const char *value = std::getenv("MP_CUDA_GRAPHS");
    return !value || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

extern "C" mp_status mp_cuda_capture_begin(void) {
  CUstream stream = runStream();
  if (!stream || !enter())
    return stickyStatus();
  if (capturing())
    return setError(MP_ERROR_INVALID, "mp_cuda_capture_begin: a capture is "
                                      "already in progress");
  if (!check(driver().cuStreamBeginCapture_v2(stream,
                                              CU_STREAM_CAPTURE_MODE_RELAXED),
             [] { return std::string("cuStreamBeginCapture_v2"); }))
    return stickyStatus();
  captureStarted();
  return MP_OK;
}

extern "C" mp_cuda_graph *mp_cuda_capture_end(void) {
  auto graph = new mp_cuda_graph;
  if (!captureEnded(graph->buffers)) {
    delete graph;
    setError(MP_ERROR_INVALID, "mp_cuda_capture_end: no capture");
    return nullptr;
  }
  CUstream stream = runStream();
  // A capture ends even after a failure inside it (the stream must leave
  // capture mode); the failure is then reported and nothing is kept.
  CUresult ended = driver().cuStreamEndCapture(stream, &graph->graph);
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

extern "C" int mp_cuda_capture_update(mp_cuda_graph *graph) {
  std::vector<void *> buffers;
  if (!graph || !captureEnded(buffers)) {
    recordFailure(MP_ERROR_INVALID, "mp_cuda_capture_update: no capture");
    return 0;
  }
  CUgraph captured = nullptr;
  CUresult ended = driver().cuStreamEndCapture(runStream(), &captured);
  bool ok = stickyStatus() == MP_OK &&
            check(ended, [] { return std::string("cuStreamEndCapture"); });
  if (ok) {
    // The same kernels in the same order: the executable graph takes the
    // new arguments, grids and buffers in place. Anything else (or a driver
    // older than CUDA 12) instantiates it again.
    CUgraphExecUpdateResultInfo info{};
    bool updated = driver().cuGraphExecUpdate_v2 &&
                   driver().cuGraphExecUpdate_v2(graph->exec, captured,
                                                 &info) == CUDA_SUCCESS;
    if (!updated) {
      CUgraphExec exec = nullptr;
      ok = check(driver().cuGraphInstantiateWithFlags(&exec, captured, 0),
                 [] { return std::string("cuGraphInstantiateWithFlags"); });
      if (ok) {
        driver().cuGraphExecDestroy(graph->exec);
        graph->exec = exec;
      }
    }
  }
  if (!ok) {
    if (captured)
      driver().cuGraphDestroy(captured);
    releaseBuffers(buffers);
    return 0;
  }
  // The previous launch of the graph was queued before anything that
  // reuses its buffers, on the same stream.
  driver().cuGraphDestroy(graph->graph);
  graph->graph = captured;
  releaseBuffers(graph->buffers);
  graph->buffers.swap(buffers);
  return 1;
}

extern "C" void mp_cuda_graph_launch(mp_cuda_graph *graph) {
  if (!graph || !enter())
    return;
  if (check(driver().cuGraphLaunch(graph->exec, runStream()),
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
