// Hand-written stand-ins for libraries written by mp-compile.
//   (default)         CPU: z = x + y on float[2,2]
//   -DABI=7           the same with another ABI version
//   -DNO_RUN          exports mp_model_describe only
//   -DCUDA_MODEL      CUDA: z = x + kY through the fake driver's "fake_add"
//                     kernel, with the module loaded by a constructor as in
//                     code lowered by gpu-to-llvm; kernels for sm_80, sm_90
//   -DCUDA_MODEL -DDEVICE_RUN  also exports mp_model_run_device
//   -DCUDA_ARCHS_ONLY CUDA, no kernels, gpu_archs {sm_90, compute_86}

#include "mp/mlir_abi.h"
#include "mp/runtime.h"

#ifndef ABI
#define ABI MP_ABI_VERSION
#endif

static const int64_t kShape[] = {2, 2};

#if defined(CUDA_MODEL)
#include "container.h"

static const mp_tensor_desc kInputs[] = {{"x", MP_DTYPE_FLOAT32, 2, kShape}};
static const mp_tensor_desc kOutputs[] = {{"z", MP_DTYPE_FLOAT32, 2, kShape}};
static const char *const kArchs[] = {"sm_80", "sm_90"};
static const mp_model_desc kDesc = {
    ABI, "cuda", "mixed", "add.onnx", 1, kInputs, 1, kOutputs, 2, kArchs};
static const float kY[4] = {10, 20, 30, 40};
static void *module;

__attribute__((constructor)) static void loadKernels(void) {
  size_t size;
  unsigned char *container = buildContainer("cubin:80,cubin:90", &size);
  module = mgpuModuleLoad(container, size);
  free(container);
}

__attribute__((destructor)) static void unloadKernels(void) {
  mgpuModuleUnload(module);
}

int32_t mp_model_run(const void *const *inputs, void *const *outputs) {
  void *x = mp_cuda_alloc(16);
  mp_cuda_copy_to_device(x, inputs[0], 16);
  void *y = mp_cuda_constant(kY, sizeof(kY));
  void *z = mp_cuda_memref_alloc(16);
  void *function = mgpuModuleGetFunction(module, "fake_add");
  int32_t n = 4;
  void *params[] = {&x, &y, &z, &n};
  mgpuLaunchKernel(function, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 4);
  mp_cuda_copy_to_host(outputs[0], z, 16);
  mp_cuda_free(x);
  mp_cuda_memref_free(z);
  return mp_cuda_take_status();
}

#ifdef DEVICE_RUN
int32_t mp_model_run_device(const void *const *inputs, void *const *outputs) {
  void *x = (void *)inputs[0], *z = outputs[0];
  void *y = mp_cuda_constant(kY, sizeof(kY));
  void *function = mgpuModuleGetFunction(module, "fake_add");
  int32_t n = 4;
  void *params[] = {&x, &y, &z, &n};
  mgpuLaunchKernel(function, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL, 4);
  return mp_cuda_take_status();
}
#endif

#elif defined(CUDA_ARCHS_ONLY)
static const char *const kArchs[] = {"sm_90", "compute_86"};
static const mp_model_desc kDesc = {ABI,  "cuda", "fp32", "none.onnx", 0,
                                    NULL, 0,      NULL,   2,           kArchs};

int32_t mp_model_run(const void *const *inputs, void *const *outputs) {
  (void)inputs, (void)outputs;
  return MP_OK;
}

#else
static const mp_tensor_desc kInputs[] = {{"x", MP_DTYPE_FLOAT32, 2, kShape},
                                         {"y", MP_DTYPE_FLOAT32, 2, kShape}};
static const mp_tensor_desc kOutputs[] = {{"z", MP_DTYPE_FLOAT32, 2, kShape}};
static const mp_model_desc kDesc = {ABI,     "cpu", "fp32",   "add.onnx", 2,
                                    kInputs, 1,     kOutputs, 0,          NULL};

#ifndef NO_RUN
int32_t mp_model_run(const void *const *inputs, void *const *outputs) {
  const float *x = inputs[0], *y = inputs[1];
  float *z = outputs[0];
  if (x[0] < 0)
    return mp_set_error(MP_ERROR_INVALID, "fake model: negative input");
  for (int i = 0; i < 4; ++i)
    z[i] = x[i] + y[i];
  return MP_OK;
}
#endif
#endif

const mp_model_desc *mp_model_describe(void) { return &kDesc; }
