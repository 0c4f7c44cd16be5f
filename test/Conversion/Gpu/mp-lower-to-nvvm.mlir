// The CUDA pipeline from mp ops to PTX, per kernel family. Today every
// linalg op is its own kernel with one thread per output element (the
// baseline the Tensor Core and warp-reduction kernels of issue 5 replace);
// these checks pin what that baseline emits.
// REQUIRES: ptxas
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_90 format=isa" | FileCheck %s
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_80,sm_90" | FileCheck %s --check-prefix=BIN

// Host code: device buffers from the runtime, one launch per linalg op,
// blocks sized to the work (128 outputs: one block of 128 threads).
// CHECK-LABEL: llvm.func @matmul_f16
//       CHECK:   llvm.call @mp_cuda_memref_alloc
//       CHECK:   gpu.launch_func @matmul_f16_kernel::@matmul_f16_kernel
//       CHECK:   gpu.launch_func @matmul_f16_kernel_0::@matmul_f16_kernel
//  CHECK-SAME:     threads in (%[[T128:.+]], %{{.+}}, %{{.+}})
//       CHECK:   gpu.launch_func @matmul_f16_kernel_1::@matmul_f16_kernel
//       CHECK:   llvm.call @mp_cuda_memref_free
// The f16 contraction reads f16, accumulates in f32 (k loop unrolled, bounds
// known in the kernel), and a cast kernel rounds the result to f16 once.
//       CHECK: gpu.binary @matmul_f16_kernel_0 {{.*}}.target sm_90{{.*}}.maxntid 128, 1, 1{{.*}}ld.global.b16{{.*}}cvt.f32.f16{{.*}}mul.rn.f32{{.*}}add.rn.f32{{.*}}ld.global.b16
//       CHECK: gpu.binary @matmul_f16_kernel_1 {{.*}}ld.global.b32{{.*}}cvt.rn.f16.f32{{.*}}st.global.b16
func.func @matmul_f16(%x: tensor<4x64xf16>, %w: tensor<64x32xf16>) -> tensor<4x32xf16> {
  %0 = mp.matmul %x, %w : (tensor<4x64xf16>, tensor<64x32xf16>) -> tensor<4x32xf16>
  return %0 : tensor<4x32xf16>
}

// Softmax: max (NaN-propagating), exp (libdevice, ex2.approx), sum and divide kernels.
// CHECK-LABEL: llvm.func @softmax
//       CHECK: gpu.binary @softmax_kernel_{{[0-9]+}} {{.*}}max.NaN.f32
//       CHECK: gpu.binary @softmax_kernel_{{[0-9]+}} {{.*}}ex2.approx.ftz.f32
//       CHECK: gpu.binary @softmax_kernel_{{[0-9]+}} {{.*}}div.rn.f32
func.func @softmax(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = mp.softmax %x {axes = array<i64: 1>} : tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// With cubins, each kernel module holds one MPGPUBIN container with an image
// per architecture.
// BIN: gpu.binary @matmul_f16_kernel  [#gpu.object<{{.*}}, bin = "MPGPUBIN\01\00\00\00\02\00\00\00P\00\00\00\00\00\00\00
