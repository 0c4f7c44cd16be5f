// Verifier and result-type inference errors of the mp dialect.
// RUN: mp-opt %s -split-input-file -verify-diagnostics

func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{operand shapes do not broadcast: tensor<2x3xf32>, tensor<4xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
func.func @add_elt(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) -> tensor<2x3xf32> {
  // expected-error @+1 {{requires the same element type for all operands}}
  %0 = mp.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
func.func @result_mismatch(%a: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %0 = mp.relu %a : tensor<2x3xf32>
  // expected-error @+2 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %1 = mp.add %0, %0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
// -----
func.func @reshape_count(%a: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %s = mp.constant dense<[4, 2]> : tensor<2xi64>
  // expected-error @+2 {{cannot reshape 'tensor<2x3xf32>' (6 elements) into 8 elements}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.reshape %a, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
// -----
func.func @reshape_two_minus1(%a: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %s = mp.constant dense<[-1, -1]> : tensor<2xi64>
  // expected-error @+2 {{at most one shape entry may be -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.reshape %a, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
// -----
func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32> {
  // expected-error @+1 {{input channels (4) must equal weight channels (3) times group (1)}}
  %0 = mp.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}
// -----
func.func @conv_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{input channels (4) must equal weight channels (2) times group (4)}}
  %0 = mp.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}
// -----
func.func @gemm_c(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{C of type 'tensor<3xf32>' does not broadcast to [M, N] = 'tensor<2x4xf32>'}}
  %0 = mp.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
// -----
func.func @softmax_axes(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{axes must be contiguous and increasing}}
  %0 = mp.softmax %a {axes = array<i64: 0, 2>} : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
// -----
func.func @softmax_range(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{axis 3 is out of range for rank 3 (axes are normalized)}}
  %0 = mp.softmax %a {axes = array<i64: 3>} : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
// -----
func.func @split_sizes(%a: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>) {
  // expected-error @+1 {{split sizes sum to 5 but the axis has size 6}}
  %0:2 = mp.split %a {axis = 1 : i64, split = array<i64: 2, 3>} : tensor<2x6xf32> -> tensor<2x2xf32>, tensor<2x3xf32>
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x3xf32>
}
// -----
func.func @split_count(%a: tensor<2x6xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2x2xf32>', 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.split %a {axis = 1 : i64, split = array<i64: 2, 4>} : tensor<2x6xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// -----
func.func @transpose_perm(%a: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  // expected-error @+2 {{perm is not a permutation of 0..2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.transpose %a {perm = array<i64: 2, 2, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}
// -----
func.func @transpose_len(%a: tensor<2x3x4xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{perm has 2 entries for rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.transpose %a {perm = array<i64: 1, 0>} : tensor<2x3x4xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
func.func @attention_heads(%q: tensor<1x6x4x16xf32>, %k: tensor<1x4x4x16xf32>, %v: tensor<1x4x4x16xf32>) -> tensor<1x6x4x16xf32> {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  %0:4 = mp.attention %q, %k, %v : (tensor<1x6x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> (tensor<1x6x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>, tensor<1x6x4x4xf32>)
  return %0#0 : tensor<1x6x4x16xf32>
}
// -----
func.func @attention_past_length_without_cache(%q: tensor<1x2x1x8xf32>, %l: tensor<i64>) -> tensor<1x2x1x8xf32> {
  // expected-error @+1 {{past_length needs past_key and past_value (the caches it indexes)}}
  %0:4 = mp.attention %q, %q, %q past_length %l : (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<i64>) -> (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x1xf32>)
  return %0#0 : tensor<1x2x1x8xf32>
}
// -----
func.func @attention_past_length_rank(%q: tensor<1x2x1x8xf32>, %c: tensor<1x2x4x8xf32>, %l: tensor<1xi64>) -> tensor<1x2x1x8xf32> {
  // expected-error @+1 {{past_length must be a scalar, got 'tensor<1xi64>'}}
  %0:4 = mp.attention %q, %q, %q past(%c, %c) past_length %l : (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1xi64>) -> (tensor<1x2x1x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x1x4xf32>)
  return %0#0 : tensor<1x2x1x8xf32>
}
// -----
func.func @attention_cache_too_small(%q: tensor<1x2x3x8xf32>, %c: tensor<1x2x2x8xf32>, %l: tensor<i64>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{the cache holds 2 positions, fewer than the 3 new ones}}
  %0:4 = mp.attention %q, %q, %q past(%c, %c) past_length %l : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<i64>) -> (tensor<1x2x3x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x3x2xf32>)
  return %0#0 : tensor<1x2x3x8xf32>
}
// -----
func.func @attention_3d_heads(%q: tensor<1x4x64xf32>, %k: tensor<1x4x64xf32>, %v: tensor<1x4x64xf32>) -> tensor<1x4x64xf32> {
  // expected-error @+2 {{Q hidden size 64 is not divisible by 3 heads}}
  // expected-error @+1 {{K hidden size 64 is not divisible by 3 heads}}
  %0:4 = mp.attention %q, %k, %v {q_num_heads = 3 : i64, kv_num_heads = 3 : i64} : (tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64xf32>) -> (tensor<1x4x64xf32>, tensor<1x3x4x21xf32>, tensor<1x3x4x21xf32>, tensor<1x3x4x4xf32>)
  return %0#0 : tensor<1x4x64xf32>
}
// -----
func.func @layer_norm_scale(%x: tensor<2x8xf32>, %s: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale of type 'tensor<4xf32>' does not broadcast to the normalized dims of 'tensor<2x8xf32>'}}
  %0:3 = mp.layer_norm %x, %s {stash_type = f32} : (tensor<2x8xf32>, tensor<4xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %0#0 : tensor<2x8xf32>
}
// -----
func.func @clip_bounds(%x: tensor<4xf32>, %lo: tensor<i32>) -> tensor<4xf32> {
  // expected-error @+1 {{bounds must have the input's element type 'f32', got 'tensor<i32>'}}
  %0 = mp.clip %x min %lo : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @clip_bounds_rank(%x: tensor<4xf32>, %lo: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{bounds must be scalars, got 'tensor<4xf32>'}}
  %0 = mp.clip %x min %lo : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @if_count(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{branch yields 2 values for 1 results}}
  %0 = mp.if %c : tensor<i1> -> tensor<2xf32> {
    mp.yield %x, %x : tensor<2xf32>, tensor<2xf32>
  } else {
    mp.yield %x : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
// -----
func.func @if_type(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf16>) -> tensor<2xf32> {
  // expected-error @+1 {{branch value #0 of type 'tensor<2xf16>' is not compatible with result type 'tensor<2xf32>'}}
  %0 = mp.if %c : tensor<i1> -> tensor<2xf32> {
    mp.yield %x : tensor<2xf32>
  } else {
    mp.yield %y : tensor<2xf16>
  }
  return %0 : tensor<2xf32>
}
// -----
func.func @if_cond(%c: tensor<2xi1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{condition must hold a single element, got 'tensor<2xi1>'}}
  %0 = mp.if %c : tensor<2xi1> -> tensor<2xf32> {
    mp.yield %x : tensor<2xf32>
  } else {
    mp.yield %x : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}
// -----
func.func @gelu(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "erf"}}
  %0 = mp.gelu %x {approximate = "erf"} : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @pad_mode(%x: tensor<2xf32>, %p: tensor<2xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{mode must be constant, reflect, edge or wrap, got mirror}}
  %0 = mp.pad %x, %p {mode = "mirror"} : (tensor<2xf32>, tensor<2xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
// -----
func.func @pad_len(%x: tensor<2x3xf32>, %p: tensor<3xi64>) -> tensor<?x?xf32> {
  %0 = mp.pad %x, %p : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
// -----
func.func @resize_both(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>, %z: tensor<4xi64>) -> tensor<?x?x?x?xf32> {
  // expected-error @+1 {{exactly one of scales and sizes must be given}}
  %0 = mp.resize %x scales %s sizes %z : (tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
// -----
func.func @resize_mode(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  // expected-error @+1 {{mode must be nearest, linear or cubic, got area}}
  %0 = mp.resize %x scales %s {mode = "area"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
// -----
func.func @lstm_dir(%x: tensor<5x2x8xf32>, %w: tensor<1x64x8xf32>, %r: tensor<1x64x16xf32>) -> tensor<5x1x2x16xf32> {
  // expected-error @+1 {{direction must be forward, reverse or bidirectional}}
  %0:3 = mp.lstm %x, %w, %r {direction = "backwards", hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>)
  return %0#0 : tensor<5x1x2x16xf32>
}
// -----
func.func @lstm_w(%x: tensor<5x2x8xf32>, %w: tensor<1x60x8xf32>, %r: tensor<1x64x16xf32>) -> tensor<5x1x2x16xf32> {
  // expected-error @+1 {{W must be [num_directions, 4*hidden_size, input_size], got 'tensor<1x60x8xf32>'}}
  %0:3 = mp.lstm %x, %w, %r {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x60x8xf32>, tensor<1x64x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>)
  return %0#0 : tensor<5x1x2x16xf32>
}
// -----
func.func @mod_fmod(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{fmod must be set for floating-point operands (ONNX Mod requires fmod=1 for floats)}}
  %0 = mp.mod %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @matmul_k(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{contraction dims differ: 3 vs 4 ('tensor<2x3xf32>' x 'tensor<4x5xf32>')}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
// -----
func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<?x?xf32> {
  // expected-error @+2 {{inputs differ in dim 1: 3 vs 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
// -----
func.func @squeeze_non1(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{cannot squeeze axis 0 of size 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.squeeze %a {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// -----
func.func @cumsum_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for 'tensor<2x3xf32>'}}
  %0 = mp.cumsum %a {axis = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
func.func @where_cond(%c: tensor<3xi1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{operand shapes do not broadcast: tensor<3xi1>, tensor<2xf32>, tensor<2xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.where %c, %a, %a : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @where_types(%c: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<2xf32> {
  // expected-error @+1 {{x and y must have the same element type, got 'tensor<2xf32>' and 'tensor<2xf16>'}}
  %0 = mp.where %c, %a, %b : (tensor<2xi1>, tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
func.func @batch_norm(%x: tensor<2x4x3xf32>, %s: tensor<3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{scale must be 1-D of size 4, got 'tensor<3xf32>'}}
  %0 = mp.batch_norm %x, %s, %s, %s, %s : (tensor<2x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}
// -----
func.func @group_norm(%x: tensor<2x6x3xf32>, %s: tensor<6xf32>) -> tensor<2x6x3xf32> {
  // expected-error @+1 {{channels (6) must be divisible by num_groups (4)}}
  %0 = mp.group_norm %x, %s, %s {num_groups = 4 : i64} : (tensor<2x6x3xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x3xf32>
  return %0 : tensor<2x6x3xf32>
}
// -----
func.func @scatter_red(%x: tensor<4xf32>, %i: tensor<1x1xi64>, %u: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction must be none, add, mul, max or min, got avg}}
  %0 = mp.scatter_nd %x, %i, %u {reduction = "avg"} : (tensor<4xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @tensor_scatter_mode(%x: tensor<1x2x8x4xf32>, %u: tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{mode must be linear or circular, got ring}}
  %0 = mp.tensor_scatter %x, %u {mode = "ring"} : (tensor<1x2x8x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}
// -----
func.func @pool_kernel(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{kernel_shape, dilations and strides need 2 entries and pads 4 for a rank-4 input}}
  %0 = mp.average_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}
// -----
func.func @cos_value(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{value must hold exactly one element}}
  %0 = mp.constant_of_shape %s {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xi64> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
// -----
func.func @prelu_slope(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{operand shapes do not broadcast: tensor<2x3xf32>, tensor<2xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.prelu %x, %s : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
func.func @skip_ln(%x: tensor<2x3x8xf32>, %s: tensor<2x3x4xf32>, %g: tensor<8xf32>) -> tensor<2x3x8xf32> {
  // expected-error @+1 {{skip of type 'tensor<2x3x4xf32>' does not broadcast to the input 'tensor<2x3x8xf32>'}}
  %0:4 = mp.ms.skip_layer_norm %x, %s, %g : (tensor<2x3x8xf32>, tensor<2x3x4xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>, tensor<2x3x8xf32>)
  return %0#0 : tensor<2x3x8xf32>
}
// -----
func.func @gqa_heads(%q: tensor<1x4x64xf32>, %k: tensor<1x4x48xf32>, %sl: tensor<1x1xi32>, %t: tensor<1xi32>) -> tensor<1x4x64xf32> {
  // expected-error @+1 {{num_heads (4) must be a positive multiple of kv_num_heads (3)}}
  %0:3 = mp.ms.group_query_attention %q key %k value %k seqlens_k %sl total %t {num_heads = 4 : i64, kv_num_heads = 3 : i64} : (tensor<1x4x64xf32>, tensor<1x4x48xf32>, tensor<1x4x48xf32>, tensor<1x1xi32>, tensor<1xi32>) -> (tensor<1x4x64xf32>, tensor<1x3x4x16xf32>, tensor<1x3x4x16xf32>)
  return %0#0 : tensor<1x4x64xf32>
}
// -----
func.func @ms_attention_w(%x: tensor<1x4x64xf32>, %w: tensor<32x192xf32>) -> tensor<1x4x64xf32> {
  // expected-error @+1 {{weights rows (32) must equal the input hidden size (64)}}
  %0:2 = mp.ms.attention %x, %w {num_heads = 4 : i64} : (tensor<1x4x64xf32>, tensor<32x192xf32>) -> (tensor<1x4x64xf32>, tensor<2x1x4x4x16xf32>)
  return %0#0 : tensor<1x4x64xf32>
}
// -----
func.func @ms_attention_mask_lengths(%x: tensor<2x4x64xf32>, %w: tensor<64x192xf32>, %m: tensor<3xi32>) -> tensor<2x4x64xf32> {
  // expected-error @+1 {{a 1-D mask_index holds the batch's key lengths (2 entries) or also their starts (4); got 3}}
  %0:2 = mp.ms.attention %x, %w mask_index %m {num_heads = 4 : i64} : (tensor<2x4x64xf32>, tensor<64x192xf32>, tensor<3xi32>) -> (tensor<2x4x64xf32>, tensor<2x2x4x4x16xf32>)
  return %0#0 : tensor<2x4x64xf32>
}
// -----
func.func @ms_attention_mask_3d(%x: tensor<2x4x64xf32>, %w: tensor<64x192xf32>, %m: tensor<2x4x5xi32>) -> tensor<2x4x64xf32> {
  // expected-error @+1 {{mask_index 'tensor<2x4x5xi32>' does not match the batch (2), queries (4) and keys (4): it must be [batch, keys] or [batch, queries, keys]}}
  %0:2 = mp.ms.attention %x, %w mask_index %m {num_heads = 4 : i64} : (tensor<2x4x64xf32>, tensor<64x192xf32>, tensor<2x4x5xi32>) -> (tensor<2x4x64xf32>, tensor<2x2x4x4x16xf32>)
  return %0#0 : tensor<2x4x64xf32>
}
// -----
func.func @ms_attention_mask_4d(%x: tensor<1x4x64xf32>, %w: tensor<64x192xf32>, %m: tensor<1x1x8x8xi32>) -> tensor<1x4x64xf32> {
  // expected-error @+1 {{Megatron's 4-D mask is not supported); got rank 4}}
  %0:2 = mp.ms.attention %x, %w mask_index %m {num_heads = 4 : i64} : (tensor<1x4x64xf32>, tensor<64x192xf32>, tensor<1x1x8x8xi32>) -> (tensor<1x4x64xf32>, tensor<2x1x4x4x16xf32>)
  return %0#0 : tensor<1x4x64xf32>
}
// -----
func.func @rms_norm(%x: tensor<2x8xf32>, %s: tensor<3xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{scale of type 'tensor<3xf32>' does not broadcast to the normalized dims of 'tensor<2x8xf32>'}}
  %0:2 = mp.rms_norm %x, %s {stash_type = f32} : (tensor<2x8xf32>, tensor<3xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>)
  return %0#0 : tensor<2x8xf32>
}
// -----
func.func @embed(%ids: tensor<2x3xi32>, %w: tensor<10x8xf32>, %p: tensor<4x6xf32>, %g: tensor<8xf32>) -> tensor<2x3x8xf32> {
  // expected-error @+1 {{position_embedding must be [N, 8], got 'tensor<4x6xf32>'}}
  %0:3 = mp.ms.embed_layer_norm %ids word %w position %p gamma %g beta %g : (tensor<2x3xi32>, tensor<10x8xf32>, tensor<4x6xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2xi32>, tensor<2x3x8xf32>)
  return %0#0 : tensor<2x3x8xf32>
}
// -----
func.func @conv_transpose_ch(%x: tensor<1x4x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x7x7xf32> {
  // expected-error @+1 {{input channels (4) must equal the weight's first dim (3)}}
  %0 = mp.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  return %0 : tensor<1x2x7x7xf32>
}
// -----
func.func @instance_norm(%x: tensor<2x4x3xf32>, %s: tensor<3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{scale must be 1-D of size 4, got 'tensor<3xf32>'}}
  %0 = mp.instance_norm %x, %s, %s : (tensor<2x4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}
// -----
func.func @cast_shape(%x: tensor<2x3xf32>) -> tensor<3x2xf16> {
  // expected-error @+2 {{inferred type(s) 'tensor<2x3xf16>' are incompatible with return type(s) of operation 'tensor<3x2xf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.cast %x {to = f16} : tensor<2x3xf32> -> tensor<3x2xf16>
  return %0 : tensor<3x2xf16>
}
// -----
func.func @gather_axis(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> tensor<2x2xf32> {
  // expected-error @+2 {{axis 2 is out of range for 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.gather %x, %i {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// -----
func.func @range_type(%a: tensor<i64>, %b: tensor<i32>) -> tensor<?xi64> {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = mp.range %a, %b, %a : (tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
// -----
func.func @einsum_bad(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{equation 'ij,jk->ik' has 2 input terms for 1 operands}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = mp.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// -----
// com.microsoft MultiHeadAttention: the hidden size (30) must be divisible by
// num_heads (4).
func.func @mha_heads(%q: tensor<1x4x30xf32>) -> tensor<1x4x30xf32> {
  // expected-error @+1 {{'mp.ms.multi_head_attention' op query hidden size 30 is not divisible by num_heads 4}}
  %0:3 = mp.ms.multi_head_attention %q key %q value %q {num_heads = 4 : i64} : (tensor<1x4x30xf32>, tensor<1x4x30xf32>, tensor<1x4x30xf32>) -> (tensor<1x4x30xf32>, tensor<1x4x4x7xf32>, tensor<1x4x4x7xf32>)
  return %0#0 : tensor<1x4x30xf32>
}
// -----
// ONNX RotaryEmbedding-23 without position_ids: cos_cache/sin_cache must be
// [batch, seq, rotary_dim / 2] = [1, 4, 8], not 2-D.
func.func @rotary_no_positions(%x: tensor<1x2x4x16xf32>, %c: tensor<8x4xf32>) -> tensor<1x2x4x16xf32> {
  // expected-error @+1 {{'mp.rotary_embedding' op cos_cache must be [batch, sequence, rotary_dim/2] (no position_ids), got 'tensor<8x4xf32>'}}
  %0 = mp.rotary_embedding %x, %c, %c : (tensor<1x2x4x16xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<1x2x4x16xf32>
  return %0 : tensor<1x2x4x16xf32>
}
// -----
// With position_ids the caches are [max_position, rotary_dim / 2] (2-D).
func.func @rotary_positions(%x: tensor<1x2x4x16xf32>, %c: tensor<1x4x8xf32>, %p: tensor<1x4xi64>) -> tensor<1x2x4x16xf32> {
  // expected-error @+1 {{'mp.rotary_embedding' op cos_cache must be [max_position, rotary_dim/2], got 'tensor<1x4x8xf32>'}}
  %0 = mp.rotary_embedding %x, %c, %c positions %p : (tensor<1x2x4x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4xi64>) -> tensor<1x2x4x16xf32>
  return %0 : tensor<1x2x4x16xf32>
}
// -----
func.func @bit_shift_direction(%x: tensor<2xui8>) -> tensor<2xui8> {
  // expected-error @+1 {{'mp.bit_shift' op direction must be LEFT or RIGHT, got 'UP'}}
  %0 = mp.bit_shift %x, %x {direction = "UP"} : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  return %0 : tensor<2xui8>
}
// -----
func.func @ms_rotary_positions(%x: tensor<1x4x32xf32>, %pos: tensor<3xi64>, %c: tensor<16x8xf32>) -> tensor<1x4x32xf32> {
  // expected-error @+1 {{'mp.ms.rotary_embedding' op position_ids must be [batch, sequence] or [1] (a start position); got 'tensor<3xi64>'}}
  %0 = mp.ms.rotary_embedding %x, %pos, %c, %c {num_heads = 2 : i64} : (tensor<1x4x32xf32>, tensor<3xi64>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<1x4x32xf32>
  return %0 : tensor<1x4x32xf32>
}
