//===- mp-tune.cpp - search the fp32 nodes that meet an error budget ------===//
//
//   mp-tune model.onnx --data DIR[,DIR...] [--metric max-rel|max-abs|argmax|snr]
//           [--budget X] [--policy FILE] [--ranges FILE] [--fuse-attention]
//           [--plan-out FILE] [--report FILE]
//
// Finds a small set of nodes to keep in fp32 so that the mixed build's
// outputs meet the budget against the fp32 build on the inputs of the data
// folders (docs/precision.md, "Searching for a budget"). The plan it writes
// is a policy: `mp-opt --mp-mixed-precision="policy=PLAN"`, `mp-run
// --policy PLAN` and `mp-compile --policy PLAN` reproduce the build without
// data. Exit codes: 0 budget met, 1 an error, 2 the budget cannot be met
// (even with every candidate in fp32).
//
//===----------------------------------------------------------------------===//

#include "mp/Execution/PrecisionSearch.h"
#include "mp/Execution/ValueProbe.h"
#include "mp/Support/ToolOptions.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory toolOptions("mp-tune options");

static cl::opt<std::string> modelPath(cl::cat(toolOptions), cl::Positional,
                                      cl::desc("<model.onnx>"));
static cl::list<std::string> dataDirs(
    cl::cat(toolOptions), "data", cl::CommaSeparated,
    cl::desc("DIR[,DIR...]: the inputs to meet the budget on "
             "(test_data_set folders, or model folders holding them)"));
static cl::opt<std::string> metricName(
    cl::cat(toolOptions), "metric", cl::init("max-rel"),
    cl::desc("max-rel (max |mixed - fp32| / max |fp32|), max-abs, argmax "
             "(share of rows whose argmax agrees) or snr (dB)"));
static cl::opt<double>
    budget(cl::cat(toolOptions), "budget",
           cl::desc("the bound every output must meet (default: 0.01 for "
                    "max-rel and max-abs, 0.99 for argmax, 40 for snr)"));
static cl::opt<std::string> policyFile(cl::cat(toolOptions), "policy",
                                       cl::desc("start from this policy"));
static cl::opt<std::string>
    rangesFile(cl::cat(toolOptions), "ranges",
               cl::desc("value ranges from mp-run --calibrate"));
static cl::opt<bool> fuseAttention(
    cl::cat(toolOptions), "fuse-attention",
    cl::desc("replace decomposed attention with mp.attention first"));
static cl::opt<std::string>
    planOut(cl::cat(toolOptions), "plan-out",
            cl::desc("write the chosen build's plan (a policy) here"));
static cl::opt<std::string>
    reportFile(cl::cat(toolOptions), "report",
               cl::desc("write the search (evaluations, sensitivities, "
                        "nodes kept in fp32) as JSON"));

static int fail(const Twine &message) {
  llvm::errs() << "mp-tune: error: " << message << "\n";
  return 1;
}

static bool writeFile(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message()), false;
  os << text;
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mp::hideLibraryOptions({&toolOptions});
  cl::ParseCommandLineOptions(argc, argv,
                              "mp precision search: the fewest fp32 nodes "
                              "that meet an error budget\n");
  if (modelPath.empty())
    return fail("no model given (mp-tune MODEL.onnx --data DIR ...)");
  if (dataDirs.empty())
    return fail("--data DIR: give the inputs to meet the budget on");
  std::optional<mp::SearchMetric> metric = mp::parseSearchMetric(metricName);
  if (!metric)
    return fail("--metric must be max-rel, max-abs, argmax or snr, got '" +
                metricName + "'");
  mp::SearchOptions options;
  options.metric = *metric;
  options.budget = budget.getNumOccurrences() ? budget.getValue()
                   : *metric == mp::SearchMetric::Argmax ? 0.99
                   : *metric == mp::SearchMetric::Snr    ? 40.0
                                                         : 1e-2;
  if (!std::isfinite(options.budget) ||
      (*metric == mp::SearchMetric::Argmax &&
       (options.budget < 0 || options.budget > 1)) ||
      ((*metric == mp::SearchMetric::MaxRel ||
        *metric == mp::SearchMetric::MaxAbs) &&
       options.budget < 0))
    return fail(llvm::formatv("--budget {0} is not a bound {1} can meet",
                              llvm::format("%g", options.budget), metricName)
                    .str());
  options.progress = &llvm::errs();

  DialectRegistry registry;
  mp::registerModelDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);

  std::vector<std::vector<mp::HostTensor>> sets;
  std::string error;
  if (!mp::readInputSets(dataDirs, &ctx, sets, error))
    return fail("--data: " + error);
  mp::ModelOptions base;
  base.mixed = true;
  base.policyFile = policyFile;
  base.rangesFile = rangesFile;
  base.fuseAttention = fuseAttention;

  mp::SearchResult result;
  if (!mp::searchPrecision(&ctx, modelPath, base, sets, options, result))
    return 1;
  llvm::outs() << llvm::formatv(
      "{0}: {1} {2} (budget {3}) with {4} of {5} fp16 node(s) kept in fp32, "
      "after {6} evaluation(s) (+{7} fp32 reference, +{8} sensitivity run)\n",
      result.met ? "met" : "NOT met", metricName,
      llvm::format("%.4g", result.achieved),
      llvm::format("%g", options.budget), result.fp32Nodes.size(),
      result.fp16NodesDefault, result.evaluations, result.referenceRuns,
      result.sensitivityRuns);
  for (const std::string &node : result.fp32Nodes)
    llvm::outs() << "  fp32: " << node << "\n";
  if (!planOut.empty() && !writeFile(planOut, result.plan))
    return 1;
  if (!reportFile.empty()) {
    llvm::json::Object report =
        std::move(*mp::toJSON(result, options).getAsObject());
    report["model"] = modelPath;
    if (!planOut.empty())
      report["plan"] = planOut;
    if (!writeFile(reportFile,
                   llvm::formatv("{0:2}\n",
                                 llvm::json::Value(std::move(report)))
                       .str()))
      return 1;
  }
  return result.met ? 0 : 2;
}
