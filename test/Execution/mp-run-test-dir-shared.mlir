// --test-dir on the shared models: fp16 outputs are compared at fp16
// tolerances (1e-2), fp32 outputs at the ONNX runner's (1e-3 / 1e-7), so
// the fp16 models' onnxruntime references pass.
// REQUIRES: shared-models
// RUN: mp-run --test-dir %shared_models | FileCheck %s
// CHECK-DAG: PASS genai_llama_fp16_mha_extdata
// CHECK-DAG: PASS local_attn23_gqa_fp16
// CHECK: 6 passed, 0 failed, 0 skipped
