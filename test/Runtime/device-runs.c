// mp_library_run_device and its buffers on hand-written libraries
// (Inputs/fake_model.c): the CPU one (its buffers are host memory), and the
// CUDA one on the fake driver, whose "fake_add" kernel computes, so the data
// really goes through the device buffers.
//
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_runtime_include \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib -o %t
// RUN: %host_cc -shared -fPIC %S/Inputs/fake_cuda.c -o %t.fake_cuda.so
// RUN: %host_cc -shared -fPIC -std=c11 -Wall -Werror -I%mp_runtime_include -I%S/Inputs \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib %S/Inputs/fake_model.c -o %t.cpu.so
// RUN: %host_cc -shared -fPIC -std=c11 -Wall -Werror -DCUDA_MODEL -I%mp_runtime_include -I%S/Inputs \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib %S/Inputs/fake_model.c -o %t.cuda.so
// RUN: %host_cc -shared -fPIC -std=c11 -Wall -Werror -DCUDA_MODEL -DDEVICE_RUN -I%mp_runtime_include \
// RUN:   -I%S/Inputs -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib %S/Inputs/fake_model.c -o %t.device.so
//
// RUN: %t %t.cpu.so | FileCheck %s --check-prefix=CPU
// CPU:      on host: 0 0
// CPU-NEXT: run 1: 0
// CPU-NEXT: run 2: 0
// CPU-NEXT: synchronize: 0
// CPU-NEXT: z = 11 22 33 44
// CPU-NEXT: errors:
// CPU-NEXT: run_device(null): 2 mp_library_run_device: null library
// CPU-NEXT: upload(null): 2 mp_library_upload: null buffer for 16 bytes
// CPU-NEXT: download(null): 2 mp_library_download: null buffer for 16 bytes
// CPU-NEXT: alloc(null): 2 mp_library_device_alloc: null library or result pointer
//
// Uploads and downloads are the only copies; the runs copy nothing.
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so FAKE_CUDA_TRACE_COPIES=1 %t %t.device.so \
// RUN:   | FileCheck %s --check-prefix=CUDA
// CUDA:      on host: 0
// CUDA-NEXT: fake: cuMemAlloc_v2 256 bytes
// CUDA-NEXT: fake: copy HtoD 16 bytes
// CUDA-NEXT: fake: cuMemAlloc_v2 256 bytes
// CUDA-NEXT: fake: cuMemAlloc_v2 16 bytes
// CUDA-NEXT: fake: copy HtoD 16 bytes
// CUDA-NEXT: fake: launch fake_add grid 1x1x1 block 4x1x1 smem 0
// CUDA-NEXT: run 1: 0
// CUDA-NEXT: fake: launch fake_add grid 1x1x1 block 4x1x1 smem 0
// CUDA-NEXT: run 2: 0
// CUDA-NEXT: synchronize: 0
// CUDA-NEXT: fake: copy DtoH 16 bytes
// CUDA-NEXT: z = 11 22 33 44
//
// A CUDA library without the device entry (built by an older mp-compile).
// RUN: env MP_CUDA_DRIVER=%t.fake_cuda.so not %t %t.cuda.so | FileCheck %s --check-prefix=OLD
// OLD: run 1: 2 mp_library_run_device: '{{.*}}.cuda.so' lacks mp_model_run_device: rebuild it with this mp-compile

#include "mp/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t bytesOf(const mp_tensor_desc *t) {
  size_t n = mp_dtype_size(t->dtype);
  for (int32_t d = 0; d < t->rank; ++d)
    n *= (size_t)t->shape[d];
  return n;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 1;
  mp_library *lib = NULL;
  int status = mp_library_open(argv[1], &lib);
  if (status) {
    printf("open: %d %s\n", status, mp_last_error());
    return status;
  }
  const mp_model_desc *desc = mp_library_describe(lib);
  printf("on host:");
  for (int32_t i = 0; i < desc->num_inputs; ++i)
    printf(" %d", mp_library_input_on_host(lib, i));
  printf("\n");
  // Input i holds (j + 1) * 10^i, uploaded once.
  void *in[8], *out[8];
  for (int32_t i = 0; i < desc->num_inputs; ++i) {
    float host[4];
    for (int j = 0; j < 4; ++j)
      host[j] = (float)(j + 1) * (i ? 10.f : 1.f);
    if (mp_library_device_alloc(lib, bytesOf(&desc->inputs[i]), &in[i]) ||
        mp_library_upload(lib, in[i], host, sizeof host))
      return printf("input %d: %s\n", i, mp_last_error()), 1;
  }
  for (int32_t i = 0; i < desc->num_outputs; ++i)
    if (mp_library_device_alloc(lib, bytesOf(&desc->outputs[i]), &out[i]))
      return printf("output %d: %s\n", i, mp_last_error()), 1;
  for (int r = 1; r <= 2; ++r) {
    status = mp_library_run_device(lib, (const void *const *)in, out);
    printf("run %d: %d %s\n", r, status, status ? mp_last_error() : "");
    if (status)
      return status;
  }
  status = mp_library_synchronize(lib);
  printf("synchronize: %d\n", status);
  float z[4] = {0};
  status = mp_library_download(lib, z, out[0], sizeof z);
  if (status)
    return printf("download: %s\n", mp_last_error()), 1;
  printf("z = %g %g %g %g\n", z[0], z[1], z[2], z[3]);
  if (!strcmp(desc->target, "cpu")) {
    printf("errors:\n");
    status = mp_library_run_device(NULL, NULL, NULL);
    printf("run_device(null): %d %s\n", status, mp_last_error());
    status = mp_library_upload(lib, NULL, z, sizeof z);
    printf("upload(null): %d %s\n", status, mp_last_error());
    status = mp_library_download(lib, z, NULL, sizeof z);
    printf("download(null): %d %s\n", status, mp_last_error());
    status = mp_library_device_alloc(NULL, 4, NULL);
    printf("alloc(null): %d %s\n", status, mp_last_error());
  }
  for (int32_t i = 0; i < desc->num_inputs; ++i)
    mp_library_device_free(lib, in[i]);
  for (int32_t i = 0; i < desc->num_outputs; ++i)
    mp_library_device_free(lib, out[i]);
  mp_library_close(lib);
  return 0;
}
