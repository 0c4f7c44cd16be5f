//===- JitModel.cpp - an ONNX model JIT-compiled for the CPU --------------===//

#include "mp/Execution/JitModel.h"
#include "mp/Execution/CpuRunner.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace mp {

/// Variants kept per model; a decoder called with growing lengths would
/// otherwise keep one JIT per length.
constexpr size_t kMaxVariants = 8;

JitModel::~JitModel() = default;

std::unique_ptr<JitModel> JitModel::load(MLIRContext *ctx, StringRef path,
                                         const ModelOptions &options) {
  std::unique_ptr<OnnxModel> model = OnnxModel::load(ctx, path, options);
  if (!model)
    return nullptr;
  auto jit = std::unique_ptr<JitModel>(new JitModel());
  jit->model = std::move(model);
  return jit;
}

CpuRunner *JitModel::variantFor(ArrayRef<HostTensor> inputs) {
  if (!model->checkInputs(inputs))
    return nullptr;
  std::string key = model->variantKey(inputs);
  auto it = variants.find(key);
  if (it != variants.end())
    return it->second.get();

  std::vector<HostTensor> runtimeInputs;
  OwningOpRef<ModuleOp> module = model->buildVariant(inputs, runtimeInputs);
  if (!module)
    return nullptr;
  std::unique_ptr<CpuRunner> runner = CpuRunner::compile(
      std::move(module), runtimeInputs, model->entryOptions());
  if (!runner)
    return nullptr;
  if (variants.size() >= kMaxVariants) {
    variants.erase(variantOrder.front());
    variantOrder.erase(variantOrder.begin());
  }
  variantOrder.push_back(key);
  return (variants[key] = std::move(runner)).get();
}

bool JitModel::prepare(ArrayRef<HostTensor> inputs) {
  return variantFor(inputs) != nullptr;
}

bool JitModel::run(ArrayRef<HostTensor> inputs,
                   std::vector<HostTensor> &outputs) {
  CpuRunner *runner = variantFor(inputs);
  if (!runner)
    return false;
  // The runner takes its arguments by name; compiled-in inputs are not
  // among them.
  std::string error;
  if (!runner->run(inputs, outputs, error))
    return emitError(model->fileLoc()) << error, false;
  return true;
}

} // namespace mp
