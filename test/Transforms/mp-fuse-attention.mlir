// Decomposed attention becomes mp.attention; look-alikes are left alone
// and reported as near misses with the reason.
// RUN: mp-opt %s -split-input-file --mp-fuse-attention | FileCheck %s
// RUN: mp-opt %s --mp-fuse-attention="report=%t.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

// As the TTS decoder writes it: K transposed, scores scaled by Mul.
// CHECK-LABEL: func.func @mul_scale(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<1x4x1x32xf32>, %[[K:[a-z0-9]+]]: tensor<1x4x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<1x4x16x32xf32>
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

// Near miss: Where fills with -10000, not -inf (a fully masked row would
// differ).
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

// A classifier's softmax is not attention: not reported.
func.func @classifier(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %p = mp.softmax %x {axes = array<i64: 1>} : tensor<2x10xf32> loc("classifier_softmax")
  return %p : tensor<2x10xf32>
}


// The whole file as one module: six sites fuse (one of them causal), five
// are near misses,
// each with its reason, named by its ONNX node (or location).
// SUMMARY: mp-fuse-attention: fused 7 attention site(s), 5 near miss(es)
// REPORT:      "fused": [
// REPORT:        "nodes": [
// REPORT-NEXT:     "qk",
// REPORT-NEXT:     "scale",
// REPORT-NEXT:     "softmax",
// REPORT-NEXT:     "pv"
// REPORT:        "causal": true,
// REPORT:      "near_misses": [
// REPORT:        "reason": "softmax is not on the last axis",
// REPORT-NEXT:   "softmax": "softmax_axis"
// REPORT:        "reason": "the scale is not a scalar constant",
// REPORT-NEXT:   "softmax": "softmax_per_head"
// REPORT:        "reason": "the raw scores have another consumer",
// REPORT-NEXT:   "softmax": "softmax_escape"
// REPORT:        "reason": "the mask fill is a finite value, not -inf",
// REPORT-NEXT:   "softmax": "softmax_fill"
// REPORT:        "reason": "the scale comes after the mask",
// REPORT-NEXT:   "softmax": "softmax_late_scale"
// REPORT-NOT: classifier_softmax

// An unwritable report path is an error naming the file.
// RUN: not mp-opt %s --mp-fuse-attention="report=%t.missing/dir/r.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADPATH
// BADPATH: error: cannot write the fusion report '{{.*}}r.json': {{.+}}
