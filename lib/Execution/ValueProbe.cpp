//===- ValueProbe.cpp - what every node of a model computes ---------------===//

#include "mp/Execution/ValueProbe.h"
#include "mp/Import/TensorFile.h"
#include "mp/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace mlir;

namespace mp {

bool runProbed(JitModel &model, ArrayRef<HostTensor> inputs,
               std::vector<HostTensor> &outputs,
               std::vector<ProbedValue> &values) {
  std::vector<HostTensor> all;
  if (!model.run(inputs, all))
    return false;
  // The graph's own outputs come first, the exposed values after them.
  size_t graphOutputs = model.outputs().size();
  values.clear();
  outputs.assign(std::make_move_iterator(all.begin()),
                 std::make_move_iterator(all.begin() +
                                         std::min(graphOutputs, all.size())));
  for (size_t i = graphOutputs; i < all.size(); ++i) {
    ProbedValue v;
    StringRef key;
    if (!parseExposedValueName(all[i].name, key, v.result))
      return emitError(model.source().fileLoc())
                 << "output '" << all[i].name
                 << "' is not an exposed node value",
             false;
    v.key = key.str();
    v.value =
        all[i].elementType.isF32() ? std::move(all[i]) : widenToF32(all[i]);
    values.push_back(std::move(v));
  }
  return true;
}

static bool readInputSet(StringRef dir, MLIRContext *ctx,
                         std::vector<HostTensor> &set, std::string &error) {
  for (const std::string &file : numberedFiles(dir, "input")) {
    HostTensor t;
    if (!readTensorFile(file, ctx, t, error))
      return false;
    set.push_back(std::move(t));
  }
  return true;
}

bool readInputSets(ArrayRef<std::string> dirs, MLIRContext *ctx,
                   std::vector<std::vector<HostTensor>> &sets,
                   std::string &error) {
  for (const std::string &dir : dirs) {
    if (!llvm::sys::fs::is_directory(dir)) {
      error = "'" + dir + "' is not a folder";
      return false;
    }
    std::vector<std::string> setDirs;
    if (!numberedFiles(dir, "input").empty()) {
      setDirs.push_back(dir);
    } else {
      std::error_code ec;
      for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
           it.increment(ec))
        if (llvm::sys::path::filename(it->path())
                .starts_with("test_data_set_") &&
            !numberedFiles(it->path(), "input").empty())
          setDirs.push_back(it->path());
      llvm::sort(setDirs);
    }
    if (setDirs.empty()) {
      error = "'" + dir +
              "' holds no inputs (input_N.pb, or test_data_set_* folders "
              "with them)";
      return false;
    }
    for (const std::string &setDir : setDirs) {
      sets.emplace_back();
      if (!readInputSet(setDir, ctx, sets.back(), error))
        return false;
    }
  }
  return true;
}

bool calibrate(MLIRContext *ctx, StringRef path, ModelOptions options,
               ArrayRef<std::vector<HostTensor>> sets, ValueRanges &ranges) {
  options.mixed = false;
  options.policyFile.clear();
  options.rangesFile.clear();
  options.planFile.clear();
  options.exposeValues = true;
  std::unique_ptr<JitModel> model = JitModel::load(ctx, path, options);
  if (!model)
    return false;
  return probeSets(*model, sets, [&](ArrayRef<ProbedValue> values) {
    for (const ProbedValue &v : values)
      ranges.add(
          v.key, v.result,
          ArrayRef<float>(reinterpret_cast<const float *>(v.value.data.data()),
                          v.value.numElements()));
    ranges.countSample();
  });
}

bool probeSets(JitModel &model, ArrayRef<std::vector<HostTensor>> sets,
               llvm::function_ref<void(ArrayRef<ProbedValue>)> visit) {
  for (std::vector<HostTensor> inputs : sets) {
    std::vector<HostTensor> outputs;
    std::vector<ProbedValue> values;
    if (!model.nameInputs(inputs) || !runProbed(model, inputs, outputs, values))
      return false;
    visit(values);
  }
  return true;
}

} // namespace mp
