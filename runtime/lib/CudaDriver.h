//===- CudaDriver.h - libcuda.so.1, loaded with dlopen ----------*- C++ -*-===//
//
// The runtime never links against CUDA: it loads the driver the first time
// a CUDA library needs it, so that libmp_runtime.so loads (and CPU models
// run) on any machine. The few CUDA types used are declared here.
//
//===----------------------------------------------------------------------===//

#ifndef MP_RUNTIME_CUDADRIVER_H
#define MP_RUNTIME_CUDADRIVER_H

#include "Errors.h"
#include "mp/runtime.h"

#include <cstddef>
#include <string>

namespace mp {
namespace cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUgraphNode = struct CUgraphNode_st *;
/// What cuGraphExecUpdate_v2 reports (CUgraphExecUpdateResultInfo_v1).
struct CUgraphExecUpdateResultInfo {
  int result;
  CUgraphNode errorNode, errorFromNode;
};

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_INSUFFICIENT_DRIVER = 35;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
/// cuGraphExecUpdate_v2: the graph differs in more than parameters.
constexpr CUresult CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
/// Other threads may keep making CUDA calls while one captures.
constexpr int CU_STREAM_CAPTURE_MODE_RELAXED = 2;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;

/// The driver's entry points, resolved with dlsym.
struct Driver {
#define MP_CUDA_SYMBOL(name, params) CUresult(*name) params = nullptr;
#include "CudaSymbols.def"
};

/// Loads the driver and retains the primary context of the device once per
/// process (thread-safe), then makes that context current on the calling
/// thread. On failure sets mp_last_error() and returns the status, the same
/// on every later call.
mp_status init();

/// Whether init() already succeeded in this process (no side effects).
bool initialized();

/// The loaded driver; only valid after init() returned MP_OK.
const Driver &driver();

/// The device's compute capability as 10 * major + minor (after init).
int deviceSm();

/// The device's ordinal (after init).
int deviceOrdinal();

/// Chooses the device the next init() uses; false when CUDA is already
/// initialized on another device.
bool requestDevice(int ordinal);

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string errorText(CUresult error);

/// The status a failing CUDA call maps to.
mp_status statusOf(CUresult error);

/// "<call> failed: <errorText>"; e.g. call = "cuMemAlloc_v2(64 bytes)".
std::string callFailed(const std::string &call, CUresult error);

/// Prepares a call of the mgpu/mp_cuda kind (no status returned): false
/// when it must do nothing, because CUDA is unusable (then recorded as the
/// sticky failure) or an earlier call of this run failed.
bool enter();

/// Prepares a call that releases `handle`: these run even after a failure,
/// so that nothing leaks, but not without a handle or a driver.
bool enterRelease(const void *handle);

/// True when `result` is CUDA_SUCCESS; else records the sticky failure
/// "<describe()> failed: <errorText>" and returns false. `describe` only
/// runs on failure.
template <typename Describe> bool check(CUresult result, Describe describe) {
  if (result == CUDA_SUCCESS)
    return true;
  recordFailure(statusOf(result), callFailed(describe(), result));
  return false;
}

} // namespace cuda
} // namespace mp

#endif // MP_RUNTIME_CUDADRIVER_H
