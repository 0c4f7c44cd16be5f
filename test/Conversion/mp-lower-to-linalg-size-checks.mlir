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

// -----

// Pads computed from the data (exporters derive them from the input
// length) are read at run time; each padded size is checked to be
// non-negative, and a static one to be what the type says.
// CHECK-LABEL: func.func @pad_runtime_pads(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x4x?xf32>, %[[P:[a-z0-9]+]]: tensor<6xi64>
// CHECK-DAG: %[[B2:.+]] = tensor.extract %[[P]][%c2]
// CHECK-DAG: %[[E2:.+]] = tensor.extract %[[P]][%c5]
// CHECK: cf.assert %{{.+}}, "mp: Pad (node 'pad'): padded size of axis 1 differs from the inferred 4"
// CHECK: %[[OK:.+]] = arith.cmpi sge, %[[N:.+]], %{{.+}} : i64
// CHECK: cf.assert %[[OK]], "mp: Pad (node 'pad'): padded size of axis 2 is negative"
// CHECK: %[[EMPTY:.+]] = tensor.empty(%{{.+}}) : tensor<1x4x?xf32>
// CHECK: linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<1x4x?xf32>)
// CHECK: tensor.extract %[[X]]
func.func @pad_runtime_pads(%x: tensor<1x4x?xf32>, %p: tensor<6xi64>) -> tensor<1x4x?xf32> {
  %0 = mp.pad %x, %p : (tensor<1x4x?xf32>, tensor<6xi64>) -> tensor<1x4x?xf32> loc(fused<"Pad">["pad"])
  return %0 : tensor<1x4x?xf32>
}

// -----

// A Conv whose input lost its channel count (behind a Pad with run-time
// pads) takes it from the weight, checked at run time.
// CHECK-LABEL: func.func @conv_channels_from_weight(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<1x?x8xf32>
// CHECK: %[[C:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[C]], %c2
// CHECK: cf.assert %[[OK]], "mp: Conv (node 'conv'): input dim 1 is not 2"
// CHECK: %[[XS:.+]] = tensor.cast %[[X]] : tensor<1x?x8xf32> to tensor<1x2x8xf32>
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[XS]]{{.+}} : tensor<1x2x8xf32> to tensor<1x2x6xf32>
func.func @conv_channels_from_weight(%x: tensor<1x?x8xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x6xf32> {
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x?x8xf32>, tensor<3x2x3xf32>) -> tensor<1x3x6xf32> loc(fused<"Conv">["conv"])
  return %0 : tensor<1x3x6xf32>
}

// -----

// Likewise an LSTM whose input lost its feature size takes it from W.
// CHECK-LABEL: func.func @lstm_input_size_from_weight(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?x?xf32>
// CHECK: cf.assert %{{.+}}, "mp: LSTM (node 'lstm'): input dim 2 is not 3"
// CHECK: tensor.cast %[[X]] : tensor<?x?x?xf32> to tensor<?x?x3xf32>
func.func @lstm_input_size_from_weight(%x: tensor<?x?x?xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) -> tensor<?x1x?x4xf32> {
  %y, %h, %c = mp.lstm %x, %w, %r {hidden_size = 4 : i64} : (tensor<?x?x?xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (tensor<?x1x?x4xf32>, tensor<1x?x4xf32>, tensor<1x?x4xf32>) loc(fused<"LSTM">["lstm"])
  return %y : tensor<?x1x?x4xf32>
}

// -----

// A Reshape of a dynamic input to a static shape (a decode step's
// [batch, 1, d] to [1, d]) has no run-time sizes to take.
// CHECK-LABEL: func.func @reshape_dynamic_to_static(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x1x8xf32>
// CHECK: cf.assert %{{.+}}, "mp: Reshape (node 'flat'): {{.+}}"
// CHECK: tensor.reshape %[[X]]({{.+}}) : (tensor<?x1x8xf32>, tensor<2xi64>) -> tensor<1x8xf32>
func.func @reshape_dynamic_to_static(%x: tensor<?x1x8xf32>) -> tensor<1x8xf32> {
  %s = mp.constant dense<[1, 8]> : tensor<2xi64>
  %0 = mp.reshape %x, %s : (tensor<?x1x8xf32>, tensor<2xi64>) -> tensor<1x8xf32> loc(fused<"Reshape">["flat"])
  return %0 : tensor<1x8xf32>
}
