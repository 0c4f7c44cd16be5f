// RUN: mp-opt %s --mp-hoist-destinations --split-input-file | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// glm_ts's present key cache at batch 1 (TorchScript export, mixed),
// trimmed: the new row is a Concat of the rotated half (a generic) and the
// passed half (a cast), inserted after the past rows into the cache's
// tensor. The empty tensors move to the top, the past rows' insert right
// after the cache's, and the row's halves are inserted into the cache
// directly (at row 128, columns 0 and 8), so that empty-tensor
// elimination makes each half's op write into the cache.
// CHECK-LABEL: func.func @key_row_halves_into_the_cache
//  CHECK-SAME:   (%[[PAST:.+]]: tensor<1x2x128x16xf32>, %[[ROT:.+]]: tensor<1x2x1x8xf32>, %[[PASS:.+]]: tensor<1x2x1x8xf16>)
//       CHECK:   %[[E1:.+]] = tensor.empty() : tensor<1x2x1x8xf32>
//       CHECK:   %[[E2:.+]] = tensor.empty() : tensor<1x2x1x8xf32>
//       CHECK:   %[[CACHE:.+]] = tensor.empty() : tensor<1x2x129x16xf32>
//       CHECK:   %[[WITH_PAST:.+]] = tensor.insert_slice %[[PAST]] into %[[CACHE]][0, 0, 0, 0] [1, 2, 128, 16] [1, 1, 1, 1]
//       CHECK:   %[[A:.+]] = linalg.generic {{.*}} ins(%[[ROT]] : tensor<1x2x1x8xf32>) outs(%[[E1]]
//       CHECK:   %[[B:.+]] = linalg.generic {{.*}} ins(%[[PASS]] : tensor<1x2x1x8xf16>) outs(%[[E2]]
//       CHECK:   %[[R1:.+]] = tensor.insert_slice %[[A]] into %[[WITH_PAST]][0, 0, 128, 0] [1, 2, 1, 8] [1, 1, 1, 1]
//       CHECK:   %[[R2:.+]] = tensor.insert_slice %[[B]] into %[[R1]][0, 0, 128, 8] [1, 2, 1, 8] [1, 1, 1, 1]
//       CHECK:   return %[[R2]]
func.func @key_row_halves_into_the_cache(%past: tensor<1x2x128x16xf32>, %rot: tensor<1x2x1x8xf32>, %pass: tensor<1x2x1x8xf16>) -> tensor<1x2x129x16xf32> {
  %e1 = tensor.empty() : tensor<1x2x1x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot : tensor<1x2x1x8xf32>) outs(%e1 : tensor<1x2x1x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x1x8xf32>
  %e2 = tensor.empty() : tensor<1x2x1x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%pass : tensor<1x2x1x8xf16>) outs(%e2 : tensor<1x2x1x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x1x8xf32>
  %row = tensor.empty() : tensor<1x2x1x16xf32>
  %r1 = tensor.insert_slice %a into %row[0, 0, 0, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<1x2x1x8xf32> into tensor<1x2x1x16xf32>
  %r2 = tensor.insert_slice %b into %r1[0, 0, 0, 8] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<1x2x1x8xf32> into tensor<1x2x1x16xf32>
  %cache = tensor.empty() : tensor<1x2x129x16xf32>
  %c1 = tensor.insert_slice %past into %cache[0, 0, 0, 0] [1, 2, 128, 16] [1, 1, 1, 1] : tensor<1x2x128x16xf32> into tensor<1x2x129x16xf32>
  %c2 = tensor.insert_slice %r2 into %c1[0, 0, 128, 0] [1, 2, 1, 16] [1, 1, 1, 1] : tensor<1x2x1x16xf32> into tensor<1x2x129x16xf32>
  return %c2 : tensor<1x2x129x16xf32>
}

// -----

// An assembly read by something else than the insert stays whole.
// CHECK-LABEL: func.func @assembly_also_read
//       CHECK:   %[[ROW:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 8] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<1x16xf32>
//       CHECK:   tensor.insert_slice %[[ROW]] into %{{.+}}[3, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<4x16xf32>
func.func @assembly_also_read(%a: tensor<1x8xf32>, %b: tensor<1x8xf32>, %dest: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<1x16xf32>) {
  %row = tensor.empty() : tensor<1x16xf32>
  %r1 = tensor.insert_slice %a into %row[0, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<1x16xf32>
  %r2 = tensor.insert_slice %b into %r1[0, 8] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<1x16xf32>
  %d = tensor.insert_slice %r2 into %dest[3, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<4x16xf32>
  return %d, %r2 : tensor<4x16xf32>, tensor<1x16xf32>
}
