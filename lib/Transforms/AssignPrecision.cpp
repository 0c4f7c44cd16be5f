//===- AssignPrecision.cpp - decide fp16 or fp32 for every float op -------===//

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/Analysis.h"
#include "mp/Precision/CastPlan.h"
#include "mp/Precision/Materialize.h"
#include "mp/Precision/Plan.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mp {
#define GEN_PASS_DEF_ASSIGNPRECISION
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

struct AssignPrecisionPass
    : public mp::impl::AssignPrecisionBase<AssignPrecisionPass> {
  using AssignPrecisionBase::AssignPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::unique_ptr<PrecisionPolicy> policy;
    if (policyFile.empty()) {
      policy = std::make_unique<PrecisionPolicy>(PrecisionPolicy::builtin());
    } else {
      std::string error;
      std::vector<std::string> warnings;
      policy = PrecisionPolicy::load(policyFile, error, warnings);
      for (const std::string &w : warnings)
        emitWarning(module.getLoc(), "policy: ") << w;
      if (!policy) {
        emitError(module.getLoc(), "policy: ") << error;
        return signalPassFailure();
      }
    }
    RangeOptions rangeOptions;
    rangeOptions.overflowMargin = overflowMargin;
    rangeOptions.staticBounds = staticBounds;
    std::unique_ptr<ValueRanges> measured;
    if (!rangesFile.empty()) {
      std::string error;
      measured = ValueRanges::load(rangesFile, error);
      if (!measured) {
        emitError(module.getLoc(), "ranges: ") << error;
        return signalPassFailure();
      }
      rangeOptions.measured = measured.get();
    }
    if (!(overflowMargin >= 1.0)) {
      emitError(module.getLoc(), "overflow-margin must be at least 1, not ")
          << llvm::formatv("{0}", llvm::format("%g", overflowMargin.getValue()))
                 .str();
      return signalPassFailure();
    }
    bool keepIo = keepIoTypes == KeepIoTypes::Policy
                      ? policy->keepIoTypes.value_or(true)
                      : keepIoTypes == KeepIoTypes::Yes;
    IndexGuard guard =
        indexGuard == IndexGuardChoice::Policy
            ? policy->indexGuard.value_or(IndexGuard::Arithmetic)
            : (indexGuard == IndexGuardChoice::Exact ? IndexGuard::Exact
                                                     : IndexGuard::Arithmetic);

    llvm::json::Object nodes, summaries;
    llvm::StringSet<> knownKeys;
    std::string lastFunction;
    for (auto func : module.getOps<func::FuncOp>()) {
      PrecisionAnalysis analysis(func, *policy, rangeOptions, keepIo, guard);
      for (const auto &entry : analysis.nodeKeys())
        knownKeys.insert(entry.second);
      MLIRContext *ctx = func.getContext();
      for (Operation *op : analysis.nodes()) {
        const auto &d = analysis.decision(op);
        Type f32 = Float32Type::get(ctx);
        op->setAttr(kPrecisionAttrName,
                    PrecisionAttr::get(ctx, computeType(ctx, d.compute),
                                       d.accumulateF32 ? f32 : Type(), d.cls,
                                       d.rule));
      }
      for (Operation *op : analysis.maskSentinels())
        op->setAttr(kMaskSentinelAttrName, UnitAttr::get(ctx));
      func->setAttr(kKeepIoTypesAttrName, BoolAttr::get(ctx, keepIo));
      if (report)
        printReport(func, keepIo, analysis.getFindings(), llvm::errs());
      if (!planFile.empty()) {
        PlanSummary summary;
        llvm::json::Object plan =
            buildPlan(func, keepIo, analysis.getFindings(), summary);
        for (auto &[key, value] : *plan.getObject("nodes"))
          nodes[key] = std::move(value);
        summaries[func.getName()] = std::move(*plan.get("summary"));
        lastFunction = func.getName().str();
      }
    }
    if (measured)
      warnUnknownNodes(*measured, knownKeys);
    for (const std::string &re : policy->unmatchedPatterns())
      emitWarning(module.getLoc(), "policy: node_patterns regex '")
          << re << "' matches no node";
    if (planFile.empty())
      return;
    // One object for the module, so that the plan is a policy: node keys
    // carry "@function:" prefixes when there are several functions.
    llvm::json::Object plan{{"version", 1},
                            {"keep_io_types", keepIo},
                            {"index_guard", stringifyIndexGuard(guard)},
                            {"nodes", std::move(nodes)}};
    if (summaries.size() == 1) {
      plan["function"] = lastFunction;
      plan["summary"] = std::move(*summaries.get(lastFunction));
    } else {
      plan["summaries"] = std::move(summaries);
    }
    if (failed(writePlan(std::move(plan))))
      return signalPassFailure();
  }

  /// Ranges measured on another graph (say, without attention fusion) name
  /// nodes this one lacks: those nodes are not checked, so say so.
  void warnUnknownNodes(const ValueRanges &measured,
                        const llvm::StringSet<> &knownKeys) {
    size_t unknown = 0;
    std::string first;
    for (StringRef key : measured.keys())
      if (!knownKeys.contains(key) && unknown++ == 0)
        first = key.str();
    if (unknown)
      emitWarning(getOperation().getLoc(), "ranges: ")
          << unknown << " of " << measured.numNodes()
          << " measured nodes are not in this graph (first: '" << first
          << "'); were they measured with other options?";
  }

  LogicalResult writePlan(llvm::json::Object plan) {
    std::string error;
    auto file = openOutputFile(planFile, &error);
    if (!file)
      return emitError(getOperation().getLoc(), "cannot write plan: ")
             << error;
    file->os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(plan)))
               << "\n";
    file->keep();
    return success();
  }
};

} // namespace
