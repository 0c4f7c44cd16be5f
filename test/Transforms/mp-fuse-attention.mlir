// Decomposed attention becomes mp.attention; look-alikes are left alone
// and reported as near misses with the reason.
// RUN: mp-opt %s -split-input-file --mp-fuse-attention | FileCheck %s
// RUN: mp-opt %s --mp-fuse-attention="report=%t.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// As the TTS decoder writes it: K transposed, scores scaled by Mul.
// CHECK-LABEL: func.func @mul_scale(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x4x1x32xf32>, %[[K:[a-z0-9]+]]: tensor<1x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<1x4x16x32xf32>
// CHECK-NOT: mp.softmax
// CHECK-NOT: mp.transpose
// CHECK: %[[O:.+]], %{{.+}}, %{{.+}}, %{{.+}} = mp.attention %[[Q]], %[[K]], %[[V]] {scale = 0.176776692 : f32}
// CHECK-NOT: mp.softmax
// CHECK-NOT: mp.transpose
// CHECK: return %[[O]]
func.func @mul_scale(%q: tensor<1x4x1x32xf32>, %k: tensor<1x4x16x32xf32>, %v: tensor<1x4x16x32xf32>) -> tensor<1x4x1x32xf32> {
  %kt = mp.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x16x32xf32> -> tensor<1x4x32x16xf32> loc("kt")
  %s = mp.matmul %q, %kt : (tensor<1x4x1x32xf32>, tensor<1x4x32x16xf32>) -> tensor<1x4x1x16xf32> loc("qk")
  %c = mp.constant dense<0.176776692> : tensor<f32>
  %m = mp.mul %s, %c : (tensor<1x4x1x16xf32>, tensor<f32>) -> tensor<1x4x1x16xf32> loc("scale")
  %p = mp.softmax %m {axes = array<i64: 3>} : tensor<1x4x1x16xf32> loc("softmax")
  %o = mp.matmul %p, %v : (tensor<1x4x1x16xf32>, tensor<1x4x16x32xf32>) -> tensor<1x4x1x32xf32> loc("pv")
  return %o : tensor<1x4x1x32xf32>
}

// -----

// Past K/V joined by Concat on the sequence axis, the joined caches returned
// as the present outputs (torch.onnx's KV cache): the Concats become the
// op's past, and the present outputs its present results.
// CHECK-LABEL: func.func @past_concat(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x4x1x32xf32>, %[[K:[a-z0-9]+]]: tensor<1x4x1x32xf32>, %[[V:[a-z0-9]+]]: tensor<1x4x1x32xf32>, %[[PK:[a-z0-9]+]]: tensor<1x4x?x32xf32>, %[[PV:[a-z0-9]+]]: tensor<1x4x?x32xf32>
// CHECK-NOT: mp.concat
// CHECK: %[[O:[^,]+]], %[[NK:[^,]+]], %[[NV:[^,]+]], %{{[^ ]+}} = mp.attention %[[Q]], %[[K]], %[[V]] past(%[[PK]], %[[PV]]) {scale = 0.176776692 : f32}
// CHECK-NOT: mp.concat
// CHECK: return %[[O]], %[[NK]], %[[NV]]
func.func @past_concat(%q: tensor<1x4x1x32xf32>, %k: tensor<1x4x1x32xf32>, %v: tensor<1x4x1x32xf32>, %pk: tensor<1x4x?x32xf32>, %pv: tensor<1x4x?x32xf32>) -> (tensor<1x4x1x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>) {
  %ck = mp.concat %pk, %k {axis = 2 : i64} : (tensor<1x4x?x32xf32>, tensor<1x4x1x32xf32>) -> tensor<1x4x?x32xf32> loc("cat_k")
  %cv = mp.concat %pv, %v {axis = 2 : i64} : (tensor<1x4x?x32xf32>, tensor<1x4x1x32xf32>) -> tensor<1x4x?x32xf32> loc("cat_v")
  %kt = mp.transpose %ck {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x?x32xf32> -> tensor<1x4x32x?xf32> loc("kt2")
  %s = mp.matmul %q, %kt : (tensor<1x4x1x32xf32>, tensor<1x4x32x?xf32>) -> tensor<1x4x1x?xf32> loc("qk2")
  %c = mp.constant dense<0.176776692> : tensor<f32>
  %m = mp.mul %s, %c : (tensor<1x4x1x?xf32>, tensor<f32>) -> tensor<1x4x1x?xf32> loc("scale2")
  %p = mp.softmax %m {axes = array<i64: 3>} : tensor<1x4x1x?xf32> loc("softmax2")
  %o = mp.matmul %p, %cv : (tensor<1x4x1x?xf32>, tensor<1x4x?x32xf32>) -> tensor<1x4x1x32xf32> loc("pv2")
  return %o, %ck, %cv : tensor<1x4x1x32xf32>, tensor<1x4x?x32xf32>, tensor<1x4x?x32xf32>
}

// -----

// Div by sqrt(d), an additive causal mask, K already [B, H, D, T]: the
// fused op reads K through a transpose back to [B, H, T, D].
// CHECK-LABEL: func.func @div_scale_mask(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x2x8x16xf32>, %[[KT:[a-z0-9]+]]: tensor<2x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x2x8x16xf32>, %[[MASK:[a-z0-9]+]]: tensor<1x1x8x8xf32>
// CHECK-NOT: mp.softmax
// CHECK: %[[K:.+]] = mp.transpose %[[KT]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK: mp.attention %[[Q]], %[[K]], %[[V]] mask %[[MASK]] {scale = 2.500000e-01 : f32}
// CHECK-NOT: mp.softmax
func.func @div_scale_mask(%q: tensor<2x2x8x16xf32>, %kt: tensor<2x2x16x8xf32>, %v: tensor<2x2x8x16xf32>, %mask: tensor<1x1x8x8xf32>) -> tensor<2x2x8x16xf32> {
  %s = mp.matmul %q, %kt : (tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32>) -> tensor<2x2x8x8xf32>
  %c = mp.constant dense<4.0> : tensor<f32>
  %d = mp.div %s, %c : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8x8xf32>
  %a = mp.add %d, %mask : (tensor<2x2x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x2x8x8xf32>
  %p = mp.softmax %a {axes = array<i64: 3>} : tensor<2x2x8x8xf32>
  %o = mp.matmul %p, %v : (tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

// A boolean mask through Where(cond, scores, -inf); one K/V head for four
// query heads (multi-query); no scale op means scale 1.
// CHECK-LABEL: func.func @where_mask_mqa(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x4x2x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x6x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x1x6x8xf32>, %[[KEEP:[a-z0-9]+]]: tensor<1x1x2x6xi1>
// CHECK: mp.attention %[[Q]], %[[K]], %[[V]] mask %[[KEEP]] {scale = 1.000000e+00 : f32} : ({{.*}}) -> (tensor<1x4x2x8xf32>,
func.func @where_mask_mqa(%q: tensor<1x4x2x8xf32>, %k: tensor<1x1x6x8xf32>, %v: tensor<1x1x6x8xf32>, %keep: tensor<1x1x2x6xi1>) -> tensor<1x4x2x8xf32> {
  %kt = mp.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x1x6x8xf32> -> tensor<1x1x8x6xf32>
  %s = mp.matmul %q, %kt : (tensor<1x4x2x8xf32>, tensor<1x1x8x6xf32>) -> tensor<1x4x2x6xf32>
  %ninf = mp.constant dense<0xFF800000> : tensor<f32>
  %w = mp.where %keep, %s, %ninf : (tensor<1x1x2x6xi1>, tensor<1x4x2x6xf32>, tensor<f32>) -> tensor<1x4x2x6xf32>
  %p = mp.softmax %w {axes = array<i64: 3>} : tensor<1x4x2x6xf32>
  %o = mp.matmul %p, %v : (tensor<1x4x2x6xf32>, tensor<1x1x6x8xf32>) -> tensor<1x4x2x8xf32>
  return %o : tensor<1x4x2x8xf32>
}

// -----

// PyTorch's SDPA export: sqrt(scale) on Q and on K^T, a masked_fill mask
// (Where(drop, -inf, scores)), and K/V repeated for grouped-query heads
// (Unsqueeze, Expand, Reshape): the fused op reads the two KV heads
// directly, keeps Not(drop), and scale = 0.5 * 0.5.
// CHECK-LABEL: func.func @sdpa_gqa(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x4x3x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x3x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x3x8xf32>, %[[DROP:[a-z0-9]+]]: tensor<1x1x3x3xi1>
// CHECK-NOT: mp.expand
// CHECK-NOT: mp.softmax
// CHECK: %[[KEEP:.+]] = mp.not %[[DROP]]
// CHECK: mp.attention %[[Q]], %[[K]], %[[V]] mask %[[KEEP]] {scale = 2.500000e-01 : f32} : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x1x3x3xi1>)
// CHECK-NOT: mp.expand
// CHECK-NOT: mp.softmax
func.func @sdpa_gqa(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>, %drop: tensor<1x1x3x3xi1>) -> tensor<1x4x3x8xf32> {
  %shape5 = mp.constant dense<[1, 2, 2, 3, 8]> : tensor<5xi64>
  %shape4 = mp.constant dense<[1, 4, 3, 8]> : tensor<4xi64>
  %ku = mp.unsqueeze %k {axes = array<i64: 2>} : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ke = mp.expand %ku, %shape5 : (tensor<1x2x1x3x8xf32>, tensor<5xi64>) -> tensor<1x2x2x3x8xf32>
  %kr = mp.reshape %ke, %shape4 : (tensor<1x2x2x3x8xf32>, tensor<4xi64>) -> tensor<1x4x3x8xf32>
  %vu = mp.unsqueeze %v {axes = array<i64: 2>} : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ve = mp.expand %vu, %shape5 : (tensor<1x2x1x3x8xf32>, tensor<5xi64>) -> tensor<1x2x2x3x8xf32>
  %vr = mp.reshape %ve, %shape4 : (tensor<1x2x2x3x8xf32>, tensor<4xi64>) -> tensor<1x4x3x8xf32>
  %half = mp.constant dense<0.5> : tensor<f32>
  %qs = mp.mul %q, %half : (tensor<1x4x3x8xf32>, tensor<f32>) -> tensor<1x4x3x8xf32>
  %kt = mp.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x3x8xf32> -> tensor<1x4x8x3xf32>
  %ks = mp.mul %kt, %half : (tensor<1x4x8x3xf32>, tensor<f32>) -> tensor<1x4x8x3xf32>
  %s = mp.matmul %qs, %ks : (tensor<1x4x3x8xf32>, tensor<1x4x8x3xf32>) -> tensor<1x4x3x3xf32>
  %ninf = mp.constant dense<0xFF800000> : tensor<f32>
  %w = mp.where %drop, %ninf, %s : (tensor<1x1x3x3xi1>, tensor<f32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = mp.softmax %w {axes = array<i64: 3>} : tensor<1x4x3x3xf32>
  %o = mp.matmul %p, %vr : (tensor<1x4x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  return %o : tensor<1x4x3x8xf32>
}

// -----

// Near miss: softmax over the queries, not the keys.
// CHECK-LABEL: func.func @softmax_axis(
// CHECK-NOT: mp.attention
// CHECK: mp.softmax
func.func @softmax_axis(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = mp.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = mp.softmax %s {axes = array<i64: 2>} : tensor<1x2x4x4xf32> loc("softmax_axis")
  %o = mp.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Near miss: a per-head scale is not a scalar constant.
// CHECK-LABEL: func.func @per_head_scale(
// CHECK-NOT: mp.attention
func.func @per_head_scale(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = mp.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = mp.constant dense<[[[[0.5]], [[0.25]]]]> : tensor<1x2x1x1xf32>
  %m = mp.mul %s, %c : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %p = mp.softmax %m {axes = array<i64: 3>} : tensor<1x2x4x4xf32> loc("softmax_per_head")
  %o = mp.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Near miss: the raw scores are also a graph output.
// CHECK-LABEL: func.func @scores_escape(
// CHECK-NOT: mp.attention
func.func @scores_escape(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = mp.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = mp.softmax %s {axes = array<i64: 3>} : tensor<1x2x4x4xf32> loc("softmax_escape")
  %o = mp.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %s : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// Near miss: Where fills with -10000, not -inf or a fill at or below -1e30
// that absorbs the scores (an additive mask of -10000 would not give the
// same masked scores).
// CHECK-LABEL: func.func @finite_fill(
// CHECK-NOT: mp.attention
func.func @finite_fill(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %keep: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %s = mp.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %fill = mp.constant dense<-10000.0> : tensor<f32>
  %w = mp.where %keep, %s, %fill : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = mp.softmax %w {axes = array<i64: 3>} : tensor<1x2x4x4xf32> loc("softmax_fill")
  %o = mp.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// BART-family attention with the heads merged into the batch (trimmed from
// speecht5_decoder_step_dynamo's cross-attention): Q, K and V reshaped from
// [B, H, S, D] to [B*H, S, D], the scores reshaped to [B, H, S, T] for the
// mask and back, the output reshaped to [B, H, S, D]. Lifted to 4-D, then
// fused.
// CHECK-LABEL: func.func @merged_heads(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x1x32xf32>, %[[K:[^:]*]]: tensor<1x2x5x32xf32>, %[[V:[^:]*]]: tensor<1x2x5x32xf32>, %[[M:[^:]*]]: tensor<1x1x1x5xf32>
// CHECK-NOT: mp.softmax
// CHECK-NOT: mp.reshape
// CHECK: %[[O:.*]], %{{.*}}, %{{.*}}, %{{.*}} = mp.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {scale = 1.000000e+00 : f32}
// CHECK-NOT: mp.softmax
// CHECK-NOT: mp.reshape
// CHECK: return %[[O]]
func.func @merged_heads(%q: tensor<1x2x1x32xf32>, %k: tensor<1x2x5x32xf32>, %v: tensor<1x2x5x32xf32>, %mask: tensor<1x1x1x5xf32>) -> tensor<1x2x1x32xf32> {
  %bh_s_d = mp.constant dense<[2, -1, 32]> : tensor<3xi64>
  %b_h_s_t = mp.constant dense<[1, 2, 1, -1]> : tensor<4xi64>
  %bh_s_t = mp.constant dense<[2, 1, -1]> : tensor<3xi64>
  %b_h_s_d = mp.constant dense<[1, 2, 1, 32]> : tensor<4xi64>
  %q3 = mp.reshape %q, %bh_s_d {allowzero = true} : (tensor<1x2x1x32xf32>, tensor<3xi64>) -> tensor<2x1x32xf32>
  %k3 = mp.reshape %k, %bh_s_d {allowzero = true} : (tensor<1x2x5x32xf32>, tensor<3xi64>) -> tensor<2x5x32xf32>
  %v3 = mp.reshape %v, %bh_s_d {allowzero = true} : (tensor<1x2x5x32xf32>, tensor<3xi64>) -> tensor<2x5x32xf32>
  %kt = mp.transpose %k3 {perm = array<i64: 0, 2, 1>} : tensor<2x5x32xf32> -> tensor<2x32x5xf32>
  %s3 = mp.matmul %q3, %kt : (tensor<2x1x32xf32>, tensor<2x32x5xf32>) -> tensor<2x1x5xf32>
  %s4 = mp.reshape %s3, %b_h_s_t {allowzero = true} : (tensor<2x1x5xf32>, tensor<4xi64>) -> tensor<1x2x1x5xf32>
  %m4 = mp.add %s4, %mask : (tensor<1x2x1x5xf32>, tensor<1x1x1x5xf32>) -> tensor<1x2x1x5xf32>
  %m3 = mp.reshape %m4, %bh_s_t {allowzero = true} : (tensor<1x2x1x5xf32>, tensor<3xi64>) -> tensor<2x1x5xf32>
  %p = mp.softmax %m3 {axes = array<i64: 2>} : tensor<2x1x5xf32> loc("speecht5_softmax")
  %o3 = mp.matmul %p, %v3 : (tensor<2x1x5xf32>, tensor<2x5x32xf32>) -> tensor<2x1x32xf32>
  %o4 = mp.reshape %o3, %b_h_s_d {allowzero = true} : (tensor<2x1x32xf32>, tensor<4xi64>) -> tensor<1x2x1x32xf32>
  return %o4 : tensor<1x2x1x32xf32>
}

// -----

// Not lifted: the output is reshaped to [B, S, H*D] directly, so nothing
// proves which split of the merged batch the caller reads.
// CHECK-LABEL: func.func @merged_heads_other_output(
// CHECK: mp.softmax
// CHECK-NOT: mp.attention
func.func @merged_heads_other_output(%q: tensor<1x2x1x32xf32>, %k: tensor<1x2x5x32xf32>, %v: tensor<1x2x5x32xf32>) -> tensor<1x1x64xf32> {
  %bh_s_d = mp.constant dense<[2, -1, 32]> : tensor<3xi64>
  %b_s_hd = mp.constant dense<[1, 1, 64]> : tensor<3xi64>
  %q3 = mp.reshape %q, %bh_s_d {allowzero = true} : (tensor<1x2x1x32xf32>, tensor<3xi64>) -> tensor<2x1x32xf32>
  %k3 = mp.reshape %k, %bh_s_d {allowzero = true} : (tensor<1x2x5x32xf32>, tensor<3xi64>) -> tensor<2x5x32xf32>
  %v3 = mp.reshape %v, %bh_s_d {allowzero = true} : (tensor<1x2x5x32xf32>, tensor<3xi64>) -> tensor<2x5x32xf32>
  %kt = mp.transpose %k3 {perm = array<i64: 0, 2, 1>} : tensor<2x5x32xf32> -> tensor<2x32x5xf32>
  %s3 = mp.matmul %q3, %kt : (tensor<2x1x32xf32>, tensor<2x32x5xf32>) -> tensor<2x1x5xf32>
  %p = mp.softmax %s3 {axes = array<i64: 2>} : tensor<2x1x5xf32> loc("merged_other_softmax")
  %o3 = mp.matmul %p, %v3 : (tensor<2x1x5xf32>, tensor<2x5x32xf32>) -> tensor<2x1x32xf32>
  %o = mp.reshape %o3, %b_s_hd {allowzero = true} : (tensor<2x1x32xf32>, tensor<3xi64>) -> tensor<1x1x64xf32>
  return %o : tensor<1x1x64xf32>
}

// -----

// Bark's masked_fill with torch.finfo(float32).min (trimmed from
// bark_semantic_step_ts): Where(drop, min, scores) becomes the additive mask
// Where(drop, min, 0), exact since min absorbs any finite score.
// CHECK-LABEL: func.func @finfo_min_fill(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x4x3x16xf32>, %[[KT:[^:]*]]: tensor<1x4x16x3xf32>, %[[V:[^:]*]]: tensor<1x4x3x16xf32>, %[[BIAS:[^:]*]]: tensor<1x1x3x3xi1>
// CHECK-NOT: mp.softmax
// CHECK: %[[DROP:.*]] = mp.equal
// CHECK-DAG: %[[ZERO:.*]] = mp.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[MIN:.*]] = mp.constant dense<-3.40282347E+38> : tensor<f32>
// CHECK: %[[MASK:.*]] = mp.where %[[DROP]], %[[MIN]], %[[ZERO]]
// CHECK: mp.attention %[[Q]], %{{.*}}, %[[V]] mask %[[MASK]]
// CHECK-NOT: mp.softmax
func.func @finfo_min_fill(%q: tensor<1x4x3x16xf32>, %kt: tensor<1x4x16x3xf32>, %v: tensor<1x4x3x16xf32>, %bias: tensor<1x1x3x3xi1>) -> tensor<1x4x3x16xf32> {
  %s = mp.matmul %q, %kt : (tensor<1x4x3x16xf32>, tensor<1x4x16x3xf32>) -> tensor<1x4x3x3xf32>
  %b = mp.cast %bias {to = i64} : tensor<1x1x3x3xi1> -> tensor<1x1x3x3xi64>
  %zero = mp.constant dense<0> : tensor<i64>
  %drop = mp.equal %b, %zero : (tensor<1x1x3x3xi64>, tensor<i64>) -> tensor<1x1x3x3xi1>
  %min = mp.constant dense<-3.40282347E+38> : tensor<f32>
  %w = mp.where %drop, %min, %s : (tensor<1x1x3x3xi1>, tensor<f32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = mp.softmax %w {axes = array<i64: 3>} : tensor<1x4x3x3xf32> loc("bark_ts_softmax")
  %o = mp.matmul %p, %v : (tensor<1x4x3x3xf32>, tensor<1x4x3x16xf32>) -> tensor<1x4x3x16xf32>
  return %o : tensor<1x4x3x16xf32>
}

// -----

// Bark's dynamo export adds the padding mask after the masked_fill
// (trimmed from bark_semantic_step_dynamo): both become one additive mask.
// CHECK-LABEL: func.func @finfo_min_fill_then_added_mask(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x4x1x16xf32>, %[[KT:[^:]*]]: tensor<1x4x16x6xf32>, %[[V:[^:]*]]: tensor<1x4x6x16xf32>, %[[DROP:[^:]*]]: tensor<1x1x1x6xi1>, %[[PAD:[^:]*]]: tensor<1x1x1x6xf32>
// CHECK-NOT: mp.softmax
// CHECK: %[[FILL:.*]] = mp.where %[[DROP]]
// CHECK: %[[MASK:.*]] = mp.add %[[FILL]], %[[PAD]]
// CHECK: mp.attention %{{.*}}, %{{.*}}, %[[V]] mask %[[MASK]] {scale = 2.500000e-01 : f32}
// CHECK-NOT: mp.softmax
func.func @finfo_min_fill_then_added_mask(%q: tensor<1x4x1x16xf32>, %kt: tensor<1x4x16x6xf32>, %v: tensor<1x4x6x16xf32>, %drop: tensor<1x1x1x6xi1>, %pad: tensor<1x1x1x6xf32>) -> tensor<1x4x1x16xf32> {
  %s = mp.matmul %q, %kt : (tensor<1x4x1x16xf32>, tensor<1x4x16x6xf32>) -> tensor<1x4x1x6xf32>
  %c = mp.constant dense<2.500000e-01> : tensor<f32>
  %scaled = mp.mul %s, %c : (tensor<1x4x1x6xf32>, tensor<f32>) -> tensor<1x4x1x6xf32>
  %min = mp.constant dense<-3.40282347E+38> : tensor<f32>
  %w = mp.where %drop, %min, %scaled : (tensor<1x1x1x6xi1>, tensor<f32>, tensor<1x4x1x6xf32>) -> tensor<1x4x1x6xf32>
  %m = mp.add %w, %pad : (tensor<1x4x1x6xf32>, tensor<1x1x1x6xf32>) -> tensor<1x4x1x6xf32>
  %p = mp.softmax %m {axes = array<i64: 3>} : tensor<1x4x1x6xf32> loc("bark_dynamo_softmax")
  %o = mp.matmul %p, %v : (tensor<1x4x1x6xf32>, tensor<1x4x6x16xf32>) -> tensor<1x4x1x16xf32>
  return %o : tensor<1x4x1x16xf32>
}

// -----

// Near miss: the scale comes after the mask ((s + m) * c is not s * c + m).
// CHECK-LABEL: func.func @scale_after_mask(
// CHECK-NOT: mp.attention
func.func @scale_after_mask(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = mp.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %a = mp.add %s, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = mp.constant dense<0.5> : tensor<f32>
  %m = mp.mul %a, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = mp.softmax %m {axes = array<i64: 3>} : tensor<1x2x4x4xf32> loc("softmax_late_scale")
  %o = mp.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// HF's causal mask: a constant bool tril sliced to the current lengths,
// through Where(keep, scores, -inf): is_causal, no mask operand.
// CHECK-LABEL: func.func @causal_sliced_tril(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[KT:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x4x8xf32>
// CHECK-NOT: mp.slice
// CHECK: mp.attention %[[Q]], %{{.+}}, %[[V]] {is_causal = true, scale = 1.000000e+00 : f32} :
// CHECK-NOT: mp.slice
func.func @causal_sliced_tril(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %tri = mp.constant dense<[[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]]> : tensor<1x1x8x8xi1>
  %starts = mp.constant dense<[0, 0]> : tensor<2xi64>
  %ends = mp.constant dense<[4, 4]> : tensor<2xi64>
  %axes = mp.constant dense<[2, 3]> : tensor<2xi64>
  %keep = mp.slice %tri, %starts, %ends axes %axes : (tensor<1x1x8x8xi1>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x4x4xi1>
  %s = mp.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ninf = mp.constant dense<0xFF800000> : tensor<f32>
  %w = mp.where %keep, %s, %ninf : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = mp.softmax %w {axes = array<i64: 3>} : tensor<1x2x4x4xf32>
  %o = mp.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A triangle that lets each query see one key ahead is not causal: it
// stays a mask.
// CHECK-LABEL: func.func @tril_one_ahead(
// CHECK: %[[KEEP:.+]] = mp.trilu
// CHECK: mp.attention %{{.+}}, %{{.+}}, %{{.+}} mask %[[KEEP]] {scale = 1.000000e+00 : f32}
func.func @tril_one_ahead(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %ones = mp.constant dense<true> : tensor<4x4xi1>
  %one = mp.constant dense<1> : tensor<i64>
  %keep = mp.trilu %ones k %one {upper = false} : (tensor<4x4xi1>, tensor<i64>) -> tensor<4x4xi1>
  %s = mp.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ninf = mp.constant dense<0xFF800000> : tensor<f32>
  %w = mp.where %keep, %s, %ninf : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = mp.softmax %w {axes = array<i64: 3>} : tensor<1x2x4x4xf32>
  %o = mp.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Trimmed from the real exports of ../shared/corpus/decoders (mp-opt
// MODEL, one layer's attention, cut at the QKV projections): GPT-2 by
// TorchScript (opset 17). The 4-D mask is built from attention_mask and a
// causal triangle as transformers writes it (And of LessOrEqual and the
// padding gathered per key, Expand), then Where(keep, 0, -inf) is added to
// the scores; the sqrt of the scale multiplies Q and K^T; torch's SDPA
// guards fully masked rows with Where(IsNaN(P), 0, P). The heads (4) are
// only in the shape computations (Reshape to [batch, seq, -1, 16]): the
// fused op reads Q, K and V through Expands to the proven heads, the guard
// moves to its output, and the joined caches become its past.
// CHECK-LABEL: func.func @gpt2_ts_layer0(
// CHECK: %[[KR:.+]] = mp.reshape %arg5,
// CHECK: %[[KN:.+]] = mp.transpose %[[KR]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[VR:.+]] = mp.reshape %arg6,
// CHECK: %[[VN:.+]] = mp.transpose %[[VR]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[QR:.+]] = mp.reshape %arg4,
// CHECK: %[[QN:.+]] = mp.transpose %[[QR]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[MASK:.+]] = mp.where %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x?x?x?xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?x?xf32>
// CHECK: %[[ZERO:.+]] = mp.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK: %[[Q:.+]] = mp.expand %[[QN]], %{{.+}} -> tensor<?x4x?x16xf32>
// CHECK: %[[K:.+]] = mp.expand %[[KN]], %{{.+}} -> tensor<?x4x?x16xf32>
// CHECK: %[[V:.+]] = mp.expand %[[VN]], %{{.+}} -> tensor<?x4x?x16xf32>
// CHECK: %[[O:[^,]+]], %[[PK:[^,]+]], %[[PV:[^,]+]], %{{[^ ]+}} = mp.attention %[[Q]], %[[K]], %[[V]] mask %[[MASK]] past(%arg2, %arg3) {scale = 2.500000e-01 : f32}
// CHECK: %[[NAN:.+]] = mp.is_nan %[[O]]
// CHECK: %[[G:.+]] = mp.where %[[NAN]], %[[ZERO]], %[[O]]
// CHECK-NOT: mp.softmax
// CHECK-NOT: mp.matmul
// CHECK: return %[[G]], %[[PK]], %[[PV]]
func.func @gpt2_ts_layer0(%a0: tensor<?x?xi64> {mp.dims = ["batch", "seq"]}, %a1: tensor<?x?xi64> {mp.dims = ["batch", "total_seq"]}, %a2: tensor<?x4x?x16xf32> {mp.dims = ["batch", "", "past_seq", ""]}, %a3: tensor<?x4x?x16xf32> {mp.dims = ["batch", "", "past_seq", ""]}, %a4: tensor<?x?x64xf32> {mp.dims = ["batch", "seq", ""]}, %a5: tensor<?x?x64xf32> {mp.dims = ["batch", "seq", ""]}, %a6: tensor<?x?x64xf32> {mp.dims = ["batch", "seq", ""]}, %a7: tensor<?x?x64xf32> {mp.dims = ["batch", "seq", ""]}) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) {
  %15 = mp.shape %a0 : tensor<?x?xi64> -> tensor<2xi64>
  %16 = mp.constant dense<1> : tensor<i64>
  %17 = mp.gather %15, %16 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %18 = mp.constant dense<-1> : tensor<1xi64>
  %20 = mp.unsqueeze %17 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %21 = mp.concat %18, %20 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %22 = mp.reshape %a0, %21 : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %23 = mp.shape %22 : tensor<?x?xi64> -> tensor<2xi64>
  %24 = mp.constant dense<0> : tensor<i64>
  %25 = mp.gather %23, %24 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %30 = mp.unsqueeze %25 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %31 = mp.constant dense<-1> : tensor<1xi64>
  %32 = mp.concat %30, %31 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %33 = mp.reshape %a1, %32 : (tensor<?x?xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %34 = mp.cast %33 {to = i1} : tensor<?x?xi64> -> tensor<?x?xi1>
  %35 = mp.shape %a7 : tensor<?x?x64xf32> -> tensor<3xi64>
  %36 = mp.constant dense<1> : tensor<i64>
  %37 = mp.gather %35, %36 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %38 = mp.shape %a2 : tensor<?x4x?x16xf32> -> tensor<4xi64>
  %39 = mp.constant dense<2> : tensor<i64>
  %40 = mp.gather %38, %39 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %41 = mp.add %40, %37 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %42 = mp.shape %a7 : tensor<?x?x64xf32> -> tensor<3xi64>
  %43 = mp.constant dense<0> : tensor<i64>
  %44 = mp.gather %42, %43 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %45 = mp.constant dense<0> : tensor<i64>
  %46 = mp.constant dense<1> : tensor<i64>
  %47 = mp.range %45, %44, %46 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %48 = mp.constant dense<0> : tensor<i64>
  %49 = mp.constant dense<1> : tensor<i64>
  %50 = mp.range %48, %37, %49 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %51 = mp.add %50, %40 : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  %52 = mp.constant dense<0> : tensor<i64>
  %53 = mp.constant dense<1> : tensor<i64>
  %54 = mp.range %52, %41, %53 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %56 = mp.unsqueeze %47 {axes = array<i64: 1>} : tensor<?xi64> -> tensor<?x1xi64>
  %58 = mp.unsqueeze %56 {axes = array<i64: 2>} : tensor<?x1xi64> -> tensor<?x1x1xi64>
  %60 = mp.unsqueeze %58 {axes = array<i64: 3>} : tensor<?x1x1xi64> -> tensor<?x1x1x1xi64>
  %62 = mp.unsqueeze %51 {axes = array<i64: 0>} : tensor<?xi64> -> tensor<1x?xi64>
  %64 = mp.unsqueeze %62 {axes = array<i64: 1>} : tensor<1x?xi64> -> tensor<1x1x?xi64>
  %66 = mp.unsqueeze %64 {axes = array<i64: 3>} : tensor<1x1x?xi64> -> tensor<1x1x?x1xi64>
  %68 = mp.unsqueeze %54 {axes = array<i64: 0>} : tensor<?xi64> -> tensor<1x?xi64>
  %70 = mp.unsqueeze %68 {axes = array<i64: 1>} : tensor<1x?xi64> -> tensor<1x1x?xi64>
  %72 = mp.unsqueeze %70 {axes = array<i64: 2>} : tensor<1x1x?xi64> -> tensor<1x1x1x?xi64>
  %74 = mp.constant dense<true> : tensor<i1>
  %75 = mp.less_or_equal %72, %66 : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
  %76 = mp.and %74, %75 : (tensor<i1>, tensor<1x1x?x?xi1>) -> tensor<1x1x?x?xi1>
  %77 = mp.shape %34 : tensor<?x?xi1> -> tensor<2xi64>
  %78 = mp.constant dense<1> : tensor<1xi64>
  %79 = mp.gather %77, %78 : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %80 = mp.flatten %34 {axis = 2 : i64} : tensor<?x?xi1> -> tensor<?x1xi1>
  %81 = mp.mul %60, %79 : (tensor<?x1x1x1xi64>, tensor<1xi64>) -> tensor<?x1x1x1xi64>
  %82 = mp.add %72, %81 : (tensor<1x1x1x?xi64>, tensor<?x1x1x1xi64>) -> tensor<?x1x1x?xi64>
  %83 = mp.gather %80, %82 : (tensor<?x1xi1>, tensor<?x1x1x?xi64>) -> tensor<?x1x1x?x1xi1>
  %84 = mp.shape %82 : tensor<?x1x1x?xi64> -> tensor<4xi64>
  %85 = mp.constant dense<-1> : tensor<1xi64>
  %86 = mp.reshape %83, %85 : (tensor<?x1x1x?x1xi1>, tensor<1xi64>) -> tensor<?xi1>
  %87 = mp.reshape %86, %84 : (tensor<?xi1>, tensor<4xi64>) -> tensor<?x?x?x?xi1>
  %88 = mp.and %76, %87 : (tensor<1x1x?x?xi1>, tensor<?x?x?x?xi1>) -> tensor<?x?x?x?xi1>
  %90 = mp.unsqueeze %44 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %91 = mp.constant dense<-1> : tensor<1xi64>
  %93 = mp.unsqueeze %37 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %95 = mp.unsqueeze %41 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %96 = mp.concat %90, %91, %93, %95 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %99 = mp.constant dense<1> : tensor<4xi64>
  %101 = mp.constant dense<-1> : tensor<4xi64>
  %102 = mp.equal %96, %101 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %103 = mp.where %102, %99, %96 : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %104 = mp.expand %88, %103 : (tensor<?x?x?x?xi1>, tensor<4xi64>) -> tensor<?x?x?x?xi1>
  %140 = mp.shape %a5 : tensor<?x?x64xf32> -> tensor<3xi64>
  %141 = mp.constant dense<0> : tensor<i64>
  %142 = mp.gather %140, %141 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %143 = mp.shape %a5 : tensor<?x?x64xf32> -> tensor<3xi64>
  %144 = mp.constant dense<1> : tensor<i64>
  %145 = mp.gather %143, %144 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %147 = mp.unsqueeze %142 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %149 = mp.unsqueeze %145 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %150 = mp.constant dense<-1> : tensor<1xi64>
  %151 = mp.constant dense<16> : tensor<1xi64>
  %152 = mp.concat %147, %149, %150, %151 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %154 = mp.unsqueeze %142 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %156 = mp.unsqueeze %145 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %157 = mp.constant dense<-1> : tensor<1xi64>
  %158 = mp.constant dense<16> : tensor<1xi64>
  %159 = mp.concat %154, %156, %157, %158 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %160 = mp.reshape %a5, %152 : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %161 = mp.transpose %160 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %162 = mp.reshape %a6, %159 : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %163 = mp.transpose %162 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %164 = mp.shape %a4 : tensor<?x?x64xf32> -> tensor<3xi64>
  %165 = mp.constant dense<0> : tensor<i64>
  %166 = mp.gather %164, %165 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %167 = mp.shape %a4 : tensor<?x?x64xf32> -> tensor<3xi64>
  %168 = mp.constant dense<1> : tensor<i64>
  %169 = mp.gather %167, %168 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %171 = mp.unsqueeze %166 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %173 = mp.unsqueeze %169 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %174 = mp.constant dense<-1> : tensor<1xi64>
  %175 = mp.constant dense<16> : tensor<1xi64>
  %176 = mp.concat %171, %173, %174, %175 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %177 = mp.reshape %a4, %176 : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %178 = mp.transpose %177 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %179 = mp.concat %a2, %161 {axis = -2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x?x?x?xf32>) -> tensor<?x4x?x16xf32>
  %180 = mp.concat %a3, %163 {axis = -2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x?x?x?xf32>) -> tensor<?x4x?x16xf32>
  %184 = mp.transpose %179 {perm = array<i64: 0, 1, 3, 2>} : tensor<?x4x?x16xf32> -> tensor<?x4x16x?xf32>
  %185 = mp.constant dense<5.000000e-01> : tensor<f32>
  %186 = mp.mul %178, %185 : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %187 = mp.constant dense<5.000000e-01> : tensor<f32>
  %188 = mp.mul %184, %187 : (tensor<?x4x16x?xf32>, tensor<f32>) -> tensor<?x4x16x?xf32>
  %189 = mp.matmul %186, %188 : (tensor<?x?x?x?xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  %190 = mp.constant dense<0.000000e+00> : tensor<1xf32>
  %191 = mp.constant dense<0xFF800000> : tensor<1xf32>
  %192 = mp.where %104, %190, %191 : (tensor<?x?x?x?xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?x?xf32>
  %193 = mp.add %189, %192 : (tensor<?x4x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x4x?x?xf32>
  %194 = mp.softmax %193 {axes = array<i64: 3>} : tensor<?x4x?x?xf32> loc("/lm/transformer/h.0/attn/Softmax")
  %195 = mp.is_nan %194 : tensor<?x4x?x?xf32> -> tensor<?x4x?x?xi1>
  %196 = mp.constant dense<0.000000e+00> : tensor<1xf32>
  %197 = mp.where %195, %196, %194 : (tensor<?x4x?x?xi1>, tensor<1xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %198 = mp.matmul %197, %180 : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %198, %179, %180 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>
}

// -----

// Llama (4 query heads, 2 KV heads) by dynamo (opset 20), cut at the QKV
// projections, the rotary cos/sin and the boolean mask: K^T written as
// Reshape(Transpose(Reshape(K, [-1, T, D]), [0, 2, 1]), [B, H, D, T]),
// repeat_kv by Unsqueeze/Expand/Reshape with shapes read off other inputs
// (named dims: batch, seq), the mask filled with the float minimum, the
// NaN guard. The fused op reads the unrepeated K and V (grouped-query).
// CHECK-LABEL: func.func @llama_dynamo_layer0(
// CHECK: %[[MASK:.+]] = mp.where %arg5, %{{.+}}, %{{.+}} : (tensor<?x?x?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x?x?x?xf32>
// CHECK: %[[Q:.+]] = mp.expand %{{.+}} -> tensor<?x4x?x16xf32>
// CHECK: %[[K:.+]] = mp.expand %{{.+}} -> tensor<?x2x?x16xf32>
// CHECK: %[[V:.+]] = mp.expand %{{.+}} -> tensor<?x2x?x16xf32>
// CHECK: %[[O:[^,]+]], %[[PK:[^,]+]], %[[PV:[^,]+]], %{{[^ ]+}} = mp.attention %[[Q]], %[[K]], %[[V]] mask %[[MASK]] past(%arg1, %arg2) {scale = 2.500000e-01 : f32}
// CHECK: %[[NAN:.+]] = mp.is_nan %[[O]]
// CHECK: %[[G:.+]] = mp.where %[[NAN]], %{{.+}}, %[[O]]
// CHECK-NOT: mp.softmax
// CHECK-NOT: mp.unsqueeze
// CHECK: return %[[G]], %[[PK]], %[[PV]]
func.func @llama_dynamo_layer0(%a0: tensor<?x?xi64> {mp.dims = ["batch", "seq"]}, %a1: tensor<?x2x?x16xf32> {mp.dims = ["batch", "", "past_seq", ""]}, %a2: tensor<?x2x?x16xf32> {mp.dims = ["batch", "", "past_seq", ""]}, %a3: tensor<?x2x?x16xf32> {mp.dims = ["batch", "", "past_seq", ""]}, %a4: tensor<?x2x?x16xf32> {mp.dims = ["batch", "", "past_seq", ""]}, %a5: tensor<?x?x?x?xi1>, %a6: tensor<?x?x64xf32> {mp.dims = ["batch", "seq", ""]}, %a7: tensor<?x?x32xf32> {mp.dims = ["batch", "seq", ""]}, %a8: tensor<?x?x32xf32> {mp.dims = ["batch", "seq", ""]}, %a9: tensor<?x1x?x16xf32>, %a10: tensor<?x1x?x16xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) {
  %6 = mp.constant dense<-1> : tensor<1xi64>
  %10 = mp.constant dense<0> : tensor<1xi64>
  %11 = mp.constant dense<8> : tensor<1xi64>
  %12 = mp.constant dense<3> : tensor<1xi64>
  %13 = mp.constant dense<9223372036854775807> : tensor<1xi64>
  %14 = mp.constant dense<5.000000e-01> : tensor<f32>
  %27 = mp.constant dense<1> : tensor<1xi64>
  %28 = mp.constant dense<2> : tensor<1xi64>
  %33 = mp.constant dense<16> : tensor<1xi64>
  %34 = mp.constant dense<4> : tensor<1xi64>
  %35 = mp.constant dense<-2> : tensor<1xi64>
  %36 = mp.constant dense<-9223372036854775808> : tensor<1xi64>
  %37 = mp.constant dense<0.000000e+00> : tensor<f32>
  %38 = mp.constant dense<-3.40282347E+38> : tensor<f32>
  %39 = mp.shape %a0 {end = 2 : i64, start = 1 : i64} : tensor<?x?xi64> -> tensor<1xi64>
  %40 = mp.squeeze %39 {axes = array<i64: 0>} : tensor<1xi64> -> tensor<i64>
  %41 = mp.shape %a3 {end = 3 : i64, start = 2 : i64} : tensor<?x2x?x16xf32> -> tensor<1xi64>
  %42 = mp.squeeze %41 {axes = array<i64: 0>} : tensor<1xi64> -> tensor<i64>
  %43 = mp.shape %a4 {end = 1 : i64} : tensor<?x2x?x16xf32> -> tensor<1xi64>
  %45 = mp.add %42, %40 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %69 = mp.reshape %45, %6 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %86 = mp.concat %43, %39, %6, %33 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %87 = mp.reshape %a6, %86 {allowzero = true} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %88 = mp.transpose %87 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %90 = mp.reshape %a7, %86 {allowzero = true} : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %91 = mp.transpose %90 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %93 = mp.reshape %a8, %86 {allowzero = true} : (tensor<?x?x32xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %94 = mp.transpose %93 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %97 = mp.mul %88, %a9 : (tensor<?x?x?x?xf32>, tensor<?x1x?x16xf32>) -> tensor<?x?x?x16xf32>
  %98 = mp.slice %88, %10, %11 axes %12 steps %27 : (tensor<?x?x?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
  %99 = mp.slice %88, %11, %13 axes %12 steps %27 : (tensor<?x?x?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
  %100 = mp.neg %99 : tensor<?x?x?x?xf32>
  %101 = mp.concat %100, %98 {axis = -1 : i64} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %102 = mp.mul %101, %a10 : (tensor<?x?x?x?xf32>, tensor<?x1x?x16xf32>) -> tensor<?x?x?x16xf32>
  %103 = mp.add %97, %102 : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %104 = mp.mul %91, %a9 : (tensor<?x?x?x?xf32>, tensor<?x1x?x16xf32>) -> tensor<?x?x?x16xf32>
  %105 = mp.slice %91, %10, %11 axes %12 steps %27 : (tensor<?x?x?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
  %106 = mp.slice %91, %11, %13 axes %12 steps %27 : (tensor<?x?x?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
  %107 = mp.neg %106 : tensor<?x?x?x?xf32>
  %108 = mp.concat %107, %105 {axis = -1 : i64} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %109 = mp.mul %108, %a10 : (tensor<?x?x?x?xf32>, tensor<?x1x?x16xf32>) -> tensor<?x?x?x16xf32>
  %110 = mp.add %104, %109 : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %111 = mp.concat %a1, %110 {axis = -2 : i64} : (tensor<?x2x?x16xf32>, tensor<?x?x?x16xf32>) -> tensor<?x2x?x16xf32>
  %112 = mp.concat %a2, %94 {axis = -2 : i64} : (tensor<?x2x?x16xf32>, tensor<?x?x?x?xf32>) -> tensor<?x2x?x16xf32>
  %113 = mp.unsqueeze %111 {axes = array<i64: 2>} : tensor<?x2x?x16xf32> -> tensor<?x2x1x?x16xf32>
  %114 = mp.concat %43, %28, %28, %69, %33 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi64>
  %115 = mp.expand %113, %114 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x?x?x?x?xf32>
  %116 = mp.concat %43, %34, %69, %33 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %117 = mp.reshape %115, %116 {allowzero = true} : (tensor<?x?x?x?x?xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %118 = mp.unsqueeze %112 {axes = array<i64: 2>} : tensor<?x2x?x16xf32> -> tensor<?x2x1x?x16xf32>
  %119 = mp.expand %118, %114 : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x?x?x?x?xf32>
  %120 = mp.reshape %119, %116 {allowzero = true} : (tensor<?x?x?x?x?xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %121 = mp.shape %117 : tensor<?x?x?x?xf32> -> tensor<4xi64>
  %122 = mp.slice %121, %6, %13 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %123 = mp.slice %121, %35, %6 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %124 = mp.slice %121, %36, %35 : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %125 = mp.concat %6, %123, %122 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %126 = mp.reshape %117, %125 : (tensor<?x?x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %127 = mp.transpose %126 {perm = array<i64: 0, 2, 1>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %128 = mp.concat %124, %122, %123 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %129 = mp.reshape %127, %128 : (tensor<?x?x?xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %130 = mp.mul %103, %14 : (tensor<?x?x?x16xf32>, tensor<f32>) -> tensor<?x?x?x16xf32>
  %131 = mp.mul %129, %14 : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %132 = mp.where %a5, %37, %38 : (tensor<?x?x?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %133 = mp.matmul %130, %131 : (tensor<?x?x?x16xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %134 = mp.add %133, %132 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %135 = mp.softmax %134 {axes = array<i64: 3>} : tensor<?x?x?x?xf32> loc("node_Softmax_236")
  %136 = mp.is_nan %135 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi1>
  %137 = mp.where %136, %37, %135 : (tensor<?x?x?x?xi1>, tensor<f32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %138 = mp.matmul %137, %120 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %138, %111, %112 : tensor<?x?x?x?xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
}

// -----

// Llama fp16 by TorchScript, cut after the rotary embedding (the types of
// the cut values sharpened to the model's heads): the half scores are
// widened to f32 for the f32 0/-inf mask, the softmax and its NaN guard,
// and V too for P.V. The fused op reads the half Q, K, V with the boolean
// the mask was selected by (f32 softmax); its output is widened and then
// guarded.
// CHECK-LABEL: func.func @llama_ts_fp16_layer0(
// CHECK: %[[O:[^,]+]], %[[PK:[^,]+]], %[[PV:[^,]+]], %{{[^ ]+}} = mp.attention %arg4, %arg5, %arg3 mask %arg2 past(%arg0, %arg1) {scale = 2.500000e-01 : f32, softmax_precision = f32} : (tensor<?x4x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>, tensor<?x?x?x?xi1>,
// CHECK: %[[W:.+]] = mp.cast %[[O]] {to = f32}
// CHECK: %[[NAN:.+]] = mp.is_nan %[[W]]
// CHECK: %[[G:.+]] = mp.where %[[NAN]], %{{.+}}, %[[W]]
// CHECK-NOT: mp.softmax
// CHECK: return %[[G]], %[[PK]], %[[PV]]
func.func @llama_ts_fp16_layer0(%a0: tensor<?x2x?x16xf16> {mp.dims = ["batch", "", "past_seq", ""]}, %a1: tensor<?x2x?x16xf16> {mp.dims = ["batch", "", "past_seq", ""]}, %a2: tensor<?x?x?x?xi1>, %a3: tensor<?x2x?x16xf16>, %a4: tensor<?x4x?x16xf16>, %a5: tensor<?x2x?x16xf16>) -> (tensor<?x?x?x?xf32>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>) {
  %199 = mp.concat %a0, %a5 {axis = -2 : i64} : (tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>) -> tensor<?x2x?x16xf16>
  %200 = mp.concat %a1, %a3 {axis = -2 : i64} : (tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>) -> tensor<?x2x?x16xf16>
  %204 = mp.shape %199 : tensor<?x2x?x16xf16> -> tensor<4xi64>
  %205 = mp.constant dense<0> : tensor<i64>
  %206 = mp.gather %204, %205 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %207 = mp.shape %199 : tensor<?x2x?x16xf16> -> tensor<4xi64>
  %208 = mp.constant dense<1> : tensor<i64>
  %209 = mp.gather %207, %208 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %210 = mp.shape %199 : tensor<?x2x?x16xf16> -> tensor<4xi64>
  %211 = mp.constant dense<2> : tensor<i64>
  %212 = mp.gather %210, %211 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %213 = mp.shape %199 : tensor<?x2x?x16xf16> -> tensor<4xi64>
  %214 = mp.constant dense<3> : tensor<i64>
  %215 = mp.gather %213, %214 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %217 = mp.unsqueeze %199 {axes = array<i64: 2>} : tensor<?x2x?x16xf16> -> tensor<?x2x1x?x16xf16>
  %219 = mp.unsqueeze %206 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %221 = mp.unsqueeze %209 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %222 = mp.constant dense<2> : tensor<1xi64>
  %224 = mp.unsqueeze %212 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %226 = mp.unsqueeze %215 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %227 = mp.concat %219, %221, %222, %224, %226 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi64>
  %230 = mp.constant dense<1> : tensor<5xi64>
  %232 = mp.constant dense<-1> : tensor<5xi64>
  %233 = mp.equal %227, %232 : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
  %234 = mp.where %233, %230, %227 : (tensor<5xi1>, tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  %235 = mp.expand %217, %234 : (tensor<?x2x1x?x16xf16>, tensor<5xi64>) -> tensor<?x?x?x?x?xf16>
  %236 = mp.constant dense<2> : tensor<i64>
  %237 = mp.mul %209, %236 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %239 = mp.unsqueeze %206 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %241 = mp.unsqueeze %237 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %243 = mp.unsqueeze %212 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %245 = mp.unsqueeze %215 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %246 = mp.concat %239, %241, %243, %245 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %247 = mp.reshape %235, %246 : (tensor<?x?x?x?x?xf16>, tensor<4xi64>) -> tensor<?x?x?x?xf16>
  %248 = mp.shape %200 : tensor<?x2x?x16xf16> -> tensor<4xi64>
  %249 = mp.constant dense<0> : tensor<i64>
  %250 = mp.gather %248, %249 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %251 = mp.shape %200 : tensor<?x2x?x16xf16> -> tensor<4xi64>
  %252 = mp.constant dense<1> : tensor<i64>
  %253 = mp.gather %251, %252 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %254 = mp.shape %200 : tensor<?x2x?x16xf16> -> tensor<4xi64>
  %255 = mp.constant dense<2> : tensor<i64>
  %256 = mp.gather %254, %255 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %257 = mp.shape %200 : tensor<?x2x?x16xf16> -> tensor<4xi64>
  %258 = mp.constant dense<3> : tensor<i64>
  %259 = mp.gather %257, %258 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %261 = mp.unsqueeze %200 {axes = array<i64: 2>} : tensor<?x2x?x16xf16> -> tensor<?x2x1x?x16xf16>
  %263 = mp.unsqueeze %250 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %265 = mp.unsqueeze %253 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %266 = mp.constant dense<2> : tensor<1xi64>
  %268 = mp.unsqueeze %256 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %270 = mp.unsqueeze %259 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %271 = mp.concat %263, %265, %266, %268, %270 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi64>
  %274 = mp.constant dense<1> : tensor<5xi64>
  %276 = mp.constant dense<-1> : tensor<5xi64>
  %277 = mp.equal %271, %276 : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
  %278 = mp.where %277, %274, %271 : (tensor<5xi1>, tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  %279 = mp.expand %261, %278 : (tensor<?x2x1x?x16xf16>, tensor<5xi64>) -> tensor<?x?x?x?x?xf16>
  %280 = mp.constant dense<2> : tensor<i64>
  %281 = mp.mul %253, %280 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %283 = mp.unsqueeze %250 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %285 = mp.unsqueeze %281 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %287 = mp.unsqueeze %256 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %289 = mp.unsqueeze %259 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  %290 = mp.concat %283, %285, %287, %289 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %291 = mp.reshape %279, %290 : (tensor<?x?x?x?x?xf16>, tensor<4xi64>) -> tensor<?x?x?x?xf16>
  %292 = mp.transpose %247 {perm = array<i64: 0, 1, 3, 2>} : tensor<?x?x?x?xf16> -> tensor<?x?x?x?xf16>
  %293 = mp.constant dense<5.000000e-01> : tensor<f16>
  %294 = mp.mul %a4, %293 : (tensor<?x4x?x16xf16>, tensor<f16>) -> tensor<?x?x?x16xf16>
  %295 = mp.constant dense<5.000000e-01> : tensor<f16>
  %296 = mp.mul %292, %295 : (tensor<?x?x?x?xf16>, tensor<f16>) -> tensor<?x?x?x?xf16>
  %297 = mp.matmul %294, %296 : (tensor<?x?x?x16xf16>, tensor<?x?x?x?xf16>) -> tensor<?x?x?x?xf16>
  %298 = mp.constant dense<0.000000e+00> : tensor<1xf32>
  %299 = mp.constant dense<0xFF800000> : tensor<1xf32>
  %300 = mp.where %a2, %298, %299 : (tensor<?x?x?x?xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?x?xf32>
  %301 = mp.cast %297 {to = f32} : tensor<?x?x?x?xf16> -> tensor<?x?x?x?xf32>
  %302 = mp.add %301, %300 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %303 = mp.softmax %302 {axes = array<i64: 3>} : tensor<?x?x?x?xf32> loc("/lm/model/layers.0/self_attn/Softmax")
  %304 = mp.is_nan %303 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xi1>
  %305 = mp.constant dense<0.000000e+00> : tensor<1xf32>
  %306 = mp.where %304, %305, %303 : (tensor<?x?x?x?xi1>, tensor<1xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %307 = mp.cast %291 {to = f32} : tensor<?x?x?x?xf16> -> tensor<?x?x?x?xf32>
  %308 = mp.matmul %306, %307 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %308, %199, %200 : tensor<?x?x?x?xf32>, tensor<?x2x?x16xf16>, tensor<?x2x?x16xf16>
}

// -----

// The SDPA export's tail with the probabilities also returned (as
// output_attentions asks of eager attention): a near miss, left alone.
// CHECK-LABEL: func.func @nan_guard_probs_returned(
// CHECK: mp.softmax
// CHECK-NOT: mp.attention
func.func @nan_guard_probs_returned(%q: tensor<1x4x3x16xf32>, %k: tensor<1x4x3x16xf32>, %v: tensor<1x4x3x16xf32>, %keep: tensor<1x1x3x3xi1>) -> (tensor<1x4x3x16xf32>, tensor<1x4x3x3xf32>) {
  %kt = mp.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x3x16xf32> -> tensor<1x4x16x3xf32>
  %half = mp.constant dense<5.000000e-01> : tensor<f32>
  %qs = mp.mul %q, %half : (tensor<1x4x3x16xf32>, tensor<f32>) -> tensor<1x4x3x16xf32>
  %ks = mp.mul %kt, %half : (tensor<1x4x16x3xf32>, tensor<f32>) -> tensor<1x4x16x3xf32>
  %s = mp.matmul %qs, %ks : (tensor<1x4x3x16xf32>, tensor<1x4x16x3xf32>) -> tensor<1x4x3x3xf32>
  %zero = mp.constant dense<0.000000e+00> : tensor<1xf32>
  %ninf = mp.constant dense<0xFF800000> : tensor<1xf32>
  %m = mp.where %keep, %zero, %ninf : (tensor<1x1x3x3xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
  %a = mp.add %s, %m : (tensor<1x4x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = mp.softmax %a {axes = array<i64: 3>} : tensor<1x4x3x3xf32> loc("softmax_probs_returned")
  %nan = mp.is_nan %p : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xi1>
  %g = mp.where %nan, %zero, %p : (tensor<1x4x3x3xi1>, tensor<1xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %o = mp.matmul %g, %v : (tensor<1x4x3x3xf32>, tensor<1x4x3x16xf32>) -> tensor<1x4x3x16xf32>
  return %o, %p : tensor<1x4x3x16xf32>, tensor<1x4x3x3xf32>
}

// -----

// A classifier's softmax is not attention: not reported.
func.func @classifier(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %p = mp.softmax %x {axes = array<i64: 1>} : tensor<2x10xf32> loc("classifier_softmax")
  return %p : tensor<2x10xf32>
}


// The whole file as one module: thirteen sites and two com.microsoft ops
// fuse (one site causal), seven are near misses, each with its reason, named
// by its ONNX node (or location), and one com.microsoft op is kept.
// SUMMARY: mp-fuse-attention: fused 15 attention site(s), 7 near miss(es), 1 com.microsoft attention op(s) kept
// REPORT:      "fused": [
// REPORT:        "nodes": [
// REPORT-NEXT:     "qk",
// REPORT-NEXT:     "scale",
// REPORT-NEXT:     "softmax",
// REPORT-NEXT:     "pv"
// REPORT:        "causal": true,
// REPORT:          "nan-guard",
// REPORT-NEXT:     "scale-on-q-and-k",
// REPORT-NEXT:     "additive-mask",
// REPORT-NEXT:     "past-concat"
// REPORT-NEXT:   ],
// REPORT-NEXT:   "softmax": "/lm/transformer/h.0/attn/Softmax"
// REPORT:          "nan-guard",
// REPORT-NEXT:     "scale-on-q-and-k",
// REPORT-NEXT:     "k-transposed-by-reshapes",
// REPORT-NEXT:     "repeat-kv",
// REPORT-NEXT:     "additive-mask",
// REPORT-NEXT:     "past-concat"
// REPORT-NEXT:   ],
// REPORT-NEXT:   "softmax": "node_Softmax_236"
// REPORT:          "nan-guard",
// REPORT-NEXT:     "widened-scores",
// REPORT-NEXT:     "scale-on-q-and-k",
// REPORT-NEXT:     "repeat-kv",
// REPORT-NEXT:     "bool-mask",
// REPORT-NEXT:     "past-concat"
// REPORT-NEXT:   ],
// REPORT-NEXT:   "softmax": "/lm/model/layers.0/self_attn/Softmax"
// REPORT:        "pattern": [
// REPORT-NEXT:     "com.microsoft.Attention"
// REPORT:        "pattern": [
// REPORT-NEXT:     "com.microsoft.MultiHeadAttention"
// REPORT:      "kept": [
// REPORT:        "op": "com.microsoft.MultiHeadAttention",
// REPORT-NEXT:   "reason": "packed or projected Q/K/V (only 3-D query, key and value map to mp.attention)"
// REPORT:      "near_misses": [
// REPORT:        "reason": "softmax is not on the last axis",
// REPORT-NEXT:   "softmax": "softmax_axis"
// REPORT:        "reason": "the scale is not a scalar constant",
// REPORT-NEXT:   "softmax": "softmax_per_head"
// REPORT:        "reason": "the raw scores have another consumer",
// REPORT-NEXT:   "softmax": "softmax_escape"
// REPORT:        "reason": "the mask fill is a finite value above -1e30, not -inf",
// REPORT-NEXT:   "softmax": "softmax_fill"
// REPORT:        "reason": "the scale comes after the mask",
// REPORT-NEXT:   "softmax": "softmax_late_scale"
// REPORT:        "reason": "the softmax result has another consumer",
// REPORT-NEXT:   "softmax": "softmax_probs_returned"
// REPORT-NOT: classifier_softmax

// An unwritable report path is an error naming the file.
// RUN: not mp-opt %s --mp-fuse-attention="report=%t.missing/dir/r.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADPATH
// BADPATH: error: cannot write the fusion report '{{.*}}r.json': {{.+}}

// -----

// com.microsoft Attention as onnxruntime-genai writes GPT-2 (trimmed from
// ../shared/models/genai_gpt2_fp32_contrib_attention_past): the packed
// projection becomes MatMul, Add and three Slices, the stacked past is split
// by Gather and stacked again after the op, the 2-D mask_index adds
// mask_filter_value where it is 0, and unidirectional is is_causal.
// CHECK-LABEL: func.func @contrib_attention_gpt2(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x32xf32>, %[[W:[^:]*]]: tensor<32x96xf32>, %[[B:[^:]*]]: tensor<96xf32>, %[[M:[^:]*]]: tensor<?x?xi32>, %[[P:[^:]*]]: tensor<2x?x4x?x8xf32>
// CHECK: %[[QKV:.*]] = mp.matmul %[[X]], %[[W]]
// CHECK: %[[QKVB:.*]] = mp.add %[[QKV]], %[[B]]
// CHECK: %[[Q:.*]] = mp.slice %[[QKVB]]
// CHECK: %[[K:.*]] = mp.slice %[[QKVB]]
// CHECK: %[[V:.*]] = mp.slice %[[QKVB]]
// CHECK: %[[PK:.*]] = mp.gather %[[P]]
// CHECK: %[[PV:.*]] = mp.gather %[[P]]
// CHECK: %[[DROP:.*]] = mp.less_or_equal %[[M]]
// CHECK: %[[FILL:.*]] = mp.where %[[DROP]]
// CHECK: %[[MASK:.*]] = mp.unsqueeze %[[FILL]] {axes = array<i64: 1, 2>}
// CHECK: %[[Y:.*]], %[[NK:.*]], %[[NV:.*]], %{{.*}} = mp.attention %[[Q]], %[[K]], %[[V]] mask %[[MASK]] past(%[[PK]], %[[PV]]) {is_causal = true, kv_num_heads = 4 : i64, q_num_heads = 4 : i64}
// CHECK: %[[SK:.*]] = mp.unsqueeze %[[NK]] {axes = array<i64: 0>}
// CHECK: %[[SV:.*]] = mp.unsqueeze %[[NV]] {axes = array<i64: 0>}
// CHECK: %[[PRESENT:.*]] = mp.concat %[[SK]], %[[SV]] {axis = 0 : i64}
// CHECK-NOT: mp.ms.attention
// CHECK: return %[[Y]], %[[PRESENT]]
func.func @contrib_attention_gpt2(%x: tensor<?x?x32xf32>, %w: tensor<32x96xf32>, %b: tensor<96xf32>, %mask: tensor<?x?xi32>, %past: tensor<2x?x4x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<2x?x4x?x8xf32>) {
  %y, %present = mp.ms.attention %x, %w bias %b mask_index %mask past %past {mask_filter_value = -3.40282347E+38 : f32, num_heads = 4 : i64, unidirectional = true} : (tensor<?x?x32xf32>, tensor<32x96xf32>, tensor<96xf32>, tensor<?x?xi32>, tensor<2x?x4x?x8xf32>) -> (tensor<?x?x32xf32>, tensor<2x?x4x?x8xf32>)
  return %y, %present : tensor<?x?x32xf32>, tensor<2x?x4x?x8xf32>
}

// -----

// com.microsoft MultiHeadAttention as onnxruntime-genai writes Llama
// (trimmed from ../shared/models/genai_llama_fp16_mha_extdata): 3-D Q/K/V,
// attention_bias as the mask, the caches as the op's past and present.
// CHECK-LABEL: func.func @contrib_multi_head_attention_llama(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<?x?x16xf16>, %[[K:[^:]*]]: tensor<?x?x16xf16>, %[[V:[^:]*]]: tensor<?x?x16xf16>, %[[BIAS:[^:]*]]: tensor<?x?x?x?xf16>, %[[PK:[^:]*]]: tensor<?x1x?x16xf16>, %[[PV:[^:]*]]: tensor<?x1x?x16xf16>
// CHECK: %[[Y:.*]], %[[NK:.*]], %[[NV:.*]], %{{.*}} = mp.attention %[[Q]], %[[K]], %[[V]] mask %[[BIAS]] past(%[[PK]], %[[PV]]) {kv_num_heads = 1 : i64, q_num_heads = 1 : i64, scale = 2.500000e-01 : f32}
// CHECK: return %[[Y]], %[[NK]], %[[NV]]
func.func @contrib_multi_head_attention_llama(%q: tensor<?x?x16xf16>, %k: tensor<?x?x16xf16>, %v: tensor<?x?x16xf16>, %bias: tensor<?x?x?x?xf16>, %pk: tensor<?x1x?x16xf16>, %pv: tensor<?x1x?x16xf16>) -> (tensor<?x?x16xf16>, tensor<?x1x?x16xf16>, tensor<?x1x?x16xf16>) {
  %y, %nk, %nv = mp.ms.multi_head_attention %q key %k value %v attention_bias %bias past_key %pk past_value %pv {num_heads = 1 : i64, scale = 2.500000e-01 : f32} : (tensor<?x?x16xf16>, tensor<?x?x16xf16>, tensor<?x?x16xf16>, tensor<?x?x?x?xf16>, tensor<?x1x?x16xf16>, tensor<?x1x?x16xf16>) -> (tensor<?x?x16xf16>, tensor<?x1x?x16xf16>, tensor<?x1x?x16xf16>)
  return %y, %nk, %nv : tensor<?x?x16xf16>, tensor<?x1x?x16xf16>, tensor<?x1x?x16xf16>
}

// -----

// Packed QKV ([B, S, N, 3, H]) has no mp.attention form: the op stays for
// its own lowering (the report lists it under "kept").
// CHECK-LABEL: func.func @contrib_packed_qkv_kept(
// CHECK-NOT: mp.attention
// CHECK: mp.ms.multi_head_attention
// CHECK-NOT: mp.attention
func.func @contrib_packed_qkv_kept(%qkv: tensor<1x4x2x3x8xf32>) -> tensor<1x4x16xf32> {
  %y, %nk, %nv = mp.ms.multi_head_attention %qkv {num_heads = 2 : i64} : (tensor<1x4x2x3x8xf32>) -> (tensor<1x4x16xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return %y : tensor<1x4x16xf32>
}
