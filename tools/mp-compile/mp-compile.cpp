//===- mp-compile.cpp - compile an ONNX model into a shared library -------===//
//
//   mp-compile model.onnx -o out/libtts.so [--target cpu|cuda]
//              [--gpu sm_80,sm_90] [--precision fp32|mixed] [--policy FILE]
//              [--fuse-attention[=false]] [--input-shape NAME=1x16 ...]
//              [--dynamic-shapes]
//              [--shapes-from DIR] [--emit library|mlir|llvm|ptx]
//              [--block-size N] [--no-tensor-cores]
//              [--training "loss=NAME optimizer=adamw ..."]
//              [--loss-scaling "mode=dynamic ..."] [--no-cache]
//
// Writes libtts.so (host code, and for CUDA a cubin per architecture),
// libtts.h and libtts.json. Running it needs only the mp runtime. Every
// dynamic input dim must be pinned (--input-shape, or the inputs of an ONNX
// test_data_set folder with --shapes-from, which also gives the values of
// inputs that decide shapes), or kept with --dynamic-shapes. A compile of
// the same model with the same options copies the files an earlier one
// left in the compile cache (MP_CACHE_DIR) instead.
// Exit code 0 on success, 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "mp/Compile/Library.h"
#include "mp/Import/TensorFile.h"
#include "mp/Pipelines/CudaToolkit.h"
#include "mp/Pipelines/OnnxModel.h"
#include "mp/Support/CompileCache.h"
#include "mp/Support/ShapeSyntax.h"
#include "mp/Support/ToolOptions.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

/// What --help lists (LLVM's own options are hidden, see main).
static cl::OptionCategory toolOptions("mp-compile options");

static cl::opt<std::string> modelPath(cl::cat(toolOptions), cl::Positional,
                                      cl::desc("<model.onnx>"));
static cl::opt<std::string> outputPath(cl::cat(toolOptions), "o",
                                       cl::desc("output library (.so), "
                                                "or the stage's text"),
                                       cl::value_desc("path"));
static cl::opt<std::string> target(cl::cat(toolOptions), "target",
                                   cl::init("cpu"), cl::desc("cpu or cuda"));
static cl::list<std::string>
    gpus(cl::cat(toolOptions), "gpu", cl::CommaSeparated,
         cl::desc("GPU architectures for --target cuda: sm_XY for cubins, "
                  "compute_XY for PTX (default sm_80,sm_90)"));
static cl::opt<std::string> precision(cl::cat(toolOptions), "precision",
                                      cl::init("fp32"),
                                      cl::desc("fp32 or mixed"));
static cl::opt<std::string> policyFile(cl::cat(toolOptions), "policy",
                                       cl::desc("precision policy (mixed)"));
static cl::opt<std::string> rangesFile(
    cl::cat(toolOptions), "ranges",
    cl::desc("value ranges measured by mp-run --calibrate --ranges-out "
             "(mixed): nodes whose values fp16 cannot hold keep fp32"));
static cl::opt<bool> fuseAttention(
    cl::cat(toolOptions), "fuse-attention",
    cl::desc("replace decomposed attention with mp.attention first "
             "(mp-fuse-attention); the default for --target cuda, whose "
             "flash attention kernels take it (--fuse-attention=false keeps "
             "attention decomposed)"));
static cl::opt<int64_t> maxSeqLen(
    cl::cat(toolOptions), "max-seq-len", cl::init(0),
    cl::desc("keep the KV caches of fused attention in buffers of this many "
             "positions, updated in place; adds the input "
             "past_sequence_length (mp-kv-cache-in-place)"));
static cl::opt<std::string>
    training(cl::cat(toolOptions), "training",
             cl::desc("compile a training step instead: mp-build-training-step "
                      "options, e.g. \"loss=loss optimizer=adamw lr=1e-3\" "
                      "(docs/training.md)"));
static cl::opt<std::string> lossScaling(
    cl::cat(toolOptions), "loss-scaling",
    cl::desc("with --training: mp-insert-loss-scaling options, e.g. "
             "\"mode=dynamic\""));
static cl::list<std::string>
    inputShapes(cl::cat(toolOptions), "input-shape",
                cl::desc("NAME=1x16: pin input NAME's shape; "
                         "repeatable"));
static cl::opt<std::string> shapesFrom(
    cl::cat(toolOptions), "shapes-from",
    cl::desc("ONNX test_data_set folder: input shapes, and the values of "
             "inputs that decide shapes"));
static cl::opt<std::string>
    emit(cl::cat(toolOptions), "emit", cl::init("library"),
         cl::desc("library, or a stage: mlir (lowered module), llvm (host "
                  "LLVM IR), ptx (every kernel, per architecture)"));
static cl::opt<int64_t> blockSize(cl::cat(toolOptions), "block-size",
                                  cl::init(256),
                                  cl::desc("CUDA threads per block"));
static cl::opt<bool> noTensorCores(
    cl::cat(toolOptions), "no-tensor-cores",
    cl::desc("CUDA: f16 contractions on CUDA cores instead of Tensor Cores "
             "(which need sm_80 or newer on every --gpu)"));

static cl::opt<bool> noFlashAttention(
    cl::cat(toolOptions), "no-flash-attention",
    cl::desc("CUDA: attention with materialized scores instead of the "
             "split-KV flash attention kernels"));

static cl::opt<std::string>
    hostCpu(cl::cat(toolOptions), "cpu",
            cl::desc("CPU target: compile the host code for this LLVM CPU "
                     "(e.g. x86-64-v3, AVX2) instead of this machine's, for "
                     "older CPUs or valgrind (which does not decode AVX-512)"),
            cl::value_desc("name"));

static cl::opt<bool> dynamicShapes(
    cl::cat(toolOptions), "dynamic-shapes",
    cl::desc("keep the dynamic dims of inputs not given with "
             "--input-shape or --shapes-from; the library then runs through "
             "mp_library_run_shaped and reports output shapes per run"));

static cl::opt<bool> noCache(
    cl::cat(toolOptions), "no-cache",
    cl::desc("compile even when the compile cache (MP_CACHE_DIR, default "
             "~/.cache/mp; MP_CACHE_DIR=off disables it) holds this "
             "library, and do not store the result"));

static int fail(const Twine &message) {
  llvm::errs() << "mp-compile: error: " << message << "\n";
  return 1;
}

/// The inputs to specialize to: from --shapes-from (with data), then pinned
/// shapes (zero data; fine unless the value decides shapes).
static bool collectInputs(MLIRContext *ctx, mp::OnnxModel &model,
                          std::vector<mp::HostTensor> &inputs,
                          std::vector<std::string> &pinnedOnly,
                          std::vector<std::string> &keptDynamic) {
  std::string error;
  if (!shapesFrom.empty()) {
    if (!llvm::sys::fs::is_directory(shapesFrom))
      return fail("--shapes-from: '" + shapesFrom + "' is not a folder"), false;
    for (const std::string &file : mp::numberedFiles(shapesFrom, "input")) {
      mp::HostTensor t;
      if (!mp::readTensorFile(file, ctx, t, error))
        return fail(error), false;
      inputs.push_back(std::move(t));
    }
    if (!model.nameInputs(inputs))
      return false;
  }
  for (const std::string &arg : inputShapes) {
    auto [nameRef, dimsRef] = StringRef(arg).split('=');
    StringRef name = nameRef, dims = dimsRef;
    std::optional<SmallVector<int64_t>> shape = mp::parseShape(dims);
    if (name.empty() || !StringRef(arg).contains('=') || !shape)
      return fail("--input-shape must be NAME=DIMS like x=1x16, got '" + arg +
                  "'"),
             false;
    auto spec = llvm::find_if(model.inputs(), [&](const mp::TensorSpec &s) {
      return s.name == name;
    });
    if (spec == model.inputs().end())
      return fail("--input-shape: the model has no input named '" + name + "'"),
             false;
    if (llvm::any_of(inputs,
                     [&](const mp::HostTensor &t) { return t.name == name; }))
      return fail("input '" + name +
                  "' has its shape from --shapes-from "
                  "already"),
             false;
    mp::HostTensor t;
    t.name = name.str();
    t.elementType = spec->elementType;
    t.shape.assign(shape->begin(), shape->end());
    t.data.assign(t.numElements() * mp::HostTensor::elementBytes(t.elementType),
                  0);
    inputs.push_back(std::move(t));
    pinnedOnly.push_back(name.str());
  }
  // Inputs with only static dims need no pin.
  for (const mp::TensorSpec &spec : model.inputs()) {
    if (llvm::any_of(inputs, [&](const mp::HostTensor &t) {
          return t.name == spec.name;
        }))
      continue;
    bool dynamic = llvm::any_of(spec.shape, ShapedType::isDynamic);
    if (dynamic && dynamicShapes) {
      // Kept dynamic; a stand-in of size 1 per dynamic dim for the checks.
      mp::HostTensor t;
      t.name = spec.name;
      t.elementType = spec.elementType;
      for (int64_t d : spec.shape)
        t.shape.push_back(ShapedType::isDynamic(d) ? 1 : d);
      t.data.assign(
          t.numElements() * mp::HostTensor::elementBytes(t.elementType), 0);
      inputs.push_back(std::move(t));
      keptDynamic.push_back(spec.name);
      continue;
    }
    if (dynamic)
      return fail("input '" + spec.name + "' has dynamic dims [" +
                  llvm::join(llvm::map_range(spec.shape,
                                             [](int64_t d) {
                                               return ShapedType::isDynamic(d)
                                                          ? std::string("?")
                                                          : std::to_string(d);
                                             }),
                             "x") +
                  "]: give its shape with --input-shape " + spec.name +
                  "=... or --shapes-from DIR, or keep them with "
                  "--dynamic-shapes"),
             false;
    mp::HostTensor t;
    t.name = spec.name;
    t.elementType = spec.elementType;
    t.shape.assign(spec.shape.begin(), spec.shape.end());
    t.data.assign(t.numElements() * mp::HostTensor::elementBytes(t.elementType),
                  0);
    inputs.push_back(std::move(t));
    pinnedOnly.push_back(spec.name);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The compile cache: a compile of the same model with the same options
// copies the library, header and description an earlier one stored.
//===----------------------------------------------------------------------===//

/// The entry kind and the names of its files: fixed, since a hit writes
/// them wherever -o says.
static constexpr StringLiteral kCacheKind = "library";
static constexpr StringLiteral kLibraryFile = "library.so";
static constexpr StringLiteral kHeaderFile = "library.h";
static constexpr StringLiteral kDescriptionFile = "library.json";
/// What the compile said that a hit says again: its warnings and remarks
/// as printed, and the activation arena line.
static constexpr StringLiteral kMessagesFile = "messages.txt";
/// The progress line that a hit says again.
static constexpr StringLiteral kArenaLine = "mp-compile: activation arena:";

/// Whether attention is fused: as asked, or by default on the CUDA target
/// (not for training steps, whose gradients take the decomposed ops).
static bool fusesAttention() {
  if (fuseAttention.getNumOccurrences())
    return fuseAttention;
  return target == "cuda" && training.empty();
}

/// Whether every option given on the command line is one the cache key
/// holds (or -o and --no-cache, which do not change the outputs). LLVM's
/// and MLIR's own options (--mlir-print-ir-after=..., code generator flags)
/// print during the compile or change it: such a compile always compiles,
/// as does one with a tool option added without a place in the key.
static bool keyHoldsCommandLine() {
  static constexpr StringLiteral keyed[] = {"o",
                                            "target",
                                            "gpu",
                                            "precision",
                                            "policy",
                                            "ranges",
                                            "fuse-attention",
                                            "max-seq-len",
                                            "training",
                                            "loss-scaling",
                                            "input-shape",
                                            "shapes-from",
                                            "emit",
                                            "block-size",
                                            "no-tensor-cores",
                                            "no-flash-attention",
                                            "cpu",
                                            "dynamic-shapes",
                                            "no-cache"};
  for (const auto &[name, option] : cl::getRegisteredOptions())
    if (option->getNumOccurrences() > 0 && !llvm::is_contained(keyed, name))
      return false;
  return true;
}

/// The cache key of this compile: everything that decides the bytes of the
/// library, header and description. Empty when the compile is not cached:
/// a stage is emitted, the command line holds options the key does not, or
/// a file cannot be read (the compile then says why).
static std::string libraryCacheKey(MLIRContext *ctx,
                                   const mp::LibraryOptions &options) {
  if (options.emit != mp::LibraryOptions::Emit::Library ||
      mp::buildFingerprint().empty() || !keyHoldsCommandLine())
    return "";
  // Unreadable files: not cached; the compile says why.
  std::optional<std::string> files =
      mp::modelFilesKey(ctx, modelPath, policyFile, rangesFile);
  if (!files)
    return "";
  bool ok = true;
  std::string key;
  llvm::raw_string_ostream os(key);
  os << "mp-compile library 1\n"
     << mp::buildFingerprint() << "\n"
     << mp::libraryToolchainKey(options) << *files;
  auto file = [&](const Twine &what, StringRef path) {
    std::optional<std::string> hash = mp::hashFile(path);
    ok &= hash.has_value();
    os << what << " " << hash.value_or("?") << "\n";
  };
  if (!shapesFrom.empty()) {
    if (!llvm::sys::fs::is_directory(shapesFrom))
      return "";
    for (const std::string &path : mp::numberedFiles(shapesFrom, "input"))
      file("shapes-from " + llvm::sys::path::filename(path), path);
  }
  // Every other option as given, and the names that reach the outputs: the
  // model's path (their "generated from" lines and the description's
  // source) and the output's file name (the header guard).
  llvm::json::Array shapes;
  for (const std::string &shape : inputShapes)
    shapes.push_back(shape);
  os << llvm::json::Value(llvm::json::Object{
            {"source", options.sourcePath},
            {"output-name", llvm::sys::path::filename(options.outputPath)},
            {"target", target.getValue()},
            {"gpu", llvm::json::Array(options.cuda.chips)},
            {"ptx-features", options.cuda.features},
            {"block-size", blockSize.getValue()},
            {"tensor-cores", options.cuda.tensorCores},
            {"flash-attention", options.cuda.flashAttention},
            {"cpu", options.hostCpu},
            {"precision", options.precision},
            {"fuse-attention", fusesAttention()},
            {"max-seq-len", maxSeqLen.getValue()},
            {"dynamic-shapes", dynamicShapes.getValue()},
            {"training", training.getValue()},
            {"loss-scaling", lossScaling.getValue()},
            {"input-shape", std::move(shapes)},
            {"shapes-from", !shapesFrom.empty()}})
     << "\n";
  return ok ? key : "";
}

/// Writes `bytes` to `path` through a temporary file renamed into place: a
/// process that has the old library loaded keeps its copy.
static bool writeOutput(StringRef path, StringRef bytes, unsigned mode,
                        std::string &error) {
  int fd;
  SmallString<256> tmp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          path + ".tmp-%%%%%%%%", fd, tmp, llvm::sys::fs::OF_None, mode)) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.close();
    if (os.has_error()) {
      error = "cannot write '" + tmp.str().str() + "': " + os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return false;
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    error = "cannot write '" + path.str() + "': " + ec.message();
    llvm::sys::fs::remove(tmp);
    return false;
  }
  return true;
}

/// A hit: writes the entry's files where a compile would have and says
/// again what the compile said. Nothing when the entry lacks a file (then
/// it compiles); 1 when an output cannot be written.
static std::optional<int>
writeCachedLibrary(const mp::CompileCache &cache, StringRef key,
                   const mp::CacheFiles &files, StringRef outputPath,
                   std::chrono::steady_clock::time_point start) {
  auto get = [&](StringRef name) -> const std::string * {
    auto it = files.find(name.str());
    return it == files.end() ? nullptr : &it->second;
  };
  const std::string *library = get(kLibraryFile), *header = get(kHeaderFile),
                    *description = get(kDescriptionFile),
                    *messages = get(kMessagesFile);
  std::string entry = cache.entryPath(kCacheKind, key);
  if (!library || !header || !description || !messages) {
    llvm::errs() << "mp-compile: warning: compile cache entry " << entry
                 << " lacks its files; compiling\n";
    return std::nullopt;
  }
  mp::LibraryPaths paths = mp::libraryPaths(outputPath);
  std::string error;
  namespace fs = llvm::sys::fs;
  if (std::error_code ec =
          fs::create_directories(llvm::sys::path::parent_path(paths.library)))
    return fail("cannot create the folder of '" + paths.library +
                "': " + ec.message());
  // The modes the linker and a plain file write give (less the umask).
  if (!writeOutput(paths.library, *library, fs::all_all, error) ||
      !writeOutput(paths.header, *header, fs::all_read | fs::all_write,
                   error) ||
      !writeOutput(paths.description, *description,
                   fs::all_read | fs::all_write, error))
    return fail(error);
  llvm::errs() << *messages;
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  llvm::errs() << llvm::formatv(
      "mp-compile: loaded from the compile cache ({0}) in {1:F1} ms\n", entry,
      ms);
  llvm::errs() << "mp-compile: wrote " << paths.library << ", " << paths.header
               << ", " << paths.description << "\n";
  return 0;
}

/// After a compile: stores the files it wrote and what it said.
static void storeLibrary(const mp::CompileCache &cache, StringRef key,
                         StringRef outputPath, StringRef messages) {
  mp::LibraryPaths paths = mp::libraryPaths(outputPath);
  mp::CacheFiles files{{kMessagesFile.str(), messages.str()}};
  std::string error;
  for (auto [name, path] : {std::pair(kLibraryFile, &paths.library),
                            std::pair(kHeaderFile, &paths.header),
                            std::pair(kDescriptionFile, &paths.description)}) {
    auto buffer = llvm::MemoryBuffer::getFile(*path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      error = "cannot read '" + *path + "': " + buffer.getError().message();
      break;
    }
    files[name.str()] = (*buffer)->getBuffer().str();
  }
  if (error.empty())
    cache.store(kCacheKind, key, files, error);
  if (!error.empty())
    llvm::errs() << "mp-compile: warning: the library is not cached: " << error
                 << "\n";
}

namespace {
/// Prints the diagnostics it is given as the tool prints them, into a
/// string: what a cache hit says again.
struct DiagnosticRecorder : SourceMgrDiagnosticHandler {
  using SourceMgrDiagnosticHandler::emitDiagnostic;
  using SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
};

/// writeLibrary's progress, to stderr; the activation arena line also goes
/// to `replay`.
class ProgressStream : public llvm::raw_ostream {
public:
  explicit ProgressStream(llvm::raw_ostream &replay) : replay(replay) {
    SetUnbuffered();
  }

private:
  void write_impl(const char *ptr, size_t size) override {
    llvm::errs().write(ptr, size);
    written += size;
    line.append(ptr, size);
    for (size_t end; (end = line.find('\n')) != std::string::npos;
         line.erase(0, end + 1))
      if (StringRef(line).starts_with(kArenaLine))
        replay << StringRef(line).take_front(end + 1);
  }
  uint64_t current_pos() const override { return written; }

  llvm::raw_ostream &replay;
  std::string line;
  uint64_t written = 0;
};
} // namespace

int main(int argc, char **argv) {
  auto start = std::chrono::steady_clock::now();
  llvm::InitLLVM init(argc, argv);
  mp::hideLibraryOptions({&toolOptions});
  // --mlir-print-ir-after=PASS and friends, for looking inside the pipeline
  // (mp's passes by name, e.g. --mlir-print-ir-after=mp-plan-arena).
  mp::registerAllMpPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "mp ahead-of-time compiler\n");
  if (modelPath.empty())
    return fail("no model given (mp-compile MODEL.onnx -o libNAME.so)");
  if (outputPath.empty())
    return fail("no output given (-o libNAME.so)");
  if (maxSeqLen < 0)
    return fail("--max-seq-len must be positive, got " +
                std::to_string(maxSeqLen));
  if (precision != "fp32" && precision != "mixed")
    return fail("--precision must be fp32 or mixed, got '" + precision + "'");
  mp::LibraryOptions options;
  if (target == "cuda")
    options.target = mp::LibraryOptions::Target::Cuda;
  else if (target != "cpu")
    return fail("--target must be cpu or cuda, got '" + target + "'");
  if (!gpus.empty() && target != "cuda")
    return fail("--gpu needs --target cuda");
  options.cuda.chips.clear();
  for (const std::string &gpu : gpus) {
    std::optional<unsigned> sm = mp::parseGpuArch(gpu);
    if (!sm || *sm < 50 ||
        gpu.size() != gpu.find('_') + 1 + std::to_string(*sm).size())
      return fail("--gpu takes architectures like sm_80,sm_90 (cubins) or "
                  "compute_80 (PTX), got '" +
                  gpu + "'");
    options.cuda.chips.push_back(gpu);
  }
  // One pipeline run makes every image: cubins or PTX, not both.
  if (mp::hasPtxImages(options.cuda.chips) &&
      llvm::any_of(options.cuda.chips,
                   [](StringRef g) { return g.starts_with("sm_"); }))
    return fail("--gpu cannot mix cubins (sm_XY) and PTX (compute_XY) in "
                "one library yet; build two libraries");
  if (options.cuda.chips.empty())
    options.cuda.chips = {"sm_80", "sm_90"};
  options.cuda.blockSize = blockSize;
  options.cuda.tensorCores = !noTensorCores;
  options.cuda.flashAttention = !noFlashAttention;
  if (emit == "mlir")
    options.emit = mp::LibraryOptions::Emit::Mlir;
  else if (emit == "llvm")
    options.emit = mp::LibraryOptions::Emit::Llvm;
  else if (emit == "ptx")
    options.emit = mp::LibraryOptions::Emit::Ptx;
  else if (emit != "library")
    return fail("--emit must be library, mlir, llvm or ptx, got '" + emit +
                "'");
  if (!hostCpu.empty() && target != "cpu")
    return fail("--cpu needs --target cpu");
  options.hostCpu = hostCpu;
  options.precision = precision;
  options.sourcePath = modelPath;
  options.outputPath = outputPath;

  DialectRegistry registry;
  mp::registerModelDialects(registry);
  registerAllExtensions(registry);
  registerAllGPUToLLVMIRTranslations(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  // The warnings and remarks of a compile that the cache stores are also
  // printed into `messages`: by the recorder, registered first since the
  // handler that prints to stderr ends the chain, through the one on top.
  std::string messages;
  llvm::raw_string_ostream messagesStream(messages);
  DiagnosticRecorder recorder(sourceMgr, &ctx, messagesStream);
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);
  std::optional<mp::CompileCache> cache;
  ScopedDiagnosticHandler record(&ctx, [&](Diagnostic &d) {
    if (cache && (d.getSeverity() == DiagnosticSeverity::Warning ||
                  d.getSeverity() == DiagnosticSeverity::Remark))
      recorder.emitDiagnostic(d);
    return failure(); // and on to the handler that prints it
  });

  std::string cacheKey;
  if (std::string dir = noCache ? "" : mp::defaultCacheDir(); !dir.empty()) {
    cacheKey = libraryCacheKey(&ctx, options);
    if (!cacheKey.empty())
      cache.emplace(dir);
  }
  if (cache) {
    std::string problem;
    std::optional<mp::CacheFiles> files =
        cache->lookup(kCacheKind, cacheKey, &problem);
    if (!problem.empty())
      llvm::errs() << "mp-compile: warning: " << problem << "\n";
    if (files)
      if (std::optional<int> rc =
              writeCachedLibrary(*cache, cacheKey, *files, outputPath, start))
        return *rc;
  }

  mp::ModelOptions modelOptions;
  modelOptions.mixed = precision == "mixed";
  modelOptions.policyFile = policyFile;
  modelOptions.rangesFile = rangesFile;
  modelOptions.fuseAttention = fusesAttention();
  modelOptions.trainingStep = training;
  modelOptions.lossScaling = lossScaling;
  // Dynamic-shape libraries take shape-deciding values (Reshape targets,
  // total_sequence_length) at run time where the lowering allows.
  modelOptions.dynamicShapes = dynamicShapes;
  std::unique_ptr<mp::OnnxModel> model =
      mp::OnnxModel::load(&ctx, modelPath, modelOptions);
  if (!model)
    return 1;
  std::vector<mp::HostTensor> inputs;
  std::vector<std::string> pinnedOnly, keptDynamic;
  if (!collectInputs(&ctx, *model, inputs, pinnedOnly, keptDynamic) ||
      !model->checkInputs(inputs))
    return 1;
  if (dynamicShapes) {
    // Every input not kept dynamic has its shape fixed for every run.
    std::vector<mp::HostTensor> pinned;
    for (const mp::HostTensor &t : inputs)
      if (!llvm::is_contained(keptDynamic, t.name))
        pinned.push_back(t);
    if (failed(model->pinShapes(pinned)))
      return 1;
  }
  for (const mp::HostTensor &t : inputs)
    if (model->isCompiledIn(t) && (llvm::is_contained(pinnedOnly, t.name) ||
                                   llvm::is_contained(keptDynamic, t.name)))
      return fail("input '" + t.name +
                  "' decides output shapes, so its "
                  "value is compiled in: give it with --shapes-from DIR");
  std::vector<mp::HostTensor> runtimeInputs;
  OwningOpRef<ModuleOp> module = model->buildVariant(inputs, runtimeInputs);
  if (!module)
    return 1;
  mp::EntrySignature entry;
  mp::EntryOptions entryOptions;
  entryOptions.maxSeqLen = maxSeqLen;
  entryOptions.dynamicShapes = dynamicShapes;
  for (const mp::HostTensor &t : runtimeInputs)
    if (!llvm::is_contained(keptDynamic, t.name))
      entryOptions.pinnedInputs.push_back(t.name);
  if (failed(mp::prepareEntry(*module, runtimeInputs, entry, entryOptions)))
    return 1;
  ProgressStream progress(messagesStream);
  if (failed(mp::writeLibrary(*module, entry, options, progress)))
    return 1;
  if (cache)
    storeLibrary(*cache, cacheKey, outputPath, messages);
  return 0;
}
