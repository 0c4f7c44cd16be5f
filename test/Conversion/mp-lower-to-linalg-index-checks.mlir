// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s
// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg="index-checks=false" --canonicalize --cse | FileCheck %s --check-prefix=NOCHECK

// Indices read from data are checked before the gather or scatter: one
// and-reduction over the whole index tensor ("all in [-d, d)") and one
// cf.assert whose message names the node, the op and the range, so that
// the gather's own loop stays free of checks. The CUDA pipeline turns the
// checks off (index-checks=false).
// CHECK-LABEL: func.func @gather_static
// CHECK-SAME: (%[[D:[^:]+]]: tensor<4x50xf32>, %[[I:[^:]+]]: tensor<3xi64>)
// CHECK: %[[INIT:.+]] = linalg.fill ins(%true : i1) outs(%{{.+}} : tensor<i1>) -> tensor<i1>
// CHECK: %[[ALL:.+]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[I]] : tensor<3xi64>) outs(%[[INIT]] : tensor<i1>)
// CHECK: ^bb0(%[[X:.+]]: i64, %[[ACC:.+]]: i1):
// CHECK: %[[IX:.+]] = arith.index_cast %[[X]] : i64 to index
// CHECK: %[[GE:.+]] = arith.cmpi sge, %[[IX]], %c-50 : index
// CHECK: %[[LT:.+]] = arith.cmpi slt, %[[IX]], %c50 : index
// CHECK: %[[IN:.+]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[AND:.+]] = arith.andi %[[ACC]], %[[IN]] : i1
// CHECK: linalg.yield %[[AND]] : i1
// CHECK: %[[OK:.+]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK: cf.assert %[[OK]], "mp: Gather (node 'g'): an index is out of range [-50, 50) for axis 1 of the data, of size 50"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[I]] : tensor<3xi64>)
// CHECK-NOT: cf.assert
// CHECK: tensor.extract %[[D]]
// CHECK: return
// NOCHECK-LABEL: func.func @gather_static
// NOCHECK-NOT: cf.assert
// NOCHECK-NOT: reduction
// NOCHECK: return
func.func @gather_static(%d: tensor<4x50xf32>, %i: tensor<3xi64>) -> tensor<4x3xf32> {
  %0 = mp.gather %d, %i {axis = 1 : i64} : (tensor<4x50xf32>, tensor<3xi64>) -> tensor<4x3xf32> loc("g")
  return %0 : tensor<4x3xf32>
}

// -----

// A dim known at run time bounds the indices through tensor.dim; -d is
// computed once, outside the reduction.
// CHECK-LABEL: func.func @gather_dynamic
// CHECK-SAME: (%[[D:[^:]+]]: tensor<?x8xf32>, %[[I:[^:]+]]: tensor<?xi32>)
// CHECK: %[[N:.+]] = tensor.dim %[[D]], %c0 : tensor<?x8xf32>
// CHECK: %[[NEGN:.+]] = arith.subi %c0, %[[N]] : index
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<?xi32>) outs(%{{.+}} : tensor<i1>)
// CHECK: %[[IX:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: arith.cmpi sge, %[[IX]], %[[NEGN]] : index
// CHECK: arith.cmpi slt, %[[IX]], %[[N]] : index
// CHECK: cf.assert %{{.+}}, "mp: Gather: an index is out of range [-d, d) for axis 0 of the data, of size d (known at run time)"
func.func @gather_dynamic(%d: tensor<?x8xf32>, %i: tensor<?xi32>) -> tensor<?x8xf32> {
  %0 = mp.gather %d, %i {axis = 0 : i64} : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Constant indices in range need no check.
// CHECK-LABEL: func.func @gather_constant
// CHECK-NOT: cf.assert
// CHECK-NOT: "reduction"
// CHECK: tensor.extract
// CHECK: return
func.func @gather_constant(%d: tensor<4x50xf32>) -> tensor<4x2xf32> {
  %i = mp.constant dense<[-50, 49]> : tensor<2xi64>
  %0 = mp.gather %d, %i {axis = 1 : i64} : (tensor<4x50xf32>, tensor<2xi64>) -> tensor<4x2xf32> loc("g")
  return %0 : tensor<4x2xf32>
}

// -----

// GatherElements: the indices bound the (normalized) axis.
// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: (%[[D:[^:]+]]: tensor<3x5xf32>, %[[I:[^:]+]]: tensor<3x2xi64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[I]] : tensor<3x2xi64>) outs(%{{.+}} : tensor<i1>)
// CHECK: arith.cmpi sge, %{{.+}}, %c-5 : index
// CHECK: arith.cmpi slt, %{{.+}}, %c5 : index
// CHECK: cf.assert %{{.+}}, "mp: GatherElements (node 'ge'): an index is out of range [-5, 5) for axis 1 of the data, of size 5"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[I]] : tensor<3x2xi64>)
// CHECK-NOT: cf.assert
// CHECK: tensor.extract %[[D]]
// NOCHECK-LABEL: func.func @gather_elements
// NOCHECK-NOT: cf.assert
// NOCHECK: return
func.func @gather_elements(%d: tensor<3x5xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %0 = mp.gather_elements %d, %i {axis = -1 : i64} : (tensor<3x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32> loc("ge")
  return %0 : tensor<3x2xf32>
}

// -----

// GatherND: entry j of each index tuple (j along the last dim) is bounded
// by the data's size along axis batch_dims + j, picked by linalg.index.
// CHECK-LABEL: func.func @gather_nd
// CHECK-SAME: (%[[D:[^:]+]]: tensor<2x3x4x5xf32>, %[[I:[^:]+]]: tensor<2x6x2xi64>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "reduction"]} ins(%[[I]] : tensor<2x6x2xi64>) outs(%{{.+}} : tensor<i1>)
// CHECK: %[[IX:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[J:.+]] = linalg.index 2 : index
// CHECK: %[[IS1:.+]] = arith.cmpi eq, %[[J]], %c1 : index
// CHECK-DAG: %[[HI:.+]] = arith.select %[[IS1]], %c4, %c3 : index
// CHECK-DAG: %[[LO:.+]] = arith.select %[[IS1]], %c-4, %c-3 : index
// CHECK-DAG: arith.cmpi sge, %[[IX]], %[[LO]] : index
// CHECK-DAG: arith.cmpi slt, %[[IX]], %[[HI]] : index
// CHECK: cf.assert %{{.+}}, "mp: GatherND (node 'gnd'): an index tuple is out of range: its entry j must lie in [-d_j, d_j) for the data's axes 1..2 of sizes d_j = (3, 4)"
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-NOT: cf.assert
// CHECK: tensor.extract %[[D]]
// NOCHECK-LABEL: func.func @gather_nd
// NOCHECK-NOT: cf.assert
// NOCHECK: return
func.func @gather_nd(%d: tensor<2x3x4x5xf32>, %i: tensor<2x6x2xi64>) -> tensor<2x6x5xf32> {
  %0 = mp.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x6x2xi64>) -> tensor<2x6x5xf32> loc("gnd")
  return %0 : tensor<2x6x5xf32>
}

// -----

// ScatterND: the index tuples are checked once, before the loop of slice
// writes (a data dim of run-time size).
// CHECK-LABEL: func.func @scatter_nd
// CHECK-SAME: (%[[D:[^:]+]]: tensor<?x3xf32>, %[[I:[^:]+]]: tensor<2x1xi64>, %[[U:[^:]+]]: tensor<2x3xf32>)
// CHECK: %[[N:.+]] = tensor.dim %[[D]], %c0 : tensor<?x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[I]] : tensor<2x1xi64>) outs(%{{.+}} : tensor<i1>)
// CHECK: arith.cmpi slt, %{{.+}}, %[[N]] : index
// CHECK: cf.assert %{{.+}}, "mp: ScatterND (node 'snd'): an index is out of range [-d, d) for axis 0 of the data, of size d (known at run time)"
// CHECK: scf.for
// CHECK-NOT: cf.assert
// CHECK: tensor.insert_slice
// NOCHECK-LABEL: func.func @scatter_nd
// NOCHECK-NOT: cf.assert
// NOCHECK: scf.for
func.func @scatter_nd(%d: tensor<?x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %0 = mp.scatter_nd %d, %i, %u {reduction = "none"} : (tensor<?x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<?x3xf32> loc("snd")
  return %0 : tensor<?x3xf32>
}

// -----

// RotaryEmbedding: position ids index the rows of the cos and sin caches;
// they must lie in [0, max_pos) (no counting from the end).
// CHECK-LABEL: func.func @rotary_positions
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x2x4x16xf32>, %[[C:[^:]+]]: tensor<8x8xf32>, %[[P:[^:]+]]: tensor<1x4xi64>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<1x4xi64>) outs(%{{.+}} : tensor<i1>)
// CHECK: %[[IX:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: arith.cmpi sge, %[[IX]], %c0 : index
// CHECK: arith.cmpi slt, %[[IX]], %c8 : index
// CHECK: cf.assert %{{.+}}, "mp: RotaryEmbedding (node 'rope'): a position id is out of range [0, 8): the cos and sin caches have 8 rows"
// CHECK-NOT: cf.assert
// CHECK: return
// NOCHECK-LABEL: func.func @rotary_positions
// NOCHECK-NOT: cf.assert
// NOCHECK: return
func.func @rotary_positions(%x: tensor<1x2x4x16xf32>, %c: tensor<8x8xf32>, %p: tensor<1x4xi64>) -> tensor<1x2x4x16xf32> {
  %0 = mp.rotary_embedding %x, %c, %c positions %p : (tensor<1x2x4x16xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<1x4xi64>) -> tensor<1x2x4x16xf32> loc("rope")
  return %0 : tensor<1x2x4x16xf32>
}

// -----

// com.microsoft RotaryEmbedding with one start position: the positions
// start + s are computed, then checked.
// CHECK-LABEL: func.func @ms_rotary_start
// CHECK: %[[POS:.+]] = linalg.generic {{.*}}outs(%{{.+}} : tensor<1x4xi64>)
// CHECK: linalg.generic {{.*}} ins(%[[POS]] : tensor<1x4xi64>) outs(%{{.+}} : tensor<i1>)
// CHECK: cf.assert %{{.+}}, "mp: RotaryEmbedding (node 'ms_rope'): a position id is out of range [0, 16): the cos and sin caches have 16 rows"
func.func @ms_rotary_start(%x: tensor<1x4x32xf32>, %pos: tensor<1xi64>, %c: tensor<16x8xf32>) -> tensor<1x4x32xf32> {
  %0 = mp.ms.rotary_embedding %x, %pos, %c, %c {num_heads = 2 : i64} : (tensor<1x4x32xf32>, tensor<1xi64>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<1x4x32xf32> loc("ms_rope")
  return %0 : tensor<1x4x32xf32>
}
