//===- PrecisionSearch.cpp - the fewest fp32 nodes that meet a budget -----===//

#include "mp/Execution/PrecisionSearch.h"
#include "mp/Execution/ValueProbe.h"
#include "mp/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;

namespace mp {

std::optional<SearchMetric> parseSearchMetric(StringRef name) {
  return llvm::StringSwitch<std::optional<SearchMetric>>(name)
      .Case("max-rel", SearchMetric::MaxRel)
      .Case("max-abs", SearchMetric::MaxAbs)
      .Case("argmax", SearchMetric::Argmax)
      .Case("snr", SearchMetric::Snr)
      .Default(std::nullopt);
}

StringRef searchMetricName(SearchMetric metric) {
  switch (metric) {
  case SearchMetric::MaxRel:
    return "max-rel";
  case SearchMetric::MaxAbs:
    return "max-abs";
  case SearchMetric::Argmax:
    return "argmax";
  case SearchMetric::Snr:
    return "snr";
  }
  llvm_unreachable("unknown metric");
}

/// Whether larger scores are better (argmax agreement, SNR).
static bool higherIsBetter(SearchMetric m) {
  return m == SearchMetric::Argmax || m == SearchMetric::Snr;
}

static double worstScore(SearchMetric m) {
  return higherIsBetter(m) ? -INFINITY : INFINITY;
}

static double worse(SearchMetric m, double a, double b) {
  return higherIsBetter(m) ? std::min(a, b) : std::max(a, b);
}

static bool meets(const SearchOptions &o, double score) {
  return higherIsBetter(o.metric) ? score >= o.budget : score <= o.budget;
}

/// max |a - e| / max |e| (and max |a - e|), infinite when `a` has a
/// non-finite value where `e` is finite.
static void normwise(const HostTensor &a, const HostTensor &e, double &maxAbs,
                     double &rel) {
  double diff = 0, size = 0;
  for (int64_t i = 0, n = e.numElements(); i < n; ++i) {
    double x = a.at(i), y = e.at(i);
    if (!std::isfinite(y))
      continue;
    size = std::max(size, std::fabs(y));
    diff = std::isfinite(x) ? std::max(diff, std::fabs(x - y)) : INFINITY;
  }
  maxAbs = diff;
  rel = diff / std::max(size, 1e-30);
}

/// The score of one output against its fp32 value.
static double scoreOutput(SearchMetric m, const HostTensor &a,
                          const HostTensor &e) {
  if (a.numElements() != e.numElements())
    return worstScore(m);
  // Integer outputs (token ids, argmax) must be exact.
  if (!isa<FloatType>(e.elementType)) {
    for (int64_t i = 0, n = e.numElements(); i < n; ++i)
      if (a.at(i) != e.at(i))
        return worstScore(m);
    return m == SearchMetric::Argmax ? 1.0
           : m == SearchMetric::Snr  ? INFINITY
                                     : 0.0;
  }
  double maxAbs, rel;
  normwise(a, e, maxAbs, rel);
  switch (m) {
  case SearchMetric::MaxRel:
    return rel;
  case SearchMetric::MaxAbs:
    return maxAbs;
  case SearchMetric::Snr: {
    if (!std::isfinite(maxAbs))
      return -INFINITY;
    double signal = 0, noise = 0;
    for (int64_t i = 0, n = e.numElements(); i < n; ++i) {
      double y = e.at(i), d = a.at(i) - y;
      if (std::isfinite(y)) {
        signal += y * y;
        noise += d * d;
      }
    }
    return noise == 0 ? INFINITY : 10 * std::log10(signal / noise);
  }
  case SearchMetric::Argmax:
    // compare() scores rows along the last axis of rank >= 2 outputs.
    if (e.shape.size() < 2 || e.shape.back() < 2)
      return rel <= 1e-2 ? 1.0 : 0.0;
    return std::isfinite(maxAbs) ? compare(a, e, 0, 0).argmaxAgreement : 0.0;
  }
  llvm_unreachable("unknown metric");
}

namespace {

/// Runs the model's builds on every input set and scores mixed ones.
class Searcher {
public:
  Searcher(MLIRContext *ctx, StringRef path, const ModelOptions &base,
           ArrayRef<std::vector<HostTensor>> sets, const SearchOptions &o)
      : ctx(ctx), path(path), base(base), sets(sets), options(o),
        loc(FileLineColLoc::get(ctx, path, 0, 0)) {}

  /// The fp32 build's outputs (the reference).
  bool runReference() {
    ModelOptions fp32 = base;
    fp32.mixed = false;
    fp32.policyFile.clear();
    fp32.rangesFile.clear();
    fp32.planFile.clear();
    return run(fp32, reference);
  }

  /// Each fp16 node's own error, worst first (one run of mp-shadow-fp16).
  bool measureSensitivity(std::vector<std::pair<std::string, double>> &out) {
    ModelOptions shadow = base;
    shadow.mixed = true;
    shadow.shadowFp16 = true;
    std::unique_ptr<JitModel> model = JitModel::load(ctx, path, shadow);
    if (!model)
      return false;
    llvm::StringMap<double> error;
    std::vector<std::string> order;
    auto measure = [&](ArrayRef<ProbedValue> values) {
      llvm::StringMap<const HostTensor *> exact;
      for (const ProbedValue &v : values)
        exact[std::to_string(v.result) + ":" + v.key] = &v.value;
      for (const ProbedValue &v : values) {
        StringRef key(v.key);
        if (!key.consume_front(shadowKey("")))
          continue;
        const HostTensor *ref = exact.lookup(std::to_string(v.result) + ":" +
                                             key.str());
        if (!ref)
          continue;
        double maxAbs, rel;
        normwise(v.value, *ref, maxAbs, rel);
        auto [it, inserted] = error.try_emplace(key, rel);
        if (inserted)
          order.push_back(key.str());
        else
          it->second = std::max(it->second, rel);
      }
    };
    if (!probeSets(*model, sets, measure))
      return false;
    out.clear();
    for (const std::string &key : order)
      out.push_back({key, error.lookup(key)});
    // Worst first; ties keep program order.
    llvm::stable_sort(out, [](const auto &a, const auto &b) {
      return a.second > b.second;
    });
    return true;
  }

  /// Builds the mixed model with `fp32Nodes` forced to fp32 and scores it.
  /// `plan` receives its plan.
  bool evaluate(ArrayRef<std::pair<std::string, double>> fp32Nodes,
                double &score, std::string &plan) {
    llvm::SmallString<128> policyPath, planPath;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "mp-tune-policy", "json", policyPath))
      return emitError(loc) << "cannot create a temporary file: "
                            << ec.message(),
             false;
    llvm::FileRemover removePolicy(policyPath);
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "mp-tune-plan", "json", planPath))
      return emitError(loc) << "cannot create a temporary file: "
                            << ec.message(),
             false;
    llvm::FileRemover removePlan(planPath);
    if (!writePolicy(fp32Nodes, policyPath))
      return false;
    ModelOptions mixed = base;
    mixed.mixed = true;
    mixed.policyFile = policyPath.str().str();
    mixed.planFile = planPath.str().str();
    std::vector<std::vector<HostTensor>> outputs;
    if (!run(mixed, outputs))
      return false;
    score = higherIsBetter(options.metric) ? INFINITY : 0.0;
    for (auto [got, want] : llvm::zip(outputs, reference))
      for (const HostTensor &e : want) {
        const HostTensor *a = nullptr;
        for (const HostTensor &t : got)
          if (t.name == e.name)
            a = &t;
        score = worse(options.metric, score,
                      a ? scoreOutput(options.metric, *a, e)
                        : worstScore(options.metric));
      }
    auto buffer = llvm::MemoryBuffer::getFile(planPath);
    if (!buffer)
      return emitError(loc) << "cannot read the plan: "
                            << buffer.getError().message(),
             false;
    plan = (*buffer)->getBuffer().str();
    return true;
  }

  /// The nodes the policy's build computes in fp16, from its plan.
  static std::vector<std::string> fp16Nodes(StringRef plan) {
    std::vector<std::string> nodes;
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(plan);
    if (!json) {
      llvm::consumeError(json.takeError());
      return nodes;
    }
    if (const llvm::json::Object *o = json->getAsObject())
      if (const llvm::json::Object *n = o->getObject("nodes"))
        for (const auto &[key, node] : *n)
          if (const llvm::json::Object *d = node.getAsObject())
            if (d->getString("compute") == "f16")
              nodes.push_back(key.str());
    return nodes;
  }

private:
  bool run(const ModelOptions &o,
           std::vector<std::vector<HostTensor>> &outputs) {
    std::unique_ptr<JitModel> model = JitModel::load(ctx, path, o);
    if (!model)
      return false;
    outputs.clear();
    for (std::vector<HostTensor> inputs : sets) {
      outputs.emplace_back();
      if (!model->nameInputs(inputs) || !model->run(inputs, outputs.back()))
        return false;
    }
    return true;
  }

  /// The user's policy (or none) with `fp32Nodes` forced to fp32.
  bool writePolicy(ArrayRef<std::pair<std::string, double>> fp32Nodes,
                   StringRef to) {
    llvm::json::Object policy;
    if (!base.policyFile.empty()) {
      auto buffer = llvm::MemoryBuffer::getFile(base.policyFile);
      llvm::Expected<llvm::json::Value> json =
          buffer ? llvm::json::parse((*buffer)->getBuffer())
                 : llvm::Expected<llvm::json::Value>(llvm::createStringError(
                       buffer.getError(), "cannot read the policy"));
      if (!json || !json->getAsObject())
        return emitError(loc) << "policy '" << base.policyFile << "': "
                              << (json ? "not an object"
                                       : llvm::toString(json.takeError())),
               false;
      policy = std::move(*json->getAsObject());
    }
    llvm::json::Object *nodes = policy.getObject("nodes");
    if (!nodes) {
      policy["nodes"] = llvm::json::Object();
      nodes = policy.getObject("nodes");
    }
    for (const auto &[key, error] : fp32Nodes)
      (*nodes)[key] = llvm::json::Object{
          {"compute", "f32"},
          {"rule", llvm::formatv("mp-tune: own fp16 error {0}",
                                 llvm::format("%.2e", error))
                       .str()}};
    std::error_code ec;
    llvm::raw_fd_ostream os(to, ec);
    if (ec)
      return emitError(loc) << "cannot write '" << to << "': " << ec.message(),
             false;
    os << llvm::json::Value(std::move(policy));
    return true;
  }

  MLIRContext *ctx;
  StringRef path;
  const ModelOptions &base;
  ArrayRef<std::vector<HostTensor>> sets;
  const SearchOptions &options;
  Location loc;
  std::vector<std::vector<HostTensor>> reference;
};

} // namespace

bool searchPrecision(MLIRContext *ctx, StringRef path, const ModelOptions &base,
                     ArrayRef<std::vector<HostTensor>> sets,
                     const SearchOptions &options, SearchResult &result) {
  result = SearchResult();
  Searcher searcher(ctx, path, base, sets, options);
  if (!searcher.runReference())
    return false;
  std::string metric = searchMetricName(options.metric).str();
  auto step = [&](ArrayRef<std::pair<std::string, double>> kept,
                  double &score, std::string &plan) {
    if (!searcher.evaluate(kept, score, plan))
      return false;
    ++result.evaluations;
    bool met = meets(options, score);
    result.history.push_back({int(kept.size()), score, met});
    if (options.progress)
      *options.progress << llvm::formatv(
          "mp-tune: evaluation {0}: {1} node(s) kept in fp32: {2} {3} ({4})\n",
          result.evaluations, kept.size(), metric,
          llvm::format("%.4g", score), met ? "met" : "not met");
    return true;
  };

  // 1. The policy's own build.
  double score;
  std::string plan;
  if (!step({}, score, plan))
    return false;
  std::vector<std::string> fp16 = Searcher::fp16Nodes(plan);
  result.fp16NodesDefault = fp16.size();
  result.achieved = score;
  result.plan = plan;
  if ((result.met = meets(options, score)))
    return true;

  // 2. Candidates ordered by their own fp16 error.
  if (!searcher.measureSensitivity(result.sensitivity))
    return false;
  result.sensitivityRuns = 1;
  llvm::StringSet<> measured;
  for (const auto &entry : result.sensitivity)
    measured.insert(entry.first);
  std::vector<std::pair<std::string, double>> candidates;
  for (const auto &entry : result.sensitivity)
    if (llvm::is_contained(fp16, entry.first))
      candidates.push_back(entry);
  // fp16 nodes no shadow measured (inside regions) come last.
  for (const std::string &key : fp16)
    if (!measured.contains(key))
      candidates.push_back({key, 0.0});

  // 3. Bisection over how many of the worst to keep in fp32: the smallest
  // count that meets the budget, assuming more fp32 never hurts.
  size_t lo = 0, hi = candidates.size();
  std::optional<size_t> best;
  std::string bestPlan;
  double bestScore = 0;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (!step(ArrayRef(candidates).take_front(mid), score, plan))
      return false;
    if (meets(options, score)) {
      hi = mid;
      best = mid;
      bestPlan = plan;
      bestScore = score;
    } else {
      lo = mid;
    }
  }
  if (!best) {
    // Only the build with every candidate in fp32 is left.
    if (!step(candidates, score, plan))
      return false;
    best = candidates.size();
    bestPlan = plan;
    bestScore = score;
  }
  result.met = meets(options, bestScore);
  result.achieved = bestScore;
  result.plan = bestPlan;
  for (const auto &entry : ArrayRef(candidates).take_front(*best))
    result.fp32Nodes.push_back(entry.first);
  return true;
}

/// JSON has no infinity: non-finite scores are written as the strings
/// "inf", "-inf" (an exact SNR, an overflowed output) and "nan".
static llvm::json::Value number(double v) {
  if (std::isfinite(v))
    return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

llvm::json::Value toJSON(const SearchResult &r, const SearchOptions &o) {
  llvm::json::Array history, sensitivity, fp32;
  for (const SearchResult::Step &s : r.history)
    history.push_back(llvm::json::Object{
        {"fp32_nodes", s.kept},
        {"score", number(s.score)},
        {"met", s.met}});
  for (const auto &[key, error] : r.sensitivity)
    sensitivity.push_back(
        llvm::json::Object{{"node", key}, {"error", number(error)}});
  for (const std::string &key : r.fp32Nodes)
    fp32.push_back(key);
  return llvm::json::Object{
      {"metric", searchMetricName(o.metric)},
      {"budget", o.budget},
      {"met", r.met},
      {"achieved", number(r.achieved)},
      {"evaluations", r.evaluations},
      {"reference_runs", r.referenceRuns},
      {"sensitivity_runs", r.sensitivityRuns},
      {"fp16_nodes_default", r.fp16NodesDefault},
      {"fp32_nodes", std::move(fp32)},
      {"history", std::move(history)},
      {"sensitivity", std::move(sensitivity)}};
}

} // namespace mp
