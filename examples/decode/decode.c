/*===- decode.c - greedy decoding over the mp runtime C API ---------------===*
 *
 * The C form of decode.py: runs the libraries of compile_decoder.py with
 * the runtime alone (no Python, no MLIR).
 *
 *   mp-decode-example OUT_DIR/libprefill.so OUT_DIR/libstep.so STEPS TOKEN...
 *
 * The prompt runs once through libprefill.so; its presents are copied into
 * the KV cache buffers of libstep.so (N positions each), which then runs
 * once per token with the caches passed as both input and output, so that
 * each step writes only its new position. Prints the tokens and the decode
 * rate. Batch 1; exits with the mp_status of a failed call.
 *
 *===----------------------------------------------------------------------===*/

#include "mp/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_PREFIX "past_key_values."

/* The buffers of one library's inputs and outputs, as described. */
typedef struct {
  mp_library *lib;
  const mp_model_desc *desc;
  void **inputs, **outputs;
} model;

static size_t numElements(const mp_tensor_desc *t) {
  size_t n = 1;
  for (int32_t d = 0; d < t->rank; ++d)
    n *= (size_t)t->shape[d];
  return n;
}

static size_t tensorBytes(const mp_tensor_desc *t) {
  return numElements(t) * mp_dtype_size(t->dtype);
}

static int fail(const char *what) {
  fprintf(stderr, "mp-decode-example: error: %s\n", what);
  return 2;
}

static int failStatus(mp_status status) {
  fprintf(stderr, "mp-decode-example: error: %s\n", mp_last_error());
  return (int)status;
}

static int find(const mp_tensor_desc *list, int32_t n, const char *name) {
  for (int32_t i = 0; i < n; ++i)
    if (strcmp(list[i].name, name) == 0)
      return i;
  return -1;
}

/* Opens `path` and gives every input and output a zeroed buffer (at least
   one byte, so that empty caches have a pointer). */
static mp_status openModel(const char *path, model *m) {
  mp_status status = mp_library_open(path, &m->lib);
  if (status != MP_OK)
    return status;
  m->desc = mp_library_describe(m->lib);
  if (mp_library_has_dynamic_shapes(m->lib)) {
    fprintf(stderr, "mp-decode-example: '%s' has dynamic dims: compile it with "
                    "compile_decoder.py\n", path);
    return MP_ERROR_INVALID;
  }
  m->inputs = calloc((size_t)m->desc->num_inputs + 1, sizeof(void *));
  m->outputs = calloc((size_t)m->desc->num_outputs + 1, sizeof(void *));
  for (int32_t i = 0; i < m->desc->num_inputs; ++i)
    m->inputs[i] = calloc(tensorBytes(&m->desc->inputs[i]) + 1, 1);
  for (int32_t i = 0; i < m->desc->num_outputs; ++i)
    m->outputs[i] = calloc(tensorBytes(&m->desc->outputs[i]) + 1, 1);
  return MP_OK;
}

static void closeModel(model *m, const int *sharedOutputs) {
  if (!m->lib)
    return;
  for (int32_t i = 0; i < m->desc->num_inputs; ++i)
    free(m->inputs[i]);
  for (int32_t i = 0; i < m->desc->num_outputs; ++i)
    if (!sharedOutputs || !sharedOutputs[i])
      free(m->outputs[i]);
  free(m->inputs);
  free(m->outputs);
  mp_library_close(m->lib);
}

static float halfToFloat(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude = exponent == 0    ? ldexpf((float)mantissa, -24)
                    : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                     : ldexpf((float)(mantissa | 0x400),
                                              exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

/* The argmax of the last position's logits [1, seq, vocab]. */
static int64_t lastArgmax(const mp_tensor_desc *t, const void *data) {
  int64_t seq = t->shape[1], vocab = t->shape[2], best = 0;
  float bestValue = -INFINITY;
  for (int64_t v = 0; v < vocab; ++v) {
    size_t at = (size_t)((seq - 1) * vocab + v);
    float x = t->dtype == MP_DTYPE_FLOAT16
                  ? halfToFloat(((const uint16_t *)data)[at])
                  : ((const float *)data)[at];
    if (x > bestValue) {
      bestValue = x;
      best = v;
    }
  }
  return best;
}

static void setInt64(model *m, const char *name, int64_t index, int64_t v) {
  int i = find(m->desc->inputs, m->desc->num_inputs, name);
  if (i >= 0)
    ((int64_t *)m->inputs[i])[index] = v;
}

int main(int argc, char **argv) {
  if (argc < 5)
    return fail("usage: mp-decode-example LIBPREFILL LIBSTEP STEPS TOKEN...");
  int steps = atoi(argv[3]), promptLen = argc - 4;
  if (steps < 1)
    return fail("STEPS must be at least 1");
  model prefill = {0}, step = {0};
  mp_status status = openModel(argv[1], &prefill);
  if (status == MP_OK)
    status = openModel(argv[2], &step);
  if (status != MP_OK)
    return failStatus(status);
  const mp_model_desc *pd = prefill.desc, *sd = step.desc;
  int ids = find(pd->inputs, pd->num_inputs, "input_ids");
  int mask = find(sd->inputs, sd->num_inputs, "attention_mask");
  int fillInput = find(sd->inputs, sd->num_inputs, "past_sequence_length");
  int prefillLogits = find(pd->outputs, pd->num_outputs, "logits");
  int stepLogits = find(sd->outputs, sd->num_outputs, "logits");
  if (ids < 0 || mask < 0 || fillInput < 0 || prefillLogits < 0 ||
      stepLogits < 0)
    return fail("the libraries are not those of compile_decoder.py (input_ids, "
                "attention_mask, past_sequence_length, logits)");
  if (pd->inputs[ids].shape[1] != promptLen) {
    fprintf(stderr, "mp-decode-example: error: libprefill.so takes %lld "
                    "prompt tokens, got %d\n",
            (long long)pd->inputs[ids].shape[1], promptLen);
    return 2;
  }
  int64_t capacity = sd->inputs[mask].shape[1];
  if (promptLen + steps > capacity)
    return fail("the prompt and the steps exceed the cache positions");

  /* Prefill: the prompt at positions 0..n-1, all of it attended. */
  for (int t = 0; t < promptLen; ++t) {
    setInt64(&prefill, "input_ids", t, atoll(argv[4 + t]));
    setInt64(&prefill, "attention_mask", t, 1);
    setInt64(&prefill, "position_ids", t, t);
  }
  if ((status = mp_library_run(prefill.lib, (const void *const *)prefill.inputs,
                               prefill.outputs)) != MP_OK)
    return failStatus(status);
  int64_t *tokens = calloc((size_t)steps, sizeof(int64_t));
  tokens[0] = lastArgmax(&pd->outputs[prefillLogits],
                         prefill.outputs[prefillLogits]);

  /* The step's caches: each present is its past's buffer (in place), the
     prompt's K/V copied into the first positions of every head. */
  int *shared = calloc((size_t)sd->num_outputs + 1, sizeof(int));
  for (int32_t i = 0; i < sd->num_inputs; ++i) {
    const mp_tensor_desc *cache = &sd->inputs[i];
    if (strncmp(cache->name, CACHE_PREFIX, strlen(CACHE_PREFIX)) != 0)
      continue;
    char present[256];
    snprintf(present, sizeof present, "present.%s",
             cache->name + strlen(CACHE_PREFIX));
    int o = find(sd->outputs, sd->num_outputs, present);
    int p = find(pd->outputs, pd->num_outputs, present);
    if (o < 0 || p < 0)
      return fail("a cache input has no present output of the same name");
    size_t row = (size_t)cache->shape[3] * mp_dtype_size(cache->dtype);
    for (int64_t h = 0; h < cache->shape[1]; ++h)
      memcpy((char *)step.inputs[i] + (size_t)(h * capacity) * row,
             (char *)prefill.outputs[p] + (size_t)(h * promptLen) * row,
             (size_t)promptLen * row);
    free(step.outputs[o]);
    step.outputs[o] = step.inputs[i];
    shared[o] = 1;
  }

  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int t = 1; t < steps; ++t) {
    int64_t fill = promptLen + t - 1;
    setInt64(&step, "input_ids", 0, tokens[t - 1]);
    setInt64(&step, "position_ids", 0, fill);
    *(int64_t *)step.inputs[fillInput] = fill;
    for (int64_t j = 0; j <= fill; ++j) /* the filled slots and the new one */
      ((int64_t *)step.inputs[mask])[j] = 1;
    if ((status = mp_library_run(step.lib, (const void *const *)step.inputs,
                                 step.outputs)) != MP_OK)
      return failStatus(status);
    tokens[t] = lastArgmax(&sd->outputs[stepLogits], step.outputs[stepLogits]);
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  double seconds = (double)(end.tv_sec - start.tv_sec) +
                   1e-9 * (double)(end.tv_nsec - start.tv_nsec);

  printf("tokens:");
  for (int t = 0; t < steps; ++t)
    printf(" %lld", (long long)tokens[t]);
  printf("\ndecode: %.1f tokens/s (%d steps after the prefill)\n",
         steps > 1 ? (steps - 1) / seconds : 0.0, steps - 1);
  free(tokens);
  closeModel(&step, shared);
  closeModel(&prefill, NULL);
  free(shared);
  return 0;
}
