// RUN: mp-opt %s --mp-generalize-layout-ops --split-input-file | FileCheck %s
// RUN: mp-opt %s --mp-generalize-layout-ops --linalg-fuse-elementwise-ops --split-input-file | FileCheck %s --check-prefix=FUSED

// The transposes of a decode step's attention as llama_ts (TorchScript
// export) lowers them: the key cache [2, 4, 8, 16] read as K^T, after the
// f16 cast of the repeated heads. As generics, elementwise fusion folds the
// transpose into the cast: one op reads the f32 cache and writes K^T in
// f16, no transposed copy in between.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[T:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-LABEL: func.func @cast_then_transpose
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
//       CHECK:     arith.truncf
//       CHECK:   linalg.generic {indexing_maps = [#[[T]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%{{.+}} : tensor<2x4x8x16xf16>) outs(%{{.+}} : tensor<2x4x16x8xf16>)
//   CHECK-NOT:   linalg.transpose
// FUSED-LABEL: func.func @cast_then_transpose
//       FUSED:   linalg.generic
//  FUSED-SAME:     ins(%{{.+}} : tensor<2x4x8x16xf32>) outs(%{{.+}} : tensor<2x4x16x8xf16>)
//       FUSED:     arith.truncf
//   FUSED-NOT:   linalg.generic
func.func @cast_then_transpose(%k: tensor<2x4x8x16xf32>) -> tensor<2x4x16x8xf16> {
  %e0 = tensor.empty() : tensor<2x4x8x16xf16>
  %h = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x4x8x16xf32>) outs(%e0 : tensor<2x4x8x16xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x4x8x16xf16>
  %e1 = tensor.empty() : tensor<2x4x16x8xf16>
  %kt = linalg.transpose ins(%h : tensor<2x4x8x16xf16>) outs(%e1 : tensor<2x4x16x8xf16>) permutation = [0, 1, 3, 2]
  return %kt : tensor<2x4x16x8xf16>
}

// -----

// Shared KV heads repeated for grouped-query attention (2 heads read by 4
// queries) and a copy become generics; fills stay named ops (their
// consumers' kernels start from the fill's value); buffers are left alone.
// CHECK-LABEL: func.func @broadcast_copy_fill
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]
//  CHECK-SAME:     ins(%{{.+}} : tensor<2x2x8x16xf16>) outs(%{{.+}} : tensor<2x2x2x8x16xf16>)
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%{{.+}} : tensor<2x2x8x16xf16>) outs(%{{.+}} : tensor<2x2x8x16xf16>)
//       CHECK:   linalg.fill
//       CHECK:   linalg.transpose ins(%{{.+}} : memref<4x8xf32>)
// FUSED-LABEL: func.func @broadcast_copy_fill
func.func @broadcast_copy_fill(%v: tensor<2x2x8x16xf16>, %a: memref<4x8xf32>, %b: memref<8x4xf32>)
    -> (tensor<2x2x2x8x16xf16>, tensor<2x2x8x16xf16>, tensor<4xf32>) {
  %e0 = tensor.empty() : tensor<2x2x2x8x16xf16>
  %r = linalg.broadcast ins(%v : tensor<2x2x8x16xf16>) outs(%e0 : tensor<2x2x2x8x16xf16>) dimensions = [2]
  %e1 = tensor.empty() : tensor<2x2x8x16xf16>
  %c = linalg.copy ins(%v : tensor<2x2x8x16xf16>) outs(%e1 : tensor<2x2x8x16xf16>) -> tensor<2x2x8x16xf16>
  %cst = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  linalg.transpose ins(%a : memref<4x8xf32>) outs(%b : memref<8x4xf32>) permutation = [1, 0]
  return %r, %c, %f : tensor<2x2x2x8x16xf16>, tensor<2x2x8x16xf16>, tensor<4xf32>
}
