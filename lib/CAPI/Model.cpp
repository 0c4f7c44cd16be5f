//===- Model.cpp - C API: compile and run ONNX models on the CPU ----------===//

#include "mp-c/Model.h"
#include "mp/Execution/CapturedDiagnostics.h"
#include "mp/Execution/JitModel.h"
#include "mp/Execution/ValueProbe.h"
#include "mp/Support/CompileCache.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mlir;

namespace {

/// Storage behind the MpTensor descriptions handed out.
struct TensorRecord {
  std::string name, dtype;
  std::vector<int64_t> shape;
  bool hasDtype = false;

  MpTensor view(const void *data = nullptr, size_t nbytes = 0) const {
    return {name.c_str(), hasDtype ? dtype.c_str() : nullptr,
            (int64_t)shape.size(), shape.data(), data, nbytes};
  }
};

TensorRecord record(StringRef name, Type type, ArrayRef<int64_t> shape) {
  TensorRecord r;
  r.name = name.str();
  if (type) {
    r.dtype = mp::npyDescr(type.isBF16() ? Float32Type::get(type.getContext())
                                         : type);
    r.hasDtype = !r.dtype.empty();
  }
  for (int64_t d : shape)
    r.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return r;
}

char *copyString(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

/// Sets *error (when the caller asked for it) and returns 1.
int failWith(char **error, const std::string &message) {
  if (error)
    *error = copyString(message.empty() ? "mp: unknown error" : message);
  return 1;
}

/// The captured diagnostics without the trailing newline.
std::string messageOf(const mp::CapturedDiagnostics &diagnostics) {
  std::string text = diagnostics.text();
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

/// Copies C tensors into host tensors; false with `message` naming the bad
/// input.
bool hostTensors(MLIRContext *ctx, const MpTensor *inputs, size_t numInputs,
                 std::vector<mp::HostTensor> &tensors, std::string &message) {
  auto fail = [&](const std::string &m) { return message = m, false; };
  for (size_t i = 0; i < numInputs; ++i) {
    const MpTensor &in = inputs[i];
    std::string label = in.name ? "input '" + std::string(in.name) + "'"
                                : "input #" + std::to_string(i);
    mp::HostTensor t;
    t.name = in.name ? in.name : "";
    t.elementType = in.dtype ? mp::npyType(in.dtype, ctx) : Type();
    if (!t.elementType)
      return fail(label + " has dtype '" + (in.dtype ? in.dtype : "(null)") +
                  "', which mp does not support");
    if (in.rank < 0 || (in.rank > 0 && !in.shape))
      return fail(label + " has no valid shape");
    t.shape.assign(in.shape, in.shape + in.rank);
    if (llvm::any_of(t.shape, [](int64_t d) { return d < 0; }))
      return fail(label + " has a negative dim");
    size_t expected =
        t.numElements() * mp::HostTensor::elementBytes(t.elementType);
    if (in.nbytes != expected || (expected && !in.data))
      return fail(label + " is " + t.describe() + ", which takes " +
                  std::to_string(expected) + " bytes, but " +
                  std::to_string(in.nbytes) + " were given");
    const char *bytes = static_cast<const char *>(in.data);
    t.data.assign(bytes, bytes + expected);
    tensors.push_back(std::move(t));
  }
  return true;
}

/// The C options as the compiler takes them (checked by the caller).
mp::ModelOptions modelOptions(const MpModelOptions &o) {
  mp::ModelOptions options;
  options.mixed = o.precision && std::string(o.precision) == "mixed";
  options.policyFile = o.policy ? o.policy : "";
  options.rangesFile = o.ranges ? o.ranges : "";
  options.trainingStep = o.trainingStep ? o.trainingStep : "";
  options.lossScaling = o.lossScaling ? o.lossScaling : "";
  options.fuseAttention = o.fuseAttention != 0;
  options.maxSeqLen = o.maxSeqLen;
  options.dynamicShapes = o.dynamicShapes != 0;
  if (!o.cacheDir)
    options.cacheDir = mp::defaultCacheDir();
  else if (std::string(o.cacheDir) != "off")
    options.cacheDir = o.cacheDir;
  return options;
}

} // namespace

struct MpModel {
  MLIRContext ctx;
  std::unique_ptr<mp::JitModel> model;
  std::vector<TensorRecord> inputs, outputs;
  /// Held by each run and by mpModelNumVariants: a run installs a
  /// diagnostic handler on `ctx`, may compile a variant into `model`'s map
  /// (or drop one) and runs code that shares the variant's buffers, so runs
  /// of one model from several threads take turns. Other models have their
  /// own context, variants and lock, and run concurrently.
  mutable std::mutex runMutex;

  explicit MpModel(const DialectRegistry &registry) : ctx(registry) {}
};

struct MpResult {
  std::vector<mp::HostTensor> tensors;
  std::vector<TensorRecord> records;
};

extern "C" {

const char *mpVersion(void) { return "0.1.0"; }

int mpModelLoad(const char *path, const char *precision, const char *policy,
                MpModel **model, char **error) {
  return mpModelLoadTraining(path, precision, policy, nullptr, nullptr, model,
                             error);
}

int mpModelLoadTraining(const char *path, const char *precision,
                        const char *policy, const char *trainingStep,
                        const char *lossScaling, MpModel **model,
                        char **error) {
  MpModelOptions options = {};
  options.precision = precision;
  options.policy = policy;
  options.trainingStep = trainingStep;
  options.lossScaling = lossScaling;
  return mpModelLoadWithOptions(path, &options, model, error);
}

int mpModelLoadWithOptions(const char *path, const MpModelOptions *given,
                           MpModel **model, char **error) {
  if (!path || !model)
    return failWith(error, "mpModelLoad: path and model must not be NULL");
  *model = nullptr;
  MpModelOptions defaults = {};
  const MpModelOptions &o = given ? *given : defaults;
  std::string prec = o.precision ? o.precision : "fp32";
  if (prec != "fp32" && prec != "mixed")
    return failWith(error, "precision must be 'fp32' or 'mixed', got '" +
                               prec + "'");
  if (o.maxSeqLen < 0)
    return failWith(error, "max_seq_len must be positive, got " +
                               std::to_string(o.maxSeqLen));
  DialectRegistry registry;
  mp::registerModelDialects(registry);
  auto handle = std::make_unique<MpModel>(registry);
  handle->ctx.printOpOnDiagnostic(false);
  mp::CapturedDiagnostics diagnostics(&handle->ctx);
  mp::ModelOptions options = modelOptions(o);
  mp::CompileProgress progress;
  if (o.progress)
    progress = [callback = o.progress, user = o.progressUser](StringRef stage,
                                                              double ms) {
      callback(stage.str().c_str(), ms, user);
    };
  mp::StageTimer loadTimer(progress);
  handle->model = mp::JitModel::load(&handle->ctx, path, options);
  if (!handle->model)
    return failWith(error, messageOf(diagnostics));
  loadTimer.done("load");
  handle->model->setProgress(std::move(progress));
  for (const mp::TensorSpec &s : handle->model->inputs())
    handle->inputs.push_back(record(s.name, s.elementType, s.shape));
  for (const mp::TensorSpec &s : handle->model->outputs())
    handle->outputs.push_back(record(s.name, s.elementType, s.shape));
  *model = handle.release();
  return 0;
}

int mpCalibrate(const char *path, const MpModelOptions *given,
                const MpTensor *inputs, const size_t *setSizes, size_t numSets,
                const char *rangesOut, char **error) {
  if (!path || !rangesOut || (numSets && (!setSizes || !inputs)))
    return failWith(error, "mpCalibrate: path, inputs, set sizes and "
                           "rangesOut must not be NULL");
  if (!numSets)
    return failWith(error, "mpCalibrate: no calibration inputs");
  MpModelOptions defaults = {};
  DialectRegistry registry;
  mp::registerModelDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false);
  mp::CapturedDiagnostics diagnostics(&ctx);
  std::vector<std::vector<mp::HostTensor>> sets(numSets);
  size_t offset = 0;
  for (size_t k = 0; k < numSets; ++k) {
    std::string message;
    if (!hostTensors(&ctx, inputs + offset, setSizes[k], sets[k], message))
      return failWith(error,
                      "calibration set " + std::to_string(k) + ": " + message);
    offset += setSizes[k];
  }
  mp::ValueRanges ranges;
  if (!mp::calibrate(&ctx, path, modelOptions(given ? *given : defaults), sets,
                     ranges))
    return failWith(error, messageOf(diagnostics));
  std::error_code ec;
  llvm::raw_fd_ostream os(rangesOut, ec);
  if (ec)
    return failWith(error, std::string("cannot write '") + rangesOut +
                               "': " + ec.message());
  os << llvm::formatv("{0:2}", ranges.toJSON(path)) << "\n";
  return 0;
}

void mpModelDestroy(MpModel *model) { delete model; }

size_t mpModelNumInputs(const MpModel *model) { return model->inputs.size(); }
MpTensor mpModelInput(const MpModel *model, size_t i) {
  return model->inputs.at(i).view();
}
size_t mpModelNumOutputs(const MpModel *model) {
  return model->outputs.size();
}
MpTensor mpModelOutput(const MpModel *model, size_t i) {
  return model->outputs.at(i).view();
}

size_t mpModelNumVariants(const MpModel *model) {
  std::lock_guard<std::mutex> lock(model->runMutex);
  return model->model->numVariants();
}

int mpModelRun(MpModel *model, const MpTensor *inputs, size_t numInputs,
               MpResult **result, char **error) {
  if (!model || !result || (numInputs && !inputs))
    return failWith(error, "mpModelRun: model, inputs and result must not "
                           "be NULL");
  *result = nullptr;
  std::lock_guard<std::mutex> lock(model->runMutex);
  std::vector<mp::HostTensor> tensors;
  std::string message;
  if (!hostTensors(&model->ctx, inputs, numInputs, tensors, message))
    return failWith(error, message);
  mp::CapturedDiagnostics diagnostics(&model->ctx);
  auto out = std::make_unique<MpResult>();
  if (!model->model->nameInputs(tensors) ||
      !model->model->run(tensors, out->tensors))
    return failWith(error, messageOf(diagnostics));
  for (mp::HostTensor &t : out->tensors) {
    if (t.elementType.isBF16())
      t = mp::widenToF32(t);
    out->records.push_back(record(t.name, t.elementType, t.shape));
  }
  *result = out.release();
  return 0;
}

size_t mpResultNumOutputs(const MpResult *result) {
  return result->tensors.size();
}
MpTensor mpResultOutput(const MpResult *result, size_t i) {
  const mp::HostTensor &t = result->tensors.at(i);
  return result->records.at(i).view(t.data.data(), t.data.size());
}
void mpResultDestroy(MpResult *result) { delete result; }

void mpFreeString(char *s) { std::free(s); }

} // extern "C"
