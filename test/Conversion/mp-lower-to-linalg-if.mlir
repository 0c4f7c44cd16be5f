// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg | FileCheck %s

// An If decided by a run-time value (trimmed from silero_vad_op18_ifless
// compiled with --dynamic-shapes: `sr == 16000` picks the 16 kHz or the
// 8 kHz subgraph) becomes scf.if on the condition's element; the branches'
// ops are lowered in place, and a branch yielding a more static type is
// cast to the If's.
// CHECK-LABEL: func.func @sample_rate(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?xf32>, %[[SR:[^:]*]]: tensor<i64>
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<1x4xf32>
// CHECK: %[[EQ:.*]] = linalg.generic {{.*}} ins(%[[SR]],
// CHECK: %[[FLAG:.*]] = tensor.extract %[[EQ]][] : tensor<i1>
// CHECK: %[[R:.*]] = scf.if %[[FLAG]] -> (tensor<?x?xf32>) {
// CHECK: %[[NEG:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?x?xf32>)
// CHECK: arith.negf
// CHECK: scf.yield %[[NEG]] : tensor<?x?xf32>
// CHECK: } else {
// CHECK: %[[CAST:.*]] = tensor.cast %[[ZEROS]] : tensor<1x4xf32> to tensor<?x?xf32>
// CHECK: scf.yield %[[CAST]] : tensor<?x?xf32>
// CHECK: }
// CHECK-NOT: mp.
// CHECK: return %[[R]]
func.func @sample_rate(%x: tensor<?x?xf32>, %sr: tensor<i64>) -> tensor<?x?xf32> {
  %c16k = mp.constant dense<16000> : tensor<i64>
  %is16k = mp.equal %sr, %c16k : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %r = mp.if %is16k : tensor<i1> -> tensor<?x?xf32> {
    %n = mp.neg %x : tensor<?x?xf32>
    mp.yield %n : tensor<?x?xf32>
  } else {
    %z = mp.constant dense<0.0> : tensor<1x4xf32>
    mp.yield %z : tensor<1x4xf32>
  }
  return %r : tensor<?x?xf32>
}
