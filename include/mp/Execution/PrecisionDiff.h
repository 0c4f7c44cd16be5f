//===- PrecisionDiff.h - fp32 and mixed builds compared node by node -*- C++
//-*-===//
//
// mp-run --precision-diff: runs the fp32 and the mixed build of a model on
// the same inputs with every node's outputs exposed and reports, per node
// in program order, how far the mixed value is from the fp32 one, the rule
// that chose its precision, and the first node that goes non-finite or past
// a relative error threshold: "which node went wrong?".
//
//===----------------------------------------------------------------------===//

#ifndef MP_EXECUTION_PRECISIONDIFF_H
#define MP_EXECUTION_PRECISIONDIFF_H

#include "mp/Execution/JitModel.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mp {

/// One output of one node (or of the graph) in both builds.
struct ValueDiff {
  /// Node key and output index; graph outputs have their name and no node.
  std::string key;
  unsigned result = 0;
  bool graphOutput = false;
  /// From the mixed build's plan (empty for values no node decides).
  std::string opType, compute, rule;
  /// max |fp32|, max |mixed - fp32| over elements finite in fp32, and their
  /// ratio (the error relative to the value's size).
  double refMaxAbs = 0, maxAbsError = 0, relError = 0;
  /// Elements non-finite in the mixed build where fp32 is finite.
  int64_t nonFinite = 0;
};

struct PrecisionDiff {
  std::vector<ValueDiff> nodes;
  std::vector<ValueDiff> outputs;
  double threshold = 0;
  /// Index in `nodes` of the first non-finite value and of the first value
  /// whose relative error exceeds `threshold`; -1 when there is none.
  int firstNonFinite = -1, firstOverThreshold = -1;
};

/// Builds `path` in fp32 and as `mixed` says (its policy, ranges, fusion),
/// both with every node's outputs exposed, runs both on named `inputs` and
/// compares. False with a diagnostic on error.
bool diffPrecision(mlir::MLIRContext *ctx, llvm::StringRef path,
                   const ModelOptions &mixed, llvm::ArrayRef<HostTensor> inputs,
                   double threshold, PrecisionDiff &diff);

/// One line per node, then the graph outputs and the verdict.
void printPrecisionDiff(const PrecisionDiff &diff, llvm::raw_ostream &os);

/// The same as JSON: {"threshold", "nodes": [...], "outputs": [...],
/// "first_non_finite", "first_over_threshold"} (null when none).
llvm::json::Value toJSON(const PrecisionDiff &diff);

} // namespace mp

#endif // MP_EXECUTION_PRECISIONDIFF_H
