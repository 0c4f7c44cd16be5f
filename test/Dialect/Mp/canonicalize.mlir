// Folders of the mp dialect: shape arithmetic on small integer constants folds,
// float arithmetic never does (a Cast of it back to an integer does).
// RUN: mp-opt %s -canonicalize -split-input-file | FileCheck %s

// mp.shape of a static tensor folds to a constant (start/end honoured).
func.func @shape_static(%x: tensor<2x3x4xf32>) -> (tensor<3xi64>, tensor<1xi64>) {
  %0 = mp.shape %x : tensor<2x3x4xf32> -> tensor<3xi64>
  %1 = mp.shape %x {start = 1 : i64, end = -1 : i64} : tensor<2x3x4xf32> -> tensor<1xi64>
  return %0, %1 : tensor<3xi64>, tensor<1xi64>
}
// CHECK-LABEL: func.func @shape_static(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<2x3x4xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<3xi64>
// CHECK-SAME: tensor<1xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[2, 3, 4]> : tensor<3xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<3> : tensor<1xi64>
// CHECK: return %[[CONSTANT]], %[[CONSTANT_1]] : tensor<3xi64>, tensor<1xi64>

// -----

// A dynamic dim keeps mp.shape unless the [start, end) window is static.
func.func @shape_dynamic(%x: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<1xi64>) {
  %0 = mp.shape %x : tensor<?x3xf32> -> tensor<2xi64>
  %1 = mp.shape %x {start = 1 : i64} : tensor<?x3xf32> -> tensor<1xi64>
  return %0, %1 : tensor<2xi64>, tensor<1xi64>
}
// CHECK-LABEL: func.func @shape_dynamic(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x3xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<2xi64>
// CHECK-SAME: tensor<1xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<3> : tensor<1xi64>
// CHECK: %[[SHAPE:.+]] = mp.shape %[[ARG0]] : tensor<?x3xf32> -> tensor<2xi64>
// CHECK: return %[[SHAPE]], %[[CONSTANT]] : tensor<2xi64>, tensor<1xi64>

// -----

// mp.size folds for static shapes only.
func.func @size(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> (tensor<i64>, tensor<i64>) {
  %0 = mp.size %x : tensor<2x3xf32> -> tensor<i64>
  %1 = mp.size %y : tensor<?x3xf32> -> tensor<i64>
  return %0, %1 : tensor<i64>, tensor<i64>
}
// CHECK-LABEL: func.func @size(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<2x3xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<?x3xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<i64>
// CHECK-SAME: tensor<i64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<6> : tensor<i64>
// CHECK: %[[SIZE:.+]] = mp.size %[[ARG1]] : tensor<?x3xf32> -> tensor<i64>
// CHECK: return %[[CONSTANT]], %[[SIZE]] : tensor<i64>, tensor<i64>

// -----

// Integer add/sub/mul/div on constants fold; div truncates toward zero.
func.func @int_arith() -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) {
  %a = mp.constant dense<[6, -7]> : tensor<2xi64>
  %b = mp.constant dense<[4, 2]> : tensor<2xi64>
  %0 = mp.add %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = mp.sub %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %2 = mp.mul %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %3 = mp.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>
}
// CHECK-LABEL: func.func @int_arith(
// CHECK-SAME: -> (
// CHECK-SAME: tensor<2xi64>
// CHECK-SAME: tensor<2xi64>
// CHECK-SAME: tensor<2xi64>
// CHECK-SAME: tensor<2xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[10, -5]> : tensor<2xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<[2, -9]> : tensor<2xi64>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<[24, -14]> : tensor<2xi64>
// CHECK: %[[CONSTANT_3:.+]] = mp.constant dense<[1, -3]> : tensor<2xi64>
// CHECK: return %[[CONSTANT]], %[[CONSTANT_1]], %[[CONSTANT_2]], %[[CONSTANT_3]] : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>

// -----

// Folding broadcasts like the op does.
func.func @int_broadcast() -> tensor<2x2xi64> {
  %a = mp.constant dense<[1, 2]> : tensor<2xi64>
  %b = mp.constant dense<[[10], [20]]> : tensor<2x1xi64>
  %0 = mp.add %a, %b : (tensor<2xi64>, tensor<2x1xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}
// CHECK-LABEL: func.func @int_broadcast(
// CHECK-SAME: ->
// CHECK-SAME: tensor<2x2xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<{{\[\[}}11, 12], [21, 22]]> : tensor<2x2xi64>
// CHECK: return %[[CONSTANT]] : tensor<2x2xi64>

// -----

// Integer division by zero does not fold.
func.func @div_by_zero() -> tensor<1xi64> {
  %a = mp.constant dense<5> : tensor<1xi64>
  %b = mp.constant dense<0> : tensor<1xi64>
  %0 = mp.div %a, %b : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %0 : tensor<1xi64>
}
// CHECK-LABEL: func.func @div_by_zero(
// CHECK-SAME: ->
// CHECK-SAME: tensor<1xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<5> : tensor<1xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<0> : tensor<1xi64>
// CHECK: %[[DIV:.+]] = mp.div %[[CONSTANT]], %[[CONSTANT_1]] : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK: return %[[DIV]] : tensor<1xi64>

// -----

// Float arithmetic never folds (precision is decided later).
func.func @float_no_fold() -> (tensor<2xf32>, tensor<2xf32>) {
  %a = mp.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = mp.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = mp.mul %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}
// CHECK-LABEL: func.func @float_no_fold(
// CHECK-SAME: -> (
// CHECK-SAME: tensor<2xf32>
// CHECK-SAME: tensor<2xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[ADD:.+]] = mp.add %[[CONSTANT]], %[[CONSTANT]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[MUL:.+]] = mp.mul %[[CONSTANT]], %[[CONSTANT]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK: return %[[ADD]], %[[MUL]] : tensor<2xf32>, tensor<2xf32>

// -----

// Shape -> Gather -> Concat folds into one constant.
func.func @gather_concat(%x: tensor<2x3x4xf32>) -> tensor<3xi64> {
  %s = mp.shape %x : tensor<2x3x4xf32> -> tensor<3xi64>
  %i = mp.constant dense<[0, 2]> : tensor<2xi64>
  %g = mp.gather %s, %i : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %m = mp.constant dense<-1> : tensor<1xi64>
  %c = mp.concat %g, %m {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  return %c : tensor<3xi64>
}
// CHECK-LABEL: func.func @gather_concat(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<2x3x4xf32>
// CHECK-SAME: ->
// CHECK-SAME: tensor<3xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[2, 4, -1]> : tensor<3xi64>
// CHECK: return %[[CONSTANT]] : tensor<3xi64>

// -----

// Negative gather indices wrap.
func.func @gather_negative() -> tensor<i64> {
  %s = mp.constant dense<[5, 6, 7]> : tensor<3xi64>
  %i = mp.constant dense<-1> : tensor<i64>
  %g = mp.gather %s, %i : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  return %g : tensor<i64>
}
// CHECK-LABEL: func.func @gather_negative(
// CHECK-SAME: ->
// CHECK-SAME: tensor<i64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<7> : tensor<i64>
// CHECK: return %[[CONSTANT]] : tensor<i64>

// -----

// Squeeze/Unsqueeze of constants fold.
func.func @squeeze_unsqueeze() -> (tensor<1xi64>, tensor<i64>) {
  %a = mp.constant dense<4> : tensor<i64>
  %0 = mp.unsqueeze %a {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %1 = mp.squeeze %0 {axes = array<i64: 0>} : tensor<1xi64> -> tensor<i64>
  return %0, %1 : tensor<1xi64>, tensor<i64>
}
// CHECK-LABEL: func.func @squeeze_unsqueeze(
// CHECK-SAME: -> (
// CHECK-SAME: tensor<1xi64>
// CHECK-SAME: tensor<i64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<4> : tensor<1xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<4> : tensor<i64>
// CHECK: return %[[CONSTANT]], %[[CONSTANT_1]] : tensor<1xi64>, tensor<i64>

// -----

// Reshape of a constant folds.
func.func @reshape_const() -> tensor<2x2xi64> {
  %a = mp.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %s = mp.constant dense<[2, 2]> : tensor<2xi64>
  %0 = mp.reshape %a, %s : (tensor<4xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}
// CHECK-LABEL: func.func @reshape_const(
// CHECK-SAME: ->
// CHECK-SAME: tensor<2x2xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK: return %[[CONSTANT]] : tensor<2x2xi64>

// -----

// Slice of a constant folds (negative end counts from the back).
func.func @slice_const() -> tensor<2xi64> {
  %a = mp.constant dense<[10, 20, 30, 40]> : tensor<4xi64>
  %st = mp.constant dense<1> : tensor<1xi64>
  %en = mp.constant dense<-1> : tensor<1xi64>
  %0 = mp.slice %a, %st, %en : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}
// CHECK-LABEL: func.func @slice_const(
// CHECK-SAME: ->
// CHECK-SAME: tensor<2xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[20, 30]> : tensor<2xi64>
// CHECK: return %[[CONSTANT]] : tensor<2xi64>

// -----

// Slice with a negative step folds.
func.func @slice_step() -> tensor<2xi64> {
  %a = mp.constant dense<[10, 20, 30, 40]> : tensor<4xi64>
  %st = mp.constant dense<-1> : tensor<1xi64>
  %en = mp.constant dense<-9223372036854775808> : tensor<1xi64>
  %ax = mp.constant dense<0> : tensor<1xi64>
  %sp = mp.constant dense<-2> : tensor<1xi64>
  %0 = mp.slice %a, %st, %en axes %ax steps %sp : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}
// CHECK-LABEL: func.func @slice_step(
// CHECK-SAME: ->
// CHECK-SAME: tensor<2xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[40, 20]> : tensor<2xi64>
// CHECK: return %[[CONSTANT]] : tensor<2xi64>

// -----

// Integer range folds.
func.func @range_const() -> tensor<3xi64> {
  %s = mp.constant dense<0> : tensor<i64>
  %l = mp.constant dense<6> : tensor<i64>
  %d = mp.constant dense<2> : tensor<i64>
  %0 = mp.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}
// CHECK-LABEL: func.func @range_const(
// CHECK-SAME: ->
// CHECK-SAME: tensor<3xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[0, 2, 4]> : tensor<3xi64>
// CHECK: return %[[CONSTANT]] : tensor<3xi64>

// -----

// Float range does not fold.
func.func @range_float() -> tensor<3xf32> {
  %s = mp.constant dense<0.0> : tensor<f32>
  %l = mp.constant dense<3.0> : tensor<f32>
  %d = mp.constant dense<1.0> : tensor<f32>
  %0 = mp.range %s, %l, %d : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// CHECK-LABEL: func.func @range_float(
// CHECK-SAME: ->
// CHECK-SAME: tensor<3xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[RANGE:.+]] = mp.range %[[CONSTANT]], %[[CONSTANT_1]], %[[CONSTANT_2]] : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
// CHECK: return %[[RANGE]] : tensor<3xf32>

// -----

// mp.identity folds to its operand.
func.func @identity(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mp.identity %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
// CHECK-LABEL: func.func @identity(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<2xf32>
// CHECK-SAME: ->
// CHECK-SAME: tensor<2xf32>
// CHECK: return %[[ARG0]] : tensor<2xf32>

// -----

// A cast to the same type folds away.
func.func @cast_same(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mp.cast %x {to = f32} : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
// CHECK-LABEL: func.func @cast_same(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<2xf32>
// CHECK-SAME: ->
// CHECK-SAME: tensor<2xf32>
// CHECK: return %[[ARG0]] : tensor<2xf32>

// -----

// Integer-to-integer casts of constants fold; int-to-float does not.
func.func @cast_int_const() -> (tensor<2xi32>, tensor<2xf32>) {
  %a = mp.constant dense<[3, -4]> : tensor<2xi64>
  %0 = mp.cast %a {to = i32} : tensor<2xi64> -> tensor<2xi32>
  %1 = mp.cast %a {to = f32} : tensor<2xi64> -> tensor<2xf32>
  return %0, %1 : tensor<2xi32>, tensor<2xf32>
}
// CHECK-LABEL: func.func @cast_int_const(
// CHECK-SAME: -> (
// CHECK-SAME: tensor<2xi32>
// CHECK-SAME: tensor<2xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[3, -4]> : tensor<2xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<[3, -4]> : tensor<2xi32>
// CHECK: %[[CAST:.+]] = mp.cast %[[CONSTANT]] {to = f32} : tensor<2xi64> -> tensor<2xf32>
// CHECK: return %[[CONSTANT_1]], %[[CAST]] : tensor<2xi32>, tensor<2xf32>

// -----

// Float casts of constants never fold (they are precision decisions).
func.func @cast_f32_f16(%x: tensor<2xf32>) -> tensor<2xf16> {
  %a = mp.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = mp.cast %a {to = f16} : tensor<2xf32> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}
// CHECK-LABEL: func.func @cast_f32_f16(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<2xf32>
// CHECK-SAME: ->
// CHECK-SAME: tensor<2xf16>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[CAST:.+]] = mp.cast %[[CONSTANT]] {to = f16} : tensor<2xf32> -> tensor<2xf16>
// CHECK: return %[[CAST]] : tensor<2xf16>

// -----

// The shape operand of a reshape folds to a constant (the result type is not
// refined by canonicalization; the importer should fold before inferring).
func.func @reshape_dynamic_result(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %s = mp.shape %x : tensor<2x3x4xf32> -> tensor<3xi64>
  %i = mp.constant dense<0> : tensor<1xi64>
  %g = mp.gather %s, %i : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m = mp.constant dense<-1> : tensor<1xi64>
  %c = mp.concat %g, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = mp.reshape %x, %c : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
// CHECK-LABEL: func.func @reshape_dynamic_result(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<2x3x4xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[2, -1]> : tensor<2xi64>
// CHECK: %[[RESHAPE:.+]] = mp.reshape %[[ARG0]], %[[CONSTANT]] : (tensor<2x3x4xf32>, tensor<2xi64>) ->
// CHECK: return %[[RESHAPE]]

// -----

// Exact round trips fold; a round trip through a narrower type rounds and
// stays.
func.func @cast_pairs(%h: tensor<2xf16>, %f: tensor<2xf32>, %i: tensor<2xi8>)
    -> (tensor<2xf16>, tensor<2xf32>, tensor<2xi8>) {
  %0 = mp.cast %h {to = f32} : tensor<2xf16> -> tensor<2xf32>
  %1 = mp.cast %0 {to = f16} : tensor<2xf32> -> tensor<2xf16>
  %2 = mp.cast %f {to = f16} : tensor<2xf32> -> tensor<2xf16>
  %3 = mp.cast %2 {to = f32} : tensor<2xf16> -> tensor<2xf32>
  %4 = mp.cast %i {to = f16} : tensor<2xi8> -> tensor<2xf16>
  %5 = mp.cast %4 {to = i8} : tensor<2xf16> -> tensor<2xi8>
  return %1, %3, %5 : tensor<2xf16>, tensor<2xf32>, tensor<2xi8>
}
// CHECK-LABEL: func.func @cast_pairs(
// CHECK-SAME: %[[H:[a-z0-9]+]]: tensor<2xf16>, %[[F:[a-z0-9]+]]: tensor<2xf32>, %[[I:[a-z0-9]+]]: tensor<2xi8>
// CHECK: %[[DOWN:.+]] = mp.cast %[[F]] {to = f16} : tensor<2xf32> -> tensor<2xf16>
// CHECK: %[[UP:.+]] = mp.cast %[[DOWN]] {to = f32} : tensor<2xf16> -> tensor<2xf32>
// CHECK: return %[[H]], %[[UP]], %[[I]]

// -----

// The boolean and modular shape logic of exporters' expanded functions
// (e.g. "is the dim divisible by the head count") folds: Mod takes the
// divisor's sign unless fmod, Neg, And, Or, Xor, Not.
func.func @logic_folds() -> (tensor<3xi64>, tensor<3xi64>, tensor<2xi64>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) {
  %a = mp.constant dense<[7, -7, 6]> : tensor<3xi64>
  %b = mp.constant dense<[3, 3, -4]> : tensor<3xi64>
  %t = mp.constant dense<[true, false]> : tensor<2xi1>
  %u = mp.constant dense<[true, true]> : tensor<2xi1>
  %n = mp.constant dense<[1, -2]> : tensor<2xi64>
  %0 = mp.mod %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = mp.mod %a, %b {fmod = true} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %2 = mp.neg %n : tensor<2xi64>
  %3 = mp.and %t, %u : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %4 = mp.or %t, %t : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %5 = mp.xor %t, %u : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %6 = mp.not %t : tensor<2xi1>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3xi64>, tensor<3xi64>, tensor<2xi64>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
}
// CHECK-LABEL: func.func @logic_folds(
// CHECK-DAG: %[[MOD:.+]] = mp.constant dense<[1, 2, -2]> : tensor<3xi64>
// CHECK-DAG: %[[FMOD:.+]] = mp.constant dense<[1, -1, 2]> : tensor<3xi64>
// CHECK-DAG: %[[NEG:.+]] = mp.constant dense<[-1, 2]> : tensor<2xi64>
// CHECK-DAG: %[[TF:.+]] = mp.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[FT:.+]] = mp.constant dense<[false, true]> : tensor<2xi1>
// CHECK: return %[[MOD]], %[[FMOD]], %[[NEG]], %[[TF]], %[[TF]], %[[FT]], %[[FT]]
// CHECK-NOT: mp.mod

// -----

// Max/Min of integer constants fold with broadcasting (CenterCropPad's
// expansion computes its pad amounts so).
func.func @minmax_folds() -> (tensor<3xi64>, tensor<3xi64>) {
  %a = mp.constant dense<[20, 10, 3]> : tensor<3xi64>
  %b = mp.constant dense<[10, 17, 3]> : tensor<3xi64>
  %c = mp.constant dense<4> : tensor<1xi64>
  %mx = mp.max %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %mn = mp.min %a, %b, %c : (tensor<3xi64>, tensor<3xi64>, tensor<1xi64>) -> tensor<3xi64>
  return %mx, %mn : tensor<3xi64>, tensor<3xi64>
}
// CHECK-LABEL: func.func @minmax_folds(
// CHECK-DAG: %[[MX:.+]] = mp.constant dense<[20, 17, 3]> : tensor<3xi64>
// CHECK-DAG: %[[MN:.+]] = mp.constant dense<[4, 4, 3]> : tensor<3xi64>
// CHECK: return %[[MX]], %[[MN]]
// CHECK-NOT: mp.max

// -----

// torch's F.pad export: the [0, 0, 0, 0, 2, 0] pad table reshaped to [3, 2],
// sliced backwards along axis 0 and transposed (encodec_decoder_ts) folds to
// ONNX's begin/end order.
func.func @pad_table() -> tensor<2x3xi64> {
  %t = mp.constant dense<[[0, 0], [0, 0], [2, 0]]> : tensor<3x2xi64>
  %st = mp.constant dense<-1> : tensor<1xi64>
  %en = mp.constant dense<-9223372036854775807> : tensor<1xi64>
  %ax = mp.constant dense<0> : tensor<1xi64>
  %sp = mp.constant dense<-1> : tensor<1xi64>
  %r = mp.slice %t, %st, %en axes %ax steps %sp : (tensor<3x2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x2xi64>
  %p = mp.transpose %r {perm = array<i64: 1, 0>} : tensor<3x2xi64> -> tensor<2x3xi64>
  return %p : tensor<2x3xi64>
}
// CHECK-LABEL: func.func @pad_table(
// CHECK-NEXT: %[[C:.+]] = mp.constant dense<{{\[}}[2, 0, 0], [0, 0, 0]]> : tensor<2x3xi64>
// CHECK-NEXT: return %[[C]]

// -----

// A length computed through floats and cast back to an integer folds (the
// Cast is shape arithmetic); the float ops are left for DCE, never folded.
func.func @ceil_length() -> tensor<i64> {
  %n = mp.constant dense<75> : tensor<i64>
  %s = mp.constant dense<2.0> : tensor<f32>
  %f = mp.cast %n {to = f32} : tensor<i64> -> tensor<f32>
  %d = mp.div %f, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c = mp.ceil %d : tensor<f32>
  %i = mp.cast %c {to = i64} : tensor<f32> -> tensor<i64>
  return %i : tensor<i64>
}
// CHECK-LABEL: func.func @ceil_length(
// CHECK-NEXT: %[[C:.+]] = mp.constant dense<38> : tensor<i64>
// CHECK-NEXT: return %[[C]]

// -----

// The float value itself stays a computation.
func.func @float_stays() -> tensor<f32> {
  %n = mp.constant dense<75> : tensor<i64>
  %s = mp.constant dense<2.0> : tensor<f32>
  %f = mp.cast %n {to = f32} : tensor<i64> -> tensor<f32>
  %d = mp.div %f, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %c = mp.floor %d : tensor<f32>
  return %c : tensor<f32>
}
// CHECK-LABEL: func.func @float_stays(
// CHECK: %[[F:.+]] = mp.cast
// CHECK: %[[D:.+]] = mp.div %[[F]]
// CHECK: %[[C:.+]] = mp.floor %[[D]]
// CHECK: return %[[C]]

// -----

// NaN and out-of-range values are undefined in ONNX: the Cast stays.
func.func @cast_nan_stays() -> tensor<i32> {
  %z = mp.constant dense<0.0> : tensor<f32>
  %d = mp.div %z, %z : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %i = mp.cast %d {to = i32} : tensor<f32> -> tensor<i32>
  return %i : tensor<i32>
}
// CHECK-LABEL: func.func @cast_nan_stays(
// CHECK: %[[I:.+]] = mp.cast %{{.+}} {to = i32}
// CHECK: return %[[I]]
