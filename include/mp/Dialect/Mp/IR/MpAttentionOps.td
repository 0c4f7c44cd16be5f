//===- MpAttentionOps.td - attention and rotary embeddings -*- tablegen -*-===//

#ifndef MP_DIALECT_MP_IR_MPATTENTIONOPS_TD
#define MP_DIALECT_MP_IR_MPATTENTIONOPS_TD

include "mp/Dialect/Mp/IR/MpBase.td"

def Mp_AttentionOp : Mp_CustomInferOp<"attention", [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention with KV cache (ONNX Attention-23/24)";
  let description = [{
    Q is [B, Hq, S, D] (4-D) or [B, S, Hq*D] (3-D, with q_num_heads and
    kv_num_heads); K/V likewise with Hkv heads. `past_key`/`past_value`
    [B, Hkv, P, D] are joined with K/V along the sequence axis into
    `present_key`/`present_value` [B, Hkv, P+L, D]. Hq must be a multiple of
    Hkv (grouped-query attention). `attn_mask` is boolean (true = attend) or
    additive and broadcasts to [B, Hq, S, P+L]. `is_causal` aligns the mask
    to the bottom right when there is a past. `scale` defaults to 1/sqrt(D);
    `softcap` > 0 applies softcap*tanh(scores/softcap). `nonpad_kv_seqlen`
    (opset 24) gives the valid cache length per batch. `qk_matmul_output`
    is the score tensor selected by `qk_matmul_output_mode` (0: raw Q.K^T
    scaled, 1: after mask, 2: after softcap, 3: after softmax).

    With `past_length` (i64 scalar), `past_key`/`past_value` are caches of a
    fixed capacity N ([B, Hkv, N, D]) whose first `past_length` positions
    are valid: the new K/V are written at [past_length, past_length + L),
    `present_key`/`present_value` are the updated caches (same shape), keys
    at or beyond past_length + L are not attended, and `is_causal` lets
    query s see keys t <= past_length + s. Lowered, the write updates the
    cache buffer in place (mp-kv-cache-in-place).
  }];
  let arguments = (ins Mp_FloatTensor:$q, Mp_FloatTensor:$k, Mp_FloatTensor:$v,
                   Optional<Mp_Tensor>:$attn_mask,
                   Optional<Mp_FloatTensor>:$past_key,
                   Optional<Mp_FloatTensor>:$past_value,
                   Optional<Mp_I64Tensor>:$nonpad_kv_seqlen,
                   Optional<Mp_I64Tensor>:$past_length,
                   DefaultValuedAttr<BoolAttr, "false">:$is_causal,
                   DefaultValuedAttr<I64Attr, "0">:$q_num_heads,
                   DefaultValuedAttr<I64Attr, "0">:$kv_num_heads,
                   DefaultValuedAttr<I64Attr, "0">:$qk_matmul_output_mode,
                   OptionalAttr<F32Attr>:$scale,
                   DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                   OptionalAttr<TypeAttr>:$softmax_precision);
  let results = (outs Mp_FloatTensor:$output, Mp_FloatTensor:$present_key,
                 Mp_FloatTensor:$present_value, Mp_FloatTensor:$qk_matmul_output);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`mask` $attn_mask^)? (`past` `(` $past_key^ `,` $past_value `)`)?
    (`nonpad_kv_seqlen` $nonpad_kv_seqlen^)? (`past_length` $past_length^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_RotaryEmbeddingOp : Mp_InferOp<"rotary_embedding", [], "return ::mp::inferSameAsOperand("
    "adaptor.getOperands(), 0, inferredReturnTypes);"> {
  let summary = "rotary position embedding (ONNX RotaryEmbedding-23)";
  let description = [{
    Input [B, H, S, D] or [B, S, H*D] (with num_heads). Caches are
    [max_pos, rotary_dim/2] indexed by position_ids, or [B, S, rotary_dim/2]
    without position_ids. Only the first `rotary_embedding_dim` (0: all) of
    each head rotate; `interleaved` pairs (x0,x1),(x2,x3)... instead of halves.
  }];
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$cos_cache,
                   Mp_FloatTensor:$sin_cache, Optional<Mp_IndexTensor>:$position_ids,
                   DefaultValuedAttr<BoolAttr, "false">:$interleaved,
                   DefaultValuedAttr<I64Attr, "0">:$num_heads,
                   DefaultValuedAttr<I64Attr, "0">:$rotary_embedding_dim);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $cos_cache `,` $sin_cache (`positions` $position_ids^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_MsRotaryEmbeddingOp : Mp_InferOp<"ms.rotary_embedding", [],
    "return ::mp::inferSameAsOperand(adaptor.getOperands(), 0, "
    "inferredReturnTypes);"> {
  let summary = "com.microsoft RotaryEmbedding (position_ids first, then caches)";
  let description = [{
    position_ids is [B, S] (one position per token) or [1] (a start
    position: token s sits at start + s in every batch).
  }];
  let arguments = (ins Mp_FloatTensor:$input, Mp_IndexTensor:$position_ids,
                   Mp_FloatTensor:$cos_cache, Mp_FloatTensor:$sin_cache,
                   DefaultValuedAttr<BoolAttr, "false">:$interleaved,
                   DefaultValuedAttr<I64Attr, "0">:$num_heads,
                   DefaultValuedAttr<I64Attr, "0">:$rotary_embedding_dim);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $position_ids `,` $cos_cache `,` $sin_cache attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_MsAttentionOp : Mp_CustomInferOp<"ms.attention", [AttrSizedOperandSegments]> {
  let summary = "com.microsoft Attention: packed QKV projection, past as [2,B,N,P,H]";
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$weights,
                   Optional<Mp_FloatTensor>:$bias,
                   Optional<Mp_IndexTensor>:$mask_index,
                   Optional<Mp_FloatTensor>:$past,
                   Optional<Mp_FloatTensor>:$attention_bias,
                   I64Attr:$num_heads,
                   DefaultValuedAttr<BoolAttr, "false">:$unidirectional,
                   OptionalAttr<F32Attr>:$scale,
                   DefaultValuedAttr<F32Attr, "-10000.0">:$mask_filter_value,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$qkv_hidden_sizes);
  let results = (outs Mp_FloatTensor:$output, Mp_FloatTensor:$present);
  let assemblyFormat = [{
    $input `,` $weights (`bias` $bias^)? (`mask_index` $mask_index^)? (`past` $past^)?
    (`attention_bias` $attention_bias^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_MultiHeadAttentionOp : Mp_CustomInferOp<"ms.multi_head_attention",
    [AttrSizedOperandSegments]> {
  let summary = "com.microsoft MultiHeadAttention (separate Q, K, V; past_key/past_value)";
  let arguments = (ins Mp_FloatTensor:$query, Optional<Mp_FloatTensor>:$key,
                   Optional<Mp_FloatTensor>:$value, Optional<Mp_FloatTensor>:$bias,
                   Optional<Mp_IndexTensor>:$key_padding_mask,
                   Optional<Mp_FloatTensor>:$attention_bias,
                   Optional<Mp_FloatTensor>:$past_key,
                   Optional<Mp_FloatTensor>:$past_value,
                   I64Attr:$num_heads,
                   OptionalAttr<F32Attr>:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$unidirectional,
                   DefaultValuedAttr<F32Attr, "-10000.0">:$mask_filter_value);
  let results = (outs Mp_FloatTensor:$output, Mp_FloatTensor:$present_key,
                 Mp_FloatTensor:$present_value);
  let assemblyFormat = [{
    $query (`key` $key^)? (`value` $value^)? (`bias` $bias^)?
    (`key_padding_mask` $key_padding_mask^)? (`attention_bias` $attention_bias^)?
    (`past_key` $past_key^)? (`past_value` $past_value^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_GroupQueryAttentionOp : Mp_CustomInferOp<"ms.group_query_attention",
    [AttrSizedOperandSegments]> {
  let summary = "com.microsoft GroupQueryAttention (seqlens_k, total_sequence_length, rotary)";
  let arguments = (ins Mp_FloatTensor:$query, Optional<Mp_FloatTensor>:$key,
                   Optional<Mp_FloatTensor>:$value,
                   Optional<Mp_FloatTensor>:$past_key,
                   Optional<Mp_FloatTensor>:$past_value,
                   Mp_I32Tensor:$seqlens_k, Mp_I32Tensor:$total_sequence_length,
                   Optional<Mp_FloatTensor>:$cos_cache,
                   Optional<Mp_FloatTensor>:$sin_cache,
                   Optional<Mp_I64Tensor>:$position_ids,
                   Optional<Mp_FloatTensor>:$attention_bias,
                   Optional<Mp_FloatTensor>:$head_sink,
                   I64Attr:$num_heads, I64Attr:$kv_num_heads,
                   OptionalAttr<F32Attr>:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$do_rotary,
                   DefaultValuedAttr<BoolAttr, "false">:$rotary_interleaved,
                   DefaultValuedAttr<I64Attr, "-1">:$local_window_size,
                   DefaultValuedAttr<F32Attr, "0.0">:$softcap,
                   DefaultValuedAttr<BoolAttr, "false">:$smooth_softmax);
  let results = (outs Mp_FloatTensor:$output, Mp_FloatTensor:$present_key,
                 Mp_FloatTensor:$present_value);
  let assemblyFormat = [{
    $query (`key` $key^)? (`value` $value^)? (`past_key` $past_key^)?
    (`past_value` $past_value^)? `seqlens_k` $seqlens_k `total` $total_sequence_length
    (`cos` $cos_cache^)? (`sin` $sin_cache^)? (`position_ids` $position_ids^)?
    (`attention_bias` $attention_bias^)? (`head_sink` $head_sink^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // MP_DIALECT_MP_IR_MPATTENTIONOPS_TD
