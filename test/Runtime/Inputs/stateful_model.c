// A hand-written CPU library whose run keeps its data in the library image
// while it works, as generated CUDA wrappers keep device buffers and a
// graph across runs: two runs of one image that overlap would mix their
// data. y = 2 * x + 1 on float[64], with a sleep of 1 ms between reading x
// and writing y; `window` (int64[2]) receives the run's start and end in
// CLOCK_MONOTONIC nanoseconds, so that a test sees which runs overlapped.
#define _POSIX_C_SOURCE 200809L

#include "mp/runtime.h"

#include <string.h>
#include <time.h>

static const int64_t kShape[] = {64};
static const int64_t kWindowShape[] = {2};
static const mp_tensor_desc kInputs[] = {{"x", MP_DTYPE_FLOAT32, 1, kShape}};
static const mp_tensor_desc kOutputs[] = {
    {"y", MP_DTYPE_FLOAT32, 1, kShape},
    {"window", MP_DTYPE_INT64, 1, kWindowShape}};
static const mp_model_desc kDesc = {
    MP_ABI_VERSION, "cpu", "fp32", "stateful.onnx", 1, kInputs, 2,
    kOutputs,       0,     NULL};

static float scratch[64];

static int64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int32_t mp_model_run(const void *const *inputs, void *const *outputs) {
  int64_t start = now();
  memcpy(scratch, inputs[0], sizeof(scratch));
  struct timespec pause = {0, 1000000};
  nanosleep(&pause, NULL);
  float *y = outputs[0];
  for (int i = 0; i < 64; ++i)
    y[i] = 2 * scratch[i] + 1;
  int64_t *window = outputs[1];
  window[0] = start;
  window[1] = now();
  return MP_OK;
}

const mp_model_desc *mp_model_describe(void) { return &kDesc; }
