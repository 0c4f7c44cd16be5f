// RUN: mp-opt %s --mp-bind-cuda-runtime --split-input-file | FileCheck %s

// Host buffers come from the runtime's device pool and constant globals
// are replaced by their device copies (uploaded once by the runtime).
// CHECK-LABEL: llvm.func @step
//       CHECK: %[[W:.+]] = llvm.mlir.addressof @weights : !llvm.ptr
//       CHECK: %[[BYTES:.+]] = llvm.mlir.constant(32 : i64) : i64
//       CHECK: %[[DEV:.+]] = llvm.call @mp_cuda_constant(%[[W]], %[[BYTES]]) : (!llvm.ptr, i64) -> !llvm.ptr
//       CHECK: %[[BUF:.+]] = llvm.call @mp_cuda_memref_alloc(%{{.+}}) : (i64) -> !llvm.ptr
//       CHECK: llvm.call @use(%[[DEV]], %[[BUF]])
//       CHECK: llvm.call @mp_cuda_memref_free(%[[BUF]])
//       CHECK: llvm.func @mp_cuda_memref_alloc(i64) -> !llvm.ptr
//       CHECK: llvm.func @mp_cuda_memref_free(!llvm.ptr)
//   CHECK-NOT: _mlir_memref_to_llvm
//       CHECK: llvm.func @mp_cuda_constant(!llvm.ptr, i64) -> !llvm.ptr
module {
  llvm.mlir.global private constant @weights(dense<1.0> : tensor<2x4xf32>) : !llvm.array<2 x array<4 x f32>>
  llvm.mlir.global private @scratch(0 : i32) : i32
  llvm.func @use(!llvm.ptr, !llvm.ptr)
  llvm.func @step() {
    %w = llvm.mlir.addressof @weights : !llvm.ptr
    %n = llvm.mlir.constant(64 : i64) : i64
    %b = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    llvm.call @use(%w, %b) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.call @_mlir_memref_to_llvm_free(%b) : (!llvm.ptr) -> ()
    llvm.return
  }
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
}

// -----

// Mutable globals and globals inside kernel modules are left alone.
// CHECK-LABEL: llvm.func @mutable
//   CHECK-NOT: mp_cuda_constant
module attributes {gpu.container_module} {
  llvm.mlir.global private @counter(0 : i32) : i32
  llvm.func @mutable() -> !llvm.ptr {
    %p = llvm.mlir.addressof @counter : !llvm.ptr
    llvm.return %p : !llvm.ptr
  }
  gpu.module @kernels {
    llvm.mlir.global private constant @table(dense<2.0> : tensor<4xf32>) : !llvm.array<4 x f32>
    llvm.func @k() -> !llvm.ptr {
      %p = llvm.mlir.addressof @table : !llvm.ptr
      llvm.return %p : !llvm.ptr
    }
  }
}
