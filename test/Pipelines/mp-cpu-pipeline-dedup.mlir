// Kernels of repeated layers are identical functions: the CPU pipeline keeps
// one of each (func-duplicate-function-elimination after mp-outline-kernels),
// so it is tiled, vectorized and compiled once and every layer calls it.
// RUN: mp-opt %s --mp-cpu-pipeline | FileCheck %s

// CHECK-LABEL: llvm.func @two_layers(
// CHECK:         llvm.call @two_layers_kernel_0(
// CHECK:         llvm.call @two_layers_kernel_1(
// CHECK:         llvm.call @two_layers_kernel_0(
// CHECK:         llvm.call @two_layers_kernel_1(
// CHECK:         llvm.call @two_layers_kernel_4(
// CHECK:       llvm.func @two_layers_kernel_0(
// CHECK:       llvm.func @two_layers_kernel_1(
// CHECK-NOT:   llvm.func @two_layers_kernel_{{[23]}}(
// CHECK:       llvm.func @two_layers_kernel_4(
func.func @two_layers(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = mp.matmul %x, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mp.gelu %0 : tensor<4x8xf32>
  %2 = mp.matmul %1, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = mp.gelu %2 : tensor<4x8xf32>
  %4 = mp.tanh %3 : tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}
