// mp_library_* on a missing file, on shared objects that are not mp
// libraries (or of another ABI), and end to end on hand-written libraries
// (Inputs/fake_model.c): a CPU one, and CUDA ones on the fake driver.
//
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_runtime_include \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib -o %t
// RUN: %host_cc -shared -fPIC %S/Inputs/not_mp.c -o %t.not_mp.so
// RUN: %host_cc -shared -fPIC %S/Inputs/fake_cuda.c -o %t.fake_cuda.so
// RUN: %host_cc -shared -fPIC -std=c11 -Wall -Werror -I%mp_runtime_include -I%S/Inputs \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib %S/Inputs/fake_model.c -o %t.cpu.so
// RUN: %host_cc -shared -fPIC -DABI=7 -I%mp_runtime_include %S/Inputs/fake_model.c -o %t.abi7.so
// RUN: %host_cc -shared -fPIC -DNO_RUN -I%mp_runtime_include %S/Inputs/fake_model.c -o %t.norun.so
// RUN: %host_cc -shared -fPIC -std=c11 -Wall -Werror -DCUDA_MODEL -I%mp_runtime_include -I%S/Inputs \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib %S/Inputs/fake_model.c -o %t.cuda.so
// RUN: %host_cc -shared -fPIC -DCUDA_ARCHS_ONLY -I%mp_runtime_include %S/Inputs/fake_model.c -o %t.archs.so
//
// RUN: %t api | FileCheck %s --check-prefix=API
// API:      open(null): 2 mp_library_open: no path
// API-NEXT: run(null): 2 mp_library_run: null library
// API-NEXT: dtype sizes: 4 1 1 2 2 4 8 1 2 8 4 8 2 0
//
// RUN: not %t %t.missing.so | FileCheck %s --check-prefix=MISSING
// MISSING: open: 2 cannot open library '{{.*}}.missing.so': No such file or directory
// RUN: not %t %t.not_mp.so | FileCheck %s --check-prefix=NOTMP
// NOTMP: open: 2 '{{.*}}.not_mp.so' is not an mp library: it lacks mp_model_describe (build it with mp-compile)
// RUN: not %t %t.norun.so | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: open: 2 '{{.*}}.norun.so' is not an mp library: it lacks mp_model_run
// RUN: not %t %t.abi7.so | FileCheck %s --check-prefix=ABI
// ABI: open: 2 '{{.*}}.abi7.so' was built for mp runtime ABI 7, this runtime implements ABI 1: rebuild it with a matching mp-compile
//
// RUN: %t %t.cpu.so | FileCheck %s --check-prefix=CPU
// CPU:      open: 0
// CPU-NEXT: target=cpu precision=fp32 source=add.onnx abi=1
// CPU-NEXT: input x dtype=1 shape=[2,2]
// CPU-NEXT: input y dtype=1 shape=[2,2]
// CPU-NEXT: output z dtype=1 shape=[2,2]
// CPU-NEXT: gpu_archs:{{$}}
// CPU-NEXT: run: 0
// CPU-NEXT: z = 11 22 33 44
// CPU-NEXT: run: 0
// CPU-NEXT: z = 11 22 33 44
// CPU-NEXT: run with a negative input: 2 fake model: negative input
// CPU-NEXT: closed
//
// The CUDA library: kernels loaded at dlopen, the constant uploaded once
// and released at close, buffers reused by the second run.
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so %t %t.cuda.so | FileCheck %s --check-prefix=CUDA
// CUDA:      fake: cuModuleLoadData 'cubin-sm80'
// CUDA-NEXT: open: 0
// CUDA-NEXT: target=cuda precision=mixed source=add.onnx abi=1
// CUDA-NEXT: input x dtype=1 shape=[2,2]
// CUDA-NEXT: output z dtype=1 shape=[2,2]
// CUDA-NEXT: gpu_archs: sm_80 sm_90
// CUDA-NEXT: fake: cuMemAlloc_v2 256 bytes
// CUDA-NEXT: fake: cuMemAlloc_v2 16 bytes
// CUDA-NEXT: fake: cuMemAlloc_v2 256 bytes
// CUDA-NEXT: fake: launch fake_add grid 1x1x1 block 4x1x1 smem 0
// CUDA-NEXT: run: 0
// CUDA-NEXT: z = 11 22 33 44
// CUDA-NEXT: fake: launch fake_add grid 1x1x1 block 4x1x1 smem 0
// CUDA-NEXT: run: 0
// CUDA-NEXT: z = 11 22 33 44
// CUDA-NEXT: fake: cuMemFree_v2
// CUDA-NEXT: fake: cuModuleUnload 'cubin-sm80'
// CUDA-NEXT: closed
//
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so FAKE_CUDA_CC=90 %t %t.cuda.so | FileCheck %s --check-prefix=CUDA90
// CUDA90: fake: cuModuleLoadData 'cubin-sm90'
// CUDA90: z = 11 22 33 44
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so FAKE_CUDA_FAIL=cuMemAlloc_v2 not %t %t.cuda.so \
// RUN:   | FileCheck %s --check-prefix=CUDAOOM
// CUDAOOM: open: 0
// CUDAOOM: run: 7 cuMemAlloc_v2(256 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)
// CUDAOOM-NOT: fake: launch
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so FAKE_CUDA_CC=75 not %t %t.cuda.so | FileCheck %s --check-prefix=CUDAARCH
// CUDAARCH: open: 5 the library has kernels for sm_80, sm_90 but device 0 is sm_75 (compile with --gpu sm_75)
// RUN: env MP_CUDA_DRIVER=/nonexistent/libcuda.so.1 not %t %t.cuda.so | FileCheck %s --check-prefix=CUDANODRV
// CUDANODRV: open: 3 CUDA driver not found: could not load /nonexistent/libcuda.so.1
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so FAKE_CUDA_DEVICES=0 not %t %t.cuda.so | FileCheck %s --check-prefix=CUDANODEV
// CUDANODEV: open: 4 the CUDA driver loaded but reports no CUDA device
//
// The architecture check of mp_library_open itself (no kernels loaded).
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so FAKE_CUDA_CC=75 not %t %t.archs.so | FileCheck %s --check-prefix=ARCHS75
// ARCHS75: open: 5 the library has kernels for sm_90, compute_86 but device 0 is sm_75 (compile with --gpu sm_75)
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so FAKE_CUDA_CC=89 %t %t.archs.so | FileCheck %s --check-prefix=ARCHS89
// ARCHS89: open: 0
// ARCHS89: run: 0

#include "mp/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t elements(const mp_tensor_desc *t) {
  size_t n = 1;
  for (int32_t d = 0; d < t->rank; ++d)
    n *= (size_t)t->shape[d];
  return n;
}

static void printTensor(const char *kind, const mp_tensor_desc *t) {
  printf("%s %s dtype=%d shape=[", kind, t->name, t->dtype);
  for (int32_t d = 0; d < t->rank; ++d)
    printf(d ? ",%lld" : "%lld", (long long)t->shape[d]);
  printf("]\n");
}

/// Runs with input i holding (j + 1) * 10^i; prints the float outputs.
static int run(mp_library *lib, float sign) {
  const mp_model_desc *desc = mp_library_describe(lib);
  const void *inputs[8];
  void *outputs[8];
  for (int32_t i = 0; i < desc->num_inputs; ++i) {
    size_t n = elements(&desc->inputs[i]);
    float *data = malloc(n * mp_dtype_size(desc->inputs[i].dtype));
    float scale = sign;
    for (int32_t k = 0; k < i; ++k)
      scale *= 10;
    for (size_t j = 0; j < n; ++j)
      data[j] = (float)(j + 1) * scale;
    inputs[i] = data;
  }
  for (int32_t i = 0; i < desc->num_outputs; ++i)
    outputs[i] = calloc(elements(&desc->outputs[i]),
                        mp_dtype_size(desc->outputs[i].dtype));
  int status = mp_library_run(lib, inputs, outputs);
  printf("run%s: %d %s\n", sign < 0 ? " with a negative input" : "", status,
         status ? mp_last_error() : "");
  for (int32_t i = 0; i < desc->num_outputs && status == 0; ++i) {
    const float *z = outputs[i];
    printf("%s =", desc->outputs[i].name);
    for (size_t j = 0; j < elements(&desc->outputs[i]); ++j)
      printf(" %g", z[j]);
    printf("\n");
  }
  for (int32_t i = 0; i < desc->num_inputs; ++i)
    free((void *)inputs[i]);
  for (int32_t i = 0; i < desc->num_outputs; ++i)
    free(outputs[i]);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 1;
  if (!strcmp(argv[1], "api")) {
    mp_library *lib = NULL;
    int status = mp_library_open(NULL, &lib);
    printf("open(null): %d %s\n", status, mp_last_error());
    status = mp_library_run(NULL, NULL, NULL);
    printf("run(null): %d %s\n", status, mp_last_error());
    mp_library_close(NULL);
    printf("dtype sizes:");
    int dtypes[] = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16, 8};
    for (int i = 0; i < 14; ++i)
      printf(" %zu", mp_dtype_size(dtypes[i]));
    printf("\n");
    return 0;
  }

  mp_library *lib = NULL;
  int status = mp_library_open(argv[1], &lib);
  printf("open: %d %s\n", status, status ? mp_last_error() : "");
  if (status)
    return status;
  const mp_model_desc *desc = mp_library_describe(lib);
  printf("target=%s precision=%s source=%s abi=%u\n", desc->target,
         desc->precision, desc->source, desc->abi_version);
  for (int32_t i = 0; i < desc->num_inputs; ++i)
    printTensor("input", &desc->inputs[i]);
  for (int32_t i = 0; i < desc->num_outputs; ++i)
    printTensor("output", &desc->outputs[i]);
  printf("gpu_archs:");
  for (int32_t i = 0; i < desc->num_gpu_archs; ++i)
    printf(" %s", desc->gpu_archs[i]);
  printf("\n");
  status = run(lib, 1);
  if (!status)
    status = run(lib, 1);
  if (!status && !strcmp(desc->target, "cpu"))
    run(lib, -1);
  mp_library_close(lib);
  printf("closed\n");
  return status;
}
