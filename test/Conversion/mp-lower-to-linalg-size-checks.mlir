// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s

// Sizes read from data at run time are checked before anything is
// allocated or read with them: a negative one (ConstantOfShape of a shape
// computed from the data) would allocate ~2^64 elements, a Reshape whose
// shape does not hold the input's elements would read out of bounds, and a
// zero Range delta never ends. A failed check stops the run with a message
// naming the ONNX node.

// CHECK-LABEL: func.func @constant_of_shape(
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2xi64>
// CHECK: %[[N:.+]] = tensor.extract %[[S]]
// CHECK: %[[OK:.+]] = arith.cmpi sge, %[[N]], %{{.+}} : i64
// CHECK: cf.assert %[[OK]], "mp: ConstantOfShape (node 'fill'): entry 0 of the shape is negative"
// CHECK: %[[SIZE:.+]] = arith.index_cast %[[N]] : i64 to index
// CHECK: tensor.empty(%[[SIZE]]) : tensor<?x4xf32>
func.func @constant_of_shape(%s: tensor<2xi64>) -> tensor<?x4xf32> {
  %0 = mp.constant_of_shape %s {value = dense<1.0> : tensor<1xf32>} : tensor<2xi64> -> tensor<?x4xf32> loc(fused<"ConstantOfShape">["fill"])
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @expand(
// CHECK-SAME: %{{.+}}: tensor<1x4xf32>, %[[S:[a-z0-9]+]]: tensor<2xi64>
// CHECK: %[[E:.+]] = tensor.extract %[[S]]
// CHECK: %[[N:.+]] = arith.index_cast %[[E]] : i64 to index
// CHECK: %[[OK:.+]] = arith.cmpi sge, %[[N]], %{{.+}} : index
// CHECK: cf.assert %[[OK]], "mp: Expand (node 'grow'): entry 0 of the shape is negative or does not broadcast with the input"
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xf32>
func.func @expand(%x: tensor<1x4xf32>, %s: tensor<2xi64>) -> tensor<?x4xf32> {
  %0 = mp.expand %x, %s : (tensor<1x4xf32>, tensor<2xi64>) -> tensor<?x4xf32> loc(fused<"Expand">["grow"])
  return %0 : tensor<?x4xf32>
}

// -----

// Input dim 1 is 3 at run time: the shape's entry must be 1 or 3.
// CHECK-LABEL: func.func @expand_dynamic_input(
// CHECK: %[[IN:.+]] = tensor.dim
// CHECK: %[[KEEP:.+]] = arith.cmpi eq, %[[E:.+]], %[[ONE:.+]] : index
// CHECK: %[[UNIT:.+]] = arith.cmpi eq, %[[IN]], %[[ONE]] : index
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %[[IN]], %[[E]] : index
// CHECK: %[[EITHER:.+]] = arith.ori %[[UNIT]], %[[SAME]]
// CHECK: %[[FITS:.+]] = arith.ori %[[KEEP]], %[[EITHER]]
// CHECK: %[[NONNEG:.+]] = arith.cmpi sge, %[[E]]
// CHECK: %[[OK:.+]] = arith.andi %[[FITS]], %[[NONNEG]]
// CHECK: cf.assert %[[OK]], "mp: Expand (node 'grow'): entry 0 of the shape is negative or does not broadcast with the input"
func.func @expand_dynamic_input(%x: tensor<?xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  %0 = mp.expand %x, %s : (tensor<?xf32>, tensor<1xi64>) -> tensor<?xf32> loc(fused<"Expand">["grow"])
  return %0 : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @reshape(
// CHECK: cf.assert %{{.+}}, "mp: Reshape (node 'view'): entry 0 of the shape is negative"
// CHECK: cf.assert %{{.+}}, "mp: Reshape (node 'view'): entry 1 of the shape is negative"
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %{{.+}}, %c12_i64 : i64
// CHECK: cf.assert %[[SAME]], "mp: Reshape (node 'view'): the shape computed at run time does not hold the input's number of elements"
// CHECK: tensor.reshape
func.func @reshape(%x: tensor<2x6xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = mp.reshape %x, %s : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc(fused<"Reshape">["view"])
  return %0 : tensor<?x?xf32>
}

// -----

// A constant shape with -1 over a dynamic input: the other dims must divide
// the input's element count.
// CHECK-LABEL: func.func @reshape_inferred(
// CHECK: %[[COUNT:.+]] = arith.muli
// CHECK: %[[SIZE:.+]] = arith.divui %[[COUNT]], %c4 : index
// CHECK: %[[BACK:.+]] = arith.muli %[[SIZE]], %c4 : index
// CHECK: %[[SAME:.+]] = arith.cmpi eq, %[[BACK]], %[[COUNT]] : index
// CHECK: cf.assert %[[SAME]], "mp: Reshape (node 'rows'): the input's number of elements is not a multiple of the other dims of the shape, so dim 0 (-1) cannot be inferred"
func.func @reshape_inferred(%x: tensor<?x6xf32>) -> tensor<?x4xf32> {
  %s = mp.constant dense<[-1, 4]> : tensor<2xi64>
  %0 = mp.reshape %x, %s : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x4xf32> loc(fused<"Reshape">["rows"])
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @range(
// CHECK-SAME: %{{.+}}: tensor<i64>, %{{.+}}: tensor<i64>, %[[D:[a-z0-9]+]]: tensor<i64>
// CHECK: %[[DELTA:.+]] = tensor.extract %[[D]]
// CHECK: %[[OK:.+]] = arith.cmpi ne, %[[DELTA]], %{{.+}} : i64
// CHECK: cf.assert %[[OK]], "mp: Range (node 'steps'): delta is zero (or NaN)"
// CHECK: arith.ceildivsi
func.func @range(%a: tensor<i64>, %b: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %r = mp.range %a, %b, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64> loc(fused<"Range">["steps"])
  return %r : tensor<?xi64>
}
