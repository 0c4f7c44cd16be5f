// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s

// TopK: k is checked against [0, d] (folded away for a constant k and a
// static axis), then each row's positions are merge sorted in two scratch
// vectors (NaN above every number, ties kept in position order by the
// stable merge) and the first k written out with their values.
// CHECK-LABEL: func.func @top_k_static
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x5xf32>)
// CHECK-NOT: cf.assert
// CHECK-DAG: %[[V0:.+]] = tensor.empty() : tensor<3x2xf32>
// CHECK-DAG: %[[I0:.+]] = tensor.empty() : tensor<3x2xi64>
// CHECK-DAG: %[[S:.+]] = tensor.empty() : tensor<5xindex>
// CHECK: %[[R:.+]]:4 = scf.for %[[ROW:.+]] = %c0 to %c3 step %c1 iter_args(%[[V:.+]] = %[[V0]], %[[I:.+]] = %[[I0]], %[[A:.+]] = %[[S]], %[[B:.+]] = %[[S]])
// Positions 0..4 in order:
// CHECK: scf.for %[[J:.+]] = %c0 to %c5 step %c1
// CHECK: tensor.insert %[[J]]
// Widths 1, 4, 16.. while below the row's length; two merge passes each:
// CHECK: scf.while
// CHECK: arith.cmpi ult, %{{.+}}, %c5 : index
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[VR:.+]] = tensor.extract %[[X]][%{{.+}}, %{{.+}}] : tensor<3x5xf32>
// CHECK: %[[VL:.+]] = tensor.extract %[[X]][%{{.+}}, %{{.+}}] : tensor<3x5xf32>
// CHECK: %[[RNAN:.+]] = arith.cmpf uno, %[[VR]], %[[VR]] : f32
// CHECK: %[[LNAN:.+]] = arith.cmpf uno, %[[VL]], %[[VL]] : f32
// CHECK: %[[LNUM:.+]] = arith.xori %[[LNAN]], %true : i1
// CHECK: %[[NANFIRST:.+]] = arith.andi %[[RNAN]], %[[LNUM]] : i1
// CHECK: %[[GT:.+]] = arith.cmpf ogt, %[[VR]], %[[VL]] : f32
// CHECK: arith.ori %[[GT]], %[[NANFIRST]] : i1
// CHECK: tensor.insert
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.cmpf ogt
// The first k = 2 sorted positions and their values:
// CHECK: scf.for %[[T:.+]] = %c0 to %c2 step %c1
// CHECK: %[[POS:.+]] = tensor.extract %{{.+}}[%[[T]]] : tensor<5xindex>
// CHECK: %[[VAL:.+]] = tensor.extract %[[X]][%{{.+}}, %[[POS]]] : tensor<3x5xf32>
// CHECK: %[[IDX:.+]] = arith.index_cast %[[POS]] : index to i64
// CHECK: tensor.insert %[[VAL]] into %{{.+}}[%{{.+}}, %[[T]]] : tensor<3x2xf32>
// CHECK: tensor.insert %[[IDX]] into %{{.+}}[%{{.+}}, %[[T]]] : tensor<3x2xi64>
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<3x2xf32>, tensor<3x2xi64>
func.func @top_k_static(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %k = mp.constant dense<2> : tensor<1xi64>
  %v, %i = mp.top_k %x, %k : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>) loc("tk")
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// A k read at run time sizes the results (tensor.empty at k) and is
// checked with a cf.assert naming the node; smallest on integers compares
// with slt; axis 0 makes the rows run along dim 1.
// CHECK-LABEL: func.func @top_k_dynamic
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x?xi32>, %[[K:[^:]+]]: tensor<1xi64>)
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[X]], %c0 : tensor<?x?xi32>
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[X]], %c1 : tensor<?x?xi32>
// CHECK: %[[KRAW:.+]] = tensor.extract %[[K]][%c0] : tensor<1xi64>
// CHECK: %[[KI:.+]] = arith.index_cast %[[KRAW]] : i64 to index
// CHECK: %[[GE:.+]] = arith.cmpi sge, %[[KI]], %c0 : index
// CHECK: %[[LE:.+]] = arith.cmpi sle, %[[KI]], %[[D0]] : index
// CHECK: %[[OK:.+]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK: cf.assert %[[OK]], "mp: TopK (node 'tk'): k is out of range [0, d] for the input's size d along axis 0"
// CHECK-DAG: tensor.empty(%[[KI]], %[[D1]]) : tensor<?x?xi32>
// CHECK-DAG: tensor.empty(%[[KI]], %[[D1]]) : tensor<?x?xi64>
// CHECK-DAG: tensor.empty(%[[D0]]) : tensor<?xindex>
// CHECK: scf.for %{{.+}} = %c0 to %[[D1]] step %c1
// CHECK: scf.while
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : i32
// CHECK: scf.for %{{.+}} = %c0 to %[[KI]] step %c1
func.func @top_k_dynamic(%x: tensor<?x?xi32>, %k: tensor<1xi64>) -> (tensor<?x?xi32>, tensor<?x?xi64>) {
  %v, %i = mp.top_k %x, %k {axis = 0 : i64, largest = false} : (tensor<?x?xi32>, tensor<1xi64>) -> (tensor<?x?xi32>, tensor<?x?xi64>) loc("tk")
  return %v, %i : tensor<?x?xi32>, tensor<?x?xi64>
}

// -----

// Smallest on floats: NaN still comes last (above every number).
// CHECK-LABEL: func.func @top_k_smallest_nan
// CHECK: %[[VR:.+]] = tensor.extract %{{.+}} : tensor<4xf16>
// CHECK: %[[VL:.+]] = tensor.extract %{{.+}} : tensor<4xf16>
// CHECK: %[[RNAN:.+]] = arith.cmpf uno, %[[VR]], %[[VR]] : f16
// CHECK: %[[LNAN:.+]] = arith.cmpf uno, %[[VL]], %[[VL]] : f16
// CHECK: %[[RNUM:.+]] = arith.xori %[[RNAN]], %true : i1
// CHECK: %[[NUMFIRST:.+]] = arith.andi %[[LNAN]], %[[RNUM]] : i1
// CHECK: %[[LT:.+]] = arith.cmpf olt, %[[VR]], %[[VL]] : f16
// CHECK: arith.ori %[[LT]], %[[NUMFIRST]] : i1
func.func @top_k_smallest_nan(%x: tensor<4xf16>) -> (tensor<3xf16>, tensor<3xi64>) {
  %k = mp.constant dense<3> : tensor<1xi64>
  %v, %i = mp.top_k %x, %k {largest = false} : (tensor<4xf16>, tensor<1xi64>) -> (tensor<3xf16>, tensor<3xi64>)
  return %v, %i : tensor<3xf16>, tensor<3xi64>
}
