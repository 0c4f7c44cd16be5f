// The generic kernels' thread mapping (mp-map-to-gpu) executed on the CPU:
// the CUDA pipeline's front and mp-map-to-gpu, then the block and thread
// loops run as plain loops (--mp-test-gpu-mapping-on-cpu). With dims known
// only at run time the grid, the range guard and the delinearization are
// computed from the run-time sizes. Expected values computed with numpy.
// RUN: mp-opt %s --mp-test-gpu-mapping-on-cpu | \
// RUN:   mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// The mapping is the one the CUDA target uses: run-time grids.
// RUN: mp-opt %s --mp-test-gpu-mapping-on-cpu --mlir-print-ir-after=mp-map-to-gpu 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=MAPPED

func.func private @printMemrefF32(tensor<*xf32>)

// MAPPED-LABEL: func.func @matmul_softmax
//       MAPPED: %[[C256:.+]] = arith.constant 256 : index
//  MAPPED-NEXT: %[[N:.+]] = arith.ceildivsi %{{.+}}, %[[C256]] : index
//  MAPPED-NEXT: %[[BLOCKS:.+]] = arith.maxsi %[[N]], %{{.+}} : index
//       MAPPED: scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[BLOCKS]])
//       MAPPED: {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @matmul_softmax(%x: tensor<?x?xf32>, %w: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = mp.matmul %x, %w : (tensor<?x?xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = mp.add %0, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %2 = mp.softmax %1 {axes = array<i64: 1>} : tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}

// 300 x 7 elements: 9 blocks of 256 threads, the last one partly out of
// range; the column sums tell each column's bias apart.
func.func @column_sums(%x: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<1x?xf32> {
  %0 = mp.mul %x, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = mp.add %0, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %2 = mp.reduce_sum %1 {axes = array<i64: 0>} : tensor<?x?xf32> -> tensor<1x?xf32>
  return %2 : tensor<1x?xf32>
}

func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0], [0.5, -1.0], [3.0, 0.0], [-2.0, 1.0], [0.0, 0.0]]> : tensor<5x2xf32>
  %w = arith.constant dense<[[1.0, 0.0, -1.0], [0.0, 1.0, 2.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[0.5, -0.5, 1.0]> : tensor<3xf32>
  %xd = tensor.cast %x : tensor<5x2xf32> to tensor<?x?xf32>
  %wd = tensor.cast %w : tensor<2x3xf32> to tensor<?x3xf32>
  %r = call @matmul_softmax(%xd, %wd, %b) : (tensor<?x?xf32>, tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %u = tensor.cast %r : tensor<?x3xf32> to tensor<*xf32>
  // CHECK: sizes = [5, 3]
  // CHECK-NEXT: [0.0705095,   0.0705095,   0.858981]
  // CHECK-NEXT: [0.858981,   0.0705095,   0.0705095]
  // CHECK-NEXT: [0.978088,   0.0179143,   0.00399722]
  // CHECK-NEXT: [0.00148471,   0.0109706,   0.987545]
  // CHECK-NEXT: [0.331499,   0.121952,   0.546549]
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()

  %big = arith.constant dense<0.5> : tensor<300x7xf32>
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<7xf32>
  %bigd = tensor.cast %big : tensor<300x7xf32> to tensor<?x?xf32>
  %biasd = tensor.cast %bias : tensor<7xf32> to tensor<?xf32>
  %s = call @column_sums(%bigd, %biasd) : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<1x?xf32>
  %su = tensor.cast %s : tensor<1x?xf32> to tensor<*xf32>
  // CHECK: sizes = [1, 7]
  // CHECK-NEXT: [375,   675,   975,   1275,   1575,   1875,   2175]
  call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
  return
}
