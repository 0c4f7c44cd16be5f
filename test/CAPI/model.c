// The C API from C: load, describe, run, and the error paths.
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_src_include -L%mp_lib \
// RUN:   -lMPCAPI -Wl,-rpath,%mp_lib -o %t
// RUN: printf '{"op_types": {"Softmax": "deny",' > %t.corrupt.json
// RUN: printf '{"op_types": {"Softmax": "fast"}}' > %t.badclass.json
// RUN: %t %S/../Execution/Inputs/add_matmul_softmax.onnx %t.corrupt.json %t.badclass.json \
// RUN:   %S/Inputs/scalar_loss.onnxtext %t.ranges.json \
// RUN:   | FileCheck %s
// RUN: FileCheck %s --check-prefix=RANGES < %t.ranges.json

#include "mp-c/Model.h"

#include <stdio.h>
#include <string.h>

static void report(const char *what, int rc, char *error) {
  printf("%s: rc=%d %s\n", what, rc, error ? error : "(no message)");
  mpFreeString(error);
}

int main(int argc, char **argv) {
  MpModel *model = NULL;
  char *error = NULL;
  if (mpModelLoad(argv[1], "fp32", NULL, &model, &error)) {
    report("load", 1, error);
    return 1;
  }
  // CHECK: inputs: x <f4 [2 4], w <f4 [4 3]
  printf("inputs:");
  for (size_t i = 0; i < mpModelNumInputs(model); ++i) {
    MpTensor t = mpModelInput(model, i);
    printf("%s %s %s [%lld %lld]", i ? "," : "", t.name, t.dtype,
           (long long)t.shape[0], (long long)t.shape[1]);
  }
  printf("\n");

  // x = 1..8, w = identity-like; sum = x + b with b = [0.5, -0.25, 1, 0].
  float x[8], w[12] = {0};
  for (int i = 0; i < 8; ++i)
    x[i] = (float)(i + 1);
  for (int i = 0; i < 3; ++i)
    w[i * 3 + i] = 1;
  int64_t xs[2] = {2, 4}, ws[2] = {4, 3};
  MpTensor inputs[2] = {{"w", "<f4", 2, ws, w, sizeof(w)},
                        {"x", "<f4", 2, xs, x, sizeof(x)}};
  MpResult *result = NULL;
  if (mpModelRun(model, inputs, 2, &result, &error)) {
    report("run", 1, error);
    return 1;
  }
  // CHECK-NEXT: sum <f4 [2 4]: 1.5 1.75 4 4 5.5 5.75 8 8
  // CHECK-NEXT: probs <f4 [2 3]
  for (size_t i = 0; i < mpResultNumOutputs(result); ++i) {
    MpTensor t = mpResultOutput(result, i);
    printf("%s %s [%lld %lld]", t.name, t.dtype, (long long)t.shape[0],
           (long long)t.shape[1]);
    if (!strcmp(t.name, "sum"))
      for (int k = 0; k < 8; ++k)
        printf("%s %g", k ? "" : ":", ((const float *)t.data)[k]);
    printf("\n");
  }
  mpResultDestroy(result);

  // CHECK-NEXT: short data: rc=1 input 'x' is f32[2, 4], which takes 32 bytes, but 16 were given
  inputs[1].nbytes = 16;
  report("short data", mpModelRun(model, inputs, 2, &result, &error), error);
  inputs[1].nbytes = sizeof(x);
  // CHECK-NEXT: bad dtype: rc=1 input 'x' has dtype '<c8', which mp does not support
  inputs[1].dtype = "<c8";
  report("bad dtype", mpModelRun(model, inputs, 2, &result, &error), error);
  inputs[1].dtype = "<f4";
  // CHECK-NEXT: missing: rc=1 {{.*}}add_matmul_softmax.onnx:0:0: error: missing input 'x' ('tensor<2x4xf32>')
  report("missing", mpModelRun(model, inputs, 1, &result, &error), error);
  // CHECK-NEXT: null result: rc=1 mpModelRun: model, inputs and result must not be NULL
  report("null result", mpModelRun(model, inputs, 2, NULL, &error), error);
  mpModelDestroy(model);

  // CHECK-NEXT: no file: rc=1 {{.*}}nonexistent.onnx:0:0: error: cannot open model file
  report("no file", mpModelLoad("nonexistent.onnx", "fp32", NULL, &model, &error), error);
  // CHECK-NEXT: bad precision: rc=1 precision must be 'fp32' or 'mixed', got 'int8'
  report("bad precision", mpModelLoad(argv[1], "int8", NULL, &model, &error), error);

  // mpModelLoadWithOptions: NULL options are the defaults; every failure
  // leaves *model NULL and says what to fix.
  if (mpModelLoadWithOptions(argv[1], NULL, &model, &error)) {
    report("defaults", 1, error);
    return 1;
  }
  // CHECK-NEXT: defaults: 2 inputs, 2 outputs
  printf("defaults: %zu inputs, %zu outputs\n", mpModelNumInputs(model),
         mpModelNumOutputs(model));
  mpModelDestroy(model);
  MpModelOptions o;
  memset(&o, 0, sizeof o);
  o.precision = "mixed";
  o.policy = argv[2];
  model = (MpModel *)&o; // must be reset to NULL on failure
  // CHECK-NEXT: corrupt policy: rc=1 {{.*}}: error: {{.*}}.corrupt.json: invalid JSON: [1:32, byte=32]: Expected object key
  report("corrupt policy", mpModelLoadWithOptions(argv[1], &o, &model, &error), error);
  // CHECK-NEXT: model after failure: NULL
  printf("model after failure: %s\n", model ? "set" : "NULL");
  // CHECK-NEXT: bad class: rc=1 {{.*}}.badclass.json:1:{{[0-9]+}}: op_types.Softmax: unknown class 'fast' (expected allow, infer, deny or clear)
  o.policy = argv[3];
  report("bad class", mpModelLoadWithOptions(argv[1], &o, &model, &error), error);
  // CHECK-NEXT: missing policy: rc=1 {{.*}}: error: cannot read policy file 'nonexistent-policy.json': No such file or directory
  o.policy = "nonexistent-policy.json";
  report("missing policy", mpModelLoadWithOptions(argv[1], &o, &model, &error), error);
  o.policy = NULL;
  // CHECK-NEXT: negative max_seq_len: rc=1 max_seq_len must be positive, got -4
  o.maxSeqLen = -4;
  report("negative max_seq_len", mpModelLoadWithOptions(argv[1], &o, &model, &error), error);
  o.maxSeqLen = 0;
  // CHECK-NEXT: bad training step: rc=1 {{.*}}: error: mp-build-training-step: the model has no output named 'nosuch'; its outputs are 'sum', 'probs'
  o.trainingStep = "loss=nosuch optimizer=sgd";
  report("bad training step", mpModelLoadWithOptions(argv[1], &o, &model, &error), error);
  // CHECK-NEXT: training, non-scalar loss: rc=1 {{.*}}: error: mp-build-training-step: the loss 'sum' must be one float element, got 'tensor<2x4xf32>'
  report("training, non-scalar loss",
         mpModelLoadTraining(argv[1], "fp32", NULL, "loss=sum optimizer=sgd", NULL, &model,
                             &error),
         error);
  // CHECK-NEXT: training, bad loss scaling: rc=1 {{.*}}scalar_loss.onnxtext:0:0: error: mp-insert-loss-scaling: unknown mode 'bogus' (expected dynamic or static)
  report("training, bad loss scaling",
         mpModelLoadTraining(argv[4], "mixed", NULL, "loss=loss optimizer=sgd", "mode=bogus",
                             &model, &error),
         error);
  // A good training step loads (the model's parameters become its inputs).
  if (mpModelLoadTraining(argv[4], "mixed", NULL, "loss=loss optimizer=sgd", "mode=dynamic",
                          &model, &error)) {
    report("training", 1, error);
    return 1;
  }
  // CHECK-NEXT: training: {{[1-9][0-9]*}} inputs
  printf("training: %zu inputs\n", mpModelNumInputs(model));
  mpModelDestroy(model);
  // mpCalibrate: two input sets, then a mixed load that reads the ranges.
  float big[12] = {1e5f}; // x @ big reaches 7e5: beyond fp16
  MpTensor sets[4] = {{"x", "<f4", 2, xs, x, sizeof x},
                      {"w", "<f4", 2, ws, big, sizeof big},
                      {"x", "<f4", 2, xs, x, sizeof x},
                      {"w", "<f4", 2, ws, w, sizeof w}};
  size_t sizes[2] = {2, 2};
  // CHECK-NEXT: calibrate: rc=0 (no message)
  error = NULL; // report() freed the last message
  report("calibrate", mpCalibrate(argv[1], NULL, sets, sizes, 2, argv[5], &error), error);
  // RANGES: "kind": "mp-calibration",
  // RANGES: "samples": 2
  memset(&o, 0, sizeof o);
  o.precision = "mixed";
  o.ranges = argv[5];
  if (mpModelLoadWithOptions(argv[1], &o, &model, &error)) {
    report("load with ranges", 1, error);
    return 1;
  }
  result = NULL;
  // CHECK-NEXT: run with ranges: rc=0 (no message)
  error = NULL;
  report("run with ranges", mpModelRun(model, sets, 2, &result, &error), error);
  mpResultDestroy(result);
  mpModelDestroy(model);
  // CHECK-NEXT: calibrate, no sets: rc=1 mpCalibrate: no calibration inputs
  report("calibrate, no sets", mpCalibrate(argv[1], NULL, sets, sizes, 0, argv[5], &error), error);
  // CHECK-NEXT: calibrate, no output: rc=1 mpCalibrate: path, inputs, set sizes and rangesOut must not be NULL
  report("calibrate, no output", mpCalibrate(argv[1], NULL, sets, sizes, 2, NULL, &error), error);
  MpTensor bad = {"x", "<f8", 2, xs, x, sizeof x};
  // CHECK-NEXT: calibrate, bad input: rc=1 calibration set 0: input 'x' is f64[2, 4], which takes 64 bytes, but 32 were given
  report("calibrate, bad input", mpCalibrate(argv[1], NULL, &bad, sizes, 1, argv[5], &error), error);
  // CHECK-NEXT: ranges without mixed: rc=1 {{.*}}: error: calibration ranges and plans only apply to mixed precision
  o.precision = "fp32";
  report("ranges without mixed", mpModelLoadWithOptions(argv[1], &o, &model, &error), error);
  // CHECK-NEXT: null model: rc=1 mpModelLoad: path and model must not be NULL
  report("null model", mpModelLoadWithOptions(argv[1], NULL, NULL, &error), error);
  // CHECK-NEXT: version: 0.1.0
  printf("version: %s\n", mpVersion());
  return 0;
}
