// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s

// ScatterElements: a loop over the updates in row-major order; each index
// is checked against [-d, d) (d the data's size along the axis) before it
// is normalized and written, so an out-of-range index stops the run with a
// message naming the node instead of writing out of bounds.
// CHECK-LABEL: func.func @scatter_elements_static
// CHECK-SAME: (%[[D:[^:]+]]: tensor<3x3xf32>, %[[I:[^:]+]]: tensor<2x3xi64>, %[[U:[^:]+]]: tensor<2x3xf32>)
// CHECK: %[[R:.+]] = scf.for %[[K:.+]] = %c0 to %c6 step %c1 iter_args(%[[ACC:.+]] = %[[D]]) -> (tensor<3x3xf32>)
// CHECK: %[[COL:.+]] = arith.remui %[[K]], %c3 : index
// CHECK: %[[ROW:.+]] = arith.divui %[[K]], %c3 : index
// CHECK-NOT: arith.remui
// CHECK: %[[RAW:.+]] = tensor.extract %[[I]][%[[ROW]], %[[COL]]] : tensor<2x3xi64>
// CHECK: %[[IDX:.+]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK: %[[GE:.+]] = arith.cmpi sge, %[[IDX]], %c-3 : index
// CHECK: %[[LT:.+]] = arith.cmpi slt, %[[IDX]], %c3 : index
// CHECK: %[[OK:.+]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: cf.assert %[[OK]], "mp: ScatterElements (node 'se'): an index is out of range [-d, d) for the data's size d along axis 0"
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[IDX]], %c0 : index
// CHECK: %[[WRAP:.+]] = arith.addi %[[IDX]], %c3 : index
// CHECK: %[[AT:.+]] = arith.select %[[NEG]], %[[WRAP]], %[[IDX]] : index
// CHECK: %[[V:.+]] = tensor.extract %[[U]][%[[ROW]], %[[COL]]] : tensor<2x3xf32>
// CHECK: %[[OLD:.+]] = tensor.extract %[[ACC]][%[[AT]], %[[COL]]] : tensor<3x3xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK: %[[NEXT:.+]] = tensor.insert %[[SUM]] into %[[ACC]][%[[AT]], %[[COL]]] : tensor<3x3xf32>
// CHECK: scf.yield %[[NEXT]] : tensor<3x3xf32>
// CHECK: return %[[R]] : tensor<3x3xf32>
func.func @scatter_elements_static(%d: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = mp.scatter_elements %d, %i, %u {reduction = "add"} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32> loc("se")
  return %0 : tensor<3x3xf32>
}

// -----

// Over run-time sizes: the number of updates and the bound come from
// tensor.dim; axis -1 is the last one; max on integers is maxsi.
// CHECK-LABEL: func.func @scatter_elements_dynamic
// CHECK-SAME: (%[[D:[^:]+]]: tensor<?x?xi32>, %[[I:[^:]+]]: tensor<?x?xi32>, %[[U:[^:]+]]: tensor<?x?xi32>)
// CHECK-DAG: %[[R0:.+]] = tensor.dim %[[I]], %c0
// CHECK-DAG: %[[R1:.+]] = tensor.dim %[[I]], %c1
// CHECK: %[[N:.+]] = arith.muli %[[R0]], %[[R1]] : index
// CHECK: %[[L:.+]] = tensor.dim %[[D]], %c1
// CHECK: %[[NEGL:.+]] = arith.subi %c0, %[[L]] : index
// CHECK: scf.for %{{.+}} = %c0 to %[[N]] step %c1 iter_args(%[[ACC:.+]] = %[[D]]) -> (tensor<?x?xi32>)
// CHECK: %[[IDX:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: arith.cmpi sge, %[[IDX]], %[[NEGL]] : index
// CHECK: arith.cmpi slt, %[[IDX]], %[[L]] : index
// CHECK: cf.assert %{{.+}}, "mp: ScatterElements: an index is out of range [-d, d) for the data's size d along axis 1"
// CHECK: arith.maxsi
// CHECK: tensor.insert
func.func @scatter_elements_dynamic(%d: tensor<?x?xi32>, %i: tensor<?x?xi32>, %u: tensor<?x?xi32>) -> tensor<?x?xi32> {
  %0 = mp.scatter_elements %d, %i, %u {axis = -1 : i64, reduction = "max"} : (tensor<?x?xi32>, tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}
