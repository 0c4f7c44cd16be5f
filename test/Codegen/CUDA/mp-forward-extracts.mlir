// RUN: mp-opt %s -split-input-file --mp-forward-extracts | FileCheck %s

// torch's dynamo export gathers attention_mask [B, T] at indices it
// assembles as [B, 1, 1, T, 2]: the batch index broadcast over the keys
// (a generic yielding its input, as mp-generalize-layout-ops writes it),
// expanded and concatenated with the key index (llama_dynamo, trimmed to
// batch 2 and 5 keys). Each extract now reads the piece that holds its
// element, through the concatenation, the expand and the broadcast: the
// index tensor and the broadcast have no use left.
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @dynamo_mask_gather(
//  CHECK-SAME:     %[[MASK:[^:]+]]: tensor<2x5xi1>, %[[BATCH:[^:]+]]: tensor<2x1x1x1xi64>, %[[KEYS:[^:]+]]: tensor<1x1x1x5x1xi64>)
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   linalg.generic
//   CHECK-DAG:     %[[B:.+]] = linalg.index 0
//   CHECK-DAG:     %[[T:.+]] = linalg.index 3
//       CHECK:     tensor.extract %[[BATCH]][%[[B]], %{{.+}}, %{{.+}}, %{{.+}}] : tensor<2x1x1x1xi64>
//       CHECK:     tensor.extract %[[KEYS]][%{{.+}}, %{{.+}}, %{{.+}}, %[[T]], %{{.+}}] : tensor<1x1x1x5x1xi64>
//       CHECK:     tensor.extract %[[MASK]]
func.func @dynamo_mask_gather(%mask: tensor<2x5xi1>, %batch: tensor<2x1x1x1xi64>, %keys: tensor<1x1x1x5x1xi64>) -> tensor<2x1x1x5xi1> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e0 = tensor.empty() : tensor<2x1x1x5xi64>
  %b = linalg.generic {indexing_maps = [#bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%batch : tensor<2x1x1x1xi64>) outs(%e0 : tensor<2x1x1x5xi64>) {
  ^bb0(%in: i64, %out: i64):
    linalg.yield %in : i64
  } -> tensor<2x1x1x5xi64>
  %bx = tensor.expand_shape %b [[0], [1], [2], [3, 4]] output_shape [2, 1, 1, 5, 1] : tensor<2x1x1x5xi64> into tensor<2x1x1x5x1xi64>
  %e1 = tensor.empty() : tensor<2x1x1x5x2xi64>
  %i0 = tensor.insert_slice %bx into %e1[0, 0, 0, 0, 0] [2, 1, 1, 5, 1] [1, 1, 1, 1, 1] : tensor<2x1x1x5x1xi64> into tensor<2x1x1x5x2xi64>
  %i1 = tensor.insert_slice %keys into %i0[0, 0, 0, 0, 1] [1, 1, 1, 5, 1] [1, 1, 1, 1, 1] : tensor<1x1x1x5x1xi64> into tensor<2x1x1x5x2xi64>
  %e2 = tensor.empty() : tensor<2x1x1x5xi1>
  %g = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e2 : tensor<2x1x1x5xi1>) {
  ^bb0(%out: i1):
    %n = linalg.index 0 : index
    %t = linalg.index 3 : index
    %x = tensor.extract %i1[%n, %c0, %c0, %t, %c0] : tensor<2x1x1x5x2xi64>
    %xi = arith.index_cast %x : i64 to index
    %y = tensor.extract %i1[%c0, %c0, %c0, %t, %c1] : tensor<2x1x1x5x2xi64>
    %yi = arith.index_cast %y : i64 to index
    %m = tensor.extract %mask[%xi, %yi] : tensor<2x5xi1>
    linalg.yield %m : i1
  } -> tensor<2x1x1x5xi1>
  return %g : tensor<2x1x1x5xi1>
}

// -----

// Where the slice does not cover a dim, the position decides only when it
// is a constant: outside the slice it is the destination's element; a
// position known only at run time keeps the extract.
// CHECK-LABEL: func.func @slice_position(
//  CHECK-SAME:     %[[SRC:[^:]+]]: tensor<2x3xf32>, %[[DEST:[^:]+]]: tensor<4x3xf32>, %[[I:[^:]+]]: index)
//       CHECK:   %[[INSERTED:.+]] = tensor.insert_slice
//       CHECK:   %[[OUT:.+]] = tensor.extract %[[DEST]][%{{.+}}, %[[I]]]
//       CHECK:   %[[IN:.+]] = tensor.extract %[[SRC]][%{{.+}}, %[[I]]]
//       CHECK:   %[[KEPT:.+]] = tensor.extract %[[INSERTED]][%[[I]], %[[I]]]
//       CHECK:   return %[[OUT]], %[[IN]], %[[KEPT]]
func.func @slice_position(%src: tensor<2x3xf32>, %dest: tensor<4x3xf32>, %i: index) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %s = tensor.insert_slice %src into %dest[1, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x3xf32>
  %a = tensor.extract %s[%c0, %i] : tensor<4x3xf32>
  %b = tensor.extract %s[%c2, %i] : tensor<4x3xf32>
  %c = tensor.extract %s[%i, %i] : tensor<4x3xf32>
  return %a, %b, %c : f32, f32, f32
}

// -----

// A collapse whose groups hold one long dim reads that dim (a collapse to
// rank 0 reads index 0 of every unit dim); an expand reads its source at
// the row-major index of each group; a group merging two long dims stays.
// CHECK-LABEL: func.func @reshapes(
//  CHECK-SAME:     %[[X:[^:]+]]: tensor<1x6x1xf32>, %[[Y:[^:]+]]: tensor<6xf32>, %[[Z:[^:]+]]: tensor<1x1xf32>, %[[W:[^:]+]]: tensor<2x3xf32>, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index)
//   CHECK-DAG:   %[[C0:.+]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C3:.+]] = arith.constant 3 : index
//       CHECK:   tensor.extract %[[X]][%[[C0]], %[[I]], %[[C0]]] : tensor<1x6x1xf32>
//       CHECK:   %[[ROW:.+]] = arith.muli %[[I]], %[[C3]] : index
//       CHECK:   %[[LINEAR:.+]] = arith.addi %[[J]], %[[ROW]] : index
//       CHECK:   tensor.extract %[[Y]][%[[LINEAR]]] : tensor<6xf32>
//       CHECK:   tensor.extract %[[Z]][%[[C0]], %[[C0]]] : tensor<1x1xf32>
//       CHECK:   %[[FLAT:.+]] = tensor.collapse_shape %[[W]]
//       CHECK:   tensor.extract %[[FLAT]][%[[I]]] : tensor<6xf32>
func.func @reshapes(%x: tensor<1x6x1xf32>, %y: tensor<6xf32>, %z: tensor<1x1xf32>, %w: tensor<2x3xf32>, %i: index, %j: index) -> (f32, f32, f32, f32) {
  %cx = tensor.collapse_shape %x [[0, 1, 2]] : tensor<1x6x1xf32> into tensor<6xf32>
  %a = tensor.extract %cx[%i] : tensor<6xf32>
  %ey = tensor.expand_shape %y [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  %b = tensor.extract %ey[%i, %j] : tensor<2x3xf32>
  %cz = tensor.collapse_shape %z [] : tensor<1x1xf32> into tensor<f32>
  %c = tensor.extract %cz[] : tensor<f32>
  %cw = tensor.collapse_shape %w [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %d = tensor.extract %cw[%i] : tensor<6xf32>
  return %a, %b, %c, %d : f32, f32, f32, f32
}

// -----

// A transposing copy reads its input at the permuted position; a generic
// that computes is left alone.
#t = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @copies(
//  CHECK-SAME:     %[[X:[^:]+]]: tensor<3x2xf32>, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index)
//       CHECK:   %[[NEG:.+]] = linalg.generic
//       CHECK:   tensor.extract %[[X]][%[[J]], %[[I]]] : tensor<3x2xf32>
//       CHECK:   tensor.extract %[[NEG]][%[[I]], %[[J]]] : tensor<2x3xf32>
func.func @copies(%x: tensor<3x2xf32>, %i: index, %j: index) -> (f32, f32) {
  %e = tensor.empty() : tensor<2x3xf32>
  %tr = linalg.generic {indexing_maps = [#t, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3xf32>
  %neg = linalg.generic {indexing_maps = [#t, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x2xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %a = tensor.extract %tr[%i, %j] : tensor<2x3xf32>
  %b = tensor.extract %neg[%i, %j] : tensor<2x3xf32>
  return %a, %b : f32, f32
}
