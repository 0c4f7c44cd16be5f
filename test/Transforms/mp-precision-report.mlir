// The precision summary table on stderr: per op type the class and the
// nodes in f16/f32, then nodes in f16 / total, casts, the fp16 share of
// contraction FLOPs, weight bytes fp32 -> mixed, keep-io-types and the
// findings (guards, constants out of range, mask sentinels).
// RUN: mp-opt %s --mp-assign-precision="report=1" -o /dev/null 2>&1 | FileCheck %s
// RUN: mp-opt %s --mp-mixed-precision="report=1 keep-io-types=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOIO
// The report pass prints the same table from the recorded decisions (the
// findings are the analysis's and are not repeated).
// RUN: mp-opt %s --mp-assign-precision --mp-precision-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASS
// Nothing is decided: an empty table.
// RUN: mp-opt %s --mp-precision-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// After --mp-insert-casts the report counts the casts and weights that were
// materialized (same totals as before materialization).
// RUN: mp-opt %s --mp-mixed-precision --mp-precision-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=PASS
// The findings print the sentinel values readably.
// RUN: mp-opt %s --mp-assign-precision="report=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FMT

func.func @report(%q: tensor<2x4xf32>, %c: tensor<2x4xi1>, %k: tensor<2xf32>) -> (tensor<2x4xf32>, tensor<?x?xf32>) {
  %w = mp.constant dense<0.5> : tensor<4x4xf32> loc("w")
  %m = mp.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9]]> : tensor<2x4xf32> loc("mask")
  %big = mp.constant dense<1.0e5> : tensor<4xf32> loc("big")
  %0 = mp.matmul %q, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("qk")
  %1 = mp.add %0, %m : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("add_mask")
  %2 = mp.softmax %1 {axes = array<i64: 1>} : tensor<2x4xf32> loc("softmax0")
  %3 = mp.matmul %2, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("pv")
  %4 = mp.mul %3, %big : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("scale")
  %5 = mp.exp %4 : tensor<2x4xf32> loc("exp0")
  %6 = mp.mul %k, %k : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("shape_math")
  %7 = mp.cast %6 {to = i64} : tensor<2xf32> -> tensor<2xi64> loc("to_i64")
  %8 = mp.reshape %3, %7 : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("reshape0")
  %z = mp.constant dense<0.0> : tensor<f32> loc("zero")
  %fmin = mp.constant dense<-3.40282347E+38> : tensor<f32> loc("fmin")
  %9 = mp.where %c, %z, %fmin : (tensor<2x4xi1>, tensor<f32>, tensor<f32>) -> tensor<2x4xf32> loc("mask_where")
  %10 = mp.add %5, %9 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("add_mask2")
  %11 = mp.softmax %10 {axes = array<i64: 1>} : tensor<2x4xf32> loc("softmax1")
  return %11, %8 : tensor<2x4xf32>, tensor<?x?xf32>
}

// CHECK: mp precision report: @report
// CHECK-NEXT: op type class nodes f16 f32
// CHECK-NEXT: Add infer 2 1 1
// CHECK-NEXT: Exp deny 1 0 1
// CHECK-NEXT: MatMul allow 2 2 0
// CHECK-NEXT: Mul infer 2 0 2
// CHECK-NEXT: Reshape clear 1 1 0
// CHECK-NEXT: Softmax infer 2 1 1
// CHECK-NEXT: Where infer 1 0 1
// CHECK-NEXT: nodes in f16: 5 / 11; casts: 3; fp16 share of matmul/conv FLOPs: 100.0%
// CHECK-NEXT: weights: 0.00 MiB -> 0.00 MiB; keep-io-types: yes
// CHECK-DAG: [guard] 'shape_math' kept in its type: shape/index guard: feeds operand #1 of 'reshape0'
// CHECK-DAG: [mask] 'mask': attention mask sentinel {{.*}} becomes {{.*}} in fp16 (softmax output unchanged)
// CHECK-DAG: [mask] 'fmin': attention mask sentinel {{.*}} becomes {{.*}} in fp16 (softmax output unchanged)
// CHECK-DAG: [range] constant 'big' out of fp16 range: 4 value(s) that overflow fp16 (max |v| = 100000) (consumers kept in fp32)

// NOIO: mp precision report: @report
// NOIO: nodes in f16: 5 / 11; casts: {{[0-9]+}}; fp16 share of matmul/conv FLOPs: 100.0%
// NOIO-NEXT: weights: {{.*}}; keep-io-types: no

// PASS: mp precision report: @report
// PASS-NEXT: op type class nodes f16 f32
// PASS-NEXT: Add infer 2 1 1
// PASS: nodes in f16: 5 / 11; casts: 3; fp16 share of matmul/conv FLOPs: 100.0%
// PASS-NEXT: weights: 0.00 MiB -> 0.00 MiB; keep-io-types: yes
// PASS-NOT: [

// EMPTY: mp precision report: @report
// EMPTY-NEXT: op type class nodes f16 f32
// EMPTY-NEXT: nodes in f16: 0 / 0; casts: 0; fp16 share of matmul/conv FLOPs: 0.0%

// FMT-DAG: [mask] 'mask': attention mask sentinel -1{{(\.0+)?}}e+{{0?}}9 becomes -10000 in fp16
// FMT-DAG: [mask] 'fmin': attention mask sentinel -3.40282{{[0-9]*}}e+{{0?}}38 becomes -10000 in fp16
