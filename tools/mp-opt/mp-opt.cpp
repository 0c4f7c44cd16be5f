//===- mp-opt.cpp - the mp pass driver ------------------------------------===//
//
// mlir-opt with the mp dialect and passes, that also reads ONNX models:
// `mp-opt model.onnx --mp-...` imports the model (binary or `.onnxtext`) and
// runs the pipeline on it; `.mlir` inputs go through MlirOptMain unchanged.
//
//===----------------------------------------------------------------------===//

#include "mp/Dialect/Mp/IR/MpDialect.h"
#include "mp/Import/OnnxImporter.h"
#include "mp/Pipelines/Pipelines.h"
#include "mp/Precision/Policy.h"
#include "mp/Support/ToolOptions.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// What --help lists besides MLIR's options and the passes (LLVM's own
/// options are hidden, see main).
static llvm::cl::OptionCategory toolOptions("mp-opt options");

static llvm::cl::opt<bool>
    listOnnxOps(llvm::cl::cat(toolOptions), "list-onnx-ops",
                llvm::cl::desc("Print the ONNX ops the importer supports "
                               "(domain, op type, reviewed since-versions)"),
                llvm::cl::init(false));

static llvm::cl::opt<bool> printPrecisionPolicy(
    llvm::cl::cat(toolOptions), "print-precision-policy",
    llvm::cl::desc("Print the built-in precision policy as a markdown table "
                   "(ONNX op type, class, fp32 accumulation, reason)"),
    llvm::cl::init(false));

static llvm::cl::opt<bool> noOutput(
    llvm::cl::cat(toolOptions), "no-output",
    llvm::cl::desc("Import an ONNX model and run the pipeline without "
                   "printing the result (report-only passes, measurements)"),
    llvm::cl::init(false));

/// Imports an ONNX model, runs the command-line pipeline and prints the IR.
static LogicalResult runOnOnnx(StringRef inputFilename,
                               StringRef outputFilename,
                               DialectRegistry &registry) {
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // --mlir-timing covers the import too, as it covers parsing for .mlir.
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  TimingScope importTiming = timing.nest("ONNX import");
  OwningOpRef<ModuleOp> module = mp::importOnnxFile(inputFilename, &context);
  importTiming.stop();
  if (!module)
    return failure();
  PassManager pm(&context, ModuleOp::getOperationName());
  pm.enableTiming(timing);
  if (failed(applyPassManagerCLOptions(pm)) ||
      failed(config.setupPassPipeline(pm)) || failed(pm.run(*module)))
    return failure();
  if (noOutput)
    return success();
  std::string error;
  auto output = openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return failure();
  }
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  mp::hideLibraryOptions({&toolOptions});
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR (mp-lower-to-nvvm).
  registerAllGPUToLLVMIRTranslations(registry);
  registry.insert<mp::MpDialect>();
  registerAllPasses();
  mp::registerAllMpPasses();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "mp optimizer driver (MLIR files and ONNX models)\n",
      registry);
  if (listOnnxOps) {
    mp::printSupportedOnnxOps(llvm::outs());
    return 0;
  }
  if (printPrecisionPolicy) {
    mp::printDefaultPolicyTable(llvm::outs());
    return 0;
  }
  if (mp::isOnnxFile(inputFilename))
    return asMainReturnCode(runOnOnnx(inputFilename, outputFilename, registry));
  return asMainReturnCode(
      MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
