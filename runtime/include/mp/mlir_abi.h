/*===- mp/mlir_abi.h - the MLIR runtime functions libmp_runtime exports ---===*
 *
 * Code that MLIR lowers calls these by name: the GPU ABI of `gpu-to-llvm`
 * (mgpu*, as in MLIR's CudaRuntimeWrappers.cpp of LLVM 22), `memrefCopy`
 * of the C runner utils, and the generic allocation functions of
 * `finalize-memref-to-llvm{use-generic-functions}`. Libraries written by
 * mp-compile link against libmp_runtime.so for them; nothing here needs
 * MLIR at run time.
 *
 * The mgpu* calls return no status: the first failure of a run is kept per
 * thread (mp_cuda_take_status() in mp/runtime.h) and later calls do
 * nothing harmful (they return null or skip). They never print.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MP_MLIR_ABI_H
#define MP_MLIR_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- GPU (gpu-to-llvm) ---------------------------------------------------- */

/** Loads a kernel image: an MPGPUBIN container (mp/gpu_binary.h; the image
    for the device is picked) or anything cuModuleLoadData accepts. Called
    from a global constructor when a CUDA library is loaded. */
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
/** Loads NUL-terminated PTX text (the driver compiles it). */
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
/** Device memory (managed memory when `isHostShared`); null for 0 bytes. */
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
/** With a null stream the copy (or memset) is complete on return. */
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
/** `count` is in elements. */
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
/** The device CUDA initializes on; one device per process. */
void mgpuSetDefaultDevice(int32_t device);

/* --- Host (CPU libraries) ------------------------------------------------- */

/** A memref of unknown rank: `descriptor` points to a ranked descriptor
    {char *allocated; char *aligned; int64_t offset; int64_t sizes[rank];
    int64_t strides[rank]} (offset and strides in elements). */
typedef struct mp_unranked_memref {
  int64_t rank;
  void *descriptor;
} mp_unranked_memref;

/** Copies `src` into `dst` (same shape, any strides); `elemSize` bytes per
    element. */
void memrefCopy(int64_t elemSize, mp_unranked_memref *src,
                mp_unranked_memref *dst);

/** memref.alloc / memref.dealloc, through mp's buffer pool (mp/BufferPool.h):
    64-byte aligned blocks reused across runs. */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MP_MLIR_ABI_H */
