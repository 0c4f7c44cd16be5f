//===- mp-run.cpp - run an ONNX model on the CPU and check it -------------===//
//
//   mp-run model.onnx [--input NAME=file.npy|.pb ...] [--compare DIR]
//          [--precision fp32|mixed] [--policy FILE] [--output-dir DIR]
//          [--rtol R] [--atol A]
//
// Imports the model, optionally assigns mixed precision, specializes it to
// the input shapes, JIT-compiles it through the CPU pipeline and runs it.
// With --compare DIR (an ONNX test_data_set folder) the inputs default to
// DIR/input_N.pb and every output is checked against DIR/output_N.pb.
// Exit codes: 0 all outputs pass (or nothing to compare), 1 an error or a
// failed comparison.
//
//===----------------------------------------------------------------------===//

#include "mp/Dialect/Mp/IR/MpDialect.h"
#include "mp/Execution/CpuRunner.h"
#include "mp/Import/OnnxImporter.h"
#include "mp/Import/TensorFile.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx>"));
static cl::list<std::string>
    inputArgs("input", cl::desc("NAME=FILE (.npy or .pb); repeatable"));
static cl::opt<std::string>
    compareDir("compare",
               cl::desc("ONNX test_data_set folder: default inputs and "
                        "expected outputs"));
static cl::opt<std::string> precision("precision", cl::init("fp32"),
                                      cl::desc("fp32 or mixed"));
static cl::opt<std::string> policyFile("policy",
                                       cl::desc("precision policy (mixed)"));
static cl::opt<std::string> outputDir("output-dir",
                                      cl::desc("write outputs as NAME.npy"));
static cl::opt<double> rtolOpt("rtol", cl::init(-1),
                               cl::desc("relative tolerance (default 1e-4 "
                                        "for fp32, 1e-2 for fp16 outputs or "
                                        "--precision mixed)"));
static cl::opt<double> atolOpt("atol", cl::init(-1),
                               cl::desc("absolute tolerance (default 1e-5 "
                                        "for fp32, 1e-2 for fp16 outputs or "
                                        "--precision mixed)"));

static bool readTensor(StringRef path, MLIRContext *ctx, mp::HostTensor &t,
                       std::string &error) {
  return path.ends_with(".npy") ? mp::readNpy(path, ctx, t, error)
                                : mp::readTensorProtoFile(path, ctx, t, error);
}

/// The files DIR/<prefix>_0.pb, _1.pb, ... that exist.
static std::vector<std::string> numbered(StringRef dir, StringRef prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    SmallString<256> p(dir);
    llvm::sys::path::append(p, prefix + "_" + std::to_string(i) + ".pb");
    if (!llvm::sys::fs::exists(p))
      break;
    files.push_back(p.str().str());
  }
  return files;
}

static int fail(const Twine &message) {
  llvm::errs() << "mp-run: error: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "mp CPU runner\n");
  if (precision != "fp32" && precision != "mixed")
    return fail("--precision must be fp32 or mixed, got '" + precision + "'");
  bool mixed = precision == "mixed";

  DialectRegistry registry;
  registerAllDialects(registry);
  registry.insert<mp::MpDialect>();
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
    if (!readTensor(file, &ctx, t, error))
      return fail(error);
    t.name = name.str();
    inputs.push_back(std::move(t));
  }
  if (!compareDir.empty() && !llvm::sys::fs::is_directory(compareDir))
    return fail("--compare: '" + compareDir + "' is not a folder");
  if (inputs.empty() && !compareDir.empty())
    for (const std::string &file : numbered(compareDir, "input")) {
      mp::HostTensor t;
      if (!readTensor(file, &ctx, t, error))
        return fail(error);
      inputs.push_back(std::move(t));
    }

  // Test tensors without names take the graph inputs' names in order: a
  // first import, without constant inputs, gives them.
  if (llvm::any_of(inputs, [](const mp::HostTensor &t) { return t.name.empty(); })) {
    OwningOpRef<ModuleOp> probe = mp::importOnnxFile(modelPath, &ctx);
    if (!probe)
      return 1;
    auto func = *probe->getOps<func::FuncOp>().begin();
    for (auto [i, t] : llvm::enumerate(inputs))
      if (t.name.empty() && i < func.getNumArguments())
        if (auto n = func.getArgAttrOfType<StringAttr>(i, "mp.name"))
          t.name = n.str();
  }
  // Small integer inputs (axes, shapes, repeats, k) are compiled in as
  // constants: the shapes they decide become static.
  mp::ImportOptions importOptions;
  std::vector<mp::HostTensor> runtimeInputs;
  for (const mp::HostTensor &t : inputs) {
    auto elt = dyn_cast<IntegerType>(t.elementType);
    if (elt && elt.getWidth() > 1 && t.numElements() <= 64) {
      auto type = RankedTensorType::get(t.shape, t.elementType);
      importOptions.constantInputs[t.name] =
          DenseElementsAttr::getFromRawBuffer(type, t.data);
      continue;
    }
    runtimeInputs.push_back(t);
  }
  OwningOpRef<ModuleOp> module =
      mp::importOnnxFile(modelPath, &ctx, importOptions);
  if (!module)
    return 1;
  if (mixed) {
    PassManager pm(&ctx, ModuleOp::getOperationName());
    mp::buildMixedPrecisionPipeline(pm, policyFile, "", false, 1);
    if (failed(pm.run(*module)))
      return 1;
  }
  std::unique_ptr<mp::CpuRunner> runner =
      mp::CpuRunner::compile(std::move(module), runtimeInputs);
  if (!runner)
    return 1;
  std::vector<mp::HostTensor> outputs;
  if (!runner->run(runtimeInputs, outputs, error))
    return fail(error);

  if (!outputDir.empty()) {
    llvm::sys::fs::create_directories(outputDir);
    for (const mp::HostTensor &t : outputs) {
      std::string file = t.name;
      for (char &c : file)
        if (!llvm::isAlnum(c) && c != '.' && c != '-' && c != '_')
          c = '_';
      SmallString<256> p(outputDir);
      llvm::sys::path::append(p, file + ".npy");
      if (!mp::writeNpy(p, t, error))
        return fail(error);
    }
  }

  // Default tolerances: fp32 1e-4/1e-5; fp16 data or a mixed-precision run
  // 1e-2/1e-2 (fp16 keeps 11 bits).
  auto tolerances = [&](const mp::HostTensor &t) {
    bool half = mixed || t.elementType.isF16() || t.elementType.isBF16();
    return std::pair<double, double>{
        rtolOpt >= 0 ? rtolOpt : (half ? 1e-2 : 1e-4),
        atolOpt >= 0 ? atolOpt : (half ? 1e-2 : 1e-5)};
  };
  std::vector<std::string> expectedFiles =
      compareDir.empty() ? std::vector<std::string>()
                         : numbered(compareDir, "output");
  bool allPassed = true;
  llvm::outs() << llvm::format("%-28s %-22s %12s %12s %8s  %s\n", "output",
                               "type", "max abs err", "max rel err",
                               "argmax", compareDir.empty() ? "" : "result");
  for (auto [i, t] : llvm::enumerate(outputs)) {
    llvm::outs() << llvm::format("%-28s %-22s", t.name.c_str(),
                                 t.describe().c_str());
    if (i >= expectedFiles.size()) {
      llvm::outs() << "\n";
      continue;
    }
    mp::HostTensor expected;
    if (!readTensor(expectedFiles[i], &ctx, expected, error))
      return fail(error);
    auto [rt, at] = tolerances(t);
    mp::Comparison c = mp::compare(t, expected, rt, at);
    if (!c.shapeMatches) {
      llvm::outs() << "  FAIL: expected " << expected.describe() << "\n";
      allPassed = false;
      continue;
    }
    llvm::outs() << llvm::format(" %12.3g %12.3g %7.1f%%  %s", c.maxAbs,
                                 c.maxRel, 100 * c.argmaxAgreement,
                                 c.passed() ? "PASS" : "FAIL");
    if (!c.passed())
      llvm::outs() << " (" << c.mismatches << " elements beyond rtol=" << rt
                   << " atol=" << at << ")";
    if (c.nonFinite)
      llvm::outs() << " [" << c.nonFinite << " non-finite]";
    llvm::outs() << "\n";
    allPassed &= c.passed();
  }
  return allPassed ? 0 : 1;
}
