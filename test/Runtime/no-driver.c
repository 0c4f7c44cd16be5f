// Without a CUDA driver: mp_cuda_init reports it, and the mgpu* calls that
// a CUDA library makes (the first one from a constructor, at dlopen) return
// null or do nothing, with the failure kept for mp_cuda_take_status.
// no-driver-default.c runs this program with the default driver path.
//
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_runtime_include -I%S/Inputs \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib -o %t
// RUN: env MP_CUDA_DRIVER=/nonexistent/libcuda.so.1 not %t 2>&1 \
// RUN:   | FileCheck %s --check-prefixes=CHECK,OVERRIDE
//
// OVERRIDE:      init: 3 CUDA driver not found: could not load /nonexistent/libcuda.so.1 (from MP_CUDA_DRIVER) (/nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory); install the NVIDIA driver or run on a machine with a GPU
// DEFAULT:       init: 3 CUDA driver not found: could not load libcuda.so.1 (libcuda.so.1: cannot open shared object file: No such file or directory); install the NVIDIA driver or run on a machine with a GPU
// CHECK-NEXT:    init again: 3
// CHECK-NEXT:    arch: ''
// CHECK-NEXT:    module: null
// CHECK-NEXT:    function: null
// CHECK-NEXT:    alloc: null
// CHECK-NEXT:    stream: null
// CHECK-NEXT:    status: 3 CUDA driver not found: could not load {{.*}}libcuda.so.1
// CHECK-NEXT:    status: 0
// CHECK-NEXT:    function: null
// CHECK-NEXT:    status: 3 kernel 'main_kernel' cannot run: its GPU module did not load: CUDA driver not found
// CHECK-NEXT:    alloc: null
// CHECK-NEXT:    status: 3 CUDA driver not found
// CHECK-NEXT:    done
// CHECK-NOT:     {{.}}

#include "container.h"
#include "mp/mlir_abi.h"
#include "mp/runtime.h"

#include <stdio.h>

static int report(void) {
  int status = mp_cuda_take_status();
  printf("status: %d %s\n", status, status ? mp_last_error() : "");
  return status;
}

int main(void) {
  int init = mp_cuda_init();
  printf("init: %d %s\n", init, mp_last_error());
  printf("init again: %d\n", mp_cuda_init());
  printf("arch: '%s'\n", mp_cuda_device_arch());

  // What a CUDA library does: load (from its constructor), then launch.
  size_t size;
  unsigned char *container = buildContainer("cubin:80,cubin:90", &size);
  void *module = mgpuModuleLoad(container, size);
  free(container);
  printf("module: %s\n", module ? "loaded" : "null");
  void *function = mgpuModuleGetFunction(module, "main_kernel");
  printf("function: %s\n", function ? "found" : "null");
  void *buffer = mgpuMemAlloc(1024, NULL, false);
  printf("alloc: %s\n", buffer ? "ok" : "null");
  void *stream = mgpuStreamCreate();
  printf("stream: %s\n", stream ? "ok" : "null");
  void *params[] = {&buffer};
  mgpuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL, 1);
  mgpuMemcpy(buffer, buffer, 1024, stream);
  mgpuMemset32(buffer, 0, 256, stream);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  mgpuMemFree(buffer, stream);
  mgpuModuleUnload(module);
  int status = report();
  report();

  // The next run: a kernel of the module that did not load.
  function = mgpuModuleGetFunction(NULL, "main_kernel");
  printf("function: %s\n", function ? "found" : "null");
  report();

  buffer = mp_cuda_alloc(16);
  mp_cuda_copy_to_device(buffer, &size, sizeof(size));
  printf("alloc: %s\n", buffer ? "ok" : "null");
  report();
  printf("done\n");
  return status;
}
