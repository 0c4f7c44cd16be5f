// The C API from several threads (include/mp-c/Model.h, "Threads"): two
// models run at once from two threads, and one model from four threads at
// once, its first runs (which JIT-compile its variant) included. Every
// result is checked against values computed here.
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_src_include -I%S/../Execution/Inputs -L%mp_lib \
// RUN:   -lMPCAPI -lpthread -lm -Wl,-rpath,%mp_lib -o %t
// RUN: %t %S/../Execution/Inputs/add_matmul_softmax.onnx | FileCheck %s

// CHECK: two models: 2 threads x 40 runs, 80 checked, 0 wrong, 0 failed
// CHECK-NEXT: one model: 4 threads x 40 runs, 160 checked, 0 wrong, 0 failed, 1 variant
// CHECK-NEXT: variants of the two models: 1 1

#include "mp-c/Model.h"

#include "add_matmul_softmax_ref.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { kRuns = 40 };

typedef struct {
  MpModel *model;
  int id;
  int checked, wrong, failed;
  char error[512];
} Worker;

/// Inputs that differ per thread and run, so that a run given another
/// run's data (or outputs) is caught.
static void makeInputs(int id, int run, float *x, float *w) {
  for (int i = 0; i < 8; ++i)
    x[i] = (float)((id * 131 + run * 7 + i * 3) % 17) - 8.0f;
  for (int i = 0; i < 12; ++i)
    w[i] = (float)((id * 5 + run + i) % 9) * 0.125f - 0.5f;
}

/// Whether the run's outputs are those of x and w: sum exactly, probs to
/// 1e-5.
static int outputsMatch(const MpResult *result, const float *x,
                        const float *w) {
  if (mpResultNumOutputs(result) != 2)
    return 0;
  MpTensor sum = mpResultOutput(result, 0), probs = mpResultOutput(result, 1);
  if (strcmp(sum.name, "sum") || strcmp(probs.name, "probs") ||
      sum.nbytes != 8 * sizeof(float) || probs.nbytes != 6 * sizeof(float))
    return 0;
  return addMatmulSoftmaxMatches(x, w, (const float *)sum.data,
                                 (const float *)probs.data);
}

static void *work(void *arg) {
  Worker *worker = (Worker *)arg;
  for (int run = 0; run < kRuns; ++run) {
    float x[8], w[12];
    makeInputs(worker->id, run, x, w);
    int64_t xs[2] = {2, 4}, ws[2] = {4, 3};
    MpTensor inputs[2] = {{"x", "<f4", 2, xs, x, sizeof(x)},
                          {"w", "<f4", 2, ws, w, sizeof(w)}};
    MpResult *result = NULL;
    char *error = NULL;
    if (mpModelRun(worker->model, inputs, 2, &result, &error)) {
      if (!worker->failed++)
        snprintf(worker->error, sizeof(worker->error), "%s",
                 error ? error : "(no message)");
      mpFreeString(error);
      continue;
    }
    ++worker->checked;
    worker->wrong += !outputsMatch(result, x, w);
    mpResultDestroy(result);
  }
  return NULL;
}

/// Runs the workers on their own threads and prints the totals.
static int runAll(const char *what, Worker *workers, int n) {
  pthread_t threads[8];
  for (int i = 0; i < n; ++i)
    if (pthread_create(&threads[i], NULL, work, &workers[i]))
      return printf("%s: pthread_create failed\n", what), 1;
  int checked = 0, wrong = 0, failed = 0;
  for (int i = 0; i < n; ++i) {
    pthread_join(threads[i], NULL);
    checked += workers[i].checked;
    wrong += workers[i].wrong;
    failed += workers[i].failed;
    if (workers[i].failed)
      printf("thread %d: %s\n", workers[i].id, workers[i].error);
  }
  printf("%s: %d threads x %d runs, %d checked, %d wrong, %d failed", what, n,
         kRuns, checked, wrong, failed);
  return 0;
}

static MpModel *load(const char *path) {
  MpModel *model = NULL;
  char *error = NULL;
  if (mpModelLoad(path, "fp32", NULL, &model, &error)) {
    printf("load: %s\n", error);
    mpFreeString(error);
    return NULL;
  }
  return model;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  // Two models, each compiled by its first run, concurrently.
  MpModel *a = load(argv[1]), *b = load(argv[1]);
  if (!a || !b)
    return 1;
  Worker two[2] = {{a, 0}, {b, 1}};
  if (runAll("two models", two, 2))
    return 1;
  printf("\n");

  // One new model from four threads: the first runs race to compile it.
  MpModel *one = load(argv[1]);
  if (!one)
    return 1;
  Worker four[4] = {{one, 2}, {one, 3}, {one, 4}, {one, 5}};
  if (runAll("one model", four, 4))
    return 1;
  printf(", %zu variant%s\n", mpModelNumVariants(one),
         mpModelNumVariants(one) == 1 ? "" : "s");
  printf("variants of the two models: %zu %zu\n", mpModelNumVariants(a),
         mpModelNumVariants(b));
  mpModelDestroy(one);
  mpModelDestroy(a);
  mpModelDestroy(b);
  return 0;
}
