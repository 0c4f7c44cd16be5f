// Fused and unfused attention compute the same values on the CPU: the same
// function through --mp-cpu-pipeline with and without --mp-fuse-attention
// must print numpy's result (float64 reference, 6 digits), including a
// masked-out key (-inf in the additive mask).
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: mp-opt %s --mp-fuse-attention --mp-cpu-pipeline | \
// RUN:   mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: mp-opt %s --mp-fuse-attention | FileCheck %s --check-prefix=FUSED
// FUSED-COUNT-2: mp.attention %
// FUSED-NOT: mp.softmax

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %q = arith.constant dense<[[[[0.61, 0.62, 0.03, -0.43], [-0.89, -0.23, -0.18, -0.91]], [[-0.9, 1.0, 0.3, -0.53], [-0.13, 0.95, 0.8, 0.69]]]]> : tensor<1x2x2x4xf32>
  %k = arith.constant dense<[[[[-0.22, -0.01, 0.35, -0.88], [0.11, -0.46, 0.76, -0.87], [0.36, 0.74, -0.55, 0.79]], [[0.74, -0.96, 0.41, -1.0], [0.01, -0.13, -0.59, -0.35], [0.61, -0.37, -0.7, 0.4]]]]> : tensor<1x2x3x4xf32>
  %v = arith.constant dense<[[[[-0.1, 0.6, -0.53, -0.36], [0.6, 0.01, 0.01, -0.53], [-0.97, 0.87, -0.83, 0.69]], [[-0.26, 0.9, -0.2, 0.87], [0.11, -0.52, 0.48, 0.35], [0.37, -0.07, -0.56, 0.28]]]]> : tensor<1x2x3x4xf32>
  %mask = arith.constant dense<[[[[0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]]]> : tensor<1x1x2x3xf32>
  %kt = mp.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x3x4xf32> -> tensor<1x2x4x3xf32>
  %s = mp.matmul %q, %kt : (tensor<1x2x2x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x2x3xf32>
  %c = mp.constant dense<0.5> : tensor<f32>
  %m = mp.mul %s, %c : (tensor<1x2x2x3xf32>, tensor<f32>) -> tensor<1x2x2x3xf32>
  %a = mp.add %m, %mask : (tensor<1x2x2x3xf32>, tensor<1x1x2x3xf32>) -> tensor<1x2x2x3xf32>
  %p = mp.softmax %a {axes = array<i64: 3>} : tensor<1x2x2x3xf32>
  %o = mp.matmul %p, %v : (tensor<1x2x2x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x2x4xf32>
  %u = tensor.cast %o : tensor<1x2x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// numpy: [[0.243902, 0.31014, -0.264704, -0.443519],
//          [0.033497, 0.412867, -0.367243, -0.257342]],
//         [[-0.036601, 0.042629, 0.210572, 0.556033],
//          [0.107514, 0.033698, -0.095035, 0.464519]]; printed to 6
// significant digits:
// CHECK: sizes = [1, 2, 2, 4]
// CHECK-NEXT: {{\[\[\[\[}}0.243902, 0.31014, -0.264704, -0.443519],
// CHECK-NEXT: [0.0334967, 0.412867, -0.367243, -0.257342]],
// CHECK-NEXT: {{\[\[}}-0.0366005, 0.0426291, 0.210572, 0.556033],
// CHECK-NEXT: [0.107514, 0.0336979, -0.095035, 0.464519]]]]

// The SDPA export form: sqrt(scale) on Q and K^T, masked_fill, two KV heads
// repeated for four query heads. numpy (float64, np.repeat of the heads):
//   [[0.501485, -0.414719, -0.418987, -0.251524], [0.421849, -0.366239, -0.079048, -0.485364]],
//   [[0.507383, -0.364855, -0.353573, -0.207021], [0.422821, -0.335613, -0.030294, -0.466634]],
//   [[-0.016168, -0.142754, -0.262003, 0.469419], [0.220052, 0.00237, -0.157156, 0.332043]],
//   [[-0.044309, -0.232683, -0.320732, 0.510407], [0.170101, -0.042163, -0.18814, 0.365786]]
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e gqa -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=GQA
// RUN: mp-opt %s --mp-fuse-attention --mp-cpu-pipeline | \
// RUN:   mlir-runner -e gqa -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=GQA
func.func @gqa() {
  %q = arith.constant dense<[[[[0.74, -0.43, 0.21, 0.56], [0.43, 0.83, 0.72, 0.84]], [[-0.95, -0.13, -0.03, -0.87], [-0.99, 0.66, 0.97, 0.57]], [[-0.37, 0.41, -0.4, 0.48], [-0.44, 0.57, 0.98, 0.97]], [[0.77, 0.83, 0.42, 0.11], [0.85, -0.82, -0.26, 0.21]]]]> : tensor<1x4x2x4xf32>
  %k = arith.constant dense<[[[[-0.04, 0.59, -0.61, -0.88], [-0.75, 0.93, -0.73, -0.55], [-0.25, 0.25, 0.56, -0.84]], [[0.86, 0.53, -0.36, -0.62], [0.19, 0.19, -0.47, -0.66], [0.53, 0.35, 0.6, -0.56]]]]> : tensor<1x2x3x4xf32>
  %v = arith.constant dense<[[[[0.45, -0.85, -0.99, -0.64], [0.56, 0.08, 0.23, 0.19], [0.27, -0.35, 0.44, -0.97]], [[-0.25, -0.89, -0.75, 0.81], [0.21, 0.58, 0.21, 0.14], [0.59, 0.25, 0.02, 0.11]]]]> : tensor<1x2x3x4xf32>
  %drop = arith.constant dense<[[[[false, false, true], [false, false, false]]]]> : tensor<1x1x2x3xi1>
  %shape5 = mp.constant dense<[1, 2, 2, 3, 4]> : tensor<5xi64>
  %shape4 = mp.constant dense<[1, 4, 3, 4]> : tensor<4xi64>
  %ku = mp.unsqueeze %k {axes = array<i64: 2>} : tensor<1x2x3x4xf32> -> tensor<1x2x1x3x4xf32>
  %ke = mp.expand %ku, %shape5 : (tensor<1x2x1x3x4xf32>, tensor<5xi64>) -> tensor<1x2x2x3x4xf32>
  %kr = mp.reshape %ke, %shape4 : (tensor<1x2x2x3x4xf32>, tensor<4xi64>) -> tensor<1x4x3x4xf32>
  %vu = mp.unsqueeze %v {axes = array<i64: 2>} : tensor<1x2x3x4xf32> -> tensor<1x2x1x3x4xf32>
  %ve = mp.expand %vu, %shape5 : (tensor<1x2x1x3x4xf32>, tensor<5xi64>) -> tensor<1x2x2x3x4xf32>
  %vr = mp.reshape %ve, %shape4 : (tensor<1x2x2x3x4xf32>, tensor<4xi64>) -> tensor<1x4x3x4xf32>
  %half = mp.constant dense<0.5> : tensor<f32>
  %qs = mp.mul %q, %half : (tensor<1x4x2x4xf32>, tensor<f32>) -> tensor<1x4x2x4xf32>
  %kt = mp.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x3x4xf32> -> tensor<1x4x4x3xf32>
  %ks = mp.mul %kt, %half : (tensor<1x4x4x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>
  %s = mp.matmul %qs, %ks : (tensor<1x4x2x4xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x2x3xf32>
  %ninf = mp.constant dense<0xFF800000> : tensor<f32>
  %w = mp.where %drop, %ninf, %s : (tensor<1x1x2x3xi1>, tensor<f32>, tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  %p = mp.softmax %w {axes = array<i64: 3>} : tensor<1x4x2x3xf32>
  %o = mp.matmul %p, %vr : (tensor<1x4x2x3xf32>, tensor<1x4x3x4xf32>) -> tensor<1x4x2x4xf32>
  %u = tensor.cast %o : tensor<1x4x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// GQA: sizes = [1, 4, 2, 4]
// GQA-NEXT: {{\[\[\[\[}}0.501485, -0.414719, -0.418987, -0.251524],
// GQA-NEXT: [0.421849, -0.366239, -0.0790475, -0.485364]],
// GQA-NEXT: {{\[\[}}0.507383, -0.364855, -0.353573, -0.207021],
// GQA-NEXT: [0.422821, -0.335613, -0.0302936, -0.466634]],
// GQA-NEXT: {{\[\[}}-0.016168, -0.142754, -0.262003, 0.469419],
// GQA-NEXT: [0.220052, 0.00236993, -0.157156, 0.332043]],
// GQA-NEXT: {{\[\[}}-0.044309, -0.232683, -0.320732, 0.510407],
// GQA-NEXT: [0.170101, -0.0421629, -0.18814, 0.365786]]]]

// A causal mask built as exporters do (Trilu of a constant filled with
// -inf): fused, it becomes is_causal and no mask is read. numpy (float64):
//   [[-0.97, 0.87, -0.83, 0.69], [-0.487095, 0.890404, -0.401507, 0.812427], [-0.383935, 0.350509, -0.176644, 0.605885]],
//   [[0.37, -0.07, -0.56, 0.28], [-0.334862, 0.203438, -0.055659, -0.042049], [0.138606, -0.185898, -0.164228, 0.272329]]
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e causal -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=CAUSAL
// RUN: mp-opt %s --mp-fuse-attention --mp-cpu-pipeline | \
// RUN:   mlir-runner -e causal -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=CAUSAL
// FUSED: mp.attention {{.*}}is_causal = true
func.func @causal() {
  %q = arith.constant dense<[[[[0.61, 0.62, 0.03, -0.43], [-0.89, -0.23, -0.18, -0.91], [-0.9, 1.0, 0.3, -0.53]], [[-0.13, 0.95, 0.8, 0.69], [-0.22, -0.01, 0.35, -0.88], [0.11, -0.46, 0.76, -0.87]]]]> : tensor<1x2x3x4xf32>
  %k = arith.constant dense<[[[[0.36, 0.74, -0.55, 0.79], [0.74, -0.96, 0.41, -1.0], [0.01, -0.13, -0.59, -0.35]], [[0.61, -0.37, -0.7, 0.4], [-0.1, 0.6, -0.53, -0.36], [0.6, 0.01, 0.01, -0.53]]]]> : tensor<1x2x3x4xf32>
  %v = arith.constant dense<[[[[-0.97, 0.87, -0.83, 0.69], [-0.26, 0.9, -0.2, 0.87], [0.11, -0.52, 0.48, 0.35]], [[0.37, -0.07, -0.56, 0.28], [-0.79, 0.38, 0.27, -0.25], [0.6, -0.61, -0.22, 0.6]]]]> : tensor<1x2x3x4xf32>
  %full = mp.constant dense<0xFF800000> : tensor<3x3xf32>
  %one = mp.constant dense<1> : tensor<i64>
  %mask = mp.trilu %full k %one : (tensor<3x3xf32>, tensor<i64>) -> tensor<3x3xf32>
  %kt = mp.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x3x4xf32> -> tensor<1x2x4x3xf32>
  %s = mp.matmul %q, %kt : (tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x3x3xf32>
  %c = mp.constant dense<0.5> : tensor<f32>
  %m = mp.mul %s, %c : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %a = mp.add %m, %mask : (tensor<1x2x3x3xf32>, tensor<3x3xf32>) -> tensor<1x2x3x3xf32>
  %p = mp.softmax %a {axes = array<i64: 3>} : tensor<1x2x3x3xf32>
  %o = mp.matmul %p, %v : (tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %u = tensor.cast %o : tensor<1x2x3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// CAUSAL: sizes = [1, 2, 3, 4]
// CAUSAL-NEXT: {{\[\[\[\[}}-0.97, 0.87, -0.83, 0.69],
// CAUSAL-NEXT: [-0.487095, 0.890404, -0.401507, 0.812427],
// CAUSAL-NEXT: [-0.383935, 0.350509, -0.176644, 0.605885]],
// CAUSAL-NEXT: {{\[\[}}0.37, -0.07, -0.56, 0.28],
// CAUSAL-NEXT: [-0.334862, 0.203438, -0.0556594, -0.0420488],
// CAUSAL-NEXT: [0.138606, -0.185898, -0.164228, 0.272329]]]]

// K/V heads repeated with Tile (query head h reads KV head h % 2) and a
// per-head additive mask: fused, the query heads and the mask are
// regrouped, K/V are read unrepeated and the output heads are put back.
// numpy (float64, np.tile of the heads):
//   [[0.381752, -0.450683, -0.092365, -0.65846], [0.432689, -0.287021, 0.020113, -0.409893]],
//   [[0.070979, -0.030116, -0.185703, 0.398705], [0.153059, 0.045269, -0.133385, 0.342511]],
//   [[0.481088, -0.278672, -0.122404, -0.248545], [0.390842, -0.230522, 0.251318, -0.516992]],
//   [[0.330592, 0.012373, -0.144953, 0.287387], [0.043222, -0.33761, -0.382902, 0.513297]]
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e tiled -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=TILED
// RUN: mp-opt %s --mp-fuse-attention --mp-cpu-pipeline | \
// RUN:   mlir-runner -e tiled -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=TILED
// RUN: mp-opt %s --mp-fuse-attention | FileCheck %s --check-prefix=FUSEDTILE
// FUSEDTILE-LABEL: func.func @tiled
// FUSEDTILE-NOT: mp.tile
// FUSEDTILE: mp.attention {{.*}} : (tensor<1x4x2x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x4x2x3xf32>)
func.func @tiled() {
  %q = arith.constant dense<[[[[0.74, -0.43, 0.21, 0.56], [0.43, 0.83, 0.72, 0.84]], [[-0.95, -0.13, -0.03, -0.87], [-0.99, 0.66, 0.97, 0.57]], [[-0.37, 0.41, -0.4, 0.48], [-0.44, 0.57, 0.98, 0.97]], [[0.77, 0.83, 0.42, 0.11], [0.85, -0.82, -0.26, 0.21]]]]> : tensor<1x4x2x4xf32>
  %k = arith.constant dense<[[[[-0.04, 0.59, -0.61, -0.88], [-0.75, 0.93, -0.73, -0.55], [-0.25, 0.25, 0.56, -0.84]], [[0.86, 0.53, -0.36, -0.62], [0.19, 0.19, -0.47, -0.66], [0.53, 0.35, 0.6, -0.56]]]]> : tensor<1x2x3x4xf32>
  %v = arith.constant dense<[[[[0.45, -0.85, -0.99, -0.64], [0.56, 0.08, 0.23, 0.19], [0.27, -0.35, 0.44, -0.97]], [[-0.25, -0.89, -0.75, 0.81], [0.21, 0.58, 0.21, 0.14], [0.59, 0.25, 0.02, 0.11]]]]> : tensor<1x2x3x4xf32>
  %bias = arith.constant dense<[[[[0.14, -0.32, 0.34], [-0.19, 0.31, -0.03]], [[0.5, 0.39, -0.92], [0.56, 0.79, -0.34]], [[0.47, 0.69, 0.0], [-0.74, 0.46, 0.68]], [[-0.38, -0.56, 0.53], [0.03, -0.97, -0.61]]]]> : tensor<1x4x2x3xf32>
  %reps = mp.constant dense<[1, 2, 1, 1]> : tensor<4xi64>
  %kr = mp.tile %k, %reps : (tensor<1x2x3x4xf32>, tensor<4xi64>) -> tensor<1x4x3x4xf32>
  %vr = mp.tile %v, %reps : (tensor<1x2x3x4xf32>, tensor<4xi64>) -> tensor<1x4x3x4xf32>
  %kt = mp.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x3x4xf32> -> tensor<1x4x4x3xf32>
  %s = mp.matmul %q, %kt : (tensor<1x4x2x4xf32>, tensor<1x4x4x3xf32>) -> tensor<1x4x2x3xf32>
  %c = mp.constant dense<0.5> : tensor<f32>
  %m = mp.mul %s, %c : (tensor<1x4x2x3xf32>, tensor<f32>) -> tensor<1x4x2x3xf32>
  %a = mp.add %m, %bias : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  %p = mp.softmax %a {axes = array<i64: 3>} : tensor<1x4x2x3xf32>
  %o = mp.matmul %p, %vr : (tensor<1x4x2x3xf32>, tensor<1x4x3x4xf32>) -> tensor<1x4x2x4xf32>
  %u = tensor.cast %o : tensor<1x4x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// TILED: sizes = [1, 4, 2, 4]
// TILED-NEXT: {{\[\[\[\[}}0.3817{{[0-9]*}}, -0.4506{{[0-9]*}}, -0.09236{{[0-9]*}}, -0.6584{{[0-9]*}}],
// TILED-NEXT: [0.4326{{[0-9]*}}, -0.2870{{[0-9]*}}, 0.02011{{[0-9]*}}, -0.4098{{[0-9]*}}]],
// TILED-NEXT: {{\[\[}}0.07097{{[0-9]*}}, -0.03011{{[0-9]*}}, -0.1857{{[0-9]*}}, 0.3987{{[0-9]*}}],
// TILED-NEXT: [0.1530{{[0-9]*}}, 0.04526{{[0-9]*}}, -0.1333{{[0-9]*}}, 0.3425{{[0-9]*}}]],
// TILED-NEXT: {{\[\[}}0.4810{{[0-9]*}}, -0.2786{{[0-9]*}}, -0.1224{{[0-9]*}}, -0.2485{{[0-9]*}}],
// TILED-NEXT: [0.3908{{[0-9]*}}, -0.2305{{[0-9]*}}, 0.2513{{[0-9]*}}, -0.5169{{[0-9]*}}]],
// TILED-NEXT: {{\[\[}}0.3305{{[0-9]*}}, 0.01237{{[0-9]*}}, -0.1449{{[0-9]*}}, 0.2873{{[0-9]*}}],
// TILED-NEXT: [0.04322{{[0-9]*}}, -0.3376{{[0-9]*}}, -0.3829{{[0-9]*}}, 0.5132{{[0-9]*}}]]]]

// A soft cap as Gemma exports it, 1.5 * tanh(scores / 1.5) after the scale
// and before a Trilu-built causal mask: fused into softcap = 1.5 and
// is_causal. numpy (float64):
//   [[-0.97, 0.87, -0.83, 0.69], [-0.362962, 0.895649, -0.291361, 0.843897], [-0.389113, 0.281365, -0.164353, 0.575103]],
//   [[0.37, -0.07, -0.56, 0.28], [-0.511385, 0.271917, 0.070647, -0.122702], [0.305153, -0.347831, -0.174457, 0.394825]]
// RUN: mp-opt %s --mp-cpu-pipeline | \
// RUN:   mlir-runner -e softcap -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=SOFTCAP
// RUN: mp-opt %s --mp-fuse-attention --mp-cpu-pipeline | \
// RUN:   mlir-runner -e softcap -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=SOFTCAP
// RUN: mp-opt %s --mp-fuse-attention | FileCheck %s --check-prefix=FUSEDCAP
// FUSEDCAP-LABEL: func.func @softcap
// FUSEDCAP-NOT: mp.tanh
// FUSEDCAP: mp.attention {{.*}}{is_causal = true, scale = 5.000000e-01 : f32, softcap = 1.500000e+00 : f32}
func.func @softcap() {
  %q = arith.constant dense<[[[[1.83, 1.86, 0.09, -1.29], [-2.67, -0.69, -0.54, -2.73], [-2.7, 3.0, 0.9, -1.59]], [[-0.39, 2.85, 2.4, 2.07], [-0.66, -0.03, 1.05, -2.64], [0.33, -1.38, 2.28, -2.61]]]]> : tensor<1x2x3x4xf32>
  %k = arith.constant dense<[[[[0.36, 0.74, -0.55, 0.79], [0.74, -0.96, 0.41, -1.0], [0.01, -0.13, -0.59, -0.35]], [[0.61, -0.37, -0.7, 0.4], [-0.1, 0.6, -0.53, -0.36], [0.6, 0.01, 0.01, -0.53]]]]> : tensor<1x2x3x4xf32>
  %v = arith.constant dense<[[[[-0.97, 0.87, -0.83, 0.69], [-0.26, 0.9, -0.2, 0.87], [0.11, -0.52, 0.48, 0.35]], [[0.37, -0.07, -0.56, 0.28], [-0.79, 0.38, 0.27, -0.25], [0.6, -0.61, -0.22, 0.6]]]]> : tensor<1x2x3x4xf32>
  %full = mp.constant dense<0xFF800000> : tensor<3x3xf32>
  %one = mp.constant dense<1> : tensor<i64>
  %mask = mp.trilu %full k %one : (tensor<3x3xf32>, tensor<i64>) -> tensor<3x3xf32>
  %kt = mp.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x3x4xf32> -> tensor<1x2x4x3xf32>
  %s = mp.matmul %q, %kt : (tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x3x3xf32>
  %half = mp.constant dense<0.5> : tensor<f32>
  %m = mp.mul %s, %half : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %cap = mp.constant dense<1.5> : tensor<f32>
  %d = mp.div %m, %cap : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %t = mp.tanh %d : tensor<1x2x3x3xf32>
  %c = mp.mul %t, %cap : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %a = mp.add %c, %mask : (tensor<1x2x3x3xf32>, tensor<3x3xf32>) -> tensor<1x2x3x3xf32>
  %p = mp.softmax %a {axes = array<i64: 3>} : tensor<1x2x3x3xf32>
  %o = mp.matmul %p, %v : (tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %u = tensor.cast %o : tensor<1x2x3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// SOFTCAP: sizes = [1, 2, 3, 4]
// SOFTCAP-NEXT: {{\[\[\[\[}}-0.97, 0.87, -0.83, 0.69],
// SOFTCAP-NEXT: [-0.3629{{[0-9]*}}, 0.8956{{[0-9]*}}, -0.2913{{[0-9]*}}, 0.8438{{[0-9]*}}],
// SOFTCAP-NEXT: [-0.3891{{[0-9]*}}, 0.2813{{[0-9]*}}, -0.1643{{[0-9]*}}, 0.5751{{[0-9]*}}]],
// SOFTCAP-NEXT: {{\[\[}}0.37, -0.07, -0.56, 0.28],
// SOFTCAP-NEXT: [-0.5113{{[0-9]*}}, 0.2719{{[0-9]*}}, 0.07064{{[0-9]*}}, -0.1227{{[0-9]*}}],
// SOFTCAP-NEXT: [0.3051{{[0-9]*}}, -0.3478{{[0-9]*}}, -0.1744{{[0-9]*}}, 0.3948{{[0-9]*}}]]]]
