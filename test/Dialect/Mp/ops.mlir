// Round trip of the custom assembly format of every mp op: parse, print,
// parse again. The functions are what the importer prints for the models in
// test/Import.
// RUN: mp-opt %s | mp-opt | FileCheck %s

func.func @elementwise(%arg0: tensor<?x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<?x4xi1>, %arg3: tensor<?x4xi64>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = mp.abs %arg0 : tensor<?x4xf32>
  %1 = mp.neg %0 : tensor<?x4xf32>
  %2 = mp.ceil %1 : tensor<?x4xf32>
  %3 = mp.floor %2 : tensor<?x4xf32>
  %4 = mp.cos %3 : tensor<?x4xf32>
  %5 = mp.sin %4 : tensor<?x4xf32>
  %6 = mp.erf %5 : tensor<?x4xf32>
  %7 = mp.exp %6 : tensor<?x4xf32>
  %8 = mp.log %7 : tensor<?x4xf32>
  %9 = mp.reciprocal %8 : tensor<?x4xf32>
  %10 = mp.relu %9 : tensor<?x4xf32>
  %11 = mp.sigmoid %10 : tensor<?x4xf32>
  %12 = mp.softplus %11 : tensor<?x4xf32>
  %13 = mp.sqrt %12 : tensor<?x4xf32>
  %14 = mp.tanh %13 : tensor<?x4xf32>
  %15 = mp.sign %14 : tensor<?x4xf32>
  %16 = mp.elu %15 {alpha = 5.000000e-01 : f32} : tensor<?x4xf32>
  %17 = mp.leaky_relu %16 : tensor<?x4xf32>
  %18 = mp.hard_sigmoid %17 {alpha = 1.000000e-01 : f32, beta = 6.000000e-01 : f32} : tensor<?x4xf32>
  %19 = mp.add %18, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %20 = mp.sub %19, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %21 = mp.mul %20, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %22 = mp.div %21, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %23 = mp.pow %22, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %24 = mp.max %23, %arg0, %arg1 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %25 = mp.min %24, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %26 = mp.mean %25, %arg0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %27 = mp.sum %26, %arg0, %arg0 : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %28 = mp.not %arg2 : tensor<?x4xi1>
  %29 = mp.and %28, %arg2 : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
  %30 = mp.or %29, %arg2 : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
  %31 = mp.is_nan %27 : tensor<?x4xf32> -> tensor<?x4xi1>
  %32 = mp.is_inf %27 {detect_negative = false} : tensor<?x4xf32> -> tensor<?x4xi1>
  %33 = mp.equal %27, %arg0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xi1>
  %34 = mp.greater %27, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
  %35 = mp.greater_or_equal %27, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
  %36 = mp.less %27, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
  %37 = mp.less_or_equal %arg3, %arg3 : (tensor<?x4xi64>, tensor<?x4xi64>) -> tensor<?x4xi1>
  %38 = mp.where %30, %27, %arg1 : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %39 = mp.mod %27, %arg1 {fmod = true} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %40 = mp.mod %arg3, %arg3 : (tensor<?x4xi64>, tensor<?x4xi64>) -> tensor<?x4xi64>
  %41 = mp.prelu %39, %arg1 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %42 = mp.clip %41 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %38, %42 : tensor<?x4xf32>, tensor<?x4xf32>
}
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x4xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<4xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<?x4xi1>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<?x4xi64>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x4xf32>
// CHECK-SAME: tensor<?x4xf32>
// CHECK: %[[ABS:.+]] = mp.abs %[[ARG0]] : tensor<?x4xf32>
// CHECK: %[[NEG:.+]] = mp.neg %[[ABS]] : tensor<?x4xf32>
// CHECK: %[[CEIL:.+]] = mp.ceil %[[NEG]] : tensor<?x4xf32>
// CHECK: %[[FLOOR:.+]] = mp.floor %[[CEIL]] : tensor<?x4xf32>
// CHECK: %[[COS:.+]] = mp.cos %[[FLOOR]] : tensor<?x4xf32>
// CHECK: %[[SIN:.+]] = mp.sin %[[COS]] : tensor<?x4xf32>
// CHECK: %[[ERF:.+]] = mp.erf %[[SIN]] : tensor<?x4xf32>
// CHECK: %[[EXP:.+]] = mp.exp %[[ERF]] : tensor<?x4xf32>
// CHECK: %[[LOG:.+]] = mp.log %[[EXP]] : tensor<?x4xf32>
// CHECK: %[[RECIPROCAL:.+]] = mp.reciprocal %[[LOG]] : tensor<?x4xf32>
// CHECK: %[[RELU:.+]] = mp.relu %[[RECIPROCAL]] : tensor<?x4xf32>
// CHECK: %[[SIGMOID:.+]] = mp.sigmoid %[[RELU]] : tensor<?x4xf32>
// CHECK: %[[SOFTPLUS:.+]] = mp.softplus %[[SIGMOID]] : tensor<?x4xf32>
// CHECK: %[[SQRT:.+]] = mp.sqrt %[[SOFTPLUS]] : tensor<?x4xf32>
// CHECK: %[[TANH:.+]] = mp.tanh %[[SQRT]] : tensor<?x4xf32>
// CHECK: %[[SIGN:.+]] = mp.sign %[[TANH]] : tensor<?x4xf32>
// CHECK: %[[ELU:.+]] = mp.elu %[[SIGN]] {alpha = 5.000000e-01 : f32} : tensor<?x4xf32>
// CHECK: %[[LEAKY_RELU:.+]] = mp.leaky_relu %[[ELU]] : tensor<?x4xf32>
// CHECK: %[[HARD_SIGMOID:.+]] = mp.hard_sigmoid %[[LEAKY_RELU]] {alpha = 1.000000e-01 : f32, beta = 6.000000e-01 : f32} : tensor<?x4xf32>
// CHECK: %[[ADD:.+]] = mp.add %[[HARD_SIGMOID]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[SUB:.+]] = mp.sub %[[ADD]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[MUL:.+]] = mp.mul %[[SUB]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[DIV:.+]] = mp.div %[[MUL]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[POW:.+]] = mp.pow %[[DIV]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[MAX:.+]] = mp.max %[[POW]], %[[ARG0]], %[[ARG1]] : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[MIN:.+]] = mp.min %[[MAX]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[MEAN:.+]] = mp.mean %[[MIN]], %[[ARG0]] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[SUM:.+]] = mp.sum %[[MEAN]], %[[ARG0]], %[[ARG0]] : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[NOT:.+]] = mp.not %[[ARG2]] : tensor<?x4xi1>
// CHECK: %[[AND:.+]] = mp.and %[[NOT]], %[[ARG2]] : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
// CHECK: %[[OR:.+]] = mp.or %[[AND]], %[[ARG2]] : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
// CHECK: %[[IS_NAN:.+]] = mp.is_nan %[[SUM]] : tensor<?x4xf32> -> tensor<?x4xi1>
// CHECK: %[[IS_INF:.+]] = mp.is_inf %[[SUM]] {detect_negative = false} : tensor<?x4xf32> -> tensor<?x4xi1>
// CHECK: %[[EQUAL:.+]] = mp.equal %[[SUM]], %[[ARG0]] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xi1>
// CHECK: %[[GREATER:.+]] = mp.greater %[[SUM]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
// CHECK: %[[GREATER_OR_EQUAL:.+]] = mp.greater_or_equal %[[SUM]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
// CHECK: %[[LESS:.+]] = mp.less %[[SUM]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
// CHECK: %[[LESS_OR_EQUAL:.+]] = mp.less_or_equal %[[ARG3]], %[[ARG3]] : (tensor<?x4xi64>, tensor<?x4xi64>) -> tensor<?x4xi1>
// CHECK: %[[WHERE:.+]] = mp.where %[[OR]], %[[SUM]], %[[ARG1]] : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[MOD:.+]] = mp.mod %[[SUM]], %[[ARG1]] {fmod = true} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[MOD_1:.+]] = mp.mod %[[ARG3]], %[[ARG3]] : (tensor<?x4xi64>, tensor<?x4xi64>) -> tensor<?x4xi64>
// CHECK: %[[PRELU:.+]] = mp.prelu %[[MOD]], %[[ARG1]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: %[[CLIP:.+]] = mp.clip %[[PRELU]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: return %[[WHERE]], %[[CLIP]] : tensor<?x4xf32>, tensor<?x4xf32>

func.func @cast_gelu_dropout(%arg0: tensor<?x1x4xf32>, %arg1: tensor<3x1xf32>, %arg2: tensor<2xf16>, %arg3: tensor<2xi64>) -> (tensor<?x3x4xf32>, tensor<?x1x4xf16>, tensor<2xi32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) {
  %0 = mp.add %arg0, %arg1 : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %1 = mp.cast %arg0 {to = f16} : tensor<?x1x4xf32> -> tensor<?x1x4xf16>
  %2 = mp.cast %arg3 {to = i32} : tensor<2xi64> -> tensor<2xi32>
  %3 = mp.gelu %arg0 {approximate = "tanh"} : tensor<?x1x4xf32>
  %4 = mp.gelu %3 : tensor<?x1x4xf32>
  return %0, %1, %2, %4, %arg0 : tensor<?x3x4xf32>, tensor<?x1x4xf16>, tensor<2xi32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>
}
// CHECK-LABEL: func.func @cast_gelu_dropout(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x1x4xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<3x1xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<2xf16>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<2xi64>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x3x4xf32>
// CHECK-SAME: tensor<?x1x4xf16>
// CHECK-SAME: tensor<2xi32>
// CHECK-SAME: tensor<?x1x4xf32>
// CHECK-SAME: tensor<?x1x4xf32>
// CHECK: %[[ADD:.+]] = mp.add %[[ARG0]], %[[ARG1]] : (tensor<?x1x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK: %[[CAST:.+]] = mp.cast %[[ARG0]] {to = f16} : tensor<?x1x4xf32> -> tensor<?x1x4xf16>
// CHECK: %[[CAST_1:.+]] = mp.cast %[[ARG3]] {to = i32} : tensor<2xi64> -> tensor<2xi32>
// CHECK: %[[GELU:.+]] = mp.gelu %[[ARG0]] {approximate = "tanh"} : tensor<?x1x4xf32>
// CHECK: %[[GELU_1:.+]] = mp.gelu %[[GELU]] : tensor<?x1x4xf32>
// CHECK: return %[[ADD]], %[[CAST]], %[[CAST_1]], %[[GELU_1]], %[[ARG0]] : tensor<?x3x4xf32>, tensor<?x1x4xf16>, tensor<2xi32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>

func.func @reduce_opset13(%arg0: tensor<?x3x4xf32>) -> (tensor<?x1x4xf32>, tensor<?x3xf32>, tensor<1x1x1xf32>, tensor<?xf32>, tensor<?x1x1xf32>, tensor<1x3x4xf32>, tensor<f32>, tensor<?x3x4xf32>, tensor<f32>, tensor<?x1x4xi64>) {
  %0 = mp.constant dense<1> : tensor<1xi64>
  %1 = mp.constant dense<> : tensor<0xi64>
  %2 = mp.reduce_sum %arg0 {axes = array<i64: 1>} : tensor<?x3x4xf32> -> tensor<?x1x4xf32>
  %3 = mp.reduce_l2 %arg0 {axes = array<i64: -1>, keepdims = false} : tensor<?x3x4xf32> -> tensor<?x3xf32>
  %4 = mp.reduce_max %arg0 : tensor<?x3x4xf32> -> tensor<1x1x1xf32>
  %5 = mp.reduce_mean %arg0 {axes = array<i64: 1, 2>, keepdims = false} : tensor<?x3x4xf32> -> tensor<?xf32>
  %6 = mp.reduce_min %arg0 {axes = array<i64: -2, -1>} : tensor<?x3x4xf32> -> tensor<?x1x1xf32>
  %7 = mp.reduce_prod %arg0 {axes = array<i64: 0>} : tensor<?x3x4xf32> -> tensor<1x3x4xf32>
  %8 = mp.reduce_sum_square %arg0 {keepdims = false} : tensor<?x3x4xf32> -> tensor<f32>
  %9 = mp.reduce_sum %arg0 {noop_with_empty_axes = true} : tensor<?x3x4xf32> -> tensor<?x3x4xf32>
  %10 = mp.reduce_sum %arg0 {keepdims = false} : tensor<?x3x4xf32> -> tensor<f32>
  %11 = mp.arg_max %arg0 {axis = 1 : i64, select_last_index = true} : tensor<?x3x4xf32> -> tensor<?x1x4xi64>
  return %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<?x1x4xf32>, tensor<?x3xf32>, tensor<1x1x1xf32>, tensor<?xf32>, tensor<?x1x1xf32>, tensor<1x3x4xf32>, tensor<f32>, tensor<?x3x4xf32>, tensor<f32>, tensor<?x1x4xi64>
}
// CHECK-LABEL: func.func @reduce_opset13(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x3x4xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x1x4xf32>
// CHECK-SAME: tensor<?x3xf32>
// CHECK-SAME: tensor<1x1x1xf32>
// CHECK-SAME: tensor<?xf32>
// CHECK-SAME: tensor<?x1x1xf32>
// CHECK-SAME: tensor<1x3x4xf32>
// CHECK-SAME: tensor<f32>
// CHECK-SAME: tensor<?x3x4xf32>
// CHECK-SAME: tensor<f32>
// CHECK-SAME: tensor<?x1x4xi64>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<1> : tensor<1xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<> : tensor<0xi64>
// CHECK: %[[REDUCE_SUM:.+]] = mp.reduce_sum %[[ARG0]] {axes = array<i64: 1>} : tensor<?x3x4xf32> -> tensor<?x1x4xf32>
// CHECK: %[[REDUCE_L2:.+]] = mp.reduce_l2 %[[ARG0]] {axes = array<i64: -1>, keepdims = false} : tensor<?x3x4xf32> -> tensor<?x3xf32>
// CHECK: %[[REDUCE_MAX:.+]] = mp.reduce_max %[[ARG0]] : tensor<?x3x4xf32> -> tensor<1x1x1xf32>
// CHECK: %[[REDUCE_MEAN:.+]] = mp.reduce_mean %[[ARG0]] {axes = array<i64: 1, 2>, keepdims = false} : tensor<?x3x4xf32> -> tensor<?xf32>
// CHECK: %[[REDUCE_MIN:.+]] = mp.reduce_min %[[ARG0]] {axes = array<i64: -2, -1>} : tensor<?x3x4xf32> -> tensor<?x1x1xf32>
// CHECK: %[[REDUCE_PROD:.+]] = mp.reduce_prod %[[ARG0]] {axes = array<i64: 0>} : tensor<?x3x4xf32> -> tensor<1x3x4xf32>
// CHECK: %[[REDUCE_SUM_SQUARE:.+]] = mp.reduce_sum_square %[[ARG0]] {keepdims = false} : tensor<?x3x4xf32> -> tensor<f32>
// CHECK: %[[REDUCE_SUM_1:.+]] = mp.reduce_sum %[[ARG0]] {noop_with_empty_axes = true} : tensor<?x3x4xf32> -> tensor<?x3x4xf32>
// CHECK: %[[REDUCE_SUM_2:.+]] = mp.reduce_sum %[[ARG0]] {keepdims = false} : tensor<?x3x4xf32> -> tensor<f32>
// CHECK: %[[ARG_MAX:.+]] = mp.arg_max %[[ARG0]] {axis = 1 : i64, select_last_index = true} : tensor<?x3x4xf32> -> tensor<?x1x4xi64>
// CHECK: return %[[REDUCE_SUM]], %[[REDUCE_L2]], %[[REDUCE_MAX]], %[[REDUCE_MEAN]], %[[REDUCE_MIN]], %[[REDUCE_PROD]], %[[REDUCE_SUM_SQUARE]], %[[REDUCE_SUM_1]], %[[REDUCE_SUM_2]], %[[ARG_MAX]] : tensor<?x1x4xf32>, tensor<?x3xf32>, tensor<1x1x1xf32>, tensor<?xf32>, tensor<?x1x1xf32>, tensor<1x3x4xf32>, tensor<f32>, tensor<?x3x4xf32>, tensor<f32>, tensor<?x1x4xi64>

func.func @softmax_opset11(%arg0: tensor<?x3x4x5xf32>) -> (tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>) {
  %0 = mp.softmax %arg0 {axes = array<i64: 1, 2, 3>} : tensor<?x3x4x5xf32>
  %1 = mp.softmax %arg0 {axes = array<i64: 3>} : tensor<?x3x4x5xf32>
  %2 = mp.log_softmax %arg0 {axes = array<i64: 2, 3>} : tensor<?x3x4x5xf32>
  %3 = mp.log_softmax %arg0 {axes = array<i64: 0, 1, 2, 3>} : tensor<?x3x4x5xf32>
  return %0, %1, %2, %3 : tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>
}
// CHECK-LABEL: func.func @softmax_opset11(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x3x4x5xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x3x4x5xf32>
// CHECK-SAME: tensor<?x3x4x5xf32>
// CHECK-SAME: tensor<?x3x4x5xf32>
// CHECK-SAME: tensor<?x3x4x5xf32>
// CHECK: %[[SOFTMAX:.+]] = mp.softmax %[[ARG0]] {axes = array<i64: 1, 2, 3>} : tensor<?x3x4x5xf32>
// CHECK: %[[SOFTMAX_1:.+]] = mp.softmax %[[ARG0]] {axes = array<i64: 3>} : tensor<?x3x4x5xf32>
// CHECK: %[[LOG_SOFTMAX:.+]] = mp.log_softmax %[[ARG0]] {axes = array<i64: 2, 3>} : tensor<?x3x4x5xf32>
// CHECK: %[[LOG_SOFTMAX_1:.+]] = mp.log_softmax %[[ARG0]] {axes = array<i64: 0, 1, 2, 3>} : tensor<?x3x4x5xf32>
// CHECK: return %[[SOFTMAX]], %[[SOFTMAX_1]], %[[LOG_SOFTMAX]], %[[LOG_SOFTMAX_1]] : tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>, tensor<?x3x4x5xf32>

func.func @split_opset18(%arg0: tensor<?x7xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x2xf32>, tensor<?x5xf32>) {
  %0 = mp.constant dense<[2, 5]> : tensor<2xi64>
  %1:3 = mp.split %arg0 {axis = 1 : i64, split = array<i64: 3, 3, 1>} : tensor<?x7xf32> -> tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>
  %2:2 = mp.split %arg0 {axis = 1 : i64, split = array<i64: 4, 3>} : tensor<?x7xf32> -> tensor<?x4xf32>, tensor<?x3xf32>
  %3:2 = mp.split %arg0 {axis = 1 : i64, split = array<i64: 2, 5>} : tensor<?x7xf32> -> tensor<?x2xf32>, tensor<?x5xf32>
  return %1#0, %1#1, %1#2, %2#0, %2#1, %3#0, %3#1 : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x2xf32>, tensor<?x5xf32>
}
// CHECK-LABEL: func.func @split_opset18(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x7xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x3xf32>
// CHECK-SAME: tensor<?x3xf32>
// CHECK-SAME: tensor<?x1xf32>
// CHECK-SAME: tensor<?x4xf32>
// CHECK-SAME: tensor<?x3xf32>
// CHECK-SAME: tensor<?x2xf32>
// CHECK-SAME: tensor<?x5xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[2, 5]> : tensor<2xi64>
// CHECK: %[[SPLIT:.+]]:3 = mp.split %[[ARG0]] {axis = 1 : i64, split = array<i64: 3, 3, 1>} : tensor<?x7xf32> -> tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>
// CHECK: %[[SPLIT_1:.+]]:2 = mp.split %[[ARG0]] {axis = 1 : i64, split = array<i64: 4, 3>} : tensor<?x7xf32> -> tensor<?x4xf32>, tensor<?x3xf32>
// CHECK: %[[SPLIT_2:.+]]:2 = mp.split %[[ARG0]] {axis = 1 : i64, split = array<i64: 2, 5>} : tensor<?x7xf32> -> tensor<?x2xf32>, tensor<?x5xf32>
// CHECK: return %[[SPLIT]]#0, %[[SPLIT]]#1, %[[SPLIT]]#2, %[[SPLIT_1]]#0, %[[SPLIT_1]]#1, %[[SPLIT_2]]#0, %[[SPLIT_2]]#1 : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>, tensor<?x4xf32>, tensor<?x3xf32>, tensor<?x2xf32>, tensor<?x5xf32>

func.func @squeeze_opset13(%arg0: tensor<?x1x4x1xf32>, %arg1: tensor<2x1x4x1xf32>) -> (tensor<?x4x1xf32>, tensor<?x4xf32>, tensor<2x4xf32>, tensor<1x?x1x4x1x1xf32>) {
  %0 = mp.constant dense<1> : tensor<1xi64>
  %1 = mp.constant dense<[1, -1]> : tensor<2xi64>
  %2 = mp.constant dense<[0, -1]> : tensor<2xi64>
  %3 = mp.squeeze %arg0 {axes = array<i64: 1>} : tensor<?x1x4x1xf32> -> tensor<?x4x1xf32>
  %4 = mp.squeeze %arg0 {axes = array<i64: 1, -1>} : tensor<?x1x4x1xf32> -> tensor<?x4xf32>
  %5 = mp.squeeze %arg1 {axes = array<i64: 1, 3>} : tensor<2x1x4x1xf32> -> tensor<2x4xf32>
  %6 = mp.unsqueeze %arg0 {axes = array<i64: 0, -1>} : tensor<?x1x4x1xf32> -> tensor<1x?x1x4x1x1xf32>
  return %3, %4, %5, %6 : tensor<?x4x1xf32>, tensor<?x4xf32>, tensor<2x4xf32>, tensor<1x?x1x4x1x1xf32>
}
// CHECK-LABEL: func.func @squeeze_opset13(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x1x4x1xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<2x1x4x1xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x4x1xf32>
// CHECK-SAME: tensor<?x4xf32>
// CHECK-SAME: tensor<2x4xf32>
// CHECK-SAME: tensor<1x?x1x4x1x1xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<1> : tensor<1xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<[1, -1]> : tensor<2xi64>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<[0, -1]> : tensor<2xi64>
// CHECK: %[[SQUEEZE:.+]] = mp.squeeze %[[ARG0]] {axes = array<i64: 1>} : tensor<?x1x4x1xf32> -> tensor<?x4x1xf32>
// CHECK: %[[SQUEEZE_1:.+]] = mp.squeeze %[[ARG0]] {axes = array<i64: 1, -1>} : tensor<?x1x4x1xf32> -> tensor<?x4xf32>
// CHECK: %[[SQUEEZE_2:.+]] = mp.squeeze %[[ARG1]] {axes = array<i64: 1, 3>} : tensor<2x1x4x1xf32> -> tensor<2x4xf32>
// CHECK: %[[UNSQUEEZE:.+]] = mp.unsqueeze %[[ARG0]] {axes = array<i64: 0, -1>} : tensor<?x1x4x1xf32> -> tensor<1x?x1x4x1x1xf32>
// CHECK: return %[[SQUEEZE]], %[[SQUEEZE_1]], %[[SQUEEZE_2]], %[[UNSQUEEZE]] : tensor<?x4x1xf32>, tensor<?x4xf32>, tensor<2x4xf32>, tensor<1x?x1x4x1x1xf32>

func.func @clip_opset6(%arg0: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = mp.constant dense<-1.000000e+00> : tensor<f32>
  %1 = mp.constant dense<1.000000e+00> : tensor<f32>
  %2 = mp.clip %arg0 min %0 max %1 : (tensor<?x4xf32>, tensor<f32>, tensor<f32>) -> tensor<?x4xf32>
  %3 = mp.constant dense<6.000000e+00> : tensor<f32>
  %4 = mp.clip %arg0 max %3 : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %5 = mp.clip %arg0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %2, %4, %5 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}
// CHECK-LABEL: func.func @clip_opset6(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x4xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x4xf32>
// CHECK-SAME: tensor<?x4xf32>
// CHECK-SAME: tensor<?x4xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[CLIP:.+]] = mp.clip %[[ARG0]] min %[[CONSTANT]] max %[[CONSTANT_1]] : (tensor<?x4xf32>, tensor<f32>, tensor<f32>) -> tensor<?x4xf32>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<6.000000e+00> : tensor<f32>
// CHECK: %[[CLIP_1:.+]] = mp.clip %[[ARG0]] max %[[CONSTANT_2]] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
// CHECK: %[[CLIP_2:.+]] = mp.clip %[[ARG0]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: return %[[CLIP]], %[[CLIP_1]], %[[CLIP_2]] : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>

func.func @pad_opset18(%arg0: tensor<?x3x4xf32>) -> (tensor<?x3x7xf32>, tensor<?x5x5xf32>, tensor<?x5x5xf32>) {
  %0 = mp.constant dense<[1, 2]> : tensor<2xi64>
  %1 = mp.constant dense<-1> : tensor<1xi64>
  %2 = mp.constant dense<[1, 0, 1, 1]> : tensor<4xi64>
  %3 = mp.constant dense<[1, 2]> : tensor<2xi64>
  %4 = mp.constant dense<1.000000e+00> : tensor<f32>
  %5 = mp.pad %arg0, %0 value %4 axes %1 : (tensor<?x3x4xf32>, tensor<2xi64>, tensor<f32>, tensor<1xi64>) -> tensor<?x3x7xf32>
  %6 = mp.pad %arg0, %2 axes %3 {mode = "wrap"} : (tensor<?x3x4xf32>, tensor<4xi64>, tensor<2xi64>) -> tensor<?x5x5xf32>
  %7 = mp.pad %arg0, %2 axes %3 : (tensor<?x3x4xf32>, tensor<4xi64>, tensor<2xi64>) -> tensor<?x5x5xf32>
  return %5, %6, %7 : tensor<?x3x7xf32>, tensor<?x5x5xf32>, tensor<?x5x5xf32>
}
// CHECK-LABEL: func.func @pad_opset18(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x3x4xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x3x7xf32>
// CHECK-SAME: tensor<?x5x5xf32>
// CHECK-SAME: tensor<?x5x5xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[1, 2]> : tensor<2xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<-1> : tensor<1xi64>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<[1, 0, 1, 1]> : tensor<4xi64>
// CHECK: %[[CONSTANT_3:.+]] = mp.constant dense<[1, 2]> : tensor<2xi64>
// CHECK: %[[CONSTANT_4:.+]] = mp.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[PAD:.+]] = mp.pad %[[ARG0]], %[[CONSTANT]] value %[[CONSTANT_4]] axes %[[CONSTANT_1]] : (tensor<?x3x4xf32>, tensor<2xi64>, tensor<f32>, tensor<1xi64>) -> tensor<?x3x7xf32>
// CHECK: %[[PAD_1:.+]] = mp.pad %[[ARG0]], %[[CONSTANT_2]] axes %[[CONSTANT_3]] {mode = "wrap"} : (tensor<?x3x4xf32>, tensor<4xi64>, tensor<2xi64>) -> tensor<?x5x5xf32>
// CHECK: %[[PAD_2:.+]] = mp.pad %[[ARG0]], %[[CONSTANT_2]] axes %[[CONSTANT_3]] : (tensor<?x3x4xf32>, tensor<4xi64>, tensor<2xi64>) -> tensor<?x5x5xf32>
// CHECK: return %[[PAD]], %[[PAD_1]], %[[PAD_2]] : tensor<?x3x7xf32>, tensor<?x5x5xf32>, tensor<?x5x5xf32>

func.func @resize_opset11(%arg0: tensor<?x3x4x5xf32>) -> (tensor<?x3x8x10xf32>, tensor<2x3x6x7xf32>) {
  %0 = mp.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>
  %1 = mp.constant dense<> : tensor<0xf32>
  %2 = mp.constant dense<[2, 3, 6, 7]> : tensor<4xi64>
  %3 = mp.resize %arg0 scales %0 {nearest_mode = "floor"} : (tensor<?x3x4x5xf32>, tensor<4xf32>) -> tensor<?x3x8x10xf32>
  %4 = mp.resize %arg0 sizes %2 {coordinate_transformation_mode = "align_corners", cubic_coeff_a = -5.000000e-01 : f32, mode = "cubic"} : (tensor<?x3x4x5xf32>, tensor<4xi64>) -> tensor<2x3x6x7xf32>
  return %3, %4 : tensor<?x3x8x10xf32>, tensor<2x3x6x7xf32>
}
// CHECK-LABEL: func.func @resize_opset11(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x3x4x5xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x3x8x10xf32>
// CHECK-SAME: tensor<2x3x6x7xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<> : tensor<0xf32>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<[2, 3, 6, 7]> : tensor<4xi64>
// CHECK: %[[RESIZE:.+]] = mp.resize %[[ARG0]] scales %[[CONSTANT]] {nearest_mode = "floor"} : (tensor<?x3x4x5xf32>, tensor<4xf32>) -> tensor<?x3x8x10xf32>
// CHECK: %[[RESIZE_1:.+]] = mp.resize %[[ARG0]] sizes %[[CONSTANT_2]] {coordinate_transformation_mode = "align_corners", cubic_coeff_a = -5.000000e-01 : f32, mode = "cubic"} : (tensor<?x3x4x5xf32>, tensor<4xi64>) -> tensor<2x3x6x7xf32>
// CHECK: return %[[RESIZE]], %[[RESIZE_1]] : tensor<?x3x8x10xf32>, tensor<2x3x6x7xf32>

func.func @resize_opset18(%arg0: tensor<?x3x4x5xf32>) -> (tensor<?x3x8x10xf32>, tensor<?x3x?x?xf32>) {
  %0 = mp.constant dense<2.000000e+00> : tensor<2xf32>
  %1 = mp.constant dense<[6, 7]> : tensor<2xi64>
  %2 = mp.resize %arg0 scales %0 {antialias = 1 : i64, axes = array<i64: 2, 3>, mode = "linear"} : (tensor<?x3x4x5xf32>, tensor<2xf32>) -> tensor<?x3x8x10xf32>
  %3 = mp.resize %arg0 sizes %1 {axes = array<i64: -2, -1>, keep_aspect_ratio_policy = "not_larger"} : (tensor<?x3x4x5xf32>, tensor<2xi64>) -> tensor<?x3x?x?xf32>
  return %2, %3 : tensor<?x3x8x10xf32>, tensor<?x3x?x?xf32>
}
// CHECK-LABEL: func.func @resize_opset18(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x3x4x5xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x3x8x10xf32>
// CHECK-SAME: tensor<?x3x?x?xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<2.000000e+00> : tensor<2xf32>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<[6, 7]> : tensor<2xi64>
// CHECK: %[[RESIZE:.+]] = mp.resize %[[ARG0]] scales %[[CONSTANT]] {antialias = 1 : i64, axes = array<i64: 2, 3>, mode = "linear"} : (tensor<?x3x4x5xf32>, tensor<2xf32>) -> tensor<?x3x8x10xf32>
// CHECK: %[[RESIZE_1:.+]] = mp.resize %[[ARG0]] sizes %[[CONSTANT_1]] {axes = array<i64: -2, -1>, keep_aspect_ratio_policy = "not_larger"} : (tensor<?x3x4x5xf32>, tensor<2xi64>) -> tensor<?x3x?x?xf32>
// CHECK: return %[[RESIZE]], %[[RESIZE_1]] : tensor<?x3x8x10xf32>, tensor<?x3x?x?xf32>

func.func @slice_opset13(%arg0: tensor<?x8x6xf32>, %arg1: tensor<1xi64>) -> (tensor<?x3x6xf32>, tensor<?x4x6xf32>, tensor<?x8x5xf32>, tensor<?x?x6xf32>) {
  %0 = mp.constant dense<1> : tensor<1xi64>
  %1 = mp.constant dense<4> : tensor<1xi64>
  %2 = mp.constant dense<1> : tensor<1xi64>
  %3 = mp.constant dense<9223372036854775807> : tensor<1xi64>
  %4 = mp.constant dense<2> : tensor<1xi64>
  %5 = mp.constant dense<-1> : tensor<1xi64>
  %6 = mp.constant dense<-9223372036854775808> : tensor<1xi64>
  %7 = mp.constant dense<0> : tensor<1xi64>
  %8 = mp.slice %arg0, %0, %1 axes %2 : (tensor<?x8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3x6xf32>
  %9 = mp.slice %arg0, %7, %3 axes %2 steps %4 : (tensor<?x8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x6xf32>
  %10 = mp.slice %arg0, %5, %7 axes %5 steps %5 : (tensor<?x8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8x5xf32>
  %11 = mp.slice %arg0, %arg1, %3 axes %2 : (tensor<?x8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x6xf32>
  return %8, %9, %10, %11 : tensor<?x3x6xf32>, tensor<?x4x6xf32>, tensor<?x8x5xf32>, tensor<?x?x6xf32>
}
// CHECK-LABEL: func.func @slice_opset13(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x8x6xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<1xi64>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x3x6xf32>
// CHECK-SAME: tensor<?x4x6xf32>
// CHECK-SAME: tensor<?x8x5xf32>
// CHECK-SAME: tensor<?x?x6xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<1> : tensor<1xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<4> : tensor<1xi64>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<1> : tensor<1xi64>
// CHECK: %[[CONSTANT_3:.+]] = mp.constant dense<9223372036854775807> : tensor<1xi64>
// CHECK: %[[CONSTANT_4:.+]] = mp.constant dense<2> : tensor<1xi64>
// CHECK: %[[CONSTANT_5:.+]] = mp.constant dense<-1> : tensor<1xi64>
// CHECK: %[[CONSTANT_6:.+]] = mp.constant dense<-9223372036854775808> : tensor<1xi64>
// CHECK: %[[CONSTANT_7:.+]] = mp.constant dense<0> : tensor<1xi64>
// CHECK: %[[SLICE:.+]] = mp.slice %[[ARG0]], %[[CONSTANT]], %[[CONSTANT_1]] axes %[[CONSTANT_2]] : (tensor<?x8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3x6xf32>
// CHECK: %[[SLICE_1:.+]] = mp.slice %[[ARG0]], %[[CONSTANT_7]], %[[CONSTANT_3]] axes %[[CONSTANT_2]] steps %[[CONSTANT_4]] : (tensor<?x8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x6xf32>
// CHECK: %[[SLICE_2:.+]] = mp.slice %[[ARG0]], %[[CONSTANT_5]], %[[CONSTANT_7]] axes %[[CONSTANT_5]] steps %[[CONSTANT_5]] : (tensor<?x8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8x5xf32>
// CHECK: %[[SLICE_3:.+]] = mp.slice %[[ARG0]], %[[ARG1]], %[[CONSTANT_3]] axes %[[CONSTANT_2]] : (tensor<?x8x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x6xf32>
// CHECK: return %[[SLICE]], %[[SLICE_1]], %[[SLICE_2]], %[[SLICE_3]] : tensor<?x3x6xf32>, tensor<?x4x6xf32>, tensor<?x8x5xf32>, tensor<?x?x6xf32>

func.func @attention_opset23(%arg0: tensor<?x8x?x16xf32>, %arg1: tensor<?x2x?x16xf32>, %arg2: tensor<?x2x?x16xf32>, %arg3: tensor<?x2x?x16xf32>, %arg4: tensor<?x2x?x16xf32>, %arg5: tensor<?x?xi1>, %arg6: tensor<?x?x64xf16>, %arg7: tensor<?x?x32xf16>, %arg8: tensor<?x?x32xf16>) -> (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x8x?x?xf32>, tensor<?x?x64xf16>) {
  %output, %present_key, %present_value, %qk_matmul_output = mp.attention %arg0, %arg1, %arg2 mask %arg5 past(%arg3, %arg4) {is_causal = true, qk_matmul_output_mode = 3 : i64, softcap = 3.000000e+01 : f32, softmax_precision = f32} : (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?xi1>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x8x?x?xf32>)
  %output_0, %present_key_1, %present_value_2, %qk_matmul_output_3 = mp.attention %arg6, %arg7, %arg8 {kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 1.250000e-01 : f32} : (tensor<?x?x64xf16>, tensor<?x?x32xf16>, tensor<?x?x32xf16>) -> (tensor<?x?x64xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x4x?x?xf16>)
  return %output, %present_key, %present_value, %qk_matmul_output, %output_0 : tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x8x?x?xf32>, tensor<?x?x64xf16>
}
// CHECK-LABEL: func.func @attention_opset23(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x8x?x16xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<?x2x?x16xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<?x2x?x16xf32>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<?x2x?x16xf32>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<?x2x?x16xf32>
// CHECK-SAME: %[[ARG5:[a-z0-9]+]]: tensor<?x?xi1>
// CHECK-SAME: %[[ARG6:[a-z0-9]+]]: tensor<?x?x64xf16>
// CHECK-SAME: %[[ARG7:[a-z0-9]+]]: tensor<?x?x32xf16>
// CHECK-SAME: %[[ARG8:[a-z0-9]+]]: tensor<?x?x32xf16>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x8x?x16xf32>
// CHECK-SAME: tensor<?x2x?x16xf32>
// CHECK-SAME: tensor<?x2x?x16xf32>
// CHECK-SAME: tensor<?x8x?x?xf32>
// CHECK-SAME: tensor<?x?x64xf16>
// CHECK: %[[OUTPUT:[a-z_0-9]+]], %[[PRESENT_KEY:[a-z_0-9]+]], %[[PRESENT_VALUE:[a-z_0-9]+]], %[[QK_MATMUL_OUTPUT:[a-z_0-9]+]] = mp.attention %[[ARG0]], %[[ARG1]], %[[ARG2]] mask %[[ARG5]] past(%[[ARG3]], %[[ARG4]]) {is_causal = true, qk_matmul_output_mode = 3 : i64, softcap = 3.000000e+01 : f32, softmax_precision = f32} : (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?xi1>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> (tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x8x?x?xf32>)
// CHECK: %[[OUTPUT_1:[a-z_0-9]+]], %[[PRESENT_KEY_1:[a-z_0-9]+]], %[[PRESENT_VALUE_1:[a-z_0-9]+]], %[[QK_MATMUL_OUTPUT_1:[a-z_0-9]+]] = mp.attention %[[ARG6]], %[[ARG7]], %[[ARG8]] {kv_num_heads = 2 : i64, q_num_heads = 4 : i64, scale = 1.250000e-01 : f32} : (tensor<?x?x64xf16>, tensor<?x?x32xf16>, tensor<?x?x32xf16>) -> (tensor<?x?x64xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x4x?x?xf16>)
// CHECK: return %[[OUTPUT]], %[[PRESENT_KEY]], %[[PRESENT_VALUE]], %[[QK_MATMUL_OUTPUT]], %[[OUTPUT_1]] : tensor<?x8x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x8x?x?xf32>, tensor<?x?x64xf16>

func.func @attention_opset24(%arg0: tensor<?x4x?x16xf32>, %arg1: tensor<?x4x?x16xf32>, %arg2: tensor<?x4x?x16xf32>, %arg3: tensor<?xi64>, %arg4: tensor<?x4x64x16xf32>, %arg5: tensor<?x4x1x16xf32>, %arg6: tensor<?xi64>) -> (tensor<?x4x?x16xf32>, tensor<?x4x64x16xf32>) {
  %output, %present_key, %present_value, %qk_matmul_output = mp.attention %arg0, %arg1, %arg2 nonpad_kv_seqlen %arg3 : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?xi64>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>)
  %0 = mp.tensor_scatter %arg4, %arg5 at %arg6 {mode = "circular"} : (tensor<?x4x64x16xf32>, tensor<?x4x1x16xf32>, tensor<?xi64>) -> tensor<?x4x64x16xf32>
  return %output, %0 : tensor<?x4x?x16xf32>, tensor<?x4x64x16xf32>
}
// CHECK-LABEL: func.func @attention_opset24(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x4x?x16xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<?x4x?x16xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<?x4x?x16xf32>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<?xi64>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<?x4x64x16xf32>
// CHECK-SAME: %[[ARG5:[a-z0-9]+]]: tensor<?x4x1x16xf32>
// CHECK-SAME: %[[ARG6:[a-z0-9]+]]: tensor<?xi64>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x4x?x16xf32>
// CHECK-SAME: tensor<?x4x64x16xf32>
// CHECK: %[[OUTPUT:[a-z_0-9]+]], %[[PRESENT_KEY:[a-z_0-9]+]], %[[PRESENT_VALUE:[a-z_0-9]+]], %[[QK_MATMUL_OUTPUT:[a-z_0-9]+]] = mp.attention %[[ARG0]], %[[ARG1]], %[[ARG2]] nonpad_kv_seqlen %[[ARG3]] : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?xi64>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>)
// CHECK: %[[TENSOR_SCATTER:.+]] = mp.tensor_scatter %[[ARG4]], %[[ARG5]] at %[[ARG6]] {mode = "circular"} : (tensor<?x4x64x16xf32>, tensor<?x4x1x16xf32>, tensor<?xi64>) -> tensor<?x4x64x16xf32>
// CHECK: return %[[OUTPUT]], %[[TENSOR_SCATTER]] : tensor<?x4x?x16xf32>, tensor<?x4x64x16xf32>

func.func @groupnorm_opset18(%arg0: tensor<?x8x5xf32>, %arg1: tensor<2xf32>, %arg2: tensor<2xf32>) -> (tensor<?x8x5xf32>) {
  %0 = mp.group_norm %arg0, %arg1, %arg2 {epsilon = 1.000000e-03 : f32, num_groups = 2 : i64, per_group_affine = true} : (tensor<?x8x5xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x8x5xf32>
  return %0 : tensor<?x8x5xf32>
}
// CHECK-LABEL: func.func @groupnorm_opset18(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x8x5xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<2xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<2xf32>
// CHECK-SAME: ->
// CHECK-SAME: tensor<?x8x5xf32>
// CHECK: %[[GROUP_NORM:.+]] = mp.group_norm %[[ARG0]], %[[ARG1]], %[[ARG2]] {epsilon = 1.000000e-03 : f32, num_groups = 2 : i64, per_group_affine = true} : (tensor<?x8x5xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x8x5xf32>
// CHECK: return %[[GROUP_NORM]] : tensor<?x8x5xf32>

func.func @conv(%arg0: tensor<?x4x10x10xf32>, %arg1: tensor<8x4x3x3xf32>, %arg2: tensor<8xf32>, %arg3: tensor<8x2x3x3xf32>, %arg4: tensor<?x4x?x?xf32>, %arg5: tensor<?x4x10xf32>, %arg6: tensor<6x4x4xf32>) -> (tensor<?x8x10x10xf32>, tensor<?x8x4x4xf32>, tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>, tensor<?x8x8x8xf32>, tensor<?x8x?x?xf32>, tensor<?x6x4xf32>) {
  %0 = mp.conv %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x4x10x10xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<?x8x10x10xf32>
  %1 = mp.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x10x10xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x4x4xf32>
  %2 = mp.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x10x10xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x5x5xf32>
  %3 = mp.conv %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x10x10xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<?x8x5x5xf32>
  %4 = mp.conv %arg0, %arg3 {dilations = array<i64: 2, 2>, group = 2 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x4x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<?x8x8x8xf32>
  %5 = mp.conv %arg4, %arg1 {auto_pad = "SAME_UPPER", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x4x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x?x?xf32>
  %6 = mp.conv %arg5, %arg6 {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 4>, pads = array<i64: 1, 0>, strides = array<i64: 2>} : (tensor<?x4x10xf32>, tensor<6x4x4xf32>) -> tensor<?x6x4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x8x10x10xf32>, tensor<?x8x4x4xf32>, tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>, tensor<?x8x8x8xf32>, tensor<?x8x?x?xf32>, tensor<?x6x4xf32>
}
// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x4x10x10xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<8x4x3x3xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<8xf32>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<8x2x3x3xf32>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<?x4x?x?xf32>
// CHECK-SAME: %[[ARG5:[a-z0-9]+]]: tensor<?x4x10xf32>
// CHECK-SAME: %[[ARG6:[a-z0-9]+]]: tensor<6x4x4xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x8x10x10xf32>
// CHECK-SAME: tensor<?x8x4x4xf32>
// CHECK-SAME: tensor<?x8x5x5xf32>
// CHECK-SAME: tensor<?x8x5x5xf32>
// CHECK-SAME: tensor<?x8x8x8xf32>
// CHECK-SAME: tensor<?x8x?x?xf32>
// CHECK-SAME: tensor<?x6x4xf32>
// CHECK: %[[CONV:.+]] = mp.conv %[[ARG0]], %[[ARG1]], %[[ARG2]] {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x4x10x10xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<?x8x10x10xf32>
// CHECK: %[[CONV_1:.+]] = mp.conv %[[ARG0]], %[[ARG1]] {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x10x10xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x4x4xf32>
// CHECK: %[[CONV_2:.+]] = mp.conv %[[ARG0]], %[[ARG1]] {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x10x10xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x5x5xf32>
// CHECK: %[[CONV_3:.+]] = mp.conv %[[ARG0]], %[[ARG1]], %[[ARG2]] {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x10x10xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<?x8x5x5xf32>
// CHECK: %[[CONV_4:.+]] = mp.conv %[[ARG0]], %[[ARG3]] {dilations = array<i64: 2, 2>, group = 2 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x4x10x10xf32>, tensor<8x2x3x3xf32>) -> tensor<?x8x8x8xf32>
// CHECK: %[[CONV_5:.+]] = mp.conv %[[ARG4]], %[[ARG1]] {auto_pad = "SAME_UPPER", dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x4x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x?x?xf32>
// CHECK: %[[CONV_6:.+]] = mp.conv %[[ARG5]], %[[ARG6]] {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 4>, pads = array<i64: 1, 0>, strides = array<i64: 2>} : (tensor<?x4x10xf32>, tensor<6x4x4xf32>) -> tensor<?x6x4xf32>
// CHECK: return %[[CONV]], %[[CONV_1]], %[[CONV_2]], %[[CONV_3]], %[[CONV_4]], %[[CONV_5]], %[[CONV_6]] : tensor<?x8x10x10xf32>, tensor<?x8x4x4xf32>, tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>, tensor<?x8x8x8xf32>, tensor<?x8x?x?xf32>, tensor<?x6x4xf32>

func.func @conv_transpose(%arg0: tensor<?x4x5x5xf32>, %arg1: tensor<4x2x3x3xf32>, %arg2: tensor<2xf32>, %arg3: tensor<4x1x4xf32>, %arg4: tensor<?x4x7xf32>) -> (tensor<?x2x11x11xf32>, tensor<?x2x10x10xf32>, tensor<?x2x10x10xf32>, tensor<?x2x12x12xf32>, tensor<?x2x14xf32>) {
  %0 = mp.conv_transpose %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>) -> tensor<?x2x11x11xf32>
  %1 = mp.conv_transpose %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x2x10x10xf32>
  %2 = mp.conv_transpose %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x2x10x10xf32>
  %3 = mp.conv_transpose %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x2x12x12xf32>
  %4 = mp.conv_transpose %arg4, %arg3 {dilations = array<i64: 1>, group = 2 : i64, kernel_shape = array<i64: 4>, output_padding = array<i64: 0>, pads = array<i64: 1, 1>, strides = array<i64: 2>} : (tensor<?x4x7xf32>, tensor<4x1x4xf32>) -> tensor<?x2x14xf32>
  return %0, %1, %2, %3, %4 : tensor<?x2x11x11xf32>, tensor<?x2x10x10xf32>, tensor<?x2x10x10xf32>, tensor<?x2x12x12xf32>, tensor<?x2x14xf32>
}
// CHECK-LABEL: func.func @conv_transpose(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x4x5x5xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<4x2x3x3xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<2xf32>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<4x1x4xf32>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<?x4x7xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x2x11x11xf32>
// CHECK-SAME: tensor<?x2x10x10xf32>
// CHECK-SAME: tensor<?x2x10x10xf32>
// CHECK-SAME: tensor<?x2x12x12xf32>
// CHECK-SAME: tensor<?x2x14xf32>
// CHECK: %[[CONV_TRANSPOSE:.+]] = mp.conv_transpose %[[ARG0]], %[[ARG1]], %[[ARG2]] {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>) -> tensor<?x2x11x11xf32>
// CHECK: %[[CONV_TRANSPOSE_1:.+]] = mp.conv_transpose %[[ARG0]], %[[ARG1]] {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x2x10x10xf32>
// CHECK: %[[CONV_TRANSPOSE_2:.+]] = mp.conv_transpose %[[ARG0]], %[[ARG1]] {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x2x10x10xf32>
// CHECK: %[[CONV_TRANSPOSE_3:.+]] = mp.conv_transpose %[[ARG0]], %[[ARG1]] {dilations = array<i64: 1, 1>, group = 1 : i64, kernel_shape = array<i64: 3, 3>, output_padding = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x2x12x12xf32>
// CHECK: %[[CONV_TRANSPOSE_4:.+]] = mp.conv_transpose %[[ARG4]], %[[ARG3]] {dilations = array<i64: 1>, group = 2 : i64, kernel_shape = array<i64: 4>, output_padding = array<i64: 0>, pads = array<i64: 1, 1>, strides = array<i64: 2>} : (tensor<?x4x7xf32>, tensor<4x1x4xf32>) -> tensor<?x2x14xf32>
// CHECK: return %[[CONV_TRANSPOSE]], %[[CONV_TRANSPOSE_1]], %[[CONV_TRANSPOSE_2]], %[[CONV_TRANSPOSE_3]], %[[CONV_TRANSPOSE_4]] : tensor<?x2x11x11xf32>, tensor<?x2x10x10xf32>, tensor<?x2x10x10xf32>, tensor<?x2x12x12xf32>, tensor<?x2x14xf32>

func.func @pool(%arg0: tensor<?x3x9x9xf32>, %arg1: tensor<?x3x?x?xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi64>, tensor<?x3x5x5xf32>, tensor<?x3x9x9xf32>, tensor<?x3x3x3xf32>, tensor<?x3x1x1xf32>, tensor<?x3x?x?xf32>, tensor<?x3x5x5xf32>) {
  %output, %indices = mp.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, storage_order = 1 : i64, strides = array<i64: 2, 2>} : (tensor<?x3x9x9xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi64>)
  %output_0, %indices_1 = mp.max_pool %arg0 {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x3x9x9xf32>) -> (tensor<?x3x5x5xf32>, tensor<?x3x5x5xi64>)
  %0 = mp.average_pool %arg0 {count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x3x9x9xf32>) -> tensor<?x3x9x9xf32>
  %output_2, %indices_3 = mp.max_pool %arg0 {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 3>} : (tensor<?x3x9x9xf32>) -> (tensor<?x3x3x3xf32>, tensor<?x3x3x3xi64>)
  %1 = mp.global_average_pool %arg0 : tensor<?x3x9x9xf32> -> tensor<?x3x1x1xf32>
  %2 = mp.average_pool %arg1 {auto_pad = "SAME_LOWER", dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>
  %3 = mp.average_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x9x9xf32>) -> tensor<?x3x5x5xf32>
  return %output, %indices, %output_0, %0, %output_2, %1, %2, %3 : tensor<?x3x4x4xf32>, tensor<?x3x4x4xi64>, tensor<?x3x5x5xf32>, tensor<?x3x9x9xf32>, tensor<?x3x3x3xf32>, tensor<?x3x1x1xf32>, tensor<?x3x?x?xf32>, tensor<?x3x5x5xf32>
}
// CHECK-LABEL: func.func @pool(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x3x9x9xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<?x3x?x?xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x3x4x4xf32>
// CHECK-SAME: tensor<?x3x4x4xi64>
// CHECK-SAME: tensor<?x3x5x5xf32>
// CHECK-SAME: tensor<?x3x9x9xf32>
// CHECK-SAME: tensor<?x3x3x3xf32>
// CHECK-SAME: tensor<?x3x1x1xf32>
// CHECK-SAME: tensor<?x3x?x?xf32>
// CHECK-SAME: tensor<?x3x5x5xf32>
// CHECK: %[[OUTPUT:[a-z_0-9]+]], %[[INDICES:[a-z_0-9]+]] = mp.max_pool %[[ARG0]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, storage_order = 1 : i64, strides = array<i64: 2, 2>} : (tensor<?x3x9x9xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi64>)
// CHECK: %[[OUTPUT_1:[a-z_0-9]+]], %[[INDICES_1:[a-z_0-9]+]] = mp.max_pool %[[ARG0]] {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x3x9x9xf32>) -> (tensor<?x3x5x5xf32>, tensor<?x3x5x5xi64>)
// CHECK: %[[AVERAGE_POOL:.+]] = mp.average_pool %[[ARG0]] {count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x3x9x9xf32>) -> tensor<?x3x9x9xf32>
// CHECK: %[[OUTPUT_2:[a-z_0-9]+]], %[[INDICES_2:[a-z_0-9]+]] = mp.max_pool %[[ARG0]] {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 3>} : (tensor<?x3x9x9xf32>) -> (tensor<?x3x3x3xf32>, tensor<?x3x3x3xi64>)
// CHECK: %[[GLOBAL_AVERAGE_POOL:.+]] = mp.global_average_pool %[[ARG0]] : tensor<?x3x9x9xf32> -> tensor<?x3x1x1xf32>
// CHECK: %[[AVERAGE_POOL_1:.+]] = mp.average_pool %[[ARG1]] {auto_pad = "SAME_LOWER", dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>
// CHECK: %[[AVERAGE_POOL_2:.+]] = mp.average_pool %[[ARG0]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x9x9xf32>) -> tensor<?x3x5x5xf32>
// CHECK: return %[[OUTPUT]], %[[INDICES]], %[[OUTPUT_1]], %[[AVERAGE_POOL]], %[[OUTPUT_2]], %[[GLOBAL_AVERAGE_POOL]], %[[AVERAGE_POOL_1]], %[[AVERAGE_POOL_2]] : tensor<?x3x4x4xf32>, tensor<?x3x4x4xi64>, tensor<?x3x5x5xf32>, tensor<?x3x9x9xf32>, tensor<?x3x3x3xf32>, tensor<?x3x1x1xf32>, tensor<?x3x?x?xf32>, tensor<?x3x5x5xf32>

func.func @lstm(%arg0: tensor<?x?x8xf32>, %arg1: tensor<1x64x8xf32>, %arg2: tensor<1x64x16xf32>, %arg3: tensor<1x128xf32>, %arg4: tensor<1x?x16xf32>, %arg5: tensor<1x?x16xf32>, %arg6: tensor<2x64x8xf32>, %arg7: tensor<2x64x16xf32>, %arg8: tensor<?xi32>, %arg9: tensor<?x?x8xf32>) -> (tensor<?x1x?x16xf32>, tensor<1x?x16xf32>, tensor<1x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?x1x16xf32>) {
  %y, %y_h, %y_c = mp.lstm %arg0, %arg1, %arg2 bias %arg3 initial_h %arg4 initial_c %arg5 {hidden_size = 16 : i64} : (tensor<?x?x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<1x128xf32>, tensor<1x?x16xf32>, tensor<1x?x16xf32>) -> (tensor<?x1x?x16xf32>, tensor<1x?x16xf32>, tensor<1x?x16xf32>)
  %y_0, %y_h_1, %y_c_2 = mp.lstm %arg0, %arg6, %arg7 sequence_lens %arg8 {activations = ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Tanh", "Tanh"], clip = 3.000000e+00 : f32, direction = "bidirectional", hidden_size = 16 : i64} : (tensor<?x?x8xf32>, tensor<2x64x8xf32>, tensor<2x64x16xf32>, tensor<?xi32>) -> (tensor<?x2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>)
  %y_3, %y_h_4, %y_c_5 = mp.lstm %arg9, %arg1, %arg2 {hidden_size = 16 : i64, layout = 1 : i64} : (tensor<?x?x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>) -> (tensor<?x?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>)
  return %y, %y_h, %y_c, %y_0, %y_3 : tensor<?x1x?x16xf32>, tensor<1x?x16xf32>, tensor<1x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?x1x16xf32>
}
// CHECK-LABEL: func.func @lstm(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x?x8xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<1x64x8xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<1x64x16xf32>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<1x128xf32>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<1x?x16xf32>
// CHECK-SAME: %[[ARG5:[a-z0-9]+]]: tensor<1x?x16xf32>
// CHECK-SAME: %[[ARG6:[a-z0-9]+]]: tensor<2x64x8xf32>
// CHECK-SAME: %[[ARG7:[a-z0-9]+]]: tensor<2x64x16xf32>
// CHECK-SAME: %[[ARG8:[a-z0-9]+]]: tensor<?xi32>
// CHECK-SAME: %[[ARG9:[a-z0-9]+]]: tensor<?x?x8xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x1x?x16xf32>
// CHECK-SAME: tensor<1x?x16xf32>
// CHECK-SAME: tensor<1x?x16xf32>
// CHECK-SAME: tensor<?x2x?x16xf32>
// CHECK-SAME: tensor<?x?x1x16xf32>
// CHECK: %[[Y:[a-z_0-9]+]], %[[Y_H:[a-z_0-9]+]], %[[Y_C:[a-z_0-9]+]] = mp.lstm %[[ARG0]], %[[ARG1]], %[[ARG2]] bias %[[ARG3]] initial_h %[[ARG4]] initial_c %[[ARG5]] {hidden_size = 16 : i64} : (tensor<?x?x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<1x128xf32>, tensor<1x?x16xf32>, tensor<1x?x16xf32>) -> (tensor<?x1x?x16xf32>, tensor<1x?x16xf32>, tensor<1x?x16xf32>)
// CHECK: %[[Y_1:[a-z_0-9]+]], %[[Y_H_1:[a-z_0-9]+]], %[[Y_C_1:[a-z_0-9]+]] = mp.lstm %[[ARG0]], %[[ARG6]], %[[ARG7]] sequence_lens %[[ARG8]] {activations = ["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Tanh", "Tanh"], clip = 3.000000e+00 : f32, direction = "bidirectional", hidden_size = 16 : i64} : (tensor<?x?x8xf32>, tensor<2x64x8xf32>, tensor<2x64x16xf32>, tensor<?xi32>) -> (tensor<?x2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>)
// CHECK: %[[Y_2:[a-z_0-9]+]], %[[Y_H_2:[a-z_0-9]+]], %[[Y_C_2:[a-z_0-9]+]] = mp.lstm %[[ARG9]], %[[ARG1]], %[[ARG2]] {hidden_size = 16 : i64, layout = 1 : i64} : (tensor<?x?x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>) -> (tensor<?x?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>)
// CHECK: return %[[Y]], %[[Y_H]], %[[Y_C]], %[[Y_1]], %[[Y_2]] : tensor<?x1x?x16xf32>, tensor<1x?x16xf32>, tensor<1x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?x1x16xf32>

func.func @gru_rnn(%arg0: tensor<?x?x8xf32>, %arg1: tensor<2x48x8xf32>, %arg2: tensor<2x48x16xf32>, %arg3: tensor<2x96xf32>, %arg4: tensor<?xi32>, %arg5: tensor<?x2x16xf32>, %arg6: tensor<1x16x8xf32>, %arg7: tensor<1x16x16xf32>) -> (tensor<?x?x2x16xf32>, tensor<?x2x16xf32>, tensor<1x?x16xf32>) {
  %y, %y_h = mp.gru %arg0, %arg1, %arg2 bias %arg3 sequence_lens %arg4 initial_h %arg5 {direction = "bidirectional", hidden_size = 16 : i64, layout = 1 : i64, linear_before_reset = true} : (tensor<?x?x8xf32>, tensor<2x48x8xf32>, tensor<2x48x16xf32>, tensor<2x96xf32>, tensor<?xi32>, tensor<?x2x16xf32>) -> (tensor<?x?x2x16xf32>, tensor<?x2x16xf32>)
  %y_0, %y_h_1 = mp.rnn %arg0, %arg6, %arg7 {activations = ["Relu"], clip = 5.000000e+00 : f32, hidden_size = 16 : i64} : (tensor<?x?x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>) -> (tensor<?x1x?x16xf32>, tensor<1x?x16xf32>)
  return %y, %y_h, %y_h_1 : tensor<?x?x2x16xf32>, tensor<?x2x16xf32>, tensor<1x?x16xf32>
}
// CHECK-LABEL: func.func @gru_rnn(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x?x8xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<2x48x8xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<2x48x16xf32>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<2x96xf32>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<?xi32>
// CHECK-SAME: %[[ARG5:[a-z0-9]+]]: tensor<?x2x16xf32>
// CHECK-SAME: %[[ARG6:[a-z0-9]+]]: tensor<1x16x8xf32>
// CHECK-SAME: %[[ARG7:[a-z0-9]+]]: tensor<1x16x16xf32>
// CHECK: %[[Y:[a-z_0-9]+]], %[[Y_H:[a-z_0-9]+]] = mp.gru %[[ARG0]], %[[ARG1]], %[[ARG2]] bias %[[ARG3]] sequence_lens %[[ARG4]] initial_h %[[ARG5]] {direction = "bidirectional", hidden_size = 16 : i64, layout = 1 : i64, linear_before_reset = true} : (tensor<?x?x8xf32>, tensor<2x48x8xf32>, tensor<2x48x16xf32>, tensor<2x96xf32>, tensor<?xi32>, tensor<?x2x16xf32>) -> (tensor<?x?x2x16xf32>, tensor<?x2x16xf32>)
// CHECK: %{{[a-z_0-9]+}}, %[[Y_H_1:[a-z_0-9]+]] = mp.rnn %[[ARG0]], %[[ARG6]], %[[ARG7]] {activations = ["Relu"], clip = 5.000000e+00 : f32, hidden_size = 16 : i64} : (tensor<?x?x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>) -> (tensor<?x1x?x16xf32>, tensor<1x?x16xf32>)
// CHECK: return %[[Y]], %[[Y_H]], %[[Y_H_1]] : tensor<?x?x2x16xf32>, tensor<?x2x16xf32>, tensor<1x?x16xf32>

func.func @if(%arg0: tensor<i1>, %arg1: tensor<2x3xf32>, %arg2: tensor<2x5xf32>) -> (tensor<2x?xf32>, tensor<2x3xf32>) {
  %0:2 = mp.if %arg0 : tensor<i1> -> tensor<2x?xf32>, tensor<2x3xf32> {
    %1 = mp.relu %arg1 : tensor<2x3xf32>
    %2 = mp.neg %arg1 : tensor<2x3xf32>
    mp.yield %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>
  } else {
    %1 = mp.sigmoid %arg2 : tensor<2x5xf32>
    mp.yield %1, %arg1 : tensor<2x5xf32>, tensor<2x3xf32>
  }
  return %0#0, %0#1 : tensor<2x?xf32>, tensor<2x3xf32>
}
// CHECK-LABEL: func.func @if(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<i1>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<2x3xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<2x5xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<2x?xf32>
// CHECK-SAME: tensor<2x3xf32>
// CHECK: %[[IF:.+]]:2 = mp.if %[[ARG0]] : tensor<i1> -> tensor<2x?xf32>, tensor<2x3xf32> {
// CHECK: %[[RELU:.+]] = mp.relu %[[ARG1]] : tensor<2x3xf32>
// CHECK: %[[NEG:.+]] = mp.neg %[[ARG1]] : tensor<2x3xf32>
// CHECK: mp.yield %[[RELU]], %[[NEG]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: } else {
// CHECK: %[[SIGMOID:.+]] = mp.sigmoid %[[ARG2]] : tensor<2x5xf32>
// CHECK: mp.yield %[[SIGMOID]], %[[ARG1]] : tensor<2x5xf32>, tensor<2x3xf32>
// CHECK: return %[[IF]]#0, %[[IF]]#1 : tensor<2x?xf32>, tensor<2x3xf32>

func.func @shape_ops(%arg0: tensor<?x3x4xf32>, %arg1: tensor<2x5xi64>, %arg2: tensor<?x3x4xi64>, %arg3: tensor<2x1xi64>, %arg4: tensor<2x3x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<i64>) -> (tensor<?x?xf32>, tensor<2x?x3x4xf32>, tensor<?x12xf32>, tensor<4x?x3xf32>, tensor<?x6x4xf32>, tensor<?x2x5x4xf32>, tensor<?x3x4xf32>, tensor<2x3x4xf32>, tensor<?x3x4xf32>, tensor<?x6x8xf32>, tensor<4x4xf32>, tensor<1xi64>, tensor<i64>, tensor<3xi64>, tensor<4x3x?xf32>, tensor<?x3x4xf32>) {
  %0 = mp.constant dense<[0, -1]> : tensor<2xi64>
  %1 = mp.constant dense<[2, 1, 1, 1]> : tensor<4xi64>
  %2 = mp.constant dense<[1, 2, 2]> : tensor<3xi64>
  %3 = mp.constant dense<0> : tensor<i64>
  %4 = mp.constant dense<6> : tensor<i64>
  %5 = mp.constant dense<2> : tensor<i64>
  %6 = mp.constant dense<0> : tensor<3xi64>
  %7 = mp.reshape %arg0, %0 : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %8 = mp.expand %arg0, %1 : (tensor<?x3x4xf32>, tensor<4xi64>) -> tensor<2x?x3x4xf32>
  %9 = mp.flatten %arg0 : tensor<?x3x4xf32> -> tensor<?x12xf32>
  %10 = mp.transpose %arg0 {perm = array<i64: 2, 0, 1>} : tensor<?x3x4xf32> -> tensor<4x?x3xf32>
  %11 = mp.transpose %arg0 {perm = array<i64: 2, 1, 0>} : tensor<?x3x4xf32> -> tensor<4x3x?xf32>
  %12 = mp.concat %arg0, %arg0 {axis = 1 : i64} : (tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x6x4xf32>
  %13 = mp.gather %arg0, %arg1 {axis = 1 : i64} : (tensor<?x3x4xf32>, tensor<2x5xi64>) -> tensor<?x2x5x4xf32>
  %14 = mp.gather_elements %arg0, %arg2 {axis = 2 : i64} : (tensor<?x3x4xf32>, tensor<?x3x4xi64>) -> tensor<?x3x4xf32>
  %15 = mp.gather_nd %arg4, %arg3 : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x3x4xf32>
  %16 = mp.scatter_nd %arg0, %arg3, %arg4 {reduction = "add"} : (tensor<?x3x4xf32>, tensor<2x1xi64>, tensor<2x3x4xf32>) -> tensor<?x3x4xf32>
  %17 = mp.tile %arg0, %2 : (tensor<?x3x4xf32>, tensor<3xi64>) -> tensor<?x6x8xf32>
  %18 = mp.trilu %arg5 k %arg6 {upper = false} : (tensor<4x4xf32>, tensor<i64>) -> tensor<4x4xf32>
  %19 = mp.shape %arg0 {end = -1 : i64, start = 1 : i64} : tensor<?x3x4xf32> -> tensor<1xi64>
  %20 = mp.size %arg0 : tensor<?x3x4xf32> -> tensor<i64>
  %21 = mp.range %3, %4, %5 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %22 = mp.reshape %arg0, %6 : (tensor<?x3x4xf32>, tensor<3xi64>) -> tensor<?x3x4xf32>
  return %7, %8, %9, %10, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %11, %22 : tensor<?x?xf32>, tensor<2x?x3x4xf32>, tensor<?x12xf32>, tensor<4x?x3xf32>, tensor<?x6x4xf32>, tensor<?x2x5x4xf32>, tensor<?x3x4xf32>, tensor<2x3x4xf32>, tensor<?x3x4xf32>, tensor<?x6x8xf32>, tensor<4x4xf32>, tensor<1xi64>, tensor<i64>, tensor<3xi64>, tensor<4x3x?xf32>, tensor<?x3x4xf32>
}
// CHECK-LABEL: func.func @shape_ops(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x3x4xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<2x5xi64>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<?x3x4xi64>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<2x1xi64>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<2x3x4xf32>
// CHECK-SAME: %[[ARG5:[a-z0-9]+]]: tensor<4x4xf32>
// CHECK-SAME: %[[ARG6:[a-z0-9]+]]: tensor<i64>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x?xf32>
// CHECK-SAME: tensor<2x?x3x4xf32>
// CHECK-SAME: tensor<?x12xf32>
// CHECK-SAME: tensor<4x?x3xf32>
// CHECK-SAME: tensor<?x6x4xf32>
// CHECK-SAME: tensor<?x2x5x4xf32>
// CHECK-SAME: tensor<?x3x4xf32>
// CHECK-SAME: tensor<2x3x4xf32>
// CHECK-SAME: tensor<?x3x4xf32>
// CHECK-SAME: tensor<?x6x8xf32>
// CHECK-SAME: tensor<4x4xf32>
// CHECK-SAME: tensor<1xi64>
// CHECK-SAME: tensor<i64>
// CHECK-SAME: tensor<3xi64>
// CHECK-SAME: tensor<4x3x?xf32>
// CHECK-SAME: tensor<?x3x4xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<[0, -1]> : tensor<2xi64>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense<[2, 1, 1, 1]> : tensor<4xi64>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<[1, 2, 2]> : tensor<3xi64>
// CHECK: %[[CONSTANT_3:.+]] = mp.constant dense<0> : tensor<i64>
// CHECK: %[[CONSTANT_4:.+]] = mp.constant dense<6> : tensor<i64>
// CHECK: %[[CONSTANT_5:.+]] = mp.constant dense<2> : tensor<i64>
// CHECK: %[[CONSTANT_6:.+]] = mp.constant dense<0> : tensor<3xi64>
// CHECK: %[[RESHAPE:.+]] = mp.reshape %[[ARG0]], %[[CONSTANT]] : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: %[[EXPAND:.+]] = mp.expand %[[ARG0]], %[[CONSTANT_1]] : (tensor<?x3x4xf32>, tensor<4xi64>) -> tensor<2x?x3x4xf32>
// CHECK: %[[FLATTEN:.+]] = mp.flatten %[[ARG0]] : tensor<?x3x4xf32> -> tensor<?x12xf32>
// CHECK: %[[TRANSPOSE:.+]] = mp.transpose %[[ARG0]] {perm = array<i64: 2, 0, 1>} : tensor<?x3x4xf32> -> tensor<4x?x3xf32>
// CHECK: %[[TRANSPOSE_1:.+]] = mp.transpose %[[ARG0]] {perm = array<i64: 2, 1, 0>} : tensor<?x3x4xf32> -> tensor<4x3x?xf32>
// CHECK: %[[CONCAT:.+]] = mp.concat %[[ARG0]], %[[ARG0]] {axis = 1 : i64} : (tensor<?x3x4xf32>, tensor<?x3x4xf32>) -> tensor<?x6x4xf32>
// CHECK: %[[GATHER:.+]] = mp.gather %[[ARG0]], %[[ARG1]] {axis = 1 : i64} : (tensor<?x3x4xf32>, tensor<2x5xi64>) -> tensor<?x2x5x4xf32>
// CHECK: %[[GATHER_ELEMENTS:.+]] = mp.gather_elements %[[ARG0]], %[[ARG2]] {axis = 2 : i64} : (tensor<?x3x4xf32>, tensor<?x3x4xi64>) -> tensor<?x3x4xf32>
// CHECK: %[[GATHER_ND:.+]] = mp.gather_nd %[[ARG4]], %[[ARG3]] : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x3x4xf32>
// CHECK: %[[SCATTER_ND:.+]] = mp.scatter_nd %[[ARG0]], %[[ARG3]], %[[ARG4]] {reduction = "add"} : (tensor<?x3x4xf32>, tensor<2x1xi64>, tensor<2x3x4xf32>) -> tensor<?x3x4xf32>
// CHECK: %[[TILE:.+]] = mp.tile %[[ARG0]], %[[CONSTANT_2]] : (tensor<?x3x4xf32>, tensor<3xi64>) -> tensor<?x6x8xf32>
// CHECK: %[[TRILU:.+]] = mp.trilu %[[ARG5]] k %[[ARG6]] {upper = false} : (tensor<4x4xf32>, tensor<i64>) -> tensor<4x4xf32>
// CHECK: %[[SHAPE:.+]] = mp.shape %[[ARG0]] {end = -1 : i64, start = 1 : i64} : tensor<?x3x4xf32> -> tensor<1xi64>
// CHECK: %[[SIZE:.+]] = mp.size %[[ARG0]] : tensor<?x3x4xf32> -> tensor<i64>
// CHECK: %[[RANGE:.+]] = mp.range %[[CONSTANT_3]], %[[CONSTANT_4]], %[[CONSTANT_5]] : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
// CHECK: %[[RESHAPE_1:.+]] = mp.reshape %[[ARG0]], %[[CONSTANT_6]] : (tensor<?x3x4xf32>, tensor<3xi64>) -> tensor<?x3x4xf32>
// CHECK: return %[[RESHAPE]], %[[EXPAND]], %[[FLATTEN]], %[[TRANSPOSE]], %[[CONCAT]], %[[GATHER]], %[[GATHER_ELEMENTS]], %[[GATHER_ND]], %[[SCATTER_ND]], %[[TILE]], %[[TRILU]], %[[SHAPE]], %[[SIZE]], %[[RANGE]], %[[TRANSPOSE_1]], %[[RESHAPE_1]] : tensor<?x?xf32>, tensor<2x?x3x4xf32>, tensor<?x12xf32>, tensor<4x?x3xf32>, tensor<?x6x4xf32>, tensor<?x2x5x4xf32>, tensor<?x3x4xf32>, tensor<2x3x4xf32>, tensor<?x3x4xf32>, tensor<?x6x8xf32>, tensor<4x4xf32>, tensor<1xi64>, tensor<i64>, tensor<3xi64>, tensor<4x3x?xf32>, tensor<?x3x4xf32>

func.func @nn(%arg0: tensor<?x?x64xf32>, %arg1: tensor<64x32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<4x1x64x32xf32>, %arg4: tensor<8x8xf32>, %arg5: tensor<16x8xf32>, %arg6: tensor<16xf32>, %arg7: tensor<64xf32>, %arg8: tensor<64xf32>, %arg9: tensor<?x4x5x5xf32>, %arg10: tensor<4xf32>, %arg11: tensor<?x4x?x16xf32>, %arg12: tensor<128x8xf32>, %arg13: tensor<128x8xf32>, %arg14: tensor<?x?xi64>) -> (tensor<?x?x32xf32>, tensor<?x?xf32>, tensor<4x?x?x32xf32>, tensor<8x16xf32>, tensor<?x32xf32>, tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x64xf32>, tensor<?x4x5x5xf32>, tensor<?x4x5x5xf32>, tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x1x1xf32>) {
  %0 = mp.constant dense<1> : tensor<i64>
  %1 = mp.matmul %arg0, %arg1 : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %2 = mp.matmul %arg0, %arg7 : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?xf32>
  %3 = mp.matmul %arg0, %arg3 : (tensor<?x?x64xf32>, tensor<4x1x64x32xf32>) -> tensor<4x?x?x32xf32>
  %4 = mp.gemm %arg4, %arg5, %arg6 {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_b = true} : (tensor<8x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %5 = mp.einsum %arg0, %arg1 {equation = "bsh,hk->bk"} : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  %output, %mean, %inv_std_dev = mp.layer_norm %arg0, %arg7 bias %arg8 {epsilon = 9.99999997E-7 : f32, stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>)
  %output_0, %inv_std_dev_1 = mp.rms_norm %arg0, %arg7 {axis = 1 : i64, stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x1x1xf32>)
  %6 = mp.batch_norm %arg9, %arg10, %arg10, %arg10, %arg10 {epsilon = 1.000000e-03 : f32} : (tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32>
  %7 = mp.instance_norm %arg9, %arg10, %arg10 : (tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32>
  %8 = mp.cumsum %arg0 {axis = 1 : i64, exclusive = true, reverse = true} : tensor<?x?x64xf32>
  %9 = mp.rotary_embedding %arg11, %arg12, %arg13 positions %arg14 {interleaved = true} : (tensor<?x4x?x16xf32>, tensor<128x8xf32>, tensor<128x8xf32>, tensor<?x?xi64>) -> tensor<?x4x?x16xf32>
  return %1, %2, %3, %4, %5, %output, %mean, %inv_std_dev, %output_0, %6, %7, %8, %9, %inv_std_dev_1 : tensor<?x?x32xf32>, tensor<?x?xf32>, tensor<4x?x?x32xf32>, tensor<8x16xf32>, tensor<?x32xf32>, tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x64xf32>, tensor<?x4x5x5xf32>, tensor<?x4x5x5xf32>, tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x1x1xf32>
}
// CHECK-LABEL: func.func @nn(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x?x64xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<64x32xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<32xf32>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<4x1x64x32xf32>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<8x8xf32>
// CHECK-SAME: %[[ARG5:[a-z0-9]+]]: tensor<16x8xf32>
// CHECK-SAME: %[[ARG6:[a-z0-9]+]]: tensor<16xf32>
// CHECK-SAME: %[[ARG7:[a-z0-9]+]]: tensor<64xf32>
// CHECK-SAME: %[[ARG8:[a-z0-9]+]]: tensor<64xf32>
// CHECK-SAME: %[[ARG9:[a-z0-9]+]]: tensor<?x4x5x5xf32>
// CHECK-SAME: %[[ARG10:[a-z0-9]+]]: tensor<4xf32>
// CHECK-SAME: %[[ARG11:[a-z0-9]+]]: tensor<?x4x?x16xf32>
// CHECK-SAME: %[[ARG12:[a-z0-9]+]]: tensor<128x8xf32>
// CHECK-SAME: %[[ARG13:[a-z0-9]+]]: tensor<128x8xf32>
// CHECK-SAME: %[[ARG14:[a-z0-9]+]]: tensor<?x?xi64>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x?x32xf32>
// CHECK-SAME: tensor<?x?xf32>
// CHECK-SAME: tensor<4x?x?x32xf32>
// CHECK-SAME: tensor<8x16xf32>
// CHECK-SAME: tensor<?x32xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x1xf32>
// CHECK-SAME: tensor<?x?x1xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x4x5x5xf32>
// CHECK-SAME: tensor<?x4x5x5xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x4x?x16xf32>
// CHECK-SAME: tensor<?x1x1xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<1> : tensor<i64>
// CHECK: %[[MATMUL:.+]] = mp.matmul %[[ARG0]], %[[ARG1]] : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
// CHECK: %[[MATMUL_1:.+]] = mp.matmul %[[ARG0]], %[[ARG7]] : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?xf32>
// CHECK: %[[MATMUL_2:.+]] = mp.matmul %[[ARG0]], %[[ARG3]] : (tensor<?x?x64xf32>, tensor<4x1x64x32xf32>) -> tensor<4x?x?x32xf32>
// CHECK: %[[GEMM:.+]] = mp.gemm %[[ARG4]], %[[ARG5]], %[[ARG6]] {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_b = true} : (tensor<8x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<8x16xf32>
// CHECK: %[[EINSUM:.+]] = mp.einsum %[[ARG0]], %[[ARG1]] {equation = "bsh,hk->bk"} : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
// CHECK: %[[OUTPUT:[a-z_0-9]+]], %[[MEAN:[a-z_0-9]+]], %[[INV_STD_DEV:[a-z_0-9]+]] = mp.layer_norm %[[ARG0]], %[[ARG7]] bias %[[ARG8]] {epsilon = 9.99999997E-7 : f32, stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>)
// CHECK: %[[OUTPUT_1:[a-z_0-9]+]], %[[INV_STD_DEV_1:[a-z_0-9]+]] = mp.rms_norm %[[ARG0]], %[[ARG7]] {axis = 1 : i64, stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x1x1xf32>)
// CHECK: %[[BATCH_NORM:.+]] = mp.batch_norm %[[ARG9]], %[[ARG10]], %[[ARG10]], %[[ARG10]], %[[ARG10]] {epsilon = 1.000000e-03 : f32} : (tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32>
// CHECK: %[[INSTANCE_NORM:.+]] = mp.instance_norm %[[ARG9]], %[[ARG10]], %[[ARG10]] : (tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32>
// CHECK: %[[CUMSUM:.+]] = mp.cumsum %[[ARG0]] {axis = 1 : i64, exclusive = true, reverse = true} : tensor<?x?x64xf32>
// CHECK: %[[ROTARY_EMBEDDING:.+]] = mp.rotary_embedding %[[ARG11]], %[[ARG12]], %[[ARG13]] positions %[[ARG14]] {interleaved = true} : (tensor<?x4x?x16xf32>, tensor<128x8xf32>, tensor<128x8xf32>, tensor<?x?xi64>) -> tensor<?x4x?x16xf32>
// CHECK: return %[[MATMUL]], %[[MATMUL_1]], %[[MATMUL_2]], %[[GEMM]], %[[EINSUM]], %[[OUTPUT]], %[[MEAN]], %[[INV_STD_DEV]], %[[OUTPUT_1]], %[[BATCH_NORM]], %[[INSTANCE_NORM]], %[[CUMSUM]], %[[ROTARY_EMBEDDING]], %[[INV_STD_DEV_1]] : tensor<?x?x32xf32>, tensor<?x?xf32>, tensor<4x?x?x32xf32>, tensor<8x16xf32>, tensor<?x32xf32>, tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x64xf32>, tensor<?x4x5x5xf32>, tensor<?x4x5x5xf32>, tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x1x1xf32>

func.func @microsoft(%arg0: tensor<?x?x64xf32>, %arg1: tensor<?x?x64xf32>, %arg2: tensor<64xf32>, %arg3: tensor<64xf32>, %arg4: tensor<64xf32>, %arg5: tensor<?x?xi32>, %arg6: tensor<?x?xi32>, %arg7: tensor<100x64xf32>, %arg8: tensor<32x64xf32>, %arg9: tensor<2x64xf32>, %arg10: tensor<?x?xi32>, %arg11: tensor<64x192xf32>, %arg12: tensor<192xf32>, %arg13: tensor<2x?x4x?x16xf32>, %arg14: tensor<?x?x64xf32>, %arg15: tensor<?x?x64xf32>, %arg16: tensor<?x4x?x16xf32>, %arg17: tensor<?x4x?x16xf32>, %arg18: tensor<?x?x32xf32>, %arg19: tensor<?x?x32xf32>, %arg20: tensor<?x2x?x16xf32>, %arg21: tensor<?x2x?x16xf32>, %arg22: tensor<?x1xi32>, %arg23: tensor<1xi32>, %arg24: tensor<?x?xi64>, %arg25: tensor<128x8xf32>, %arg26: tensor<128x8xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?xi32>, tensor<?x?x64xf32>, tensor<2x?x4x?x16xf32>, tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %output, %mean, %inv_std_dev, %input_skip_bias_sum = mp.ms.skip_layer_norm %arg0, %arg1, %arg2 beta %arg3 bias %arg4 {epsilon = 9.99999974E-6 : f32} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x64xf32>)
  %output_0, %mean_1, %inv_std_dev_2, %input_skip_bias_sum_3 = mp.ms.skip_layer_norm %arg0, %arg1, %arg2 {simplified = true} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x64xf32>)
  %output_4, %inv_std_dev_5 = mp.rms_norm %arg0, %arg2 {epsilon = 9.99999997E-7 : f32, stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>)
  %0 = mp.ms.fast_gelu %arg0 : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %1 = mp.ms.fast_gelu %arg0, %arg4 : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %2 = mp.ms.bias_gelu %arg0, %arg4 : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %3 = mp.ms.quick_gelu %arg0 {alpha = 1.500000e+00 : f32} : tensor<?x?x64xf32>
  %4 = mp.gelu %arg0 : tensor<?x?x64xf32>
  %output_6, %mask_index, %embedding_sum = mp.ms.embed_layer_norm %arg5 segment_ids %arg6 word %arg7 position %arg8 segment %arg9 gamma %arg2 beta %arg3 mask %arg10 : (tensor<?x?xi32>, tensor<?x?xi32>, tensor<100x64xf32>, tensor<32x64xf32>, tensor<2x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x?xi32>) -> (tensor<?x?x64xf32>, tensor<?xi32>, tensor<?x?x64xf32>)
  %output_7, %present = mp.ms.attention %arg0, %arg11 bias %arg12 past %arg13 {num_heads = 4 : i64, unidirectional = true} : (tensor<?x?x64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<2x?x4x?x16xf32>) -> (tensor<?x?x64xf32>, tensor<2x?x4x?x16xf32>)
  %output_8, %present_key, %present_value = mp.ms.multi_head_attention %arg0 key %arg14 value %arg15 past_key %arg16 past_value %arg17 {num_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> (tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>)
  %output_9, %present_key_10, %present_value_11 = mp.ms.group_query_attention %arg0 key %arg18 value %arg19 past_key %arg20 past_value %arg21 seqlens_k %arg22 total %arg23 cos %arg25 sin %arg26 {do_rotary = true, kv_num_heads = 2 : i64, num_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x1xi32>, tensor<1xi32>, tensor<128x8xf32>, tensor<128x8xf32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
  %5 = mp.ms.rotary_embedding %arg0, %arg24, %arg25, %arg26 {num_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<?x?xi64>, tensor<128x8xf32>, tensor<128x8xf32>) -> tensor<?x?x64xf32>
  %output_12, %mean_13, %inv_std_dev_14 = mp.layer_norm %arg0, %arg2 bias %arg3 {stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>)
  %output_15, %inv_std_dev_16 = mp.rms_norm %arg0, %arg2 {stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>)
  return %output, %input_skip_bias_sum, %output_0, %output_4, %0, %1, %2, %3, %4, %output_6, %mask_index, %output_7, %present, %output_8, %present_key, %present_value, %output_9, %present_key_10, %present_value_11, %5, %output_12, %output_15 : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?xi32>, tensor<?x?x64xf32>, tensor<2x?x4x?x16xf32>, tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
}
// CHECK-LABEL: func.func @microsoft(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<?x?x64xf32>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<?x?x64xf32>
// CHECK-SAME: %[[ARG2:[a-z0-9]+]]: tensor<64xf32>
// CHECK-SAME: %[[ARG3:[a-z0-9]+]]: tensor<64xf32>
// CHECK-SAME: %[[ARG4:[a-z0-9]+]]: tensor<64xf32>
// CHECK-SAME: %[[ARG5:[a-z0-9]+]]: tensor<?x?xi32>
// CHECK-SAME: %[[ARG6:[a-z0-9]+]]: tensor<?x?xi32>
// CHECK-SAME: %[[ARG7:[a-z0-9]+]]: tensor<100x64xf32>
// CHECK-SAME: %[[ARG8:[a-z0-9]+]]: tensor<32x64xf32>
// CHECK-SAME: %[[ARG9:[a-z0-9]+]]: tensor<2x64xf32>
// CHECK-SAME: %[[ARG10:[a-z0-9]+]]: tensor<?x?xi32>
// CHECK-SAME: %[[ARG11:[a-z0-9]+]]: tensor<64x192xf32>
// CHECK-SAME: %[[ARG12:[a-z0-9]+]]: tensor<192xf32>
// CHECK-SAME: %[[ARG13:[a-z0-9]+]]: tensor<2x?x4x?x16xf32>
// CHECK-SAME: %[[ARG14:[a-z0-9]+]]: tensor<?x?x64xf32>
// CHECK-SAME: %[[ARG15:[a-z0-9]+]]: tensor<?x?x64xf32>
// CHECK-SAME: %[[ARG16:[a-z0-9]+]]: tensor<?x4x?x16xf32>
// CHECK-SAME: %[[ARG17:[a-z0-9]+]]: tensor<?x4x?x16xf32>
// CHECK-SAME: %[[ARG18:[a-z0-9]+]]: tensor<?x?x32xf32>
// CHECK-SAME: %[[ARG19:[a-z0-9]+]]: tensor<?x?x32xf32>
// CHECK-SAME: %[[ARG20:[a-z0-9]+]]: tensor<?x2x?x16xf32>
// CHECK-SAME: %[[ARG21:[a-z0-9]+]]: tensor<?x2x?x16xf32>
// CHECK-SAME: %[[ARG22:[a-z0-9]+]]: tensor<?x1xi32>
// CHECK-SAME: %[[ARG23:[a-z0-9]+]]: tensor<1xi32>
// CHECK-SAME: %[[ARG24:[a-z0-9]+]]: tensor<?x?xi64>
// CHECK-SAME: %[[ARG25:[a-z0-9]+]]: tensor<128x8xf32>
// CHECK-SAME: %[[ARG26:[a-z0-9]+]]: tensor<128x8xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?xi32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<2x?x4x?x16xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x4x?x16xf32>
// CHECK-SAME: tensor<?x4x?x16xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x2x?x16xf32>
// CHECK-SAME: tensor<?x2x?x16xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK-SAME: tensor<?x?x64xf32>
// CHECK: %[[OUTPUT:[a-z_0-9]+]], %[[MEAN:[a-z_0-9]+]], %[[INV_STD_DEV:[a-z_0-9]+]], %[[INPUT_SKIP_BIAS_SUM:[a-z_0-9]+]] = mp.ms.skip_layer_norm %[[ARG0]], %[[ARG1]], %[[ARG2]] beta %[[ARG3]] bias %[[ARG4]] {epsilon = 9.99999974E-6 : f32} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x64xf32>)
// CHECK: %[[OUTPUT_1:[a-z_0-9]+]], %[[MEAN_1:[a-z_0-9]+]], %[[INV_STD_DEV_1:[a-z_0-9]+]], %[[INPUT_SKIP_BIAS_SUM_1:[a-z_0-9]+]] = mp.ms.skip_layer_norm %[[ARG0]], %[[ARG1]], %[[ARG2]] {simplified = true} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x64xf32>)
// CHECK: %[[OUTPUT_2:[a-z_0-9]+]], %[[INV_STD_DEV_2:[a-z_0-9]+]] = mp.rms_norm %[[ARG0]], %[[ARG2]] {epsilon = 9.99999997E-7 : f32, stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>)
// CHECK: %[[FAST_GELU:.+]] = mp.ms.fast_gelu %[[ARG0]] : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
// CHECK: %[[FAST_GELU_1:.+]] = mp.ms.fast_gelu %[[ARG0]], %[[ARG4]] : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK: %[[BIAS_GELU:.+]] = mp.ms.bias_gelu %[[ARG0]], %[[ARG4]] : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK: %[[QUICK_GELU:.+]] = mp.ms.quick_gelu %[[ARG0]] {alpha = 1.500000e+00 : f32} : tensor<?x?x64xf32>
// CHECK: %[[GELU:.+]] = mp.gelu %[[ARG0]] : tensor<?x?x64xf32>
// CHECK: %[[OUTPUT_3:[a-z_0-9]+]], %[[MASK_INDEX:[a-z_0-9]+]], %[[EMBEDDING_SUM:[a-z_0-9]+]] = mp.ms.embed_layer_norm %[[ARG5]] segment_ids %[[ARG6]] word %[[ARG7]] position %[[ARG8]] segment %[[ARG9]] gamma %[[ARG2]] beta %[[ARG3]] mask %[[ARG10]] : (tensor<?x?xi32>, tensor<?x?xi32>, tensor<100x64xf32>, tensor<32x64xf32>, tensor<2x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x?xi32>) -> (tensor<?x?x64xf32>, tensor<?xi32>, tensor<?x?x64xf32>)
// CHECK: %[[OUTPUT_4:[a-z_0-9]+]], %[[PRESENT:[a-z_0-9]+]] = mp.ms.attention %[[ARG0]], %[[ARG11]] bias %[[ARG12]] past %[[ARG13]] {num_heads = 4 : i64, unidirectional = true} : (tensor<?x?x64xf32>, tensor<64x192xf32>, tensor<192xf32>, tensor<2x?x4x?x16xf32>) -> (tensor<?x?x64xf32>, tensor<2x?x4x?x16xf32>)
// CHECK: %[[OUTPUT_5:[a-z_0-9]+]], %[[PRESENT_KEY:[a-z_0-9]+]], %[[PRESENT_VALUE:[a-z_0-9]+]] = mp.ms.multi_head_attention %[[ARG0]] key %[[ARG14]] value %[[ARG15]] past_key %[[ARG16]] past_value %[[ARG17]] {num_heads = 4 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> (tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>)
// CHECK: %[[OUTPUT_6:[a-z_0-9]+]], %[[PRESENT_KEY_1:[a-z_0-9]+]], %[[PRESENT_VALUE_1:[a-z_0-9]+]] = mp.ms.group_query_attention %[[ARG0]] key %[[ARG18]] value %[[ARG19]] past_key %[[ARG20]] past_value %[[ARG21]] seqlens_k %[[ARG22]] total %[[ARG23]] cos %[[ARG25]] sin %[[ARG26]] {do_rotary = true, kv_num_heads = 2 : i64, num_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x1xi32>, tensor<1xi32>, tensor<128x8xf32>, tensor<128x8xf32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
// CHECK: %[[ROTARY_EMBEDDING:.+]] = mp.ms.rotary_embedding %[[ARG0]], %[[ARG24]], %[[ARG25]], %[[ARG26]] {num_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<?x?xi64>, tensor<128x8xf32>, tensor<128x8xf32>) -> tensor<?x?x64xf32>
// CHECK: %[[OUTPUT_7:[a-z_0-9]+]], %[[MEAN_2:[a-z_0-9]+]], %[[INV_STD_DEV_3:[a-z_0-9]+]] = mp.layer_norm %[[ARG0]], %[[ARG2]] bias %[[ARG3]] {stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?x1xf32>)
// CHECK: %[[OUTPUT_8:[a-z_0-9]+]], %[[INV_STD_DEV_4:[a-z_0-9]+]] = mp.rms_norm %[[ARG0]], %[[ARG2]] {stash_type = f32} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>)
// CHECK: return %[[OUTPUT]], %[[INPUT_SKIP_BIAS_SUM]], %[[OUTPUT_1]], %[[OUTPUT_2]], %[[FAST_GELU]], %[[FAST_GELU_1]], %[[BIAS_GELU]], %[[QUICK_GELU]], %[[GELU]], %[[OUTPUT_3]], %[[MASK_INDEX]], %[[OUTPUT_4]], %[[PRESENT]], %[[OUTPUT_5]], %[[PRESENT_KEY]], %[[PRESENT_VALUE]], %[[OUTPUT_6]], %[[PRESENT_KEY_1]], %[[PRESENT_VALUE_1]], %[[ROTARY_EMBEDDING]], %[[OUTPUT_7]], %[[OUTPUT_8]] : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?xi32>, tensor<?x?x64xf32>, tensor<2x?x4x?x16xf32>, tensor<?x?x64xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>

func.func @identity_and_constants(%arg0: tensor<3xi64>, %arg1: tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<2x2xf32>, tensor<4xf16>, tensor<?x?x?xi32>, tensor<i1>) {
  %0 = mp.identity %arg1 : tensor<2x?xf32>
  %1 = mp.constant dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %2 = mp.constant dense_resource<blob> : tensor<4xf16>
  %3 = mp.constant_of_shape %arg0 {value = dense<7> : tensor<1xi32>} : tensor<3xi64> -> tensor<?x?x?xi32>
  %4 = mp.constant dense<true> : tensor<i1>
  return %0, %1, %2, %3, %4 : tensor<2x?xf32>, tensor<2x2xf32>, tensor<4xf16>, tensor<?x?x?xi32>, tensor<i1>
}
// CHECK-LABEL: func.func @identity_and_constants(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<3xi64>
// CHECK-SAME: %[[ARG1:[a-z0-9]+]]: tensor<2x?xf32>
// CHECK-SAME: -> (
// CHECK-SAME: tensor<2x?xf32>
// CHECK-SAME: tensor<2x2xf32>
// CHECK-SAME: tensor<4xf16>
// CHECK-SAME: tensor<?x?x?xi32>
// CHECK-SAME: tensor<i1>
// CHECK: %[[IDENTITY:.+]] = mp.identity %[[ARG1]] : tensor<2x?xf32>
// CHECK: %[[CONSTANT:.+]] = mp.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[CONSTANT_1:.+]] = mp.constant dense_resource<blob> : tensor<4xf16>
// CHECK: %[[CONSTANT_OF_SHAPE:.+]] = mp.constant_of_shape %[[ARG0]] {value = dense<7> : tensor<1xi32>} : tensor<3xi64> -> tensor<?x?x?xi32>
// CHECK: %[[CONSTANT_2:.+]] = mp.constant dense<true> : tensor<i1>
// CHECK: return %[[IDENTITY]], %[[CONSTANT]], %[[CONSTANT_1]], %[[CONSTANT_OF_SHAPE]], %[[CONSTANT_2]] : tensor<2x?xf32>, tensor<2x2xf32>, tensor<4xf16>, tensor<?x?x?xi32>, tensor<i1>

func.func @if_without_results(%arg0: tensor<i1>) {
  mp.if %arg0 : tensor<i1> {
  } else {
  }
  return
}
// CHECK-LABEL: func.func @if_without_results(
// CHECK-SAME: %[[ARG0:[a-z0-9]+]]: tensor<i1>
// CHECK: mp.if %[[ARG0]] : tensor<i1> {
// CHECK: } else {
// CHECK: return

{-#
  dialect_resources: {
    builtin: {
      blob: "0x02000000003C0040004200C4"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @non_zero
// CHECK: mp.non_zero %{{.+}} : tensor<i32> -> tensor<0x?xi64>
func.func @non_zero(%x: tensor<i32>) -> tensor<0x?xi64> {
  %0 = mp.non_zero %x : tensor<i32> -> tensor<0x?xi64>
  return %0 : tensor<0x?xi64>
}

// -----

// CHECK-LABEL: func.func @top_k
// CHECK: %{{.+}}, %{{.+}} = mp.top_k %{{.+}}, %{{.+}} {axis = 0 : i64, largest = false, sorted = false} : (tensor<?x4xf16>, tensor<1xi64>) -> (tensor<?x4xf16>, tensor<?x4xi64>)
func.func @top_k(%x: tensor<?x4xf16>, %k: tensor<1xi64>) -> (tensor<?x4xf16>, tensor<?x4xi64>) {
  %v, %i = mp.top_k %x, %k {axis = 0 : i64, largest = false, sorted = false} : (tensor<?x4xf16>, tensor<1xi64>) -> (tensor<?x4xf16>, tensor<?x4xi64>)
  return %v, %i : tensor<?x4xf16>, tensor<?x4xi64>
}

// -----

// CHECK-LABEL: func.func @one_hot
// CHECK: mp.one_hot %{{.+}}, %{{.+}}, %{{.+}} {axis = 0 : i64} : (tensor<3xi32>, tensor<f64>, tensor<2xi8>) -> tensor<?x3xi8>
func.func @one_hot(%i: tensor<3xi32>, %d: tensor<f64>, %v: tensor<2xi8>) -> tensor<?x3xi8> {
  %0 = mp.one_hot %i, %d, %v {axis = 0 : i64} : (tensor<3xi32>, tensor<f64>, tensor<2xi8>) -> tensor<?x3xi8>
  return %0 : tensor<?x3xi8>
}
