// MatMul-like contractions become loops over tile-m x tile-n output blocks
// whose k loop carries the block in a vector register; the rest is left to
// LLVM's loop vectorizer.
// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --mp-tile-and-vectorize | FileCheck %s
// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --mp-tile-and-vectorize="tile-m=2 tile-n=8" | FileCheck %s --check-prefix=SMALL

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<8x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[ZERO:.+]] = linalg.fill
// CHECK: scf.for %[[M:.+]] = %{{.+}} to %{{.+}} step %[[C4]] iter_args(%[[OUT:.+]] = %[[ZERO]])
// CHECK: scf.for %[[N:.+]] = %{{.+}} to %{{.+}} step %[[C16]] iter_args(%[[OUT2:.+]] = %[[OUT]])
// CHECK: %[[BLOCK:.+]] = tensor.extract_slice %[[OUT2]][%[[M]], %[[N]]] [4, 16]
// CHECK: %[[INIT:.+]] = vector.transfer_read %[[BLOCK]]{{.*}} vector<4x16xf32>
// CHECK: %[[SUM:.+]] = scf.for %[[K:.+]] = {{.*}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (vector<4x16xf32>)
// CHECK: %[[COL:.+]] = tensor.extract_slice %[[A]][%[[M]], %[[K]]] [4, 1]
// CHECK: %[[ROW:.+]] = tensor.extract_slice %[[W]][%[[K]], %[[N]]] [1, 16]
// CHECK: vector.transfer_read %[[COL]]
// CHECK: vector.transfer_read %[[ROW]]{{.*}} vector<16xf32>
// CHECK: %[[P:.+]] = arith.mulf {{.*}} : vector<4x16xf32>
// CHECK: %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : vector<4x16xf32>
// CHECK: scf.yield %[[S]]
// CHECK: vector.transfer_write %[[SUM]], %[[BLOCK]]
// CHECK: tensor.insert_slice
// CHECK-NOT: linalg.generic
// SMALL-LABEL: func.func @matmul(
// SMALL: tensor.extract_slice {{.*}} [2, 8]
// SMALL: vector<2x8xf32>
func.func @matmul(%a: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x32xf32> {
  %0 = mp.matmul %a, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// A decode step's f16 projection: one row, products and sums in f32.
// CHECK-LABEL: func.func @half_row(
// CHECK: scf.for {{.*}} -> (vector<16xf32>)
// CHECK: %[[X:.+]] = vector.broadcast {{.*}} : vector<1xf16> to vector<16xf16>
// CHECK: %[[XF:.+]] = arith.extf %[[X]] : vector<16xf16> to vector<16xf32>
// CHECK: %[[WF:.+]] = arith.extf {{.*}} : vector<16xf16> to vector<16xf32>
// CHECK: arith.mulf %[[XF]], %[[WF]] : vector<16xf32>
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @half_row(%a: tensor<1x64xf16>, %w: tensor<64x32xf16>) -> tensor<1x32xf16> {
  %0 = mp.matmul %a, %w : (tensor<1x64xf16>, tensor<64x32xf16>) -> tensor<1x32xf16>
  return %0 : tensor<1x32xf16>
}

// -----

// Batch loops are tiled by 1; 3 rows do not divide by 4 or 2, so one.
// CHECK-LABEL: func.func @batched(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.extract_slice {{.*}} [1, 1, 16]
// CHECK: scf.for {{.*}} -> (vector<16xf32>)
func.func @batched(%a: tensor<2x3x8xf32>, %w: tensor<2x8x16xf32>) -> tensor<2x3x16xf32> {
  %0 = mp.matmul %a, %w : (tensor<2x3x8xf32>, tensor<2x8x16xf32>) -> tensor<2x3x16xf32>
  return %0 : tensor<2x3x16xf32>
}

// -----

// 6 columns have no vector-sized divisor: left as a generic.
// CHECK-LABEL: func.func @narrow(
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @narrow(%a: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %0 = mp.matmul %a, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// Gemm with trans_b reads its second input along k, not along the output's
// columns: left alone.
// CHECK-LABEL: func.func @transposed_rhs(
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @transposed_rhs(%a: tensor<4x32xf32>, %b: tensor<16x32xf32>) -> tensor<4x16xf32> {
  %0 = mp.gemm %a, %b {trans_b = true} : (tensor<4x32xf32>, tensor<16x32xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A square block would hit MLIR 22's shape_cast(broadcast) folding, which
// transposes the broadcast column: 4 columns take 2-row blocks.
// CHECK-LABEL: func.func @square(
// CHECK: tensor.extract_slice {{.*}} [2, 4]
// CHECK: scf.for {{.*}} -> (vector<2x4xf32>)
func.func @square(%a: tensor<4x8xf32>, %w: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = mp.matmul %a, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Rows known only at run time take blocks of one row; the columns (static)
// still fill the vector.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<?x64xf32>
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK: linalg.fill
// CHECK: %[[ROWS:.+]] = tensor.dim %[[A]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[ROWS]] step %[[C1]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C16]]
// CHECK: scf.for {{.*}} -> (vector<16xf32>)
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
// SMALL-LABEL: func.func @dynamic_rows(
// SMALL: vector<8xf32>
func.func @dynamic_rows(%a: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %0 = mp.matmul %a, %w : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// A convolution by taps over a run-time length (a vocoder's data-dependent
// frames): per tap, the length loop is peeled into full 16-wide blocks,
// vectorized with the channel sum (c, after the length in the loop order)
// innermost, and one partial block that keeps its scalar generic.
// CHECK-LABEL: func.func @conv_dynamic_length(
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK: scf.for %{{.+}} = {{.*}} -> (tensor<1x4x?xf32>)
// CHECK: %[[LEN:.+]] = tensor.dim
// CHECK: %[[FULL:.+]] = affine.apply {{.*}}%[[LEN]]
// CHECK: %[[MAIN:.+]] = scf.for %{{.+}} = %{{.+}} to %[[FULL]] step %[[C16]]
// CHECK: vector.transfer_read {{.*}} : tensor<1x4x16xf32>, vector<4x16xf32>
// CHECK: scf.for {{.*}} -> (vector<4x16xf32>)
// CHECK: arith.mulf {{.*}} : vector<4x16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<4x16xf32>, tensor<1x4x16xf32>
// CHECK: scf.for %{{.+}} = %[[FULL]] to %[[LEN]] step %[[C16]] iter_args(%{{.+}} = %[[MAIN]])
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<1x4x?xf32>)
// SMALL-LABEL: func.func @conv_dynamic_length(
// SMALL: vector<2x8xf32>
func.func @conv_dynamic_length(%x: tensor<1x8x?xf32>, %w: tensor<4x8x3xf32>) -> tensor<1x4x?xf32> {
  %0 = mp.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, kernel_shape = array<i64: 3>, pads = array<i64: 1, 1>, strides = array<i64: 1>} : (tensor<1x8x?xf32>, tensor<4x8x3xf32>) -> tensor<1x4x?xf32>
  return %0 : tensor<1x4x?xf32>
}
