// mp_library_run and mp_library_run_shaped from several threads
// (runtime.h, "Threads"): one library from four threads through two
// handles of the same file, and two libraries (two files) from two threads
// at once. Every result is checked against values computed here.
//
// Inputs/stateful_model.c keeps its data in the library image during a run,
// as generated CUDA wrappers do: without the runtime's lock per loaded
// library, overlapping runs of one image mix their data (wrong > 0); the
// two libraries are loaded images of their own and their runs must
// overlap (with one lock for every library they would not).
//
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %host_cc %s -std=c11 -Wall -Werror -I%mp_runtime_include -I%S/../Execution/Inputs \
// RUN:   -L%mp_lib -lmp_runtime -lpthread -lm -Wl,-rpath,%mp_lib -o %t
// RUN: %host_cc -shared -fPIC -std=c11 -Wall -Werror -I%mp_runtime_include \
// RUN:   -L%mp_lib -lmp_runtime -Wl,-rpath,%mp_lib %S/Inputs/stateful_model.c \
// RUN:   -o %t.dir/stateful_a.so
// RUN: cp %t.dir/stateful_a.so %t.dir/stateful_b.so
// RUN: %t stateful %t.dir/stateful_a.so %t.dir/stateful_b.so \
// RUN:   | FileCheck %s --check-prefix=STATEFUL
// STATEFUL:      one library, 2 handles, 4 threads: 160 checked, 0 wrong, 0 failed
// STATEFUL-NEXT: two libraries, 2 threads: {{[0-9]+}} checked, 0 wrong, 0 failed, runs overlapped: yes
//
// A library written by mp-compile (sum = x + b, probs = softmax(sum . w)),
// and a copy of it, which loads as a second library.
// RUN: mp-compile %S/../Execution/Inputs/add_matmul_softmax.onnx \
// RUN:   -o %t.dir/libams_a.so 2>/dev/null
// RUN: cp %t.dir/libams_a.so %t.dir/libams_b.so
// RUN: %t real %t.dir/libams_a.so %t.dir/libams_b.so | FileCheck %s --check-prefix=REAL
// REAL:      one library, 2 handles, 4 threads: 160 checked, 0 wrong, 0 failed
// REAL-NEXT: two libraries, 2 threads: {{[0-9]+}} checked, 0 wrong, 0 failed

#define _POSIX_C_SOURCE 200809L

#include "mp/runtime.h"

#include "add_matmul_softmax_ref.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { kRuns = 40, kMaxRuns = 4000 };

/// "real": the mp-compile'd add_matmul_softmax.onnx; else stateful_model.c.
static int real;

typedef struct Worker {
  mp_library *lib;
  int id;
  /// Runs through mp_library_run_shaped instead of mp_library_run.
  int shaped;
  /// If set, runs on (up to kMaxRuns, 5 s) until this worker finished a
  /// run, so that the two are known to have run at the same time.
  struct Worker *peer;
  atomic_int done;
  int checked, wrong, failed;
  char error[512];
  /// The stateful library's run windows [start, end).
  int64_t windows[kMaxRuns][2];
} Worker;

static int64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/// Inputs that differ per thread and run, so that a run given another
/// run's data is caught.
static void makeInputs(int id, int run, float *x, float *w) {
  if (!real) {
    for (int i = 0; i < 64; ++i)
      x[i] = (float)(id * 10000 + run * 64 + i);
    return;
  }
  for (int i = 0; i < 8; ++i)
    x[i] = (float)((id * 131 + run * 7 + i * 3) % 17) - 8.0f;
  for (int i = 0; i < 12; ++i)
    w[i] = (float)((id * 5 + run + i) % 9) * 0.125f - 0.5f;
}

/// Whether the outputs are those of the inputs: y = 2x + 1, or sum = x + b
/// exactly and probs = softmax(sum . w) to 1e-5.
static int outputsMatch(void *const *outputs, const float *x, const float *w) {
  if (!real) {
    const float *y = outputs[0];
    for (int i = 0; i < 64; ++i)
      if (y[i] != 2 * x[i] + 1)
        return 0;
    return 1;
  }
  return addMatmulSoftmaxMatches(x, w, outputs[0], outputs[1]);
}

static pthread_barrier_t start;

static void *work(void *arg) {
  Worker *worker = arg;
  const mp_model_desc *desc = mp_library_describe(worker->lib);
  pthread_barrier_wait(&start);
  int64_t deadline = now() + 5000000000LL;
  for (int run = 0;
       run < kMaxRuns &&
       (run < kRuns || (worker->peer && !atomic_load(&worker->peer->done) &&
                        now() < deadline));
       ++run) {
    float x[64], w[12], sum[64], probs[6];
    int64_t window[2] = {0, 0};
    makeInputs(worker->id, run, x, w);
    const void *inputs[2] = {x, w};
    void *outputs[2] = {sum, real ? (void *)probs : (void *)window};
    mp_shaped_tensor shapedIn[2], shapedOut[2];
    mp_status status;
    if (worker->shaped) {
      for (int32_t i = 0; i < desc->num_inputs; ++i) {
        shapedIn[i].data = (void *)inputs[i];
        memcpy(shapedIn[i].shape, desc->inputs[i].shape,
               sizeof(int64_t) * desc->inputs[i].rank);
      }
      status = mp_library_run_shaped(worker->lib, shapedIn, shapedOut);
      for (int32_t j = 0; j < desc->num_outputs && !status; ++j)
        outputs[j] = shapedOut[j].data;
    } else {
      status = mp_library_run(worker->lib, inputs, outputs);
    }
    if (status) {
      if (!worker->failed++)
        snprintf(worker->error, sizeof(worker->error), "%d %s", status,
                 mp_last_error());
      continue;
    }
    ++worker->checked;
    worker->wrong += !outputsMatch(outputs, x, w);
    if (!real)
      memcpy(worker->windows[run], outputs[1], sizeof(window));
    if (worker->shaped)
      for (int32_t j = 0; j < desc->num_outputs; ++j)
        mp_free(outputs[j]);
    atomic_fetch_add(&worker->done, 1);
  }
  return NULL;
}

/// Runs the workers on their own threads and prints the totals.
static int runAll(const char *what, Worker *workers, int n) {
  pthread_t threads[8];
  pthread_barrier_init(&start, NULL, n);
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
  pthread_barrier_destroy(&start);
  printf("%s, %d threads: %d checked, %d wrong, %d failed", what, n, checked,
         wrong, failed);
  return 0;
}

/// Whether a run of `a` and a run of `b` overlapped in time.
static int overlapped(const Worker *a, const Worker *b) {
  for (int i = 0; i < a->checked; ++i)
    for (int j = 0; j < b->checked; ++j)
      if (a->windows[i][0] < b->windows[j][1] &&
          b->windows[j][0] < a->windows[i][1])
        return 1;
  return 0;
}

static mp_library *openLibrary(const char *path) {
  mp_library *lib = NULL;
  if (mp_library_open(path, &lib) != MP_OK)
    printf("open %s: %s\n", path, mp_last_error());
  return lib;
}

static Worker workers[4];

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  real = !strcmp(argv[1], "real");
  // One library, opened twice (one loaded image): 4 threads, 2 per
  // handle, one of each pair through mp_library_run_shaped.
  mp_library *a1 = openLibrary(argv[2]), *a2 = openLibrary(argv[2]);
  if (!a1 || !a2)
    return 1;
  for (int i = 0; i < 4; ++i) {
    workers[i].lib = i < 2 ? a1 : a2;
    workers[i].id = i;
    workers[i].shaped = i % 2;
  }
  if (runAll("one library, 2 handles", workers, 4))
    return 1;
  printf("\n");

  // Two libraries at once, each run on until the other has run.
  mp_library *b = openLibrary(argv[3]);
  if (!b)
    return 1;
  memset(workers, 0, sizeof(workers));
  workers[0].lib = a1;
  workers[1].lib = b;
  for (int i = 0; i < 2; ++i) {
    workers[i].id = 4 + i;
    workers[i].peer = &workers[1 - i];
  }
  if (runAll("two libraries", workers, 2))
    return 1;
  if (!real)
    printf(", runs overlapped: %s",
           overlapped(&workers[0], &workers[1]) ? "yes" : "no");
  printf("\n");
  mp_library_close(a1);
  mp_library_close(a2);
  mp_library_close(b);
  return 0;
}
