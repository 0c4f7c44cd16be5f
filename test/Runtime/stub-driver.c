// The CUDA toolkit's stub libcuda.so exports every entry point of the real
// driver: all of CudaSymbols.def must resolve against it, and its cuInit
// failure reads as a missing driver.
// REQUIRES: cuda-stub-driver
//
// RUN: %host_cc %S/fake-driver.c -std=c11 -Wall -Werror -I%mp_runtime_include \
// RUN:   -I%S/Inputs -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib -o %t
// RUN: env MP_CUDA_DRIVER=%cuda_stub_driver not %t init | FileCheck %s
// CHECK: init: 3 arch= CUDA driver not found: {{.*}}libcuda.so is the CUDA toolkit's stub (cuInit returned CUDA_ERROR_STUB_LIBRARY); install the NVIDIA driver or run on a machine with a GPU
