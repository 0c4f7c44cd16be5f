// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg | FileCheck %s

// GRU (linear_before_reset 0): the input projection of all steps carries
// Wb + Rb for every gate; each step projects h on the z and r rows of R,
// computes r * h into a fresh tensor, projects that on the h rows, and only
// then updates h in place (frozen past the sequence's end by a select).
// CHECK-LABEL: func.func @gru(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<5x2x3xf32>, %[[W:[a-z0-9]+]]: tensor<1x12x3xf32>, %[[R:[a-z0-9]+]]: tensor<1x12x4xf32>, %[[B:[a-z0-9]+]]: tensor<1x24xf32>
// CHECK: %[[RD:.+]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 12, 4] [1, 1, 1] : tensor<1x12x4xf32> to tensor<12x4xf32>
// CHECK: %[[WB:.+]] = tensor.extract_slice %{{.+}}[0] [12] [1] : tensor<24xf32> to tensor<12xf32>
// CHECK: %[[RB:.+]] = tensor.extract_slice %{{.+}}[12] [12] [1] : tensor<24xf32> to tensor<12xf32>
// CHECK: %[[BIAS:.+]] = linalg.generic {{.*}} ins(%[[WB]], %[[RB]] : tensor<12xf32>, tensor<12xf32>)
// CHECK: arith.addf
// CHECK: %[[INIT:.+]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<12xf32>) outs(%{{.+}} : tensor<5x2x12xf32>)
// CHECK: %[[XW:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]{{.*}} outs(%[[INIT]] : tensor<5x2x12xf32>)
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:.+]] = %{{.+}}, %[[ALL:.+]] = %{{.+}}) -> (tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: %[[RZR:.+]] = tensor.extract_slice %[[RD]][0, 0] [8, 4] [1, 1] : tensor<12x4xf32> to tensor<8x4xf32>
// CHECK: %[[HR:.+]] = linalg.generic {{.*}} ins(%[[H]], %[[RZR]] : tensor<2x4xf32>, tensor<8x4xf32>)
// CHECK: %[[RESET:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2x4xf32>)
// CHECK: tensor.extract %[[XW]]
// CHECK: tensor.extract %[[HR]]
// CHECK: tensor.extract %[[H]]
// CHECK: %[[RH:.+]] = tensor.extract_slice %[[RD]][8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
// CHECK: %[[Q:.+]] = linalg.generic {{.*}} ins(%[[RESET]], %[[RH]] : tensor<2x4xf32>, tensor<4x4xf32>)
// CHECK: %[[NEXT:.+]] = linalg.generic {{.*}} outs(%[[H]] : tensor<2x4xf32>)
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[T]]
// CHECK: tensor.extract %[[Q]]
// CHECK: math.tanh
// CHECK: %[[BLEND:.+]] = arith.addf
// CHECK: arith.select %[[VALID]], %[[BLEND]], %{{.+}} : f32
// CHECK: tensor.insert_slice %[[NEXT]] into %[[ALL]][%[[T]], 0, 0] [1, 2, 4] [1, 1, 1]
// CHECK: scf.yield %[[NEXT]]
// CHECK: tensor.extract %[[LOOP]]#1
// CHECK: return
func.func @gru(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x24xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>) {
  %y, %yh = mp.gru %x, %w, %r bias %b {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return %y, %yh : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// GRU with linear_before_reset: Wb alone goes into the input projection;
// each step's one projection of h starts from Rb, so that r multiplies
// H·Rhᵀ + Rbh.
// CHECK-LABEL: func.func @gru_linear_before_reset(
// CHECK: %[[WB:.+]] = tensor.extract_slice %{{.+}}[0] [12] [1] : tensor<24xf32> to tensor<12xf32>
// CHECK: %[[RB:.+]] = tensor.extract_slice %{{.+}}[12] [12] [1] : tensor<24xf32> to tensor<12xf32>
// CHECK: %[[INIT:.+]] = linalg.generic {{.*}} ins(%[[WB]] : tensor<12xf32>) outs(%{{.+}} : tensor<5x2x12xf32>)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:.+]] = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<2x4xf32>, tensor<5x2x4xf32>)
// CHECK: %[[RINIT:.+]] = linalg.generic {{.*}} ins(%[[RB]] : tensor<12xf32>) outs(%{{.+}} : tensor<2x12xf32>)
// CHECK: %[[HR:.+]] = linalg.generic {{.*}} ins(%[[H]], %{{.+}} : tensor<2x4xf32>, tensor<12x4xf32>) outs(%[[RINIT]] : tensor<2x12xf32>)
// CHECK-NOT: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: linalg.generic {{.*}} outs(%[[H]] : tensor<2x4xf32>)
// CHECK: arith.addi %{{.+}}, %c8 : index
// CHECK: tensor.extract %{{.+}} : tensor<5x2x12xf32>
// CHECK: %[[C8:.+]] = arith.addi %{{.+}}, %c8 : index
// CHECK: %[[HH:.+]] = tensor.extract %[[HR]][%{{.+}}, %[[C8]]] : tensor<2x12xf32>
// CHECK: %[[RESET:.+]] = arith.mulf %{{.+}}, %[[HH]] : f32
// CHECK: %[[PRE:.+]] = arith.addf %{{.+}}, %[[RESET]] : f32
// CHECK: math.tanh %[[PRE]]
// CHECK: scf.yield
func.func @gru_linear_before_reset(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x24xf32>) -> tensor<1x2x4xf32> {
  %y, %yh = mp.gru %x, %w, %r bias %b {hidden_size = 4 : i64, linear_before_reset = true} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x24xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return %yh : tensor<1x2x4xf32>
}

// -----

// Reverse RNN over a run-time sequence length and batch with sequence_lens:
// the loop runs to the input's run-time length, each batch row reads step
// len - 1 - t and keeps its state once t reaches its length; Relu is the
// activation.
// CHECK-LABEL: func.func @rnn_dynamic(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?x3xf32>, %{{[a-z0-9]+}}: tensor<1x4x3xf32>, %{{[a-z0-9]+}}: tensor<1x4x4xf32>, %[[L:[a-z0-9]+]]: tensor<?xi32>
// CHECK-DAG: %[[T:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %c1
// CHECK: scf.for %[[STEP:.+]] = %c0 to %[[T]] step %c1 iter_args(%[[H:.+]] = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<?x4xf32>, tensor<?x?x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[L]] : tensor<?xi32>) outs(%[[H]] : tensor<?x4xf32>)
// CHECK: %[[LEN:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[STEP]], %[[LEN]] : index
// CHECK: %[[LAST:.+]] = arith.subi %[[LEN]], %c1 : index
// CHECK: %[[BACK:.+]] = arith.subi %[[LAST]], %[[STEP]] : index
// CHECK: %[[AT:.+]] = arith.select %[[VALID]], %[[BACK]], %c0 : index
// CHECK: tensor.extract %{{.+}}[%[[AT]], %{{.+}}, %{{.+}}] : tensor<?x?x4xf32>
// CHECK: %[[RELU:.+]] = arith.maximumf %{{.+}}, %cst : f32
// CHECK: arith.select %[[VALID]], %[[RELU]], %{{.+}} : f32
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[%[[STEP]], 0, 0] [1, %[[B]], 4] [1, 1, 1]
func.func @rnn_dynamic(%x: tensor<?x?x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %l: tensor<?xi32>) -> (tensor<?x1x?x4xf32>, tensor<1x?x4xf32>) {
  %y, %yh = mp.rnn %x, %w, %r sequence_lens %l {activations = ["Relu"], direction = "reverse", hidden_size = 4 : i64} : (tensor<?x?x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<?xi32>) -> (tensor<?x1x?x4xf32>, tensor<1x?x4xf32>)
  return %y, %yh : tensor<?x1x?x4xf32>, tensor<1x?x4xf32>
}
