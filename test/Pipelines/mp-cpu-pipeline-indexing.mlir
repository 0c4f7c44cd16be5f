// Lowerings of index-driven ops, the new normalizations and reductions,
// unsigned integers and negative-step slices, run through --mp-cpu-pipeline
// with mlir-runner. Expected values computed independently with numpy
// (np.take_along_axis, np.add.at, np.cumsum, np.argmax/argmin (NaN wins),
// np.einsum, the ONNX normalization formulas in float64, uint8 arithmetic).
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

func.func private @printMemrefI64(tensor<*xi64>)

func.func @gather_elements() {
  %d = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %i = arith.constant dense<[[-1, 0], [1, 0]]> : tensor<2x2xi64>
  %0 = mp.gather_elements %d, %i {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  %u = tensor.cast %0 : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// Negative indices count from the end of the axis.
// CHECK: sizes = [2, 2]
// CHECK-NEXT: {{\[\[}}2, 1],
// CHECK-NEXT: [4, 3]]

func.func @gather_nd() {
  %d = arith.constant dense<[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]> : tensor<2x2x2xf32>
  %i = arith.constant dense<[[1], [0]]> : tensor<2x1xi64>
  %0 = mp.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x2x2xf32>, tensor<2x1xi64>) -> tensor<2x2xf32>
  %u = tensor.cast %0 : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// batch_dims = 1: out[b] = data[b, indices[b, 0]].
// CHECK: sizes = [2, 2]
// CHECK-NEXT: {{\[\[}}2, 3],
// CHECK-NEXT: [4, 5]]

func.func @scatter_nd() {
  %d = arith.constant dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>
  %i = arith.constant dense<[[1], [3], [-3]]> : tensor<3x1xi64>
  %u = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = mp.scatter_nd %d, %i, %u {reduction = "add"} : (tensor<4xf32>, tensor<3x1xi64>, tensor<3xf32>) -> tensor<4xf32>
  %p = tensor.cast %0 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%p) : (tensor<*xf32>) -> ()
  return
}
// Updates add in order; index -3 is 1.
// CHECK: sizes = [4]
// CHECK-NEXT: [1, 5, 1, 3]

func.func @cumsum() {
  %x = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = mp.cumsum %x {axis = 0 : i64, exclusive = true, reverse = true} : tensor<4xf32>
  %p = tensor.cast %0 : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%p) : (tensor<*xf32>) -> ()
  return
}
// Exclusive and reversed.
// CHECK: sizes = [4]
// CHECK-NEXT: [9, 7, 4, 0]

func.func @arg() {
  %x = arith.constant dense<[[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]]> : tensor<2x3xf32>
  %0 = mp.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = true} : tensor<2x3xf32> -> tensor<2xi64>
  %p = tensor.cast %0 : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%p) : (tensor<*xi64>) -> ()
  %y = arith.constant dense<[[1.0, 0x7FC00000, 0.0], [2.0, -1.0, -1.0]]> : tensor<2x3xf32>
  %1 = mp.arg_min %y {axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x1xi64>
  %q = tensor.cast %1 : tensor<2x1xi64> to tensor<*xi64>
  call @printMemrefI64(%q) : (tensor<*xi64>) -> ()
  return
}
// Last maximum; NaN is the minimum (numpy), ties keep the first.
// CHECK: sizes = [2]
// CHECK-NEXT: [2, 1]
// CHECK: sizes = [2, 1]
// CHECK-NEXT: {{\[\[}}1],
// CHECK-NEXT: [1]]

func.func @einsum() {
  %a = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>
  %b = arith.constant dense<[[[5.0, 6.0], [7.0, 8.0]]]> : tensor<1x2x2xf32>
  %0 = mp.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  %p = tensor.cast %0 : tensor<1x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%p) : (tensor<*xf32>) -> ()
  %m = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %1 = mp.einsum %m {equation = "ii"} : (tensor<2x2xf32>) -> tensor<f32>
  %q = tensor.cast %1 : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%q) : (tensor<*xf32>) -> ()
  return
}
// Batched matmul and an implicit-output trace.
// CHECK: sizes = [1, 2, 2]
// CHECK-NEXT: {{\[\[\[}}19, 22],
// CHECK-NEXT: [43, 50]]]
// CHECK: sizes = []
// CHECK-NEXT: [5]

func.func @norms() {
  %x = arith.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]]]> : tensor<1x2x1x2xf32>
  %s = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %m = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %v = arith.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %0 = mp.batch_norm %x, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<1x2x1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x1x2xf32>
  %p = tensor.cast %0 : tensor<1x2x1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%p) : (tensor<*xf32>) -> ()
  %y = arith.constant dense<[[[[1.0, 2.0, 3.0, 4.0]]]]> : tensor<1x1x1x4xf32>
  %s1 = arith.constant dense<[2.0]> : tensor<1xf32>
  %b1 = arith.constant dense<[1.0]> : tensor<1xf32>
  %1 = mp.instance_norm %y, %s1, %b1 {epsilon = 0.0 : f32} : (tensor<1x1x1x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x1x4xf32>
  %q = tensor.cast %1 : tensor<1x1x1x4xf32> to tensor<*xf32>
  call @printMemrefF32(%q) : (tensor<*xf32>) -> ()
  %z = arith.constant dense<[[[1.0], [2.0], [3.0], [5.0]]]> : tensor<1x4x1xf32>
  %s4 = arith.constant dense<[1.0, 1.0, 2.0, 1.0]> : tensor<4xf32>
  %b4 = arith.constant dense<[0.0, 0.0, 0.0, 1.0]> : tensor<4xf32>
  %2 = mp.group_norm %z, %s4, %b4 {epsilon = 0.0 : f32, num_groups = 2 : i64} : (tensor<1x4x1xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x1xf32>
  %r = tensor.cast %2 : tensor<1x4x1xf32> to tensor<*xf32>
  call @printMemrefF32(%r) : (tensor<*xf32>) -> ()
  return
}
// BatchNorm from given statistics; InstanceNorm; GroupNorm, 2 groups,
// per-channel scale and bias.
// CHECK: sizes = [1, 2, 1, 2]
// CHECK-NEXT: {{\[\[\[\[}}0, 1]],
// CHECK-NEXT: {{\[\[}}1, 2]]]]
// CHECK: sizes = [1, 1, 1, 4]
// CHECK-NEXT: {{\[\[\[\[}}-1.68328, 0.105573, 1.89443, 3.68328]]]]
// CHECK: sizes = [1, 4, 1]
// CHECK-NEXT: {{\[\[\[}}-1],
// CHECK-NEXT: [1],
// CHECK-NEXT: [-2],
// CHECK-NEXT: [2]]]

func.func @reductions() {
  %x = arith.constant dense<[[0.0, 0.0], [1000.0, 1000.0]]> : tensor<2x2xf32>
  %0 = mp.reduce_log_sum_exp %x {axes = array<i64: 1>, keepdims = false} : tensor<2x2xf32> -> tensor<2xf32>
  %p = tensor.cast %0 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%p) : (tensor<*xf32>) -> ()
  %y = arith.constant dense<[[1.0, -2.0], [3.0, -4.0]]> : tensor<2x2xf32>
  %1 = mp.reduce_l1 %y {axes = array<i64: 1>, keepdims = false} : tensor<2x2xf32> -> tensor<2xf32>
  %q = tensor.cast %1 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%q) : (tensor<*xf32>) -> ()
  %2 = mp.reduce_log_sum %x {keepdims = false} : tensor<2x2xf32> -> tensor<f32>
  %r = tensor.cast %2 : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%r) : (tensor<*xf32>) -> ()
  return
}
// LogSumExp stays finite for large inputs; L1; LogSum over all axes.
// CHECK: sizes = [2]
// CHECK-NEXT: [0.693147, 1000.69]
// CHECK: sizes = [2]
// CHECK-NEXT: [3, 7]
// CHECK: sizes = []
// CHECK-NEXT: [7.6009]

func.func @unsigned() {
  %a = arith.constant dense<[200, 3, 16]> : tensor<3xui8>
  %b = arith.constant dense<[100, 250, 4]> : tensor<3xui8>
  %0 = mp.max %a, %b : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %1 = mp.div %a, %b : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %2 = mp.bit_shift %a, %b {direction = "RIGHT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %3 = mp.concat %0, %1, %2 {axis = 0 : i64} : (tensor<3xui8>, tensor<3xui8>, tensor<3xui8>) -> tensor<9xui8>
  %4 = mp.cast %3 {to = i64} : tensor<9xui8> -> tensor<9xi64>
  %p = tensor.cast %4 : tensor<9xi64> to tensor<*xi64>
  call @printMemrefI64(%p) : (tensor<*xi64>) -> ()
  return
}
// ui8 compares and divides unsigned (200 > 100, 200 / 100 = 2); shifts by
// the width or more give 0.
// CHECK: sizes = [9]
// CHECK-NEXT: [200, 250, 16, 2, 0, 4, 0, 0, 1]

func.func @logic_and_slice() {
  %a = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %b = arith.constant dense<[true, true, false]> : tensor<3xi1>
  %0 = mp.xor %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %1 = mp.cast %0 {to = i64} : tensor<3xi1> -> tensor<3xi64>
  %p = tensor.cast %1 : tensor<3xi64> to tensor<*xi64>
  call @printMemrefI64(%p) : (tensor<*xi64>) -> ()
  %x = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0]> : tensor<5xf32>
  %st = mp.constant dense<[-1]> : tensor<1xi64>
  %en = mp.constant dense<[-6]> : tensor<1xi64>
  %ax = mp.constant dense<[0]> : tensor<1xi64>
  %sp = mp.constant dense<[-2]> : tensor<1xi64>
  %2 = mp.slice %x, %st, %en axes %ax steps %sp : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
  %q = tensor.cast %2 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%q) : (tensor<*xf32>) -> ()
  return
}
// Xor; x[-1:-6:-2].
// CHECK: sizes = [3]
// CHECK-NEXT: [0, 1, 1]
// CHECK: sizes = [3]
// CHECK-NEXT: [4, 2, 0]

func.func @tensor_scatter() {
  %c = arith.constant dense<0.0> : tensor<1x4x2xf32>
  %u = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>
  %w = arith.constant dense<[3]> : tensor<1xi64>
  %0 = mp.tensor_scatter %c, %u at %w {mode = "circular"} : (tensor<1x4x2xf32>, tensor<1x2x2xf32>, tensor<1xi64>) -> tensor<1x4x2xf32>
  %p = tensor.cast %0 : tensor<1x4x2xf32> to tensor<*xf32>
  call @printMemrefF32(%p) : (tensor<*xf32>) -> ()
  return
}
// A circular KV-cache write from position 3 wraps to row 0.
// CHECK: sizes = [1, 4, 2]
// CHECK-NEXT: {{\[\[\[}}3, 4],
// CHECK-NEXT: [0, 0],
// CHECK-NEXT: [0, 0],
// CHECK-NEXT: [1, 2]]]

func.func @main() {
  call @gather_elements() : () -> ()
  call @gather_nd() : () -> ()
  call @scatter_nd() : () -> ()
  call @cumsum() : () -> ()
  call @arg() : () -> ()
  call @einsum() : () -> ()
  call @norms() : () -> ()
  call @reductions() : () -> ()
  call @unsigned() : () -> ()
  call @logic_and_slice() : () -> ()
  call @tensor_scatter() : () -> ()
  return
}
