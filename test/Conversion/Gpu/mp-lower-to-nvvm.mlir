// The CUDA pipeline from mp ops to PTX, per kernel family: f16
// contractions (MatMul, Gemm, Conv) run on Tensor Cores; the other ops are
// one kernel per linalg op with one thread per output element (the baseline
// the warp-reduction kernels of issue 5 replace).
// REQUIRES: ptxas
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_90 format=isa" | FileCheck %s
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_80 format=isa tensor-cores=0" | FileCheck %s --check-prefix=NOTC
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_75,sm_90 format=isa" | FileCheck %s --check-prefix=NOTC
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_80,sm_90" | FileCheck %s --check-prefix=BIN

// Host code: device buffers from the runtime, one launch per kernel: zero
// the accumulator, one warp (4 rows fit one 16-row tile, 32 columns one
// warp's four 8-column tiles), round to f16.
// CHECK-LABEL: llvm.func @matmul_f16
//       CHECK:   llvm.call @mp_cuda_memref_alloc
//       CHECK:   gpu.launch_func @matmul_f16_kernel::@matmul_f16_kernel
//       CHECK:   gpu.launch_func @matmul_f16_kernel_0::@matmul_f16_kernel
//  CHECK-SAME:     threads in (%[[T32:.+]], %{{.+}}, %{{.+}})
//       CHECK:   gpu.launch_func @matmul_f16_kernel_1::@matmul_f16_kernel
//       CHECK:   llvm.call @mp_cuda_memref_free
// The contraction: one warp; A's pairs along k are one 32-bit load; four
// m16n8k16 Tensor Core MMAs (f16 in, f32 accumulate) per k step; a cast
// kernel rounds the result to f16 once.
//       CHECK: gpu.binary @matmul_f16_kernel_0 {{.*}}.target sm_90{{.*}}.maxntid 32, 1, 1{{.*}}ld.global.b32{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//       CHECK: gpu.binary @matmul_f16_kernel_1 {{.*}}ld.global.b32{{.*}}cvt.rn.f16.f32{{.*}}st.global.b16
// Without Tensor Cores (asked, or a chip before sm_80): one thread per
// output, products converted and summed in f32.
//  NOTC-LABEL: llvm.func @matmul_f16
//        NOTC: gpu.binary @matmul_f16_kernel_0 {{.*}}ld.global.b16{{.*}}cvt.f32.f16{{.*}}mul.rn.f32{{.*}}add.rn.f32
//    NOTC-NOT: mma.sync
func.func @matmul_f16(%x: tensor<4x64xf16>, %w: tensor<64x32xf16>) -> tensor<4x32xf16> {
  %0 = mp.matmul %x, %w : (tensor<4x64xf16>, tensor<64x32xf16>) -> tensor<4x32xf16>
  return %0 : tensor<4x32xf16>
}

// Gemm with a transposed B ([N, K], as linear layers store weights): both
// operands' pairs along k are 32-bit loads. 64x64 outputs: 4 row tiles x 2
// column tiles of 32, 8 warps in 2 blocks of 128 threads.
// CHECK-LABEL: llvm.func @gemm_f16_trans_b
//       CHECK:   gpu.launch_func @gemm_f16_trans_b_kernel_{{[0-9]+}}::@gemm_f16_trans_b_kernel blocks in (%[[B2:.+]], %{{.+}}, %{{.+}}) threads in (%[[T128:.+]], %{{.+}}, %{{.+}})
//       CHECK: gpu.binary @gemm_f16_trans_b_kernel_{{[0-9]+}} {{.*}}.maxntid 128, 1, 1{{.*}}ld.global.b32{{.*}}ld.global.b32{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @gemm_f16_trans_b(%x: tensor<64x128xf16>, %w: tensor<64x128xf16>) -> tensor<64x64xf16> {
  %0 = mp.gemm %x, %w {trans_b = true} : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}

// Conv1d as an implicit GEMM: rows are (batch, time), columns the output
// channels, the reduction spans input channels x taps; the padded input is
// gathered per element.
// CHECK-LABEL: llvm.func @conv1d_f16
//       CHECK: gpu.binary @conv1d_f16_kernel_{{[0-9]+}} {{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @conv1d_f16(%x: tensor<1x32x64xf16>, %w: tensor<16x32x3xf16>) -> tensor<1x16x64xf16> {
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 1, 1>, strides = array<i64: 1>} : (tensor<1x32x64xf16>, tensor<16x32x3xf16>) -> tensor<1x16x64xf16>
  return %0 : tensor<1x16x64xf16>
}

// Softmax over rows of 32: the max and the sum are block reductions (one
// block of 32 threads per row: warp shuffles, then shared memory across
// warps), the max NaN-propagating; exp through libdevice (ex2.approx) in
// between; then a divide kernel.
// CHECK-LABEL: llvm.func @softmax
//       CHECK: gpu.binary @softmax_kernel_{{[0-9]+}} {{.*}}.maxntid 32, 1, 1{{.*}}shfl.sync.bfly.b32{{.*}}max.NaN.f32{{.*}}st.shared
//       CHECK: gpu.binary @softmax_kernel_{{[0-9]+}} {{.*}}ex2.approx.ftz.f32
//       CHECK: gpu.binary @softmax_kernel_{{[0-9]+}} {{.*}}.maxntid 32, 1, 1{{.*}}shfl.sync.bfly.b32{{.*}}add.rn.f32{{.*}}st.shared
//       CHECK: gpu.binary @softmax_kernel_{{[0-9]+}} {{.*}}div.rn.f32
func.func @softmax(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = mp.softmax %x {axes = array<i64: 1>} : tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// With cubins, each kernel module holds one MPGPUBIN container with an image
// per architecture.
// BIN: gpu.binary @matmul_f16_kernel  [#gpu.object<{{.*}}, bin = "MPGPUBIN\01\00\00\00\02\00\00\00P\00\00\00\00\00\00\00
