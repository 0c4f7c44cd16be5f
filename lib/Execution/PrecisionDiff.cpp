//===- PrecisionDiff.cpp - fp32 and mixed builds compared node by node ----===//

#include "mp/Execution/PrecisionDiff.h"
#include "mp/Execution/ValueProbe.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;

namespace mp {

/// Compares `actual` with `ref` elementwise (same element count).
static void compareValues(const HostTensor &actual, const HostTensor &ref,
                          ValueDiff &d) {
  int64_t n = std::min(actual.numElements(), ref.numElements());
  for (int64_t i = 0; i < n; ++i) {
    double e = ref.at(i), a = actual.at(i);
    if (!std::isfinite(e))
      continue;
    d.refMaxAbs = std::max(d.refMaxAbs, std::fabs(e));
    if (!std::isfinite(a)) {
      ++d.nonFinite;
      continue;
    }
    d.maxAbsError = std::max(d.maxAbsError, std::fabs(a - e));
  }
  d.relError = d.maxAbsError / std::max(d.refMaxAbs, 1e-30);
}

namespace {
/// What the mixed build's plan says of a node.
struct PlanEntry {
  std::string opType, compute, rule;
};
} // namespace

/// Reads the nodes of a plan written by mp-assign-precision.
static bool readPlan(StringRef path, llvm::StringMap<PlanEntry> &entries,
                     std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return error = "cannot read the plan: " + buffer.getError().message(),
           false;
  llvm::Expected<llvm::json::Value> plan =
      llvm::json::parse((*buffer)->getBuffer());
  if (!plan)
    return error = "bad plan: " + llvm::toString(plan.takeError()), false;
  const llvm::json::Object *nodes =
      plan->getAsObject() ? plan->getAsObject()->getObject("nodes") : nullptr;
  if (!nodes)
    return error = "the plan has no nodes", false;
  for (const auto &[key, value] : *nodes) {
    const llvm::json::Object *node = value.getAsObject();
    if (!node)
      continue;
    auto text = [&](StringRef field) {
      return node->getString(field).value_or("").str();
    };
    entries[key] = {text("op_type"), text("compute"), text("rule")};
  }
  return true;
}

/// Runs one build with exposed values.
static bool runBuild(MLIRContext *ctx, StringRef path, ModelOptions options,
                     ArrayRef<HostTensor> inputs,
                     std::vector<HostTensor> &outputs,
                     std::vector<ProbedValue> &values) {
  options.exposeValues = true;
  std::unique_ptr<JitModel> model = JitModel::load(ctx, path, options);
  return model && runProbed(*model, inputs, outputs, values);
}

bool diffPrecision(MLIRContext *ctx, StringRef path, const ModelOptions &mixed,
                   ArrayRef<HostTensor> inputs, double threshold,
                   PrecisionDiff &diff) {
  Location loc = FileLineColLoc::get(ctx, path, 0, 0);
  ModelOptions fp32 = mixed, mixedWithPlan = mixed;
  fp32.mixed = false;
  fp32.policyFile.clear();
  fp32.rangesFile.clear();
  fp32.planFile.clear();
  mixedWithPlan.mixed = true;
  llvm::SmallString<128> planPath;
  if (mixedWithPlan.planFile.empty()) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "mp-precision-diff", "json", planPath))
      return emitError(loc)
                 << "cannot create a temporary plan: " << ec.message(),
             false;
    mixedWithPlan.planFile = planPath.str().str();
  }
  std::vector<HostTensor> refOutputs, outputs;
  std::vector<ProbedValue> refValues, values;
  bool ran = runBuild(ctx, path, fp32, inputs, refOutputs, refValues) &&
             runBuild(ctx, path, mixedWithPlan, inputs, outputs, values);
  llvm::StringMap<PlanEntry> plan;
  std::string error;
  bool planRead = ran && readPlan(mixedWithPlan.planFile, plan, error);
  if (!planPath.empty())
    llvm::sys::fs::remove(planPath);
  if (!ran)
    return false;
  if (!planRead)
    return emitError(loc) << error, false;

  // Both builds expose the same nodes: exposure precedes precision.
  if (values.size() != refValues.size())
    return emitError(loc) << "the fp32 build exposes " << refValues.size()
                          << " values, the mixed build " << values.size(),
           false;
  diff = PrecisionDiff();
  diff.threshold = threshold;
  for (auto [ref, v] : llvm::zip(refValues, values)) {
    ValueDiff d;
    d.key = v.key;
    d.result = v.result;
    if (auto it = plan.find(v.key); it != plan.end()) {
      d.opType = it->second.opType;
      d.compute = it->second.compute;
      d.rule = it->second.rule;
    }
    compareValues(v.value, ref.value, d);
    int index = diff.nodes.size();
    if (d.nonFinite && diff.firstNonFinite < 0)
      diff.firstNonFinite = index;
    if ((d.nonFinite || d.relError > threshold) && diff.firstOverThreshold < 0)
      diff.firstOverThreshold = index;
    diff.nodes.push_back(std::move(d));
  }
  for (auto [ref, out] : llvm::zip(refOutputs, outputs)) {
    ValueDiff d;
    d.key = out.name;
    d.graphOutput = true;
    compareValues(out, ref, d);
    diff.outputs.push_back(std::move(d));
  }
  return true;
}

static std::string valueName(const ValueDiff &d) {
  return d.result ? d.key + " (output " + std::to_string(d.result) + ")"
                  : d.key;
}

static void printRow(const ValueDiff &d, llvm::raw_ostream &os) {
  os << llvm::format("%-44s %-18s %-4s %9.2e %9.2e %7lld  ",
                     valueName(d).c_str(), d.opType.c_str(), d.compute.c_str(),
                     d.relError, d.refMaxAbs, (long long)d.nonFinite)
     << d.rule << "\n";
}

void printPrecisionDiff(const PrecisionDiff &diff, llvm::raw_ostream &os) {
  os << llvm::format("%-44s %-18s %-4s %9s %9s %7s  %s\n", "node", "op", "prec",
                     "rel err", "max|ref|", "nonfin", "rule");
  for (const ValueDiff &d : diff.nodes)
    printRow(d, os);
  os << "graph outputs:\n";
  for (const ValueDiff &d : diff.outputs)
    printRow(d, os);
  auto verdict = [&](StringRef what, int index) {
    os << what << ": ";
    if (index < 0) {
      os << "none\n";
      return;
    }
    const ValueDiff &d = diff.nodes[index];
    os << "'" << valueName(d) << "' (" << d.opType << ", " << d.compute
       << "): relative error " << llvm::format("%.2e", d.relError);
    if (d.nonFinite)
      os << ", " << d.nonFinite << " non-finite";
    os << "; rule: " << d.rule << "\n";
  };
  verdict("first non-finite", diff.firstNonFinite);
  verdict(("first over " +
           llvm::formatv("{0}", llvm::format("%g", diff.threshold)).str())
              .c_str(),
          diff.firstOverThreshold);
}

static llvm::json::Value toJSON(const ValueDiff &d) {
  llvm::json::Object o{{"name", d.key},
                       {"rel_error", d.relError},
                       {"max_abs_error", d.maxAbsError},
                       {"ref_max_abs", d.refMaxAbs},
                       {"non_finite", d.nonFinite}};
  if (!d.graphOutput) {
    o["result"] = int64_t(d.result);
    o["op_type"] = d.opType;
    o["compute"] = d.compute;
    o["rule"] = d.rule;
  }
  return o;
}

llvm::json::Value toJSON(const PrecisionDiff &diff) {
  llvm::json::Array nodes, outputs;
  for (const ValueDiff &d : diff.nodes)
    nodes.push_back(toJSON(d));
  for (const ValueDiff &d : diff.outputs)
    outputs.push_back(toJSON(d));
  auto node = [&](int index) -> llvm::json::Value {
    if (index < 0)
      return nullptr;
    return toJSON(diff.nodes[index]);
  };
  return llvm::json::Object{
      {"threshold", diff.threshold},
      {"nodes", std::move(nodes)},
      {"outputs", std::move(outputs)},
      {"first_non_finite", node(diff.firstNonFinite)},
      {"first_over_threshold", node(diff.firstOverThreshold)}};
}

} // namespace mp
