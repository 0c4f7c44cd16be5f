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

// -----

// Grouped-query attention's repeat of llama_ts's key cache (2 KV heads for
// 4 query heads, cache 129), trimmed from its lowering: the broadcast of
// each KV head, the reshape folding the copies into the head dim, then the
// scaled f16 transpose Q.K^T reads. The broadcast computes the [1, 4, ...]
// tensor directly, reading KV head h floordiv 2; with no reshape left in
// between, elementwise fusion makes the whole chain one op over the f32
// cache.
// CHECK-DAG: #[[REP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 2, d2, d3)>
// CHECK-LABEL: func.func @repeat_kv_heads
//  CHECK-SAME:   (%[[K:.+]]: tensor<1x2x129x16xf32>)
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   %[[R:.+]] = linalg.generic {indexing_maps = [#[[REP]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[K]] : tensor<1x2x129x16xf32>) outs(%{{.+}} : tensor<1x4x129x16xf32>)
//   CHECK-NOT:   tensor.collapse_shape
// FUSED-LABEL: func.func @repeat_kv_heads
//       FUSED:   linalg.generic
//  FUSED-SAME:     ins(%{{.+}} : tensor<1x2x129x16xf32>) outs(%{{.+}} : tensor<1x4x16x129xf16>)
//   FUSED-NOT:   linalg.generic
func.func @repeat_kv_heads(%k: tensor<1x2x129x16xf32>) -> tensor<1x4x16x129xf16> {
  %scale = arith.constant 5.000000e-01 : f32
  %e0 = tensor.empty() : tensor<1x2x2x129x16xf32>
  %b = linalg.broadcast ins(%k : tensor<1x2x129x16xf32>) outs(%e0 : tensor<1x2x2x129x16xf32>) dimensions = [2]
  %c = tensor.collapse_shape %b [[0], [1, 2], [3], [4]] : tensor<1x2x2x129x16xf32> into tensor<1x4x129x16xf32>
  %e1 = tensor.empty() : tensor<1x4x16x129xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x4x129x16xf32>) outs(%e1 : tensor<1x4x16x129xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.mulf %in, %scale : f32
    %1 = arith.truncf %0 : f32 to f16
    linalg.yield %1 : f16
  } -> tensor<1x4x16x129xf16>
  return %t : tensor<1x4x16x129xf16>
}

// -----

// A reshape that merges two dims the broadcast reads is a real reshape:
// it stays.
// CHECK-LABEL: func.func @merge_of_read_dims_stays
//       CHECK:   linalg.generic
//       CHECK:   tensor.collapse_shape
// FUSED-LABEL: func.func @merge_of_read_dims_stays
//       FUSED:   tensor.collapse_shape
func.func @merge_of_read_dims_stays(%x: tensor<2x3x4xf32>) -> tensor<6x4x5xf32> {
  %e0 = tensor.empty() : tensor<2x3x4x5xf32>
  %b = linalg.broadcast ins(%x : tensor<2x3x4xf32>) outs(%e0 : tensor<2x3x4x5xf32>) dimensions = [3]
  %c = tensor.collapse_shape %b [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  return %c : tensor<6x4x5xf32>
}

// -----

// The dynamo export of the same attention (llama_dynamo, batch 2, cache 8),
// trimmed from its lowering: the repeated keys [2, 2, 2, 8, 16] merged with
// the batch into [8, 8, 16] for a batched transpose, then split again into
// [2, 4, 16, 8]. The transpose moves before the reshapes and takes the
// repeat's copy; the merge left (KV head and its copies) folds into the
// head dim, so one generic reads the cache at KV head h floordiv 2, as for
// the TorchScript export, and fuses with the scaling.
// CHECK-DAG: #[[KT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 2, 0, d3, d2)>
// CHECK-LABEL: func.func @dynamo_batched_transpose_of_repeated_keys
//  CHECK-SAME:   (%[[K:.+]]: tensor<2x2x1x8x16xf32>)
//   CHECK-NOT:   tensor.collapse_shape
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   %[[T:.+]] = linalg.generic {indexing_maps = [#[[KT]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[K]] : tensor<2x2x1x8x16xf32>) outs(%{{.+}} : tensor<2x4x16x8xf32>)
//   CHECK-NOT:   tensor.collapse_shape
//   CHECK-NOT:   tensor.expand_shape
// FUSED-LABEL: func.func @dynamo_batched_transpose_of_repeated_keys
//       FUSED:   linalg.generic
//  FUSED-SAME:     ins(%{{.+}} : tensor<2x2x1x8x16xf32>) outs(%{{.+}} : tensor<2x4x16x8xf16>)
//   FUSED-NOT:   linalg.generic
func.func @dynamo_batched_transpose_of_repeated_keys(%k: tensor<2x2x1x8x16xf32>) -> tensor<2x4x16x8xf16> {
  %scale = arith.constant 5.000000e-01 : f32
  %e0 = tensor.empty() : tensor<2x2x2x8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x2x1x8x16xf32>) outs(%e0 : tensor<2x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x8x16xf32>
  %c = tensor.collapse_shape %r [[0, 1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<8x8x16xf32>
  %e1 = tensor.empty() : tensor<8x16x8xf32>
  %t = linalg.transpose ins(%c : tensor<8x8x16xf32>) outs(%e1 : tensor<8x16x8xf32>) permutation = [0, 2, 1]
  %x = tensor.expand_shape %t [[0, 1], [2], [3]] output_shape [2, 4, 16, 8] : tensor<8x16x8xf32> into tensor<2x4x16x8xf32>
  %e2 = tensor.empty() : tensor<2x4x16x8xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x16x8xf32>) outs(%e2 : tensor<2x4x16x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.mulf %in, %scale : f32
    %1 = arith.truncf %0 : f32 to f16
    linalg.yield %1 : f16
  } -> tensor<2x4x16x8xf16>
  return %s : tensor<2x4x16x8xf16>
}

// -----

// The same at batch 1 (llama_dynamo's test_data_set_0: 4 positions): the
// split's unit batch dim takes the merged group's unit batch dim, so the KV
// head stays the outermost of what remains merged and the repeat folds.
// CHECK-DAG: #[[KT1:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 floordiv 2, 0, d3, d2)>
// CHECK-LABEL: func.func @dynamo_batched_transpose_at_batch_1
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   linalg.generic {indexing_maps = [#[[KT1]], #{{.+}}], {{.*}}ins(%{{.+}} : tensor<1x2x1x4x16xf32>) outs(%{{.+}} : tensor<1x4x16x4xf32>)
//   CHECK-NOT:   tensor.collapse_shape
//   CHECK-NOT:   tensor.expand_shape
// FUSED-LABEL: func.func @dynamo_batched_transpose_at_batch_1
func.func @dynamo_batched_transpose_at_batch_1(%k: tensor<1x2x1x4x16xf32>) -> tensor<1x4x16x4xf32> {
  %e0 = tensor.empty() : tensor<1x2x2x4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x2x1x4x16xf32>) outs(%e0 : tensor<1x2x2x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x4x16xf32>
  %c = tensor.collapse_shape %r [[0, 1, 2], [3], [4]] : tensor<1x2x2x4x16xf32> into tensor<4x4x16xf32>
  %e1 = tensor.empty() : tensor<4x16x4xf32>
  %t = linalg.transpose ins(%c : tensor<4x4x16xf32>) outs(%e1 : tensor<4x16x4xf32>) permutation = [0, 2, 1]
  %x = tensor.expand_shape %t [[0, 1], [2], [3]] output_shape [1, 4, 16, 4] : tensor<4x16x4xf32> into tensor<1x4x16x4xf32>
  return %x : tensor<1x4x16x4xf32>
}

// -----

// A split that cuts a merged dim ([2, 3] merged into 6, split as [3, 2]) is
// a real reshape: nothing moves.
// CHECK-LABEL: func.func @split_across_merged_dims_stays
//       CHECK:   tensor.collapse_shape
//       CHECK:   linalg.generic
//       CHECK:   tensor.expand_shape
// FUSED-LABEL: func.func @split_across_merged_dims_stays
//       FUSED:   tensor.expand_shape
func.func @split_across_merged_dims_stays(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %t = linalg.transpose ins(%c : tensor<6x4xf32>) outs(%e : tensor<4x6xf32>) permutation = [1, 0]
  %x2 = tensor.expand_shape %t [[0], [1, 2]] output_shape [4, 3, 2] : tensor<4x6xf32> into tensor<4x3x2xf32>
  return %x2 : tensor<4x3x2xf32>
}
