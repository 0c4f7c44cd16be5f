//===- PrecisionSearch.h - the fewest fp32 nodes that meet an error budget -*- C++ -*-===//
//
// mp-tune: starting from the policy's mixed build, finds a small set of
// nodes to keep in fp32 so that the outputs meet an error budget against
// the fp32 build on the user's data. Candidates are the nodes the policy
// puts in fp16, ordered by their own fp16 error measured in one run
// (mp-shadow-fp16); a bisection over how many of the worst to keep in fp32
// then needs about log2(candidates) evaluations.
//
//===----------------------------------------------------------------------===//

#ifndef MP_EXECUTION_PRECISIONSEARCH_H
#define MP_EXECUTION_PRECISIONSEARCH_H

#include "mp/Execution/JitModel.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mp {

/// How the outputs of the mixed build are scored against the fp32 build;
/// every float output of every input set must meet the budget.
enum class SearchMetric {
  /// max |mixed - fp32| / max |fp32| <= budget.
  MaxRel,
  /// max |mixed - fp32| <= budget.
  MaxAbs,
  /// Share of rows (last axis) whose argmax agrees >= budget; outputs of
  /// rank < 2 or last dim 1 count as agreeing when their max-rel <= 1e-2.
  Argmax,
  /// 10 log10(sum fp32^2 / sum (mixed - fp32)^2) >= budget (dB).
  Snr,
};

/// Parses "max-rel", "max-abs", "argmax" or "snr".
std::optional<SearchMetric> parseSearchMetric(llvm::StringRef name);
llvm::StringRef searchMetricName(SearchMetric metric);

struct SearchOptions {
  SearchMetric metric = SearchMetric::MaxRel;
  double budget = 1e-2;
  /// Progress lines (one per evaluation); null for none.
  llvm::raw_ostream *progress = nullptr;
};

struct SearchResult {
  bool met = false;
  /// The score of the chosen build (worst over outputs and input sets).
  double achieved = 0;
  /// Mixed builds compiled and run: the policy's, then the bisection's.
  int evaluations = 0;
  int referenceRuns = 1, sensitivityRuns = 0;
  int fp16NodesDefault = 0;
  /// The nodes the search keeps in fp32, worst first.
  std::vector<std::string> fp32Nodes;
  /// Each candidate's own fp16 error (relative), worst first.
  std::vector<std::pair<std::string, double>> sensitivity;
  /// (nodes kept in fp32, score, met) per evaluation, in order.
  struct Step {
    int kept;
    double score;
    bool met;
  };
  std::vector<Step> history;
  /// The chosen build's plan (JSON text): a policy that reproduces it.
  std::string plan;
};

/// Searches as described above for the model at `path` built with `base`
/// (its policy, ranges and attention fusion) on the input `sets`. False
/// with a diagnostic on error; a budget that cannot be met is not an
/// error (`met` is false, the all-candidates-fp32 build is reported).
bool searchPrecision(mlir::MLIRContext *ctx, llvm::StringRef path,
                     const ModelOptions &base,
                     llvm::ArrayRef<std::vector<HostTensor>> sets,
                     const SearchOptions &options, SearchResult &result);

/// The result as JSON (mp-tune --report).
llvm::json::Value toJSON(const SearchResult &result,
                         const SearchOptions &options);

} // namespace mp

#endif // MP_EXECUTION_PRECISIONSEARCH_H
