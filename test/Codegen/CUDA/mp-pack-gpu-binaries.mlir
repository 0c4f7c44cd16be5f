// RUN: mp-opt %s --mp-pack-gpu-binaries --split-input-file --verify-diagnostics | FileCheck %s

// Two per-architecture objects become one MPGPUBIN container: version 1,
// 2 images, entries {sm, kind, offset, size} then the payloads ("abc" is
// the sm_80 cubin at offset 64, the sm_90 PTX "xy" gets its NUL).
// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "MPGPUBIN\01\00\00\00\02\00\00\00P\00\00\00\00\00\00\00@\00\00\00\00\00\00\00\03\00\00\00\00\00\00\00Z\00\00\00\01\00\00\00C\00\00\00\00\00\00\00\03\00\00\00\00\00\00\00abcxy\00">]
module attributes {gpu.container_module} {
  gpu.binary @kernels [
    #gpu.object<#nvvm.target<chip = "sm_80">, bin = "abc">,
    #gpu.object<#nvvm.target<chip = "sm_90">, assembly = "xy">
  ]
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{'gpu.binary' op has an object for #rocdl.target<chip = "gfx90a">, not an NVVM sm_XY target}}
  gpu.binary @amd [#gpu.object<#rocdl.target<chip = "gfx90a">, bin = "abc">]
}
