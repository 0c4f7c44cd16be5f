//===- AttentionImporters.cpp - attention and rotary embeddings -----------===//

#include "../NodeImporter.h"

using namespace mlir;

namespace mp::import {
namespace {

FloatAttr optionalScale(NodeContext &n) {
  return n.hasAttr("scale") ? n.f32Attr("scale", 0) : FloatAttr();
}

/// ONNX Attention-23/24. Opset 24 added nonpad_kv_seqlen (input 6).
FailureOr<ValueList> importAttention(NodeContext &n) {
  FailureOr<Value> q = n.required(0, "Q"), k = n.required(1, "K"),
                   v = n.required(2, "V");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  TypeAttr softmaxPrecision;
  if (n.hasAttr("softmax_precision")) {
    Type t = convertElementType(n.ctx(), n.getInt("softmax_precision", 1));
    if (!t || !isa<FloatType>(t))
      return n.error() << "softmax_precision must be a float type";
    softmaxPrecision = TypeAttr::get(t);
  }
  Value nonpad = n.since >= 24 ? n.in(6) : Value();
  return n.results<AttentionOp>(
      *q, *k, *v, n.in(3), n.in(4), n.in(5), nonpad, Value(),
      n.boolAttr("is_causal", false), n.i64Attr("q_num_heads", 0),
      n.i64Attr("kv_num_heads", 0), n.i64Attr("qk_matmul_output_mode", 0),
      optionalScale(n), n.f32Attr("softcap", 0.0f), softmaxPrecision);
}

FailureOr<ValueList> importRotary(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X"), cos = n.required(1, "cos_cache"),
                   sin = n.required(2, "sin_cache");
  if (failed(x) || failed(cos) || failed(sin))
    return failure();
  return n.results<RotaryEmbeddingOp>(*x, *cos, *sin, n.in(3),
                                      n.boolAttr("interleaved", false),
                                      n.i64Attr("num_heads", 0),
                                      n.i64Attr("rotary_embedding_dim", 0));
}

FailureOr<ValueList> importMsRotary(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input"), pos = n.required(1, "position_ids"),
                   cos = n.required(2, "cos_cache"), sin = n.required(3, "sin_cache");
  if (failed(x) || failed(pos) || failed(cos) || failed(sin))
    return failure();
  // `scale` and `is_packed_batching` are read and left unused by
  // onnxruntime's kernels, which define this op: the rotation is the same
  // whatever they say (checked against onnxruntime 1.32's CPU kernel).
  return n.results<MsRotaryEmbeddingOp>(
      *x, *pos, *cos, *sin, n.boolAttr("interleaved", false),
      n.i64Attr("num_heads", 0), n.i64Attr("rotary_embedding_dim", 0));
}

FailureOr<ValueList> importMsAttention(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input"), w = n.required(1, "weights");
  if (failed(x) || failed(w))
    return failure();
  if (!n.hasAttr("num_heads"))
    return n.error() << "attribute 'num_heads' is required";
  // onnxruntime implements these two only in its CUDA kernel; its CPU
  // kernel refuses them too.
  if (n.getInt("do_rotary", 0))
    return n.error() << "do_rotary is not supported (onnxruntime computes it "
                        "only on CUDA): export the model with "
                        "com.microsoft MultiHeadAttention and RotaryEmbedding";
  if (n.getInt("past_present_share_buffer", 0))
    return n.error() << "past_present_share_buffer is not supported "
                        "(onnxruntime computes it only on CUDA): pass a past "
                        "of exactly the filled positions instead";
  // Input 6, past_sequence_length, only matters with a shared buffer.
  return n.results<MsAttentionOp>(
      *x, *w, n.in(2), n.in(3), n.in(4), n.in(5), n.i64Attr("num_heads", 0),
      n.boolAttr("unidirectional", false), optionalScale(n),
      n.f32Attr("mask_filter_value", -10000.0f),
      n.intsAttr(n.getInts("qkv_hidden_sizes")));
}

FailureOr<ValueList> importMultiHeadAttention(NodeContext &n) {
  FailureOr<Value> q = n.required(0, "query");
  if (failed(q))
    return failure();
  if (n.in(8) || n.in(9))
    return n.error() << "past_sequence_length and cache_indirection (beam "
                        "search) are not supported";
  if (!n.hasAttr("num_heads"))
    return n.error() << "attribute 'num_heads' is required";
  return n.results<MultiHeadAttentionOp>(
      *q, n.in(1), n.in(2), n.in(3), n.in(4), n.in(5), n.in(6), n.in(7),
      n.i64Attr("num_heads", 0), optionalScale(n),
      n.boolAttr("unidirectional", false),
      n.f32Attr("mask_filter_value", -10000.0f));
}

FailureOr<ValueList> importGroupQueryAttention(NodeContext &n) {
  FailureOr<Value> q = n.required(0, "query"), seqlens = n.required(5, "seqlens_k"),
                   total = n.required(6, "total_sequence_length");
  if (failed(q) || failed(seqlens) || failed(total))
    return failure();
  return n.results<GroupQueryAttentionOp>(
      *q, n.in(1), n.in(2), n.in(3), n.in(4), *seqlens, *total, n.in(7),
      n.in(8), n.in(9), n.in(10), n.in(11), n.i64Attr("num_heads", 0),
      n.i64Attr("kv_num_heads", 0), optionalScale(n),
      n.boolAttr("do_rotary", false), n.boolAttr("rotary_interleaved", false),
      n.i64Attr("local_window_size", -1), n.f32Attr("softcap", 0.0f),
      n.boolAttr("smooth_softmax", false));
}

} // namespace

void registerAttentionImporters(OpTable &t) {
  t.add("Attention", {23, 24}, importAttention);
  t.add("RotaryEmbedding", {23}, importRotary);
  t.add("com.microsoft", "Attention", {1}, importMsAttention);
  t.add("com.microsoft", "MultiHeadAttention", {1}, importMultiHeadAttention);
  t.add("com.microsoft", "GroupQueryAttention", {1}, importGroupQueryAttention);
  t.add("com.microsoft", "RotaryEmbedding", {1}, importMsRotary);
}

} // namespace mp::import
