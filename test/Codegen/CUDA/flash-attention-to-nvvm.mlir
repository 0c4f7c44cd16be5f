// Split-KV flash attention on the CUDA target (mp-lower-to-linalg
// attention=gpu-flash, the default of mp-lower-to-nvvm).
// REQUIRES: ptxas
// RUN: mp-opt %s -split-input-file --mp-lower-to-nvvm="chip=sm_90 format=isa" | FileCheck %s --check-prefix=HOST
// RUN: mp-opt %s -split-input-file --mp-lower-to-nvvm="chip=sm_80 format=isa" | %python %inputs/ptx-of-binaries.py | FileCheck %s

// Grouped-query decode over an in-place cache of 4096 positions: the host
// reads the fill level (a host-resident argument, as mp-compile
// --max-seq-len makes it), writes the new K and V at it (one launch for
// both: they touch distinct buffers), and launches the partial kernel with
// as many key splits as the filled keys need.
// HOST-LABEL: llvm.func @decode_in_place(
//       HOST:   %[[RAW:.+]] = llvm.load %{{.+}} : !llvm.ptr -> i64
//       HOST:   llvm.intr.smin(%[[RAW]]
//       HOST:   gpu.launch_func  @mp_kernels::@decode_in_place_kernel blocks
//       HOST:   gpu.launch_func  @mp_kernels::@decode_in_place_kernel_0 blocks in (%{{[^,]+}}, %[[SPLITS:[^,]+]], %{{[^)]+}}) threads in (%[[WARP:[^,]+]],
//       HOST:   gpu.launch_func  @mp_kernels::@decode_in_place_kernel_1 blocks in
// The partial kernel: the 4 query heads of a KV head (g = 4) are 4 rows of
// one warp, so each K and V element is loaded once per key for all of them
// (two 16-bit loads each: D = 64 is two lanes' worth), then one butterfly
// sum per row and the causal test of the key against fill + position.
// CHECK-LABEL: .entry decode_in_place_kernel_0(
//       CHECK: .maxntid 32, 1, 1
//       CHECK: $L__BB{{[0-9_]+}}:
// CHECK-COUNT-4: ld.global.b16
//   CHECK-NOT: ld.global
// CHECK-COUNT-20: shfl.sync.bfly.b32
//       CHECK: ex2.approx.ftz.f32
//       CHECK: st.global.b32
// The combine kernel: one warp per query row, f16 out.
// CHECK-LABEL: .entry decode_in_place_kernel_1(
//       CHECK: div.rn.f32
//       CHECK: cvt.rn.f16.f32
//       CHECK: st.global.b16
//   CHECK-NOT: mma.sync
func.func @decode_in_place(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x1x64xf16>, %v: tensor<2x2x1x64xf16>, %ck: tensor<2x2x4096x64xf16>, %cv: tensor<2x2x4096x64xf16>, %len: tensor<i64> {mp.host_resident}) -> (tensor<2x8x1x64xf16>, tensor<2x2x4096x64xf16>, tensor<2x2x4096x64xf16>) {
  %o, %pk, %pv, %qk = mp.attention %q, %k, %v past(%ck, %cv) past_length %len {is_causal = true} : (tensor<2x8x1x64xf16>, tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>, tensor<2x2x4096x64xf16>, tensor<2x2x4096x64xf16>, tensor<i64>) -> (tensor<2x8x1x64xf16>, tensor<2x2x4096x64xf16>, tensor<2x2x4096x64xf16>, tensor<2x8x1x4096xf16>)
  return %o, %pk, %pv : tensor<2x8x1x64xf16>, tensor<2x2x4096x64xf16>, tensor<2x2x4096x64xf16>
}

// -----

// Causal prefill of 64 positions, f32, soft-capped: tiles of 8 query rows
// per warp (grid z), the cap as tanh, no score matrix.
// HOST-LABEL: llvm.func @prefill_causal(
//       HOST:   gpu.launch_func  @mp_kernels::@prefill_causal_kernel blocks in (%{{[^,]+}}, %{{[^,]+}}, %[[TILES:[^)]+]])
//       HOST:   gpu.launch_func  @mp_kernels::@prefill_causal_kernel_0
// CHECK-LABEL: .entry prefill_causal_kernel(
// CHECK-COUNT-8: ld.global.b32
// CHECK-COUNT-40: shfl.sync.bfly.b32
// The cap: scores / 30 (0f41F00000) into tanh.
//       CHECK: div.rn.f32 {{.*}}, 0f41F00000
// CHECK-LABEL: .entry prefill_causal_kernel_0(
//       CHECK: div.rn.f32
//       CHECK: st.global.b32
//   CHECK-NOT: mma.sync
func.func @prefill_causal(%q: tensor<1x4x64x32xf32>, %k: tensor<1x4x64x32xf32>, %v: tensor<1x4x64x32xf32>) -> tensor<1x4x64x32xf32> {
  %o, %pk, %pv, %qk = mp.attention %q, %k, %v {is_causal = true, softcap = 30.0 : f32} : (tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>) -> (tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x64xf32>)
  return %o : tensor<1x4x64x32xf32>
}

// -----

// A decode step as torch exports it, at mixed precision: an fp32 model's
// caches around f16 attention, the past joined with the new key, and the
// additive mask built from attention_mask (broadcast over heads). The
// partial kernel reads the f32 past, rounds it to f16 as the casts would,
// and stores each row it reads into the f32 joined cache: no kernel casts
// or copies the caches, so they take two launches in all.
// HOST-LABEL: llvm.func @decode_joined_past(
//       HOST:   gpu.launch_func  @mp_kernels::@decode_joined_past_kernel blocks
//       HOST:   gpu.launch_func  @mp_kernels::@decode_joined_past_kernel_0 blocks
//   HOST-NOT:   gpu.launch_func
// The partial kernel: the mask read 32 keys at a time (a key per lane),
// the key's new row (f16) stored as f32 into the joined caches, one
// shuffle handing the key's mask value to all 8 rows (it broadcasts over
// the heads), and the key's past row: f32 loads rounded to f16.
// CHECK-LABEL: .entry decode_joined_past_kernel(
//       CHECK: ld.global.b16
//       CHECK: st.global.b32
//       CHECK: shfl.sync.bfly.b32
//       CHECK: shfl.sync.idx.b32
//   CHECK-NOT: shfl.sync.idx
//       CHECK: ld.global.b32
//  CHECK-NEXT: cvt.rn.f16.f32
// CHECK-LABEL: .entry decode_joined_past_kernel_0(
//   CHECK-NOT: mma.sync
func.func @decode_joined_past(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x1x64xf16>, %v: tensor<2x2x1x64xf16>, %mask: tensor<2x1x1x301xf16>, %ck: tensor<2x2x300x64xf32>, %cv: tensor<2x2x300x64xf32>) -> (tensor<2x8x1x64xf16>, tensor<2x2x301x64xf32>, tensor<2x2x301x64xf32>) {
  %pk = mp.cast %ck {to = f16} : tensor<2x2x300x64xf32> -> tensor<2x2x300x64xf16>
  %pv = mp.cast %cv {to = f16} : tensor<2x2x300x64xf32> -> tensor<2x2x300x64xf16>
  %o, %nk, %nv, %qk = mp.attention %q, %k, %v mask %mask past(%pk, %pv) : (tensor<2x8x1x64xf16>, tensor<2x2x1x64xf16>, tensor<2x2x1x64xf16>, tensor<2x1x1x301xf16>, tensor<2x2x300x64xf16>, tensor<2x2x300x64xf16>) -> (tensor<2x8x1x64xf16>, tensor<2x2x301x64xf16>, tensor<2x2x301x64xf16>, tensor<2x8x1x301xf16>)
  %rk = mp.cast %nk {to = f32} : tensor<2x2x301x64xf16> -> tensor<2x2x301x64xf32>
  %rv = mp.cast %nv {to = f32} : tensor<2x2x301x64xf16> -> tensor<2x2x301x64xf32>
  return %o, %rk, %rv : tensor<2x8x1x64xf16>, tensor<2x2x301x64xf32>, tensor<2x2x301x64xf32>
}
