// The CUDA pipeline from mp ops to PTX, per kernel family: f16
// contractions (MatMul, Gemm, Conv) run on Tensor Cores, row reductions are
// block reductions, the other ops one thread per output element. Every
// kernel of the module lands in one gpu.binary (@mp_kernels); its PTX is
// printed one line per instruction by Inputs/ptx-of-binaries.py so that
// each kernel entry is checked on its own.
// REQUIRES: ptxas
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_90 format=isa" | FileCheck %s --check-prefix=HOST
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_90 format=isa" | FileCheck %s --check-prefix=ONE
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_90 format=isa" | %python %inputs/ptx-of-binaries.py | FileCheck %s
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_80 format=isa tensor-cores=0" | %python %inputs/ptx-of-binaries.py | FileCheck %s --check-prefix=NOTC
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_75,sm_90 format=isa" | %python %inputs/ptx-of-binaries.py | FileCheck %s --check-prefix=NOTC
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_80,sm_90" | FileCheck %s --check-prefix=BIN
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_90 format=isa" | %python %inputs/ptx-of-binaries.py | FileCheck %s --check-prefix=ATT
// RUN: mp-opt %s --mp-lower-to-nvvm="chip=sm_90 format=isa flash-attention=0" | %python %inputs/ptx-of-binaries.py | FileCheck %s --check-prefix=MAT

// Host code: one launch, the contraction on one warp (4 rows fit one
// 16-row tile, 32 columns one warp's four 8-column tiles). Its accumulators
// start at zero (the fill is no launch of its own) and are rounded to f16
// as they are stored (the cast is no launch either), so no f32 temporary
// and no arena are needed.
// HOST-LABEL: llvm.func @matmul_f16
//   HOST-NOT:   llvm.call @mp_cuda_memref_alloc
//       HOST:   gpu.launch_func @mp_kernels::@matmul_f16_kernel blocks
//  HOST-SAME:     threads in (%[[T32:.+]], %{{.+}}, %{{.+}})
//   HOST-NOT:   gpu.launch_func
//       HOST:   llvm.return
// 64x64 outputs of a Gemm: 4 row tiles x 2 column tiles of 32, 8 warps in 2
// blocks of 128 threads.
// HOST-LABEL: llvm.func @gemm_f16_trans_b
//       HOST:   gpu.launch_func @mp_kernels::@gemm_f16_trans_b_kernel blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads in (%{{.+}}, %{{.+}}, %{{.+}})
// Every kernel sits in the one binary.
//      ONE: gpu.binary @mp_kernels
//  ONE-NOT: gpu.binary

// The contraction: one warp; A's pairs along k are one 32-bit load; four
// m16n8k16 Tensor Core MMAs (f16 in, f32 accumulate) per k step; each
// accumulator rounded to f16 once, as it is stored.
//       CHECK: // binary mp_kernels for sm_90
//       CHECK: .target sm_90
// CHECK-LABEL: .entry matmul_f16_kernel(
//       CHECK: .maxntid 32, 1, 1
//       CHECK: ld.global.b32
// CHECK-COUNT-4: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//       CHECK: cvt.rn.f16.f32
//       CHECK: st.global.b16
// Without Tensor Cores (asked, or a chip before sm_80): one thread per
// output, products converted and summed in f32.
// NOTC-LABEL: .entry matmul_f16_kernel(
//       NOTC: ld.global.b16
//       NOTC: cvt.f32.f16
//       NOTC: mul.rn.f32
//       NOTC: add.rn.f32
//   NOTC-NOT: mma.sync
func.func @matmul_f16(%x: tensor<4x64xf16>, %w: tensor<64x32xf16>) -> tensor<4x32xf16> {
  %0 = mp.matmul %x, %w : (tensor<4x64xf16>, tensor<64x32xf16>) -> tensor<4x32xf16>
  return %0 : tensor<4x32xf16>
}

// Gemm with a transposed B ([N, K], as linear layers store weights): both
// operands' pairs along k are 32-bit loads.
// CHECK-LABEL: .entry gemm_f16_trans_b_kernel(
//       CHECK: .maxntid 128, 1, 1
//       CHECK: ld.global.b32
//       CHECK: ld.global.b32
//       CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @gemm_f16_trans_b(%x: tensor<64x128xf16>, %w: tensor<64x128xf16>) -> tensor<64x64xf16> {
  %0 = mp.gemm %x, %w {trans_b = true} : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}

// Conv1d as an implicit GEMM: rows are (batch, time), columns the output
// channels, the reduction spans input channels x taps; the padded input is
// gathered per element.
// CHECK-LABEL: .entry conv1d_f16_kernel_{{[0-9]+}}(
//       CHECK: .maxntid 128, 1, 1
//       CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @conv1d_f16(%x: tensor<1x32x64xf16>, %w: tensor<16x32x3xf16>) -> tensor<1x16x64xf16> {
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 1, 1>, strides = array<i64: 1>} : (tensor<1x32x64xf16>, tensor<16x32x3xf16>) -> tensor<1x16x64xf16>
  return %0 : tensor<1x16x64xf16>
}

// Softmax over rows of 64: one kernel, one block of 64 threads per row.
// It finds the row's max (warp shuffles, then shared memory across warps;
// NaN-propagating), writes exp(x - max) through libdevice (ex2.approx),
// sums what each thread wrote the same way (a second shared buffer) and
// divides it by the sum. The reduced values are never stored.
// CHECK-LABEL: .entry softmax_kernel(
//       CHECK: .maxntid 64, 1, 1
//       CHECK: .shared .align 4 .b8 [[MAX:__wg_softmax_kernel_0]][128];
//       CHECK: .shared .align 4 .b8 [[SUM:__wg_softmax_kernel_1]][128];
//       CHECK: shfl.sync.bfly.b32
//       CHECK: max.NaN.f32
//       CHECK: bar.sync
//       CHECK: st.shared.b32 {{.*}}[[[MAX]]]
//       CHECK: ex2.approx.ftz.f32
//       CHECK: shfl.sync.bfly.b32
//       CHECK: add.rn.f32
//       CHECK: st.shared.b32 {{.*}}[[[SUM]]]
//       CHECK: div.rn.f32
//   CHECK-NOT: .entry softmax_kernel
func.func @softmax(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %0 = mp.softmax %x {axes = array<i64: 1>} : tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// Rows that fit a warp (16 here, a per-head norm's) take a warp each, four
// to a block of 128 threads: butterfly shuffles over the whole warp (the
// idle lanes hold the identity), no shared memory and no barrier.
// CHECK-LABEL: .entry softmax_short_rows_kernel(
//       CHECK: .maxntid 128, 1, 1
//   CHECK-NOT: .shared
//   CHECK-NOT: bar.sync
//       CHECK: shfl.sync.bfly.b32
//       CHECK: max.NaN.f32
//       CHECK: ex2.approx.ftz.f32
//       CHECK: shfl.sync.bfly.b32
//       CHECK: add.rn.f32
//       CHECK: div.rn.f32
//   CHECK-NOT: bar.sync
//       CHECK: .entry
func.func @softmax_short_rows(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = mp.softmax %x {axes = array<i64: 1>} : tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Decode attention over a cache of 1024 keys, f16: split-KV flash
// attention (mp-lower-to-linalg attention=gpu-flash). The first kernel
// is one warp per (KV head, split of 64+ keys): f16 K/V loads, the Q.K dot
// summed over the warp by butterfly shuffles, an online softmax (running
// max, exp2), f32 partials out; the second combines the splits and rounds
// to f16. No score matrix, so no Tensor Core contraction either.
// ATT: .entry attention_decode_kernel(
// ATT: .maxntid 32, 1, 1
// ATT: ld.global.b16
// ATT-COUNT-5: shfl.sync.bfly.b32
// ATT: max.NaN.f32
// ATT: ex2.approx.ftz.f32
// ATT: st.global.b32
// ATT: .entry attention_decode_kernel_{{[0-9]+}}(
// ATT: max.NaN.f32
// ATT: ex2.approx.ftz.f32
// ATT: div.rn.f32
// ATT: cvt.rn.f16.f32
// ATT: st.global.b16
// ATT-NOT: mma.sync
// With flash-attention=0 the scores are materialized: Q.K^T on Tensor
// Cores, then the softmax's max, exp and sum in one kernel of block
// reductions (a shared buffer each). P.V keeps the probabilities in f32,
// so it is one thread per output, dividing by the sum as it reads them.
// MAT: .entry attention_decode_kernel
// MAT: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// MAT: .entry attention_decode_kernel
// MAT: .shared .align 4 .b8 __wg_attention_decode_kernel_{{[0-9]+}}_0[128];
// MAT: .shared .align 4 .b8 __wg_attention_decode_kernel_{{[0-9]+}}_1[128];
// MAT: shfl.sync.bfly.b32
// MAT: max.NaN.f32
// MAT: ex2.approx.ftz.f32
// MAT: shfl.sync.bfly.b32
// MAT: add.rn.f32
// MAT: .entry attention_decode_kernel
// MAT: div.rn.f32
// MAT-NOT: mma.sync
func.func @attention_decode(%q: tensor<1x8x1x64xf16>, %k: tensor<1x8x1024x64xf16>, %v: tensor<1x8x1024x64xf16>) -> tensor<1x8x1x64xf16> {
  %o, %pk, %pv, %qk = mp.attention %q, %k, %v {scale = 0.125 : f32} : (tensor<1x8x1x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>) -> (tensor<1x8x1x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1x1024xf16>)
  return %o : tensor<1x8x1x64xf16>
}

// With cubins, the binary holds one MPGPUBIN container with an image per
// architecture.
// BIN: gpu.binary @mp_kernels  [#gpu.object<{{.*}}, bin = "MPGPUBIN\01\00\00\00\02\00\00\00P\00\00\00\00\00\00\00
