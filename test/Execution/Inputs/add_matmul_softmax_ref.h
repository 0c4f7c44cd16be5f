// The outputs of add_matmul_softmax.onnx computed in C, for the C tests that
// run it (test/CAPI/threads.c, test/Runtime/threads.c): sum = x + b exactly,
// probs = softmax(sum . w) along the last axis, in double.

#ifndef MP_TEST_ADD_MATMUL_SOFTMAX_REF_H
#define MP_TEST_ADD_MATMUL_SOFTMAX_REF_H

#include <math.h>

/// Whether sum (2x4) and probs (2x3) are the model's outputs for x (2x4) and
/// w (4x3): sum exactly, probs to 1e-5.
static int addMatmulSoftmaxMatches(const float *x, const float *w,
                                   const float *sum, const float *probs) {
  static const float kB[4] = {0.5f, -0.25f, 1.0f, 0.0f};
  float expected[8];
  for (int i = 0; i < 8; ++i) {
    expected[i] = x[i] + kB[i % 4];
    if (sum[i] != expected[i])
      return 0;
  }
  for (int r = 0; r < 2; ++r) {
    double logits[3], max = -INFINITY, total = 0;
    for (int c = 0; c < 3; ++c) {
      logits[c] = 0;
      for (int k = 0; k < 4; ++k)
        logits[c] += (double)expected[r * 4 + k] * w[k * 3 + c];
      max = fmax(max, logits[c]);
    }
    for (int c = 0; c < 3; ++c)
      total += exp(logits[c] - max);
    for (int c = 0; c < 3; ++c)
      if (fabs(probs[r * 3 + c] - exp(logits[c] - max) / total) > 1e-5)
        return 0;
  }
  return 1;
}

#endif // MP_TEST_ADD_MATMUL_SOFTMAX_REF_H
