/*===- mp-c/Model.h - C API: compile and run ONNX models on the CPU -*- C -*-===
 *
 * The stable entry point for other languages (python/mp uses it through
 * ctypes). A model is imported once; the first run with a given set of input
 * shapes JIT-compiles it for the CPU (fp32 or mixed precision) and later runs
 * with the same shapes reuse that code.
 *
 * Every function that can fail returns 0 on success and non-zero on error,
 * with a message in *error (free it with mpFreeString) that names the model
 * file, the input or the ONNX node at fault.
 *
 * Threads: a model may be run from several threads at once; its runs take
 * turns (each holds the model's lock, compiling included), and each gets its
 * own result. Separate models (each load, even of one file) run concurrently.
 * Destroying a model or result while another thread uses it is the caller's
 * error (docs/running.md, "Threads").
 *
 * Tensors are dense, row-major and in host memory. Element types are NumPy
 * dtype strings: "<f4", "<f2", "<f8", "|b1", "|i1", "<i2", "<i4", "<i8",
 * "|u1", "<u2", "<u4", "<u8". bfloat16 outputs are returned as "<f4".
 *
 *===----------------------------------------------------------------------===*/

#ifndef MP_C_MODEL_H
#define MP_C_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MP_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define MP_CAPI_EXPORT
#endif

/** An ONNX model and the code compiled for it so far. */
typedef struct MpModel MpModel;
/** The outputs of one run. */
typedef struct MpResult MpResult;

/** A tensor, or a graph input/output description (data NULL, dynamic dims
 * -1, dtype NULL when the model does not declare it). */
typedef struct {
  const char *name;
  const char *dtype;
  int64_t rank;
  const int64_t *shape;
  const void *data;
  size_t nbytes;
} MpTensor;

/** The version of the library, e.g. "0.1.0". */
MP_CAPI_EXPORT const char *mpVersion(void);

/** Loads `path` (.onnx or ONNX text). `precision` is "fp32" or "mixed";
 * `policy` is a precision policy JSON file (mixed only) or NULL. */
MP_CAPI_EXPORT int mpModelLoad(const char *path, const char *precision,
                               const char *policy, MpModel **model,
                               char **error);

/** Like mpModelLoad, but the model runs as a training step built by
 * mp-build-training-step with the options `trainingStep` (e.g.
 * "loss=loss optimizer=adamw lr=1e-3") and, unless NULL, loss scaling by
 * mp-insert-loss-scaling with `lossScaling` (e.g. "mode=dynamic"). Its
 * inputs and outputs are the step's (docs/training.md). */
MP_CAPI_EXPORT int mpModelLoadTraining(const char *path, const char *precision,
                                       const char *policy,
                                       const char *trainingStep,
                                       const char *lossScaling,
                                       MpModel **model, char **error);

/** Every load option; zero-initialize and set what you need. */
typedef struct {
  const char *precision;    /**< "fp32" (NULL) or "mixed" */
  const char *policy;       /**< precision policy JSON file, or NULL */
  const char *trainingStep; /**< mp-build-training-step options, or NULL */
  const char *lossScaling;  /**< mp-insert-loss-scaling options, or NULL */
  int fuseAttention;        /**< nonzero: mp-fuse-attention first */
  /** > 0 (with fuseAttention): KV caches of this many positions updated in
   * place; the model gains the int64 scalar input past_sequence_length
   * (docs/compile.md, "KV caches updated in place"). */
  int64_t maxSeqLen;
  /** nonzero: one compiled variant for every input shape; the model's
   * dynamic dims stay dynamic through the lowering instead of being
   * specialized per shape (docs/running.md, "Dynamic shapes"). */
  int dynamicShapes;
  /** value ranges measured by mpCalibrate (or mp-run --calibrate
   * --ranges-out), or NULL; only with precision "mixed": nodes whose values
   * would overflow fp16 keep fp32 (docs/precision.md, "Calibration"). Read
   * whenever a variant compiles: keep the file while the model is used. */
  const char *ranges;
  /** where compiled variants are kept between processes: NULL for the
   * default (MP_CACHE_DIR, else $XDG_CACHE_HOME/mp or ~/.cache/mp), "off"
   * for none, else a folder (docs/running.md, "Compile cache"). */
  const char *cacheDir;
  /** called as each compile stage ends ("import", "lowering", "LLVM",
   * "cache load", ...) with its wall time, or NULL; on the thread that
   * runs the model, with `progressUser`. */
  void (*progress)(const char *stage, double milliseconds, void *user);
  void *progressUser;
} MpModelOptions;

/** mpModelLoad with every option. `options` may be NULL (the defaults). */
MP_CAPI_EXPORT int mpModelLoadWithOptions(const char *path,
                                          const MpModelOptions *options,
                                          MpModel **model, char **error);

/** Measures every node's value range on the fp32 build of the model at
 * `path` (with `options`' attention fusion and caches; its precision,
 * policy and ranges are ignored) over `numSets` input sets and writes them
 * as JSON to `rangesOut`, for MpModelOptions::ranges. The sets lie one
 * after another in `inputs`: set k has `setSizes[k]` tensors, matched by
 * name as in mpModelRun. */
MP_CAPI_EXPORT int mpCalibrate(const char *path, const MpModelOptions *options,
                               const MpTensor *inputs, const size_t *setSizes,
                               size_t numSets, const char *rangesOut,
                               char **error);

MP_CAPI_EXPORT void mpModelDestroy(MpModel *model);

/** Graph inputs and outputs as declared. Pointers stay valid while the
 * model lives. */
MP_CAPI_EXPORT size_t mpModelNumInputs(const MpModel *model);
MP_CAPI_EXPORT MpTensor mpModelInput(const MpModel *model, size_t i);
MP_CAPI_EXPORT size_t mpModelNumOutputs(const MpModel *model);
MP_CAPI_EXPORT MpTensor mpModelOutput(const MpModel *model, size_t i);

/** How many input-shape variants are compiled and cached: a new set of
 * shapes, or new values of inputs that decide shapes, compiles another. */
MP_CAPI_EXPORT size_t mpModelNumVariants(const MpModel *model);

/** Runs the model. Inputs are matched by name; a NULL name takes the graph
 * input at that position. Every graph input must be given once, with the
 * declared dtype, rank and static dims. Safe from several threads at once:
 * runs of one model take turns, runs of separate models do not wait. */
MP_CAPI_EXPORT int mpModelRun(MpModel *model, const MpTensor *inputs,
                              size_t numInputs, MpResult **result,
                              char **error);

/** The run's outputs in graph order. Pointers stay valid until the result
 * is destroyed. */
MP_CAPI_EXPORT size_t mpResultNumOutputs(const MpResult *result);
MP_CAPI_EXPORT MpTensor mpResultOutput(const MpResult *result, size_t i);
MP_CAPI_EXPORT void mpResultDestroy(MpResult *result);

MP_CAPI_EXPORT void mpFreeString(char *s);

#ifdef __cplusplus
}
#endif

#endif /* MP_C_MODEL_H */
