/*===- mp/runtime.h - the mp runtime C API --------------------------------===*
 *
 * Loads libraries written by `mp-compile` and runs them. No MLIR here: a
 * compiled library needs only this runtime (libmp_runtime.so), which loads
 * the CUDA driver (libcuda.so.1) with dlopen when a CUDA library asks for it.
 *
 * Every function returns an mp_status; on failure mp_last_error() gives a
 * message naming what failed (the CUDA call, the missing driver, the file).
 * The status values are also mp-run's exit codes (docs/runtime.md).
 *
 * Threads: a library may be run from several threads at once. Runs of one
 * loaded library (every handle of one file) take turns under its lock;
 * runs of separate libraries do not wait for each other (CUDA libraries
 * do while CUDA graphs are on, the default: the stream is captured whole).
 * mp_last_error() is per thread. Closing a handle while another thread
 * uses it is the caller's error (docs/runtime.md, "Threads").
 *
 *===----------------------------------------------------------------------===*/

#ifndef MP_RUNTIME_H
#define MP_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes; the numbers are stable (mp-run exits with them). */
typedef enum mp_status {
  MP_OK = 0,
  /** A bad argument, a library file that is not an mp library, an ABI
      version this runtime does not know. */
  MP_ERROR_INVALID = 2,
  /** libcuda.so.1 could not be loaded, or lacks a required symbol. */
  MP_ERROR_NO_DRIVER = 3,
  /** The driver loaded but reports no CUDA device (or cuInit failed). */
  MP_ERROR_NO_DEVICE = 4,
  /** The library has no kernel image for this device's architecture. */
  MP_ERROR_ARCH = 5,
  /** A CUDA driver call failed (the message names the call). */
  MP_ERROR_CUDA = 6,
  /** Out of host or device memory. */
  MP_ERROR_OUT_OF_MEMORY = 7,
} mp_status;

/** Element types, as ONNX TensorProto.DataType numbers. */
typedef enum mp_dtype {
  MP_DTYPE_FLOAT32 = 1,
  MP_DTYPE_UINT8 = 2,
  MP_DTYPE_INT8 = 3,
  MP_DTYPE_UINT16 = 4,
  MP_DTYPE_INT16 = 5,
  MP_DTYPE_INT32 = 6,
  MP_DTYPE_INT64 = 7,
  MP_DTYPE_BOOL = 9,
  MP_DTYPE_FLOAT16 = 10,
  MP_DTYPE_FLOAT64 = 11,
  MP_DTYPE_UINT32 = 12,
  MP_DTYPE_UINT64 = 13,
  MP_DTYPE_BFLOAT16 = 16,
} mp_dtype;

/** A graph input or output of a compiled library. A dim of -1 is fixed at
    run time (mp-compile --dynamic-shapes): such a library runs through
    mp_library_run_shaped. */
typedef struct mp_tensor_desc {
  const char *name;
  int32_t dtype; /* an mp_dtype */
  int32_t rank;
  const int64_t *shape;
} mp_tensor_desc;

/** What a compiled library describes about itself. */
typedef struct mp_model_desc {
  /** MP_ABI_VERSION of the mp-compile that wrote the library. */
  uint32_t abi_version;
  /** "cpu" or "cuda". */
  const char *target;
  /** "fp32" or "mixed". */
  const char *precision;
  /** The ONNX model file it was compiled from (as given to mp-compile). */
  const char *source;
  int32_t num_inputs;
  const mp_tensor_desc *inputs;
  int32_t num_outputs;
  const mp_tensor_desc *outputs;
  /** CUDA targets: the architectures with a kernel image ("sm_80", ...). */
  int32_t num_gpu_archs;
  const char *const *gpu_archs;
} mp_model_desc;

#define MP_ABI_VERSION 1u

/* --- Symbols every library written by mp-compile exports ------------------ */

/** The library's description (static data). */
typedef const mp_model_desc *(*mp_model_describe_fn)(void);
#define MP_MODEL_DESCRIBE_SYMBOL "mp_model_describe"

/** Runs the model once. `inputs[i]` / `outputs[i]` are host buffers of the
    described dtype and shape, dense row-major; outputs are written. Returns
    an mp_status (the message is in mp_last_error()). */
typedef int32_t (*mp_model_run_fn)(const void *const *inputs,
                                   void *const *outputs);
#define MP_MODEL_RUN_SYMBOL "mp_model_run"

/** Most dims of a tensor that mp_shaped_tensor carries. */
#define MP_MAX_RANK 8

/** A host tensor with its run-time shape, for libraries with dynamic dims:
    `data` is dense row-major; the first `rank` entries of `shape` (the
    described rank) are its dims. */
typedef struct mp_shaped_tensor {
  void *data;
  int64_t shape[MP_MAX_RANK];
} mp_shaped_tensor;

/** Exported by libraries with dynamic dims (their mp_model_run refuses to
    run): runs on `inputs` of any shapes that fit the description (data and
    shape set by the caller, read only), and sets each of `outputs` to the
    shape the run produced and a buffer holding it, which the caller frees
    with mp_free. */
typedef int32_t (*mp_model_run_shaped_fn)(const mp_shaped_tensor *inputs,
                                          mp_shaped_tensor *outputs);
#define MP_MODEL_RUN_SHAPED_SYMBOL "mp_model_run_shaped"

/** Exported by CUDA libraries: runs once on device buffers (see
    mp_library_run_device), no copies between host and device. */
typedef int32_t (*mp_model_run_device_fn)(const void *const *inputs,
                                          void *const *outputs);
#define MP_MODEL_RUN_DEVICE_SYMBOL "mp_model_run_device"

/** Optional in a library: the inputs mp_model_run_device reads from host
    memory (a KV cache's fill level), as indices ending with -1. */
typedef const int32_t *(*mp_model_host_inputs_fn)(void);
#define MP_MODEL_HOST_INPUTS_SYMBOL "mp_model_host_inputs"

/** Optional in a library: frees what its runs keep (CUDA graphs and their
    device buffers). mp_library_close calls it before unloading. */
typedef void (*mp_model_release_fn)(void);
#define MP_MODEL_RELEASE_SYMBOL "mp_model_release"

/* --- The runtime API ------------------------------------------------------ */

/** The message of the last failure on this thread ("" if none). */
const char *mp_last_error(void);

/** Loads the CUDA driver and retains device 0's primary context (once per
    process). MP_ERROR_NO_DRIVER / MP_ERROR_NO_DEVICE when they are missing. */
mp_status mp_cuda_init(void);

/** The compute capability of device 0 as "sm_XY" after mp_cuda_init. */
const char *mp_cuda_device_arch(void);

typedef struct mp_library mp_library;

/** Opens a library written by mp-compile (dlopen) and checks its ABI
    version. For a CUDA library this also initializes CUDA and checks that
    the library holds an image for the device. */
mp_status mp_library_open(const char *path, mp_library **out);

/** The library's description (owned by the library). */
const mp_model_desc *mp_library_describe(const mp_library *lib);

/** Runs the library once on host buffers (see mp_model_run_fn). Safe from
    several threads: runs of one loaded library take turns. */
mp_status mp_library_run(mp_library *lib, const void *const *inputs,
                         void *const *outputs);

/** Whether the library has dims fixed at run time (a -1 in its
    description); it then runs through mp_library_run_shaped only. */
int mp_library_has_dynamic_shapes(const mp_library *lib);

/** Runs a library on host tensors with their shapes (any library; the only
    way to run one with dynamic dims). Outputs get their shapes and buffers
    the caller frees with mp_free (see mp_model_run_shaped_fn). */
mp_status mp_library_run_shaped(mp_library *lib,
                                const mp_shaped_tensor *inputs,
                                mp_shaped_tensor *outputs);

/** Frees an output buffer of mp_library_run_shaped (null is ignored). */
void mp_free(void *data);

/* --- Runs on buffers that stay where the library computes ----------------
 * A decode loop that feeds each step's outputs to the next (KV caches,
 * recurrent state) need not move them through host memory: buffers of
 * mp_library_device_alloc live in the memory the library computes in
 * (device memory for a CUDA library, host memory for a CPU one), and
 * mp_library_run_device runs on them without copying anything between host
 * and device. Only the data the caller moves with mp_library_upload and
 * mp_library_download crosses. */

/** A buffer of `bytes` (at least 1) in the library's memory: device memory
    (256-byte aligned) for a CUDA library, host memory (64-byte aligned) for
    a CPU library. */
mp_status mp_library_device_alloc(mp_library *lib, size_t bytes, void **out);

/** Frees a buffer of mp_library_device_alloc (null is ignored). Runs queued
    before may still read it: its memory is only reused by kernels queued
    after them and by copies, which wait for them. */
void mp_library_device_free(mp_library *lib, void *buffer);

/** Copies `bytes` of host memory into a buffer of mp_library_device_alloc,
    once the runs queued before have finished. */
mp_status mp_library_upload(mp_library *lib, void *buffer, const void *host,
                            size_t bytes);

/** Copies `bytes` of a buffer of mp_library_device_alloc into host memory,
    once the runs queued before have finished (a kernel failure of those
    runs is reported here). */
mp_status mp_library_download(mp_library *lib, void *host, const void *buffer,
                              size_t bytes);

/** 1 when mp_library_run_device reads input `input` from ordinary host memory
    rather than from a buffer of mp_library_device_alloc: the fill level of
    in-place KV caches, which CUDA host code reads to place the cache
    writes; 0 otherwise (and for every input of a CPU library, whose buffers
    are host memory anyway). */
int mp_library_input_on_host(const mp_library *lib, int32_t input);

/** Waits until the runs queued on the library's buffers have finished (a
    kernel failure of those runs is reported here); MP_OK at once for a CPU
    library. */
mp_status mp_library_synchronize(mp_library *lib);

/** Runs the library once on buffers of mp_library_device_alloc of the
    described sizes (the inputs mp_library_input_on_host names are host
    memory). A KV cache updated in place takes one buffer as its input and
    its output (distinct buffers: the input is copied into the output on
    the device first). CUDA: the kernels are queued on the runtime's stream
    and the call returns before they finish; mp_library_upload and
    mp_library_download wait for them. With CUDA graphs on (the default) a
    run on the same buffers as the captured one replays the graph. Libraries
   with dynamic dims do not take it (MP_ERROR_INVALID). */
mp_status mp_library_run_device(mp_library *lib, const void *const *inputs,
                                void *const *outputs);

/** Closes the library (null is ignored). */
void mp_library_close(mp_library *lib);

/** Device memory the runtime holds for compiled code. */
typedef struct mp_memory_stats {
  /** Activation buffers in use now, and their high-water mark. */
  size_t buffer_bytes, peak_buffer_bytes;
  /** Freed buffers kept for reuse. */
  size_t cached_bytes;
  /** Device copies of constants (weights). */
  size_t constant_bytes;
} mp_memory_stats;

/** Fills `stats` (all zero before any CUDA library ran). */
void mp_cuda_memory_stats(mp_memory_stats *stats);

/** Bytes per element of an mp_dtype (0 for an unknown value). */
size_t mp_dtype_size(int32_t dtype);

/* --- For code that mp-compile generates (not for users) ------------------ */

/** Records a failure for mp_last_error() and returns `status`. */
mp_status mp_set_error(mp_status status, const char *message);

/** The status of the first failure inside the MLIR GPU ABI (mgpu*) calls of
    the current run, MP_OK if none; clears it. Generated CUDA wrappers call
    this after the model body and return it. */
mp_status mp_cuda_take_status(void);

/** Device buffers for the generated CUDA wrappers; errors are recorded as
    for the mgpu* calls. */
void *mp_cuda_alloc(size_t bytes);
void mp_cuda_free(void *device);
void mp_cuda_copy_to_device(void *device, const void *host, size_t bytes);
void mp_cuda_copy_to_host(void *host, const void *device, size_t bytes);
/** Copies between device buffers, queued on the runtime's stream after the
    kernels before it. */
void mp_cuda_copy_on_device(void *dst, const void *src, size_t bytes);

/** The buffers of CUDA host code (mp-bind-cuda-runtime renames MLIR's
    `_mlir_memref_to_llvm_*` to these): device memory from a pool that
    reuses freed blocks across runs. Alignment is at most 256 bytes. */
void *mp_cuda_memref_alloc(size_t bytes);
void *mp_cuda_memref_aligned_alloc(size_t alignment, size_t bytes);
void mp_cuda_memref_free(void *device);

/** The device copy of the constant `host` (weights): uploaded on first use,
    then cached until the library holding `host` is closed. */
void *mp_cuda_constant(const void *host, int64_t bytes);

/** CUDA graphs, on unless MP_CUDA_GRAPHS=0 is set in the environment: the
    generated wrapper keeps its device inputs and outputs across runs and,
    from the second run on, captures the model's launches once and replays
    them with one cuGraphLaunch (a run that cannot be captured, or that reads
    device values on the host, runs plainly; one with in-place KV caches is
    captured again every run, its fill level in the launches' arguments,
    and the graph updated: mp_cuda_capture_update). The
    runtime then runs CUDA libraries one at a time (a capture records the
    whole stream). */
int mp_cuda_graphs_enabled(void);

typedef struct mp_cuda_graph mp_cuda_graph;

/** Starts capturing the runtime's stream (kernels are recorded, not run). */
mp_status mp_cuda_capture_begin(void);

/** Ends the capture: the instantiated graph, which owns the buffers the
    captured code freed; null after any failure during the capture (it is
    then recorded as for the mgpu* calls). */
mp_cuda_graph *mp_cuda_capture_end(void);

/** Ends a capture begun to run `graph` again with other launch arguments
    (a KV cache's fill level changes them every step): `graph` then replays
    this capture, its executable graph updated in place when the driver can
    (CUDA 12 or newer, the same kernels in the same order), instantiated
    again otherwise, and it owns the buffers this capture freed instead of
    the previous ones. Returns 0 after any failure, which is recorded;
    `graph` must then be destroyed, not launched. */
int mp_cuda_capture_update(mp_cuda_graph *graph);

/** Queues the graph's kernels on the runtime's stream. */
void mp_cuda_graph_launch(mp_cuda_graph *graph);

/** Frees the graph and its buffers (null is ignored). */
void mp_cuda_graph_destroy(mp_cuda_graph *graph);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MP_RUNTIME_H */
