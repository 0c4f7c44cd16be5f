// RUN: mp-opt %s -split-input-file --mp-specialize-shapes="shapes=x=2x3,y=3x4" | FileCheck %s
// RUN: not mp-opt %s -split-input-file --mp-specialize-shapes="shapes=x=2x5" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not mp-opt %s -split-input-file --mp-specialize-shapes="shapes=nothere=2" 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: %if shared-models %{ mp-opt %shared_models/genai_gpt2_fp32_contrib_attention_past/model.onnx --mp-specialize-shapes="shapes=input_ids=2x4" -o /dev/null %}

// Pinned inputs make every inferred shape static, shape computations fold.
func.func @f(%x: tensor<?x3xf32> {mp.name = "x"}, %y: tensor<3x?xf32> {mp.name = "y"}) -> tensor<?x?xf32> {
  %0 = mp.matmul %x, %y : (tensor<?x3xf32>, tensor<3x?xf32>) -> tensor<?x?xf32>
  %s = mp.shape %0 : tensor<?x?xf32> -> tensor<2xi64>
  %i = mp.constant dense<[1, 0]> : tensor<2xi64>
  %t = mp.gather %s, %i : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = mp.reshape %0, %t : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-SAME: tensor<2x3xf32> {mp.name = "x"}, %{{.*}}: tensor<3x4xf32> {mp.name = "y"}) -> tensor<4x2xf32>
// CHECK-DAG: %[[S:.+]] = mp.constant dense<[4, 2]> : tensor<2xi64>
// CHECK-DAG: %[[MM:.+]] = mp.matmul {{.*}} -> tensor<2x4xf32>
// CHECK: mp.reshape %[[MM]], %[[S]] : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<4x2xf32>

// BAD: error: input 'x' of type 'tensor<?x3xf32>' cannot take the shape 'tensor<2x5xf32>'
// NAME: error: no graph input named 'nothere'

// -----

// A Range whose limit is float arithmetic over constants (a window length
// cast to float, as HannWindow's expansion writes it) gets a static length;
// the float ops stay (they are precision decisions), only inference
// evaluates them.
// CHECK-LABEL: func.func @range_over_float_logic(
// CHECK: %[[F:.+]] = mp.cast %{{.+}} {to = f32} : tensor<i32> -> tensor<f32>
// CHECK: %[[L:.+]] = mp.sub %[[F]], %{{.+}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: mp.range %{{.+}}, %[[L]], %{{.+}} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<9xf32>
func.func @range_over_float_logic(%x: tensor<?x3xf32> {mp.name = "x"}, %y: tensor<3x?xf32> {mp.name = "y"}) -> tensor<?xf32> {
  %n = mp.constant dense<10> : tensor<i32>
  %zero = mp.constant dense<0.0> : tensor<f32>
  %one = mp.constant dense<1.0> : tensor<f32>
  %nf = mp.cast %n {to = f32} : tensor<i32> -> tensor<f32>
  %limit = mp.sub %nf, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = mp.range %zero, %limit, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A vocoder pads every layer by an amount computed from the previous layer's
// length through floats (encodec_decoder_ts): 18 layers, each one round of
// inference and folding, all static in the end.
// CHECK-LABEL: func.func @padding_chain(
// CHECK-SAME: -> tensor<2x654xf32>
// CHECK-NOT: ?x
func.func @padding_chain(%x: tensor<?x?xf32> {mp.name = "x"}, %y: tensor<3x?xf32> {mp.name = "y"}) -> tensor<?x?xf32> {
  %one = mp.constant dense<1> : tensor<i64>
  %three = mp.constant dense<3.0> : tensor<f32>
  %zeros = mp.constant dense<0> : tensor<3xi64>
  %s0 = mp.shape %x : tensor<?x?xf32> -> tensor<2xi64>
  %g0 = mp.gather %s0, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f0 = mp.cast %g0 {to = f32} : tensor<i64> -> tensor<f32>
  %d0 = mp.div %f0, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c0 = mp.ceil %d0 : tensor<f32>
  %i0 = mp.cast %c0 {to = i64} : tensor<f32> -> tensor<i64>
  %u0 = mp.unsqueeze %i0 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p0 = mp.concat %zeros, %u0 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x0 = mp.pad %x, %p0 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s1 = mp.shape %x0 : tensor<?x?xf32> -> tensor<2xi64>
  %g1 = mp.gather %s1, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f1 = mp.cast %g1 {to = f32} : tensor<i64> -> tensor<f32>
  %d1 = mp.div %f1, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c1 = mp.ceil %d1 : tensor<f32>
  %i1 = mp.cast %c1 {to = i64} : tensor<f32> -> tensor<i64>
  %u1 = mp.unsqueeze %i1 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p1 = mp.concat %zeros, %u1 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x1 = mp.pad %x0, %p1 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s2 = mp.shape %x1 : tensor<?x?xf32> -> tensor<2xi64>
  %g2 = mp.gather %s2, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f2 = mp.cast %g2 {to = f32} : tensor<i64> -> tensor<f32>
  %d2 = mp.div %f2, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c2 = mp.ceil %d2 : tensor<f32>
  %i2 = mp.cast %c2 {to = i64} : tensor<f32> -> tensor<i64>
  %u2 = mp.unsqueeze %i2 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p2 = mp.concat %zeros, %u2 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x2 = mp.pad %x1, %p2 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s3 = mp.shape %x2 : tensor<?x?xf32> -> tensor<2xi64>
  %g3 = mp.gather %s3, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f3 = mp.cast %g3 {to = f32} : tensor<i64> -> tensor<f32>
  %d3 = mp.div %f3, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c3 = mp.ceil %d3 : tensor<f32>
  %i3 = mp.cast %c3 {to = i64} : tensor<f32> -> tensor<i64>
  %u3 = mp.unsqueeze %i3 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p3 = mp.concat %zeros, %u3 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x3 = mp.pad %x2, %p3 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s4 = mp.shape %x3 : tensor<?x?xf32> -> tensor<2xi64>
  %g4 = mp.gather %s4, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f4 = mp.cast %g4 {to = f32} : tensor<i64> -> tensor<f32>
  %d4 = mp.div %f4, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c4 = mp.ceil %d4 : tensor<f32>
  %i4 = mp.cast %c4 {to = i64} : tensor<f32> -> tensor<i64>
  %u4 = mp.unsqueeze %i4 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p4 = mp.concat %zeros, %u4 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x4 = mp.pad %x3, %p4 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s5 = mp.shape %x4 : tensor<?x?xf32> -> tensor<2xi64>
  %g5 = mp.gather %s5, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f5 = mp.cast %g5 {to = f32} : tensor<i64> -> tensor<f32>
  %d5 = mp.div %f5, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c5 = mp.ceil %d5 : tensor<f32>
  %i5 = mp.cast %c5 {to = i64} : tensor<f32> -> tensor<i64>
  %u5 = mp.unsqueeze %i5 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p5 = mp.concat %zeros, %u5 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x5 = mp.pad %x4, %p5 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s6 = mp.shape %x5 : tensor<?x?xf32> -> tensor<2xi64>
  %g6 = mp.gather %s6, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f6 = mp.cast %g6 {to = f32} : tensor<i64> -> tensor<f32>
  %d6 = mp.div %f6, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c6 = mp.ceil %d6 : tensor<f32>
  %i6 = mp.cast %c6 {to = i64} : tensor<f32> -> tensor<i64>
  %u6 = mp.unsqueeze %i6 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p6 = mp.concat %zeros, %u6 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x6 = mp.pad %x5, %p6 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s7 = mp.shape %x6 : tensor<?x?xf32> -> tensor<2xi64>
  %g7 = mp.gather %s7, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f7 = mp.cast %g7 {to = f32} : tensor<i64> -> tensor<f32>
  %d7 = mp.div %f7, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c7 = mp.ceil %d7 : tensor<f32>
  %i7 = mp.cast %c7 {to = i64} : tensor<f32> -> tensor<i64>
  %u7 = mp.unsqueeze %i7 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p7 = mp.concat %zeros, %u7 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x7 = mp.pad %x6, %p7 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s8 = mp.shape %x7 : tensor<?x?xf32> -> tensor<2xi64>
  %g8 = mp.gather %s8, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f8 = mp.cast %g8 {to = f32} : tensor<i64> -> tensor<f32>
  %d8 = mp.div %f8, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c8 = mp.ceil %d8 : tensor<f32>
  %i8 = mp.cast %c8 {to = i64} : tensor<f32> -> tensor<i64>
  %u8 = mp.unsqueeze %i8 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p8 = mp.concat %zeros, %u8 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x8 = mp.pad %x7, %p8 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s9 = mp.shape %x8 : tensor<?x?xf32> -> tensor<2xi64>
  %g9 = mp.gather %s9, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f9 = mp.cast %g9 {to = f32} : tensor<i64> -> tensor<f32>
  %d9 = mp.div %f9, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c9 = mp.ceil %d9 : tensor<f32>
  %i9 = mp.cast %c9 {to = i64} : tensor<f32> -> tensor<i64>
  %u9 = mp.unsqueeze %i9 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p9 = mp.concat %zeros, %u9 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x9 = mp.pad %x8, %p9 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s10 = mp.shape %x9 : tensor<?x?xf32> -> tensor<2xi64>
  %g10 = mp.gather %s10, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f10 = mp.cast %g10 {to = f32} : tensor<i64> -> tensor<f32>
  %d10 = mp.div %f10, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c10 = mp.ceil %d10 : tensor<f32>
  %i10 = mp.cast %c10 {to = i64} : tensor<f32> -> tensor<i64>
  %u10 = mp.unsqueeze %i10 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p10 = mp.concat %zeros, %u10 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x10 = mp.pad %x9, %p10 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s11 = mp.shape %x10 : tensor<?x?xf32> -> tensor<2xi64>
  %g11 = mp.gather %s11, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f11 = mp.cast %g11 {to = f32} : tensor<i64> -> tensor<f32>
  %d11 = mp.div %f11, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c11 = mp.ceil %d11 : tensor<f32>
  %i11 = mp.cast %c11 {to = i64} : tensor<f32> -> tensor<i64>
  %u11 = mp.unsqueeze %i11 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p11 = mp.concat %zeros, %u11 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x11 = mp.pad %x10, %p11 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s12 = mp.shape %x11 : tensor<?x?xf32> -> tensor<2xi64>
  %g12 = mp.gather %s12, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f12 = mp.cast %g12 {to = f32} : tensor<i64> -> tensor<f32>
  %d12 = mp.div %f12, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c12 = mp.ceil %d12 : tensor<f32>
  %i12 = mp.cast %c12 {to = i64} : tensor<f32> -> tensor<i64>
  %u12 = mp.unsqueeze %i12 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p12 = mp.concat %zeros, %u12 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x12 = mp.pad %x11, %p12 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s13 = mp.shape %x12 : tensor<?x?xf32> -> tensor<2xi64>
  %g13 = mp.gather %s13, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f13 = mp.cast %g13 {to = f32} : tensor<i64> -> tensor<f32>
  %d13 = mp.div %f13, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c13 = mp.ceil %d13 : tensor<f32>
  %i13 = mp.cast %c13 {to = i64} : tensor<f32> -> tensor<i64>
  %u13 = mp.unsqueeze %i13 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p13 = mp.concat %zeros, %u13 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x13 = mp.pad %x12, %p13 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s14 = mp.shape %x13 : tensor<?x?xf32> -> tensor<2xi64>
  %g14 = mp.gather %s14, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f14 = mp.cast %g14 {to = f32} : tensor<i64> -> tensor<f32>
  %d14 = mp.div %f14, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c14 = mp.ceil %d14 : tensor<f32>
  %i14 = mp.cast %c14 {to = i64} : tensor<f32> -> tensor<i64>
  %u14 = mp.unsqueeze %i14 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p14 = mp.concat %zeros, %u14 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x14 = mp.pad %x13, %p14 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s15 = mp.shape %x14 : tensor<?x?xf32> -> tensor<2xi64>
  %g15 = mp.gather %s15, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f15 = mp.cast %g15 {to = f32} : tensor<i64> -> tensor<f32>
  %d15 = mp.div %f15, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c15 = mp.ceil %d15 : tensor<f32>
  %i15 = mp.cast %c15 {to = i64} : tensor<f32> -> tensor<i64>
  %u15 = mp.unsqueeze %i15 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p15 = mp.concat %zeros, %u15 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x15 = mp.pad %x14, %p15 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s16 = mp.shape %x15 : tensor<?x?xf32> -> tensor<2xi64>
  %g16 = mp.gather %s16, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f16 = mp.cast %g16 {to = f32} : tensor<i64> -> tensor<f32>
  %d16 = mp.div %f16, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c16 = mp.ceil %d16 : tensor<f32>
  %i16 = mp.cast %c16 {to = i64} : tensor<f32> -> tensor<i64>
  %u16 = mp.unsqueeze %i16 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p16 = mp.concat %zeros, %u16 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x16 = mp.pad %x15, %p16 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s17 = mp.shape %x16 : tensor<?x?xf32> -> tensor<2xi64>
  %g17 = mp.gather %s17, %one : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %f17 = mp.cast %g17 {to = f32} : tensor<i64> -> tensor<f32>
  %d17 = mp.div %f17, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c17 = mp.ceil %d17 : tensor<f32>
  %i17 = mp.cast %c17 {to = i64} : tensor<f32> -> tensor<i64>
  %u17 = mp.unsqueeze %i17 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %p17 = mp.concat %zeros, %u17 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<4xi64>
  %x17 = mp.pad %x16, %p17 {mode = "constant"} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  return %x17 : tensor<?x?xf32>
}

// -----

// An equal Split (ONNX num_outputs, sizes -1) of an axis that becomes
// static gets static pieces, the last one smaller.
// CHECK-LABEL: func.func @even_split(
// CHECK: mp.split %{{.+}} {axis = 1 : i64, split = array<i64: -1, -1>} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<2x1xf32>
func.func @even_split(%x: tensor<?x?xf32> {mp.name = "x"}, %y: tensor<3x?xf32> {mp.name = "y"}) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0:2 = mp.split %x {axis = 1 : i64, split = array<i64: -1, -1>} : tensor<?x?xf32> -> tensor<?x?xf32>, tensor<?x?xf32>
  return %0#0, %0#1 : tensor<?x?xf32>, tensor<?x?xf32>
}
