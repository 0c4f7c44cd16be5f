//===- ValueProbe.h - what every node of a model computes ------*- C++ -*-===//
//
// Runs a model built with mp-expose-values and hands back every node's
// float outputs by node key: calibration measures their ranges on the fp32
// build (mp-run --calibrate), the precision diff compares the fp32 and
// mixed builds node by node (mp-run --precision-diff).
//
//===----------------------------------------------------------------------===//

#ifndef MP_EXECUTION_VALUEPROBE_H
#define MP_EXECUTION_VALUEPROBE_H

#include "mp/Execution/JitModel.h"
#include "mp/Precision/ValueRanges.h"

#include <string>
#include <vector>

namespace mp {

/// One output of one node, widened to f32.
struct ProbedValue {
  std::string key;
  unsigned result = 0;
  HostTensor value;
};

/// Runs `model` (loaded with ModelOptions::exposeValues) on named `inputs`:
/// `outputs` receives the graph's outputs, `values` every exposed node
/// output in program order. False with a diagnostic on error.
bool runProbed(JitModel &model, llvm::ArrayRef<HostTensor> inputs,
               std::vector<HostTensor> &outputs,
               std::vector<ProbedValue> &values);

/// Runs `model` as runProbed does on each of the input `sets` (named here)
/// and hands each run's values to `visit`. False with a diagnostic on error.
bool probeSets(JitModel &model, llvm::ArrayRef<std::vector<HostTensor>> sets,
               llvm::function_ref<void(llvm::ArrayRef<ProbedValue>)> visit);

/// The input sets under each of `dirs`: a folder with input_N.pb files is
/// one set; a model folder holds one set per test_data_set_* folder in it.
/// False with `error` when a folder holds no inputs or a file is unreadable.
bool readInputSets(llvm::ArrayRef<std::string> dirs, mlir::MLIRContext *ctx,
                   std::vector<std::vector<HostTensor>> &sets,
                   std::string &error);

/// Measures the ranges of every node output of the fp32 build of `path`
/// (with `options`' attention fusion and caches; precision and exposure are
/// set here) over the input `sets`. False with a diagnostic on error.
bool calibrate(mlir::MLIRContext *ctx, llvm::StringRef path,
               ModelOptions options,
               llvm::ArrayRef<std::vector<HostTensor>> sets,
               ValueRanges &ranges);

} // namespace mp

#endif // MP_EXECUTION_VALUEPROBE_H
