// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s

// OneHot: one parallel generic over the result reading the indices without
// the new axis; a float index is truncated (fptosi), a negative one wraps by
// depth, and the element is on where it equals the position along the axis
// (so indices outside [-depth, depth) give off everywhere). A constant
// depth (4.5 truncates to 4) leaves no run-time check.
// CHECK: #[[IMAP:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK: #[[OMAP:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @one_hot_static
// CHECK-SAME: (%[[I:[^:]+]]: tensor<2x3xf32>, %[[V:[^:]+]]: tensor<2xi32>)
// CHECK-NOT: cf.assert
// CHECK-DAG: %[[OFF:.+]] = tensor.extract %[[V]][%c0] : tensor<2xi32>
// CHECK-DAG: %[[ON:.+]] = tensor.extract %[[V]][%c1] : tensor<2xi32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x4x3xi32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[IMAP]], #[[OMAP]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x3xf32>) outs(%[[E]] : tensor<2x4x3xi32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: i32):
// CHECK: %[[IDX:.+]] = arith.fptosi %[[IN]] : f32 to i64
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[IDX]], %c0_i64 : i64
// CHECK: %[[WRAP:.+]] = arith.addi %[[IDX]], %c4_i64 : i64
// CHECK: %[[AT:.+]] = arith.select %[[NEG]], %[[WRAP]], %[[IDX]] : i64
// CHECK: %[[POS:.+]] = linalg.index 1 : index
// CHECK: %[[POS64:.+]] = arith.index_cast %[[POS]] : index to i64
// CHECK: %[[HIT:.+]] = arith.cmpi eq, %[[AT]], %[[POS64]] : i64
// CHECK: %[[OUT:.+]] = arith.select %[[HIT]], %[[ON]], %[[OFF]] : i32
// CHECK: linalg.yield %[[OUT]] : i32
// CHECK: return %[[R]] : tensor<2x4x3xi32>
func.func @one_hot_static(%i: tensor<2x3xf32>, %v: tensor<2xi32>) -> tensor<2x4x3xi32> {
  %d = mp.constant dense<4.5> : tensor<f32>
  %0 = mp.one_hot %i, %d, %v {axis = -2 : i64} : (tensor<2x3xf32>, tensor<f32>, tensor<2xi32>) -> tensor<2x4x3xi32>
  return %0 : tensor<2x4x3xi32>
}

// -----

// A depth read at run time sizes the new (last) axis and is checked to be
// positive with a cf.assert naming the node.
// CHECK-LABEL: func.func @one_hot_dynamic
// CHECK-SAME: (%[[I:[^:]+]]: tensor<?xi64>, %[[D:[^:]+]]: tensor<1xi32>, %[[V:[^:]+]]: tensor<2xf32>)
// CHECK: %[[DRAW:.+]] = tensor.extract %[[D]][%c0] : tensor<1xi32>
// CHECK: %[[D64:.+]] = arith.extsi %[[DRAW]] : i32 to i64
// CHECK: %[[POS:.+]] = arith.cmpi sgt, %[[D64]], %c0_i64 : i64
// CHECK: cf.assert %[[POS]], "mp: OneHot (node 'oh'): depth must be positive"
// CHECK: %[[N:.+]] = tensor.dim %[[I]], %c0 : tensor<?xi64>
// CHECK: %[[DI:.+]] = arith.index_cast %[[DRAW]] : i32 to index
// CHECK: %[[E:.+]] = tensor.empty(%[[N]], %[[DI]]) : tensor<?x?xf32>
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<?xi64>) outs(%[[E]] : tensor<?x?xf32>)
// CHECK: arith.addi %{{.+}}, %[[D64]] : i64
// CHECK: linalg.index 1 : index
func.func @one_hot_dynamic(%i: tensor<?xi64>, %d: tensor<1xi32>, %v: tensor<2xf32>) -> tensor<?x?xf32> {
  %0 = mp.one_hot %i, %d, %v : (tensor<?xi64>, tensor<1xi32>, tensor<2xf32>) -> tensor<?x?xf32> loc("oh")
  return %0 : tensor<?x?xf32>
}
