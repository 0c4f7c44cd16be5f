// Mixed precision on the real models of ../shared/models: contractions in
// f16, the report totals, and the plan round trip.
// REQUIRES: shared-models

// RUN: mp-opt %shared_models/genai_gpt2_fp32_contrib_attention_past/model.onnx --mp-mixed-precision="report=1 plan=%t.gpt2.json" -o %t.gpt2.a.mlir 2>&1 | FileCheck %s --check-prefix=GPT2
// RUN: mp-opt %shared_models/genai_gpt2_fp32_contrib_attention_past/model.onnx --mp-mixed-precision="policy=%t.gpt2.json" -o %t.gpt2.b.mlir
// RUN: diff %t.gpt2.a.mlir %t.gpt2.b.mlir
// GPT2: mp precision report: @main_graph
// GPT2: Attention allow 5 5 0
// GPT2: MatMul allow 16 16 0
// GPT2: SkipLayerNormalization infer 10 10 0
// GPT2: nodes in f16: 37 / 37; casts: 11; fp16 share of matmul/conv FLOPs: 100.0%
// GPT2-NEXT: weights: 0.54 MiB -> 0.27 MiB; keep-io-types: yes

// RUN: mp-opt %shared_models/silero_vad_op18_ifless/model.onnx --mp-mixed-precision="report=1 plan=%t.silero.json" -o %t.silero.a.mlir 2>&1 | FileCheck %s --check-prefix=SILERO
// RUN: mp-opt %shared_models/silero_vad_op18_ifless/model.onnx --mp-mixed-precision="policy=%t.silero.json" -o %t.silero.b.mlir
// RUN: diff %t.silero.a.mlir %t.silero.b.mlir
// SILERO: mp precision report: @main_graph
// SILERO: Conv allow 12 12 0
// SILERO: Gemm allow 4 4 0
// SILERO: If clear 1 1 0
// SILERO: Pow deny 4 0 4
// SILERO: nodes in f16: 79 / 87; casts: 10; fp16 share of matmul/conv FLOPs: 100.0%
// SILERO-NEXT: weights: 2.08 MiB -> 1.04 MiB; keep-io-types: yes

// RUN: mp-opt %shared_models/openwakeword_hello_deepa/model.onnx --mp-mixed-precision="report=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OWW
// OWW: Gemm allow 3 3 0
// OWW: Pow deny 2 0 2
// OWW: nodes in f16: 9 / 25; casts: 6; fp16 share of matmul/conv FLOPs: 100.0%
// OWW-NEXT: weights: 0.30 MiB -> 0.15 MiB; keep-io-types: yes

// RUN: mp-opt %shared_models/local_attn23_kv/model.onnx --mp-mixed-precision -o - | FileCheck %s --check-prefix=ATTN
// ATTN: mp.attention {{.*}}compute = f16, accumulate = f32, cls = allow

// RUN: mp-opt %shared_models/local_attn23_gqa_fp16/model.onnx --mp-mixed-precision="report=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GQA
// GQA: nodes in f16: 1 / 1; casts: 0;

// The fp16 Llama: all MatMuls and attention stay f16. An fp16 model needs
// no casts: its mask subgraph (fp16 in the model) must not be moved to f32
// (see the report of the test session; expected behaviour, kept last).
// RUN: mp-opt %shared_models/genai_llama_fp16_mha_extdata/model.onnx --mp-mixed-precision="report=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LLAMA
// LLAMA: MatMul allow 15 15 0
// LLAMA: MultiHeadAttention allow 2 2 0
// LLAMA: nodes in f16: {{[0-9]+}} / 42; casts: 0;
