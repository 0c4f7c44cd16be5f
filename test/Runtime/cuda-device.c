// The runtime on a real CUDA device: the primary context, memory, and a
// PTX kernel from an MPGPUBIN container, JIT-compiled by the driver for
// the device (PTX for sm_75 runs on every later architecture).
// REQUIRES: cuda-driver
//
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_runtime_include -I%S/Inputs \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib -o %t
// RUN: env -u MP_CUDA_DRIVER %t | FileCheck %s
//
// CHECK:      init: 0 arch=sm_{{[0-9]+}}
// CHECK-NEXT: module: loaded
// CHECK-NEXT: add: ok
// CHECK-NEXT: memset32: ok
// CHECK-NEXT: status: 0

#include "container.h"
#include "mp/mlir_abi.h"
#include "mp/runtime.h"

#include <stdio.h>

// c[i] = a[i] + b[i] for i < n (checked with ptxas for sm_75 and sm_90).
static const char kPtx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry add_f32(.param .u64 add_f32_param_0,\n"
    "    .param .u64 add_f32_param_1, .param .u64 add_f32_param_2,\n"
    "    .param .u32 add_f32_param_3)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [add_f32_param_0];\n"
    "  ld.param.u64 %rd2, [add_f32_param_1];\n"
    "  ld.param.u64 %rd3, [add_f32_param_2];\n"
    "  ld.param.u32 %r1, [add_f32_param_3];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  setp.ge.u32 %p1, %r5, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  cvta.to.global.u64 %rd2, %rd2;\n"
    "  cvta.to.global.u64 %rd3, %rd3;\n"
    "  mul.wide.u32 %rd4, %r5, 4;\n"
    "  add.s64 %rd5, %rd1, %rd4;\n"
    "  add.s64 %rd6, %rd2, %rd4;\n"
    "  add.s64 %rd7, %rd3, %rd4;\n"
    "  ld.global.f32 %f1, [%rd5];\n"
    "  ld.global.f32 %f2, [%rd6];\n"
    "  add.f32 %f3, %f1, %f2;\n"
    "  st.global.f32 [%rd7], %f3;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

enum { N = 1000 };

int main(void) {
  int status = mp_cuda_init();
  printf("init: %d arch=%s %s\n", status, mp_cuda_device_arch(),
         status ? mp_last_error() : "");
  if (status)
    return status;

  uint32_t sm = 75, kind = MP_GPU_IMAGE_PTX;
  const void *payload = kPtx;
  size_t payloadSize = sizeof(kPtx), size;
  unsigned char *container =
      packContainer(1, &sm, &kind, &payload, &payloadSize, &size);
  void *module = mgpuModuleLoad(container, size);
  free(container);
  printf("module: %s\n", module ? "loaded" : "null");
  void *function = mgpuModuleGetFunction(module, "add_f32");

  static float a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = (float)(2 * i);
  }
  void *da = mp_cuda_alloc(sizeof(a)), *db = mp_cuda_alloc(sizeof(b));
  void *dc = mp_cuda_memref_alloc(sizeof(c));
  mp_cuda_copy_to_device(da, a, sizeof(a));
  mp_cuda_copy_to_device(db, b, sizeof(b));
  int32_t n = N;
  void *params[] = {&da, &db, &dc, &n};
  void *stream = mgpuStreamCreate();
  mgpuLaunchKernel(function, (N + 255) / 256, 1, 1, 256, 1, 1, 0, stream,
                   params, NULL, 4);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  mp_cuda_copy_to_host(c, dc, sizeof(c));
  int ok = 1;
  for (int i = 0; i < N; ++i)
    ok &= c[i] == (float)(3 * i);
  printf("add: %s\n", ok ? "ok" : "mismatch");

  uint32_t words[N];
  mgpuMemset32(dc, 0x3f800000u, N, NULL);
  mgpuMemcpy(words, dc, sizeof(words), NULL);
  ok = 1;
  for (int i = 0; i < N; ++i)
    ok &= words[i] == 0x3f800000u;
  printf("memset32: %s\n", ok ? "ok" : "mismatch");

  mp_cuda_free(da);
  mp_cuda_free(db);
  mp_cuda_memref_free(dc);
  mgpuModuleUnload(module);
  status = mp_cuda_take_status();
  printf("status: %d %s\n", status, status ? mp_last_error() : "");
  return status;
}
