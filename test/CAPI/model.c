// The C API from C: load, describe, run, and the error paths.
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_src_include -L%mp_lib \
// RUN:   -lMPCAPI -Wl,-rpath,%mp_lib -o %t
// RUN: %t %S/../Execution/Inputs/add_matmul_softmax.onnx | FileCheck %s

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
  // CHECK-NEXT: version: 0.1.0
  printf("version: %s\n", mpVersion());
  return 0;
}
