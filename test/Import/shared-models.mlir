// Every real model in ../shared/models imports and verifies.
// REQUIRES: shared-models

// RUN: mp-opt %shared_models/genai_gpt2_fp32_contrib_attention_past/model.onnx | FileCheck %s --check-prefix=GPT2
// GPT2-LABEL: func.func @main_graph
// GPT2: mp.ms.embed_layer_norm
// GPT2-COUNT-5: mp.ms.attention
// GPT2: return

// RUN: mp-opt %shared_models/genai_llama_fp16_mha_extdata/model.onnx | FileCheck %s --check-prefix=LLAMA
// LLAMA-LABEL: func.func @main_graph
// LLAMA-COUNT-2: mp.ms.multi_head_attention
// LLAMA: -> tensor<?x?x32000xf16>

// RUN: mp-opt %shared_models/silero_vad_op18_ifless/model.onnx | FileCheck %s --check-prefix=SILERO
// SILERO-LABEL: func.func @main_graph
// SILERO: mp.if
// SILERO: mp.conv
// SILERO: } else {

// RUN: mp-opt %shared_models/openwakeword_hello_deepa/model.onnx | FileCheck %s --check-prefix=OWW
// OWW-LABEL: func.func @main_graph
// OWW-SAME: mp.name = "onnx::Flatten_0"
// OWW: mp.flatten
// OWW: mp.gemm
// OWW: mp.reduce_mean

// RUN: mp-opt %shared_models/local_attn23_kv/model.onnx | FileCheck %s --check-prefix=ATTN
// ATTN: mp.attention %{{.*}}, %{{.*}}, %{{.*}} past(%{{.*}}, %{{.*}}) {is_causal = true}
// ATTN-SAME: -> (tensor<1x4x1x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x1x8xf32>)

// RUN: mp-opt %shared_models/local_attn23_gqa_fp16/model.onnx | FileCheck %s --check-prefix=GQA
// GQA: mp.attention
// GQA-SAME: kv_num_heads = 2 : i64, q_num_heads = 8 : i64
// GQA-SAME: -> (tensor<1x1x128xf16>, tensor<1x2x6x16xf16>, tensor<1x2x6x16xf16>, tensor<1x8x1x6xf16>)
