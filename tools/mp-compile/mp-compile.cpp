//===- mp-compile.cpp - compile an ONNX model into a shared library -------===//
//
//   mp-compile model.onnx -o out/libtts.so [--target cpu|cuda]
//              [--gpu sm_80,sm_90] [--precision fp32|mixed] [--policy FILE]
//              [--fuse-attention] [--input-shape NAME=1x16 ...]
//              [--dynamic-shapes]
//              [--shapes-from DIR] [--emit library|mlir|llvm|ptx]
//              [--block-size N] [--no-tensor-cores]
//              [--training "loss=NAME optimizer=adamw ..."]
//              [--loss-scaling "mode=dynamic ..."]
//
// Writes libtts.so (host code, and for CUDA a cubin per architecture),
// libtts.h and libtts.json. Running it needs only the mp runtime. Every
// dynamic input dim must be pinned (--input-shape, or the inputs of an ONNX
// test_data_set folder with --shapes-from, which also gives the values of
// inputs that decide shapes), or kept with --dynamic-shapes.
// Exit code 0 on success, 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "mp/Compile/Library.h"
#include "mp/Import/TensorFile.h"
#include "mp/Pipelines/CudaToolkit.h"
#include "mp/Pipelines/OnnxModel.h"
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
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

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
static cl::opt<bool>
    fuseAttention(cl::cat(toolOptions), "fuse-attention",
                  cl::desc("replace decomposed attention with "
                           "mp.attention first (mp-fuse-attention)"));
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

int main(int argc, char **argv) {
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
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);

  mp::ModelOptions modelOptions;
  modelOptions.mixed = precision == "mixed";
  modelOptions.policyFile = policyFile;
  modelOptions.rangesFile = rangesFile;
  modelOptions.fuseAttention = fuseAttention;
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
  if (failed(mp::writeLibrary(*module, entry, options, llvm::errs())))
    return 1;
  return 0;
}
