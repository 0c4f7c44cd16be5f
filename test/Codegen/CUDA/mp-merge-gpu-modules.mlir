// RUN: mp-opt %s --mp-merge-gpu-modules --split-input-file --verify-diagnostics | FileCheck %s

// Two outlined kernels, both named @k in modules of their own: one module
// holds them under their modules' names, and the launches follow.
// CHECK-LABEL: module attributes {gpu.container_module}
//       CHECK:   gpu.module @mp_kernels {
//       CHECK:     gpu.func @first(%{{.+}}: memref<4xf32>) kernel
//       CHECK:     gpu.func @second(%{{.+}}: memref<4xf32>) kernel
//   CHECK-NOT:   gpu.module
//       CHECK:   func.func @host
//       CHECK:     gpu.launch_func @mp_kernels::@first
//       CHECK:     gpu.launch_func @mp_kernels::@second
module attributes {gpu.container_module} {
  gpu.module @first {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @second::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
}

// -----

// Targets are attached after merging, never before.
module attributes {gpu.container_module} {
  // expected-error @+1 {{'gpu.module' op has targets already: run mp-merge-gpu-modules before attaching targets}}
  gpu.module @first [#nvvm.target<chip = "sm_90">] {
  }
  gpu.module @second {
  }
}
