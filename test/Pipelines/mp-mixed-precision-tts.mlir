// The bundled TTS decoder (examples/tts_decoder): every MatMul runs in f16
// with fp32 accumulation, the whole graph is f16 but the KV caches' Concats
// (fp32 state from graph input to graph output), weights halve; the plan
// round trip reproduces the IR.
// RUN: mp-opt %examples/tts_decoder/model.onnx --mp-mixed-precision="report=1 plan=%t.json" -o %t.a.mlir 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s < %t.a.mlir
// RUN: mp-opt %examples/tts_decoder/model.onnx --mp-mixed-precision="policy=%t.json" -o %t.b.mlir
// RUN: diff %t.a.mlir %t.b.mlir
// RUN: FileCheck %s --check-prefix=PLAN < %t.json
// RUN: grep "compute = f32" %t.a.mlir | FileCheck %s --check-prefix=F32

// REPORT: mp precision report: @main_graph
// REPORT: LayerNormalization infer 7 7 0
// REPORT: MatMul allow 32 32 0
// REPORT: Softmax infer 4 4 0
// REPORT: nodes in f16: 126 / 130; casts: 12; fp16 share of matmul/conv FLOPs: 100.0%
// REPORT-NEXT: weights: 1.16 MiB -> 0.58 MiB; keep-io-types: yes

// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME: tensor<?x1x80xf32>
// CHECK-SAME: -> (tensor<?x1x80xf32>
// CHECK-COUNT-32: mp.matmul {{.*}}#mp.precision<compute = f16, accumulate = f32, cls = allow, rule = "allow class of MatMul">{{.*}}tensor<{{.*}}xf16>) -> tensor<{{.*}}xf16>

// F32: mp.concat %arg2, {{.*}}rule = "carries fp32 state from graph input 'past_key_0' to graph output 'present_key_0'"{{.*}}tensor<?x4x?x32xf32>
// F32-NEXT: mp.concat %arg3, {{.*}}'past_value_0' to graph output 'present_value_0'
// F32-NEXT: mp.concat %arg4, {{.*}}'past_key_1' to graph output 'present_key_1'
// F32-NEXT: mp.concat %arg5, {{.*}}'past_value_1' to graph output 'present_value_1'
// F32-NOT: compute = f32

// PLAN: "function": "main_graph",
// PLAN: "layers.0.self_attn.q_proj/MatMul": {
// PLAN-NEXT: "accumulate": "f32",
// PLAN-NEXT: "casts_in": 0,
// PLAN-NEXT: "class": "allow",
// PLAN-NEXT: "compute": "f16",
// PLAN-NEXT: "op_type": "MatMul",
// PLAN-NEXT: "rule": "allow class of MatMul",
// PLAN-NEXT: "weight_bytes_saved": 32768
// PLAN: "summary": {
// PLAN-NEXT: "casts": 12,
// PLAN-NEXT: "contraction_flops_f16_share": 1,
// PLAN: "nodes_f16": 126,
// PLAN-NEXT: "nodes_total": 130,
// PLAN-NEXT: "weight_bytes_fp32": 1211756,
// PLAN-NEXT: "weight_bytes_mixed": 605878
