//===- mp-run.cpp - run an ONNX model on the CPU and check it -------------===//
//
//   mp-run model.onnx [--input NAME=file.npy|.pb ...] [--compare DIR]
//          [--input-shape NAME=1x16 ...] [--generate-inputs]
//          [--precision fp32|mixed] [--policy FILE] [--fuse-attention]
//          [--max-seq-len N] [--plan FILE]
//          [--calibrate DIR[,DIR...]] [--ranges-out FILE] [--ranges FILE]
//          [--precision-diff DIR [--report FILE] [--diff-threshold T]]
//          [--output-dir DIR]
//          [--rtol R] [--atol A] [--repeat N]
//   mp-run --test-dir DIR [--precision ...] [--rtol R] [--atol A]
//   mp-run libNAME.so [--input ...] [--compare DIR] [--output-dir DIR]
//          [--repeat N] [--device-buffers]
//
// Imports the model, optionally assigns mixed precision, specializes it to
// the input shapes, JIT-compiles it through the CPU pipeline and runs it.
// With --compare DIR (an ONNX test_data_set folder) the inputs default to
// DIR/input_N.pb and every output is checked against DIR/output_N.pb.
// --test-dir walks an ONNX backend-test tree, one line per case.
// --calibrate measures every node's value range on the fp32 build over the
// inputs of the given folders (written with --ranges-out; used by the mixed
// build of this run); --precision-diff compares the fp32 and mixed builds
// node by node on DIR's inputs (docs/precision.md).
// A library written by mp-compile runs through the mp runtime instead.
// Exit codes: 0 all outputs pass (or nothing to compare), 1 an error or a
// failed comparison; for a library the runtime's status when opening or
// running it fails (3 no CUDA driver, 4 no device, 5 no kernels for this
// GPU, 6 a CUDA call failed, 7 out of memory; see docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#include "mp/Execution/CompiledLibrary.h"
#include "mp/Execution/JitModel.h"
#include "mp/Execution/PrecisionDiff.h"
#include "mp/Execution/TestData.h"
#include "mp/Execution/TestTree.h"
#include "mp/Execution/ValueProbe.h"
#include "mp/Precision/Analysis.h"
#include "mp/Support/CompileCache.h"
#include "mp/Support/ShapeSyntax.h"
#include "mp/Support/ToolOptions.h"
#include "mp/runtime.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <cstring>

using namespace mlir;
namespace cl = llvm::cl;

/// What --help lists (LLVM's own options are hidden, see main).
static cl::OptionCategory toolOptions("mp-run options");

static cl::opt<std::string> modelPath(cl::cat(toolOptions), cl::Positional,
                                      cl::desc("<model.onnx>"));
static cl::list<std::string>
    inputArgs(cl::cat(toolOptions), "input",
              cl::desc("NAME=FILE (.npy or .pb); repeatable"));
static cl::list<std::string> inputShapes(
    cl::cat(toolOptions), "input-shape",
    cl::desc("NAME=1x16: the shape of input NAME (checks a given input; "
             "generated inputs take it); repeatable"));
static cl::opt<bool> generateInputs(
    cl::cat(toolOptions), "generate-inputs",
    cl::desc("fill inputs not given: floats uniform in [-1, 1) from a fixed "
             "seed, integers and bools zero"));
static cl::opt<std::string>
    compareDir(cl::cat(toolOptions), "compare",
               cl::desc("ONNX test_data_set folder: default inputs and "
                        "expected outputs"));
static cl::opt<std::string>
    testDir(cl::cat(toolOptions), "test-dir",
            cl::desc("run every */model.onnx with its "
                     "test_data_set_* folders under DIR"));
static cl::opt<unsigned>
    caseTimeout(cl::cat(toolOptions), "timeout", cl::init(300),
                cl::desc("--test-dir: seconds per case before it is killed"));
static cl::opt<std::string> precision(cl::cat(toolOptions), "precision",
                                      cl::init("fp32"),
                                      cl::desc("fp32 or mixed"));
static cl::opt<std::string> policyFile(cl::cat(toolOptions), "policy",
                                       cl::desc("precision policy (mixed)"));
static cl::opt<std::string> outputDir(cl::cat(toolOptions), "output-dir",
                                      cl::desc("write outputs as NAME.npy"));
static cl::opt<double> rtolOpt(cl::cat(toolOptions), "rtol", cl::init(-1),
                               cl::desc("relative tolerance (default 1e-4 "
                                        "for fp32, 1e-2 for fp16 outputs or "
                                        "--precision mixed)"));
static cl::opt<double> atolOpt(cl::cat(toolOptions), "atol", cl::init(-1),
                               cl::desc("absolute tolerance (default 1e-5 "
                                        "for fp32; for fp16 outputs or "
                                        "--precision mixed, 1e-2 x the "
                                        "reference's max |value| clamped "
                                        "to [1e-3, 1])"));
static cl::opt<bool> fuseAttention(
    cl::cat(toolOptions), "fuse-attention",
    cl::desc("replace decomposed attention with mp.attention first "
             "(mp-fuse-attention)"));
static cl::opt<int64_t> maxSeqLen(
    cl::cat(toolOptions), "max-seq-len", cl::init(0),
    cl::desc("with --fuse-attention: KV caches of this many positions "
             "updated in place; adds the input past_sequence_length"));
static cl::opt<bool> dynamicShapes(
    cl::cat(toolOptions), "dynamic-shapes",
    cl::desc("compile once for every input shape: dynamic dims stay "
             "dynamic instead of being specialized to the inputs"));
static cl::opt<unsigned>
    repeat(cl::cat(toolOptions), "repeat", cl::init(0),
           cl::desc("run N more times and print the compile and run times"));

static cl::list<std::string> calibrateDirs(
    cl::cat(toolOptions), "calibrate", cl::CommaSeparated,
    cl::desc("DIR[,DIR...]: measure every node's value range on the fp32 "
             "build over these inputs (test_data_set folders, or model "
             "folders holding them); the mixed build keeps in fp32 what "
             "would overflow fp16"));
static cl::opt<std::string> rangesOut(
    cl::cat(toolOptions), "ranges-out",
    cl::desc("with --calibrate: write the measured ranges here (JSON, for "
             "--ranges or mp-assign-precision's ranges=)"));
static cl::opt<std::string> rangesFile(
    cl::cat(toolOptions), "ranges",
    cl::desc("value ranges measured by --calibrate --ranges-out (mixed)"));
static cl::opt<std::string>
    planFile(cl::cat(toolOptions), "plan",
             cl::desc("write the mixed build's precision plan here (JSON)"));
static cl::opt<std::string> precisionDiffDir(
    cl::cat(toolOptions), "precision-diff",
    cl::desc("DIR: run the fp32 and mixed builds on DIR's inputs and print "
             "each node's relative error, the rule that chose its "
             "precision and the first node that goes non-finite or past "
             "--diff-threshold"));
static cl::opt<double> diffThreshold(
    cl::cat(toolOptions), "diff-threshold", cl::init(1e-2),
    cl::desc("--precision-diff: relative error (max |mixed - fp32| / max "
             "|fp32|) that counts as diverged"));
static cl::opt<std::string>
    reportFile(cl::cat(toolOptions), "report",
               cl::desc("--precision-diff: also write the report as JSON"));

static cl::opt<bool> deviceBuffers(
    cl::cat(toolOptions), "device-buffers",
    cl::desc("a compiled library runs on buffers in its own memory "
             "(mp_library_run_device): inputs uploaded once, outputs "
             "downloaded once, nothing copied per run"));

static cl::opt<bool> noCache(
    cl::cat(toolOptions), "no-cache",
    cl::desc("compile even when the compile cache (MP_CACHE_DIR, default "
             "~/.cache/mp; MP_CACHE_DIR=off disables it) holds this model "
             "compiled for these inputs, and do not store the result"));

static cl::opt<bool> progressOpt(
    cl::cat(toolOptions), "progress",
    cl::desc("print each compile stage as it ends, with its time, to stderr "
             "(mp-run: progress: STAGE: MS ms)"));

static int fail(const Twine &message) {
  llvm::errs() << "mp-run: error: " << message << "\n";
  return 1;
}

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream(s) << type;
  return s;
}

/// Deterministic input data: floats uniform in [-1, 1), the rest zero.
static mp::HostTensor generate(StringRef name, Type elementType,
                               ArrayRef<int64_t> shape) {
  mp::HostTensor t;
  t.name = name.str();
  t.elementType = elementType;
  t.shape.assign(shape.begin(), shape.end());
  int64_t bytes = mp::HostTensor::elementBytes(t.elementType);
  t.data.assign(t.numElements() * bytes, 0);
  if (!isa<FloatType>(t.elementType))
    return t;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double u = double(state >> 11) / double(1ull << 53) * 2 - 1;
    APFloat v(u);
    bool lost;
    v.convert(cast<FloatType>(t.elementType).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    APInt bits = v.bitcastToAPInt();
    std::memcpy(t.data.data() + i * bytes, bits.getRawData(), bytes);
  }
  return t;
}

/// How the model options on the command line compile a model.
static mp::ModelOptions modelOptions() {
  mp::ModelOptions options;
  options.mixed = precision == "mixed";
  options.policyFile = policyFile;
  options.rangesFile = rangesFile;
  options.planFile = planFile;
  options.fuseAttention = fuseAttention;
  options.maxSeqLen = maxSeqLen;
  options.dynamicShapes = dynamicShapes;
  if (!noCache)
    options.cacheDir = mp::defaultCacheDir();
  return options;
}

static int runTestDir() {
  if (!modelPath.empty() || !inputArgs.empty() || !compareDir.empty())
    return fail("--test-dir takes no model, --input or --compare");
  if (!llvm::sys::fs::is_directory(testDir))
    return fail("--test-dir: '" + testDir + "' is not a folder");
  mp::TestTreeOptions options;
  options.model = modelOptions();
  // fp32 outputs of ONNX backend cases (test_*) default to the ONNX
  // runner's tolerances, those of other folders (models) to mp-run's.
  options.tolerances = {rtolOpt, atolOpt, options.model.mixed, 1e-3, 1e-7};
  options.modelTolerances = {rtolOpt, atolOpt, options.model.mixed};
  options.timeoutSeconds = caseTimeout;
  mp::TestTreeCounts counts = mp::runTestTree(testDir, options, llvm::outs());
  return counts.failed ? 1 : 0;
}
/// Mean and best wall time of `repeat` calls of `run` in ms; false as soon
/// as one fails.
struct RunTimes {
  double mean = 0, best = 0;
};
static bool timeRuns(llvm::function_ref<bool()> run, RunTimes &times) {
  using Clock = std::chrono::steady_clock;
  double total = 0, best = 1e300;
  for (unsigned i = 0; i < repeat; ++i) {
    auto t0 = Clock::now();
    if (!run())
      return false;
    double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    total += ms;
    best = std::min(best, ms);
  }
  times = {total / repeat, best};
  return true;
}

/// Writes the outputs (--output-dir) and compares them (--compare).
static int finish(MLIRContext *ctx, std::vector<mp::HostTensor> &outputs,
                  bool mixed) {
  std::string error;
  if (!outputDir.empty() && !mp::writeOutputs(outputDir, outputs, error))
    return fail(error);

  std::vector<std::string> expectedFiles =
      compareDir.empty() ? std::vector<std::string>()
                         : mp::numberedFiles(compareDir, "output");
  bool allPassed = true;
  std::string firstFailure;
  if (!mp::compareOutputs(outputs, expectedFiles, ctx,
                          {rtolOpt, atolOpt, mixed}, &llvm::outs(), allPassed,
                          firstFailure, error))
    return fail(error);
  return allPassed ? 0 : 1;
}

/// --calibrate: measures the ranges over the folders' inputs and writes them
/// to --ranges-out or, for this run's mixed build only, a temporary file
/// that `remover` deletes. False after printing an error.
static bool calibrateModel(MLIRContext *ctx, mp::ModelOptions &options,
                           llvm::FileRemover &remover) {
  std::vector<std::vector<mp::HostTensor>> sets;
  std::string error;
  if (!mp::readInputSets(calibrateDirs, ctx, sets, error))
    return fail("--calibrate: " + error), false;
  mp::ValueRanges ranges;
  if (!mp::calibrate(ctx, modelPath, options, sets, ranges))
    return false;
  std::string path = rangesOut;
  if (path.empty()) {
    SmallString<128> temp;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("mp-ranges", "json", temp))
      return fail("cannot create a temporary file: " + ec.message()), false;
    path = temp.str().str();
    remover.setFile(path);
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message()), false;
  os << llvm::formatv("{0:2}", ranges.toJSON(modelPath)) << "\n";
  int kept = 0;
  mp::RangeOptions limits;
  for (StringRef key : ranges.keys())
    for (unsigned i = 0; const mp::ValueRange *r = ranges.find(key, i); ++i)
      kept += mp::rangeRule(*r, limits).has_value();
  llvm::errs() << "mp-run: note: calibrated " << ranges.numNodes()
               << " nodes on " << sets.size() << " input set(s); " << kept
               << " value(s) fp16 cannot hold (|x| above 65504/"
               << llvm::format("%g", limits.overflowMargin)
               << " or below its range) keep fp32 with their readers"
               << (rangesOut.empty() ? "" : "; ranges in " + rangesOut) << "\n";
  options.rangesFile = path;
  return true;
}

/// --precision-diff: the fp32 and mixed builds compared node by node.
static int diffModel(MLIRContext *ctx, const mp::ModelOptions &options) {
  std::vector<std::vector<mp::HostTensor>> sets;
  std::string error;
  if (!mp::readInputSets({precisionDiffDir}, ctx, sets, error))
    return fail("--precision-diff: " + error);
  if (sets.size() != 1)
    return fail("--precision-diff: '" + precisionDiffDir +
                "' holds several input sets: give one test_data_set folder");
  std::unique_ptr<mp::JitModel> model =
      mp::JitModel::load(ctx, modelPath, options);
  if (!model || !model->nameInputs(sets[0]))
    return 1;
  mp::PrecisionDiff diff;
  if (!mp::diffPrecision(ctx, modelPath, options, sets[0], diffThreshold, diff))
    return 1;
  mp::printPrecisionDiff(diff, llvm::outs());
  if (reportFile.empty())
    return 0;
  std::error_code ec;
  llvm::raw_fd_ostream os(reportFile, ec);
  if (ec)
    return fail("cannot write '" + reportFile + "': " + ec.message());
  os << llvm::formatv("{0:2}", mp::toJSON(diff)) << "\n";
  return 0;
}

/// The --input-shape pins by input name; each must name one of `names`.
static bool parsePins(ArrayRef<std::string> names,
                      llvm::StringMap<SmallVector<int64_t>> &pins) {
  for (const std::string &arg : inputShapes) {
    auto [name, dims] = StringRef(arg).split('=');
    std::optional<SmallVector<int64_t>> shape = mp::parseShape(dims);
    if (name.empty() || !StringRef(arg).contains('=') || !shape)
      return fail("--input-shape must be NAME=DIMS like x=1x16, got '" + arg +
                  "'"),
             false;
    if (!llvm::is_contained(names, name))
      return fail("--input-shape: the model has no input named '" + name + "'"),
             false;
    pins[name] = *shape;
  }
  return true;
}

/// Runs a library written by mp-compile through the mp runtime.
static int runLibrary(MLIRContext *ctx, std::vector<mp::HostTensor> &inputs) {
  if (precision != "fp32" || !policyFile.empty() || fuseAttention ||
      maxSeqLen || dynamicShapes || !calibrateDirs.empty() ||
      !rangesFile.empty() || !planFile.empty() || !precisionDiffDir.empty())
    return fail("a compiled library has its shapes and precision built in: "
                "--precision, --policy, --calibrate, --ranges, --plan, "
                "--precision-diff, --fuse-attention, --max-seq-len and "
                "--dynamic-shapes do not apply");
  int status = 0;
  std::string error;
  std::unique_ptr<mp::CompiledLibrary> lib =
      mp::CompiledLibrary::open(ctx, modelPath, status, error);
  if (!lib) {
    llvm::errs() << "mp-run: error: " << error << "\n";
    return status;
  }
  // --input-shape sizes generated inputs of a library with dims fixed at
  // run time; the others have theirs built in.
  bool dynamic = llvm::any_of(lib->inputs(), [](const mp::HostTensor &t) {
    return llvm::any_of(t.shape, [](int64_t d) { return d < 0; });
  });
  if (!inputShapes.empty() && !dynamic)
    return fail("a compiled library has its shapes built in: --input-shape "
                "applies only to one built with --dynamic-shapes");
  std::vector<std::string> names;
  for (const mp::HostTensor &spec : lib->inputs())
    names.push_back(spec.name);
  llvm::StringMap<SmallVector<int64_t>> pins;
  if (!parsePins(names, pins))
    return 1;
  for (auto [i, t] : llvm::enumerate(inputs))
    if (t.name.empty() && i < lib->inputs().size())
      t.name = lib->inputs()[i].name;
  if (generateInputs)
    for (const mp::HostTensor &spec : lib->inputs()) {
      if (llvm::any_of(inputs, [&](const mp::HostTensor &t) {
            return t.name == spec.name;
          }))
        continue;
      auto pin = pins.find(spec.name);
      SmallVector<int64_t> shape =
          pin != pins.end() ? pin->second : SmallVector<int64_t>(spec.shape);
      if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
        return fail("input '" + spec.name + "' is " + spec.describe() +
                    ": give its shape with --input-shape " + spec.name +
                    "=...");
      inputs.push_back(generate(spec.name, spec.elementType, shape));
    }
  std::vector<mp::HostTensor> outputs;
  if (deviceBuffers) {
    // One checked run, then `repeat` timed runs on buffers uploaded once
    // before them (each call allocates and uploads its own).
    double ms = 0;
    for (unsigned runs : {1u, (unsigned)repeat}) {
      if (!runs)
        continue;
      if (!lib->runOnDevice(inputs, outputs, runs, ms, status, error)) {
        llvm::errs() << "mp-run: error: " << error << "\n";
        return status;
      }
    }
    if (repeat > 0)
      llvm::outs() << llvm::format(
          "time: run mean %.3f ms over %u runs (%s library, on device "
          "buffers: inputs uploaded before, outputs downloaded after)\n",
          ms / repeat, (unsigned)repeat, lib->target().str().c_str());
  } else if (!lib->run(inputs, outputs, status, error)) {
    llvm::errs() << "mp-run: error: " << error << "\n";
    return status;
  }
  if (repeat > 0 && !deviceBuffers) {
    RunTimes times;
    if (!timeRuns([&] { return lib->run(inputs, outputs, status, error); },
                  times)) {
      llvm::errs() << "mp-run: error: " << error << "\n";
      return status;
    }
    llvm::outs() << llvm::format("time: run mean %.3f ms, min %.3f ms over %u "
                                 "runs (%s library, host buffers in and out)\n",
                                 times.mean, times.best, (unsigned)repeat,
                                 lib->target().str().c_str());
  }
  if (lib->target() == "cuda") {
    mp_memory_stats stats;
    mp_cuda_memory_stats(&stats);
    llvm::outs() << llvm::format("device memory: peak buffers %.3f MB, "
                                 "constants %.3f MB\n",
                                 stats.peak_buffer_bytes / 1e6,
                                 stats.constant_bytes / 1e6);
  }
  return finish(ctx, outputs, lib->precision() == "mixed");
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mp::hideLibraryOptions({&toolOptions});
  cl::ParseCommandLineOptions(argc, argv, "mp CPU runner\n");
  if (precision != "fp32" && precision != "mixed")
    return fail("--precision must be fp32 or mixed, got '" + precision + "'");
  if (!rangesOut.empty() && calibrateDirs.empty())
    return fail("--ranges-out writes what --calibrate measures: give "
                "--calibrate DIR");
  if (!rangesFile.empty() && !calibrateDirs.empty())
    return fail("--ranges and --calibrate both give value ranges: use one");
  if ((!reportFile.empty() || diffThreshold.getNumOccurrences()) &&
      precisionDiffDir.empty())
    return fail("--report and --diff-threshold apply to --precision-diff");
  if (!calibrateDirs.empty() && rangesOut.empty() && precision != "mixed" &&
      precisionDiffDir.empty())
    return fail("--calibrate measures ranges for a mixed build: add "
                "--ranges-out FILE, --precision mixed or --precision-diff");
  if (!testDir.empty()) {
    if (!calibrateDirs.empty() || !precisionDiffDir.empty() ||
        !planFile.empty())
      return fail("--calibrate, --plan and --precision-diff take a model, "
                  "not --test-dir");
    return runTestDir();
  }
  if (modelPath.empty())
    return fail("no model given (mp-run MODEL.onnx ... or mp-run --test-dir "
                "DIR)");
  bool mixed = precision == "mixed";

  DialectRegistry registry;
  mp::registerModelDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);

  // Inputs, all read before anything is compiled.
  std::vector<mp::HostTensor> inputs;
  std::string error;
  for (const std::string &arg : inputArgs) {
    auto [name, file] = StringRef(arg).split('=');
    if (name.empty() || file.empty())
      return fail("--input must be NAME=FILE, got '" + arg + "'");
    mp::HostTensor t;
    if (!mp::readTensorFile(file, &ctx, t, error))
      return fail(error);
    t.name = name.str();
    inputs.push_back(std::move(t));
  }
  if (!compareDir.empty() && !llvm::sys::fs::is_directory(compareDir))
    return fail("--compare: '" + compareDir + "' is not a folder");
  if (inputs.empty() && !compareDir.empty())
    for (const std::string &file : mp::numberedFiles(compareDir, "input")) {
      mp::HostTensor t;
      if (!mp::readTensorFile(file, &ctx, t, error))
        return fail(error);
      inputs.push_back(std::move(t));
    }

  if (StringRef(modelPath).ends_with(".so"))
    return runLibrary(&ctx, inputs);
  if (deviceBuffers)
    return fail("--device-buffers applies to a library written by "
                "mp-compile (libNAME.so), not to a model run by the JIT");

  mp::ModelOptions options = modelOptions();
  llvm::FileRemover temporaryRanges;
  if (!calibrateDirs.empty()) {
    if (!calibrateModel(&ctx, options, temporaryRanges))
      return 1;
    // Calibration alone: nothing else was asked for.
    if (inputs.empty() && !generateInputs && precisionDiffDir.empty())
      return 0;
    options.mixed = mixed || !precisionDiffDir.empty();
  }
  if (!precisionDiffDir.empty())
    return diffModel(&ctx, options);

  mp::CompileProgress progress;
  if (progressOpt)
    progress = [](StringRef stage, double ms) {
      llvm::errs() << llvm::format("mp-run: progress: %s: %.1f ms\n",
                                   stage.str().c_str(), ms);
    };
  mp::StageTimer loadTimer(progress);
  std::unique_ptr<mp::JitModel> model =
      mp::JitModel::load(&ctx, modelPath, options);
  if (!model || !model->nameInputs(inputs))
    return 1;
  // Loading reads the signature and imports the model once.
  loadTimer.done("load");
  model->setProgress(progress);

  // --input-shape pins: checked against given inputs, used for generated
  // ones.
  std::vector<std::string> names;
  for (const mp::TensorSpec &spec : model->inputs())
    names.push_back(spec.name);
  llvm::StringMap<SmallVector<int64_t>> pins;
  if (!parsePins(names, pins))
    return 1;
  for (const mp::HostTensor &t : inputs) {
    auto pin = pins.find(t.name);
    if (pin != pins.end() &&
        ArrayRef<int64_t>(pin->second) != ArrayRef<int64_t>(t.shape))
      return fail("input '" + t.name + "' is " + t.describe() +
                  ", but --input-shape gives " + pin->getKey() + "=" +
                  llvm::join(llvm::map_range(
                                 pin->second,
                                 [](int64_t d) { return std::to_string(d); }),
                             "x"));
  }
  for (const mp::TensorSpec &spec : model->inputs()) {
    if (llvm::any_of(inputs, [&](const mp::HostTensor &t) {
          return t.name == spec.name;
        }))
      continue;
    auto pin = pins.find(spec.name);
    if (!generateInputs && pin == pins.end())
      continue; // reported as missing by the model
    SmallVector<int64_t> shape =
        pin != pins.end() ? pin->second : SmallVector<int64_t>(spec.shape);
    auto type = RankedTensorType::get(spec.shape, spec.elementType);
    if (shape.size() != spec.shape.size())
      return fail("--input-shape " + spec.name + " has rank " +
                  std::to_string(shape.size()) + ", the model's input is " +
                  typeString(type));
    if (llvm::any_of(shape, ShapedType::isDynamic))
      return fail("input '" + spec.name + "' has dynamic dims (" +
                  typeString(type) + "): give its shape with --input-shape " +
                  spec.name + "=...");
    inputs.push_back(generate(spec.name, spec.elementType, shape));
    llvm::errs() << "mp-run: note: generated input '" << spec.name << "' "
                 << inputs.back().describe() << "\n";
  }

  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  if (!model->prepare(inputs))
    return 1;
  double compileMs =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::vector<mp::HostTensor> outputs;
  if (!model->run(inputs, outputs))
    return 1;
  if (repeat > 0) {
    RunTimes times;
    if (!timeRuns([&] { return model->run(inputs, outputs); }, times))
      return 1;
    llvm::outs() << llvm::format("time: compile %.1f ms (%s); run mean "
                                 "%.3f ms, min %.3f ms over %u runs\n",
                                 compileMs,
                                 model->lastVariantSource().str().c_str(),
                                 times.mean, times.best, (unsigned)repeat);
  }

  return finish(&ctx, outputs, mixed);
}
