// no-driver.c with the default driver path (libcuda.so.1), on a machine
// without a CUDA driver.
// UNSUPPORTED: cuda-driver
//
// RUN: %host_cc %S/no-driver.c -std=c11 -Wall -Werror -I%mp_runtime_include \
// RUN:   -I%S/Inputs -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib -o %t
// RUN: env -u MP_CUDA_DRIVER not %t 2>&1 \
// RUN:   | FileCheck %S/no-driver.c --check-prefixes=CHECK,DEFAULT
