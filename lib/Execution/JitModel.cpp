//===- JitModel.cpp - an ONNX model JIT-compiled for the CPU --------------===//

#include "mp/Execution/JitModel.h"
#include "mp/Execution/CpuRunner.h"
#include "mp/Support/CompileCache.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using llvm::json::Array;
using llvm::json::Object;

namespace mp {

/// Variants kept per model; a decoder called with growing lengths would
/// otherwise keep one JIT per length.
constexpr size_t kMaxVariants = 8;

/// The entry kind and file names of a JIT variant in the compile cache.
static constexpr llvm::StringLiteral kCacheKind = "jit";
static constexpr llvm::StringLiteral kObjectFile = "variant.o";
static constexpr llvm::StringLiteral kEntryFile = "entry.json";

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

const std::string &JitModel::modelKey() {
  if (modelKeyText)
    return *modelKeyText;
  const ModelOptions &o = model->options();
  MLIRContext *ctx = model->fileLoc()->getContext();
  std::optional<std::string> files =
      modelFilesKey(ctx, model->path(), o.policyFile, o.rangesFile);
  bool ok = !buildFingerprint().empty() && files;
  std::string key;
  llvm::raw_string_ostream os(key);
  os << "mp-jit 1\n" << buildFingerprint() << "\n" << files.value_or("");
  EntryOptions entry = model->entryOptions();
  const char *gpuMapping = std::getenv("MP_JIT_GPU_MAPPING");
  os << "mixed " << o.mixed << " expose " << o.exposeValues << " shadow "
     << o.shadowFp16 << " fuse " << o.fuseAttention << " training '"
     << o.trainingStep << "' loss-scaling '" << o.lossScaling
     << "' max-seq-len " << o.maxSeqLen << " dynamic " << o.dynamicShapes
     << " pinned '" << llvm::join(entry.pinnedInputs, ",") << "' gpu-mapping '"
     << (gpuMapping ? gpuMapping : "") << "'\n";
  modelKeyText = ok ? key : std::string();
  return *modelKeyText;
}

/// Diagnostics as the cache keeps them: severity, place and message.
static llvm::json::Value diagnosticToJSON(Diagnostic &d) {
  Object out{{"severity", d.getSeverity() == DiagnosticSeverity::Warning
                              ? "warning"
                              : "remark"},
             {"message", d.str()}};
  if (auto loc = dyn_cast<FileLineColLoc>(d.getLocation())) {
    out["file"] = loc.getFilename().str();
    out["line"] = int64_t(loc.getLine());
    out["column"] = int64_t(loc.getColumn());
  }
  return out;
}

/// Emits again the diagnostics a compile of the cached variant emitted.
static void replayDiagnostics(const Array &diagnostics, Location fallback) {
  MLIRContext *ctx = fallback->getContext();
  for (const llvm::json::Value &v : diagnostics) {
    const Object *d = v.getAsObject();
    if (!d)
      continue;
    Location loc = fallback;
    std::optional<StringRef> file = d->getString("file");
    std::optional<int64_t> line = d->getInteger("line");
    std::optional<int64_t> column = d->getInteger("column");
    if (file && line && column)
      loc = FileLineColLoc::get(ctx, *file, *line, *column);
    StringRef message = d->getString("message").value_or("");
    if (d->getString("severity") == "warning")
      emitWarning(loc) << message;
    else
      emitRemark(loc) << message;
  }
}

std::unique_ptr<CpuRunner> JitModel::cachedVariant(ArrayRef<HostTensor> inputs,
                                                   std::string &key) {
  key.clear();
  const ModelOptions &o = model->options();
  if (o.cacheDir.empty() || !o.planFile.empty() || modelKey().empty())
    return nullptr;
  key = modelKey() + "variant " + hashBytes(model->variantKey(inputs)) + "\n";
  CompileCache cache(o.cacheDir);
  std::string problem;
  std::optional<CacheFiles> files = cache.lookup(kCacheKind, key, &problem);
  if (!problem.empty())
    emitWarning(model->fileLoc()) << problem;
  if (!files)
    return nullptr;
  Location loc = model->fileLoc();
  auto object = files->find(kObjectFile.str());
  auto entry = files->find(kEntryFile.str());
  std::string error = "it lacks its files";
  EntrySignature signature;
  const Array *diagnostics = nullptr;
  llvm::Expected<llvm::json::Value> json =
      entry != files->end() ? llvm::json::parse(entry->second)
                            : llvm::json::parse("null");
  if (!json) {
    error = llvm::toString(json.takeError());
  } else if (const Object *root = json->getAsObject()) {
    diagnostics = root->getArray("diagnostics");
    const llvm::json::Value *sig = root->get("signature");
    if (!diagnostics || !sig)
      error = "entry.json lacks its signature or diagnostics";
    else if (entrySignatureFromJSON(*sig, loc->getContext(), signature, error))
      error.clear();
  }
  std::unique_ptr<CpuRunner> runner;
  if (error.empty() && object != files->end()) {
    runner = CpuRunner::load(object->second, std::move(signature), inputs,
                             model->entryOptions(), loc, error);
    // Inputs that do not fit: the compile would say the same.
    if (!runner && error.empty())
      return nullptr;
  }
  if (!runner) {
    emitWarning(loc) << "compile cache entry "
                     << cache.entryPath(kCacheKind, key)
                     << " cannot be loaded (" << error << "); compiling";
    return nullptr;
  }
  replayDiagnostics(*diagnostics, loc);
  return runner;
}

void JitModel::storeVariant(StringRef key, const CpuRunner &runner,
                            StringRef object, StringRef diagnostics) {
  std::string entry;
  llvm::raw_string_ostream os(entry);
  llvm::Expected<llvm::json::Value> diags = llvm::json::parse(diagnostics);
  os << llvm::json::Value(
      Object{{"signature", toJSON(runner.entrySignature())},
             {"diagnostics", diags ? std::move(*diags) : Array()}});
  if (!diags)
    llvm::consumeError(diags.takeError());
  CacheFiles files{{kObjectFile.str(), object.str()},
                   {kEntryFile.str(), entry}};
  std::string error;
  if (!CompileCache(model->options().cacheDir)
           .store(kCacheKind, key, files, error))
    emitWarning(model->fileLoc())
        << "the compiled model is not cached: " << error;
}

CpuRunner *JitModel::variantFor(ArrayRef<HostTensor> inputs) {
  if (!model->checkInputs(inputs))
    return nullptr;
  std::string key = model->variantKey(inputs);
  auto it = variants.find(key);
  if (it != variants.end())
    return it->second.get();

  std::string cacheKey;
  StageTimer timer(progress);
  std::unique_ptr<CpuRunner> runner = cachedVariant(inputs, cacheKey);
  if (runner) {
    timer.done("cache load");
    lastSource = "cached";
  } else {
    // What the compile says besides errors is kept with the variant and
    // said again when the cache has it.
    Array diagnostics;
    std::string object;
    {
      std::optional<ScopedDiagnosticHandler> capture;
      if (!cacheKey.empty())
        capture.emplace(model->fileLoc()->getContext(), [&](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Warning ||
              d.getSeverity() == DiagnosticSeverity::Remark)
            diagnostics.push_back(diagnosticToJSON(d));
          return failure(); // and on to the handler that prints it
        });
      std::vector<HostTensor> runtimeInputs;
      OwningOpRef<ModuleOp> module =
          model->buildVariant(inputs, runtimeInputs, progress);
      if (!module)
        return nullptr;
      runner = CpuRunner::compile(
          std::move(module), runtimeInputs, model->entryOptions(),
          cacheKey.empty() ? nullptr : &object, progress);
      if (!runner)
        return nullptr;
    }
    if (!object.empty()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << llvm::json::Value(std::move(diagnostics));
      StageTimer store(progress);
      storeVariant(cacheKey, *runner, object, text);
      store.done("cache store");
    }
    lastSource = "compiled";
  }
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
