// RUN: mp-opt %s -split-input-file --mp-lower-to-linalg --canonicalize --cse | FileCheck %s

// RandomUniform of a static shape: one parallel generic over linalg.index,
// no inputs. The row-major index n hashes with the seed's key:
// word(n) = mix64(key + (n + 1) * 0x9E3779B97F4A7C15) (splitmix64), whose top
// 24 bits make u in [0, 1); low + (high - low) * u is kept below high.
// CHECK-LABEL: func.func @uniform_static
// CHECK-DAG: %[[GAMMA:.+]] = arith.constant -7046029254386353131 : i64
// CHECK-DAG: %[[M1:.+]] = arith.constant -4658895280553007687 : i64
// CHECK-DAG: %[[M2:.+]] = arith.constant -7723592293110705685 : i64
// CHECK-DAG: %[[HIGH:.+]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[BELOW:.+]] = arith.constant 2.99999976 : f32
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#{{.+}}], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<2x3xf32>)
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: %[[ROW:.+]] = arith.muli %[[I0]], %c3 : index
// CHECK: %[[I1:.+]] = linalg.index 1 : index
// CHECK: %[[LIN:.+]] = arith.addi %[[ROW]], %[[I1]] : index
// CHECK: %[[N:.+]] = arith.index_cast %[[LIN]] : index to i64
// CHECK: %[[N1:.+]] = arith.addi %[[N]], %c1_i64 : i64
// CHECK: %[[STEP:.+]] = arith.muli %[[N1]], %[[GAMMA]] : i64
// CHECK: %[[Z0:.+]] = arith.addi %[[STEP]], %{{.+}} : i64
// CHECK: arith.shrui %[[Z0]], %{{.+}} : i64
// CHECK: arith.muli %{{.+}}, %[[M1]] : i64
// CHECK: arith.muli %{{.+}}, %[[M2]] : i64
// CHECK: %[[TOP:.+]] = arith.shrui %{{.+}}, %c40_i64 : i64
// CHECK: %[[F:.+]] = arith.uitofp %[[TOP]] : i64 to f32
// CHECK: %[[U:.+]] = arith.mulf %[[F]], %{{.+}} : f32
// CHECK: %[[SPAN:.+]] = arith.mulf %[[U]], %{{.+}} : f32
// CHECK: %[[V:.+]] = arith.addf %[[SPAN]], %{{.+}} : f32
// CHECK: %[[UNDER:.+]] = arith.cmpf olt, %[[V]], %[[HIGH]] : f32
// CHECK: %[[OUT:.+]] = arith.select %[[UNDER]], %[[V]], %[[BELOW]] : f32
// CHECK: linalg.yield %[[OUT]] : f32
// CHECK: return %[[R]] : tensor<2x3xf32>
func.func @uniform_static() -> tensor<2x3xf32> {
  %0 = mp.random_uniform {dtype = f32, shape = array<i64: 2, 3>, low = -2.0 : f32, high = 3.0 : f32, seed = 7.0 : f32} -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Different seeds give different keys, mix64 of the f32 seed's bits (the
// only constant that changes): 1.0 is 0x3F800000, 2.0 is 0x40000000.
// CHECK-LABEL: func.func @uniform_seeds
// CHECK: linalg.generic
// CHECK: arith.addi %{{.+}}, %c3052579836232902212_i64 : i64
// CHECK: linalg.generic
// CHECK: arith.addi %{{.+}}, %c3143522559155490559_i64 : i64
func.func @uniform_seeds() -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = mp.random_uniform {dtype = f32, shape = array<i64: 4>, seed = 1.0 : f32} -> tensor<4xf32>
  %1 = mp.random_uniform {dtype = f32, shape = array<i64: 4>, seed = 2.0 : f32} -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// RandomNormalLike over run-time sizes: the like operand gives them (its
// values are not read), and the index linearizes with them, so element n is
// the same as with static shapes. Box-Muller reads words 2n and 2n + 1;
// u1 = (top bits + 1) / 2^24 is in (0, 1], so log(u1) is finite. Without a
// seed the key is mix64(0) = 0 (the addition folds away).
// CHECK-LABEL: func.func @normal_like_dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>)
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[E:.+]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf16>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#{{.+}}], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<?x?xf16>)
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: %[[ROW:.+]] = arith.muli %[[I0]], %[[D1]] : index
// CHECK: %[[I1:.+]] = linalg.index 1 : index
// CHECK: arith.addi %[[ROW]], %[[I1]] : index
// CHECK: %[[N2:.+]] = arith.muli %{{.+}}, %c2_i64 : i64
// CHECK: %[[TOP1:.+]] = arith.shrui %{{.+}}, %c40_i64 : i64
// CHECK: %[[OPEN:.+]] = arith.addi %[[TOP1]], %c1_i64 : i64
// CHECK: %[[F1:.+]] = arith.uitofp %[[OPEN]] : i64 to f32
// CHECK: %[[U1:.+]] = arith.mulf %[[F1]], %{{.+}} : f32
// CHECK: arith.addi %[[N2]], %c2_i64 : i64
// CHECK: %[[LOG:.+]] = math.log %[[U1]] : f32
// CHECK: %[[M2LOG:.+]] = arith.mulf %[[LOG]], %{{.+}} : f32
// CHECK: %[[RAD:.+]] = math.sqrt %[[M2LOG]] : f32
// CHECK: %[[COS:.+]] = math.cos %{{.+}} : f32
// CHECK: %[[Z:.+]] = arith.mulf %[[RAD]], %[[COS]] : f32
// CHECK: %[[SZ:.+]] = arith.mulf %[[Z]], %{{.+}} : f32
// CHECK: %[[V:.+]] = arith.addf %[[SZ]], %{{.+}} : f32
// CHECK: %[[H:.+]] = arith.truncf %[[V]] : f32 to f16
// CHECK: linalg.yield %[[H]] : f16
// CHECK: return %[[R]] : tensor<?x?xf16>
func.func @normal_like_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf16> {
  %0 = mp.random_normal %x : tensor<?x?xf32> {dtype = f16, mean = 1.0 : f32, scale = 0.5 : f32} -> tensor<?x?xf16>
  return %0 : tensor<?x?xf16>
}

// -----

// f64 results take 53 bits per uniform and compute in f64.
// CHECK-LABEL: func.func @uniform_f64
// CHECK: linalg.generic
// CHECK: %[[TOP:.+]] = arith.shrui %{{.+}}, %c11_i64 : i64
// CHECK: arith.uitofp %[[TOP]] : i64 to f64
// CHECK: linalg.yield %{{.+}} : f64
func.func @uniform_f64() -> tensor<8xf64> {
  %0 = mp.random_uniform {dtype = f64, shape = array<i64: 8>} -> tensor<8xf64>
  return %0 : tensor<8xf64>
}
