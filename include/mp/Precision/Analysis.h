//===- Analysis.h - deciding fp16 or fp32 for every op ----------*- C++ -*-===//
//
// The precision analysis colors every float op of a function f16 or f32:
//  1. classes from the policy (op type, node overrides);
//  2. safety rules that beat every class: shape/index guard, constants out
//     of fp16 range (mask sentinels excepted: they are rewritten instead);
//  3. TensorFlow-style propagation: deny spreads forward through
//     infer/clear ops that lead to more infer/deny ops; infer/clear ops
//     between allow ops become f16; f16 spreads through clear ops; the
//     remaining infer/clear ops follow their inputs.
//
//===----------------------------------------------------------------------===//

#ifndef MP_PRECISION_ANALYSIS_H
#define MP_PRECISION_ANALYSIS_H

#include "mp/Precision/Policy.h"
#include "mp/Precision/ValueRanges.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>

namespace mp {

/// Value statistics of a float constant.
struct ConstantStats {
  int64_t count = 0;
  int64_t nonzero = 0;
  /// Nonzero values that round to zero in fp16.
  int64_t flushToZero = 0;
  /// Values that become inf in fp16 (|v| >= 65520; 65504 is the largest
  /// finite value).
  int64_t overflow = 0;
  double maxAbs = 0;
  double minValue = 0;
  double maxValue = 0;
};

/// Statistics of the float data of `attr` (dense or resource elements).
ConstantStats computeConstantStats(mlir::ElementsAttr attr);

/// Mask sentinels at or below this value are rewritten for fp16.
constexpr double kSentinelThreshold = -1.0e4;
/// What sentinels become in fp16: exact, small enough that exp() of it
/// minus any real score is 0 even in fp32, and far enough from fp16's limit
/// (-65504) that adding scores, or up to six such masks, never overflows to
/// -inf.
constexpr double kFp16SafeSentinel = -10000.0;

/// What the analysis knows of values beyond the policy.
struct RangeOptions {
  /// Ranges measured on calibration data (mp-run --calibrate); null: none.
  const ValueRanges *measured = nullptr;
  /// A value whose measured |x| exceeds kFp16Max / overflowMargin keeps its
  /// producer and consumers in fp32: calibration data rarely holds the
  /// largest input a model will see.
  double overflowMargin = 4.0;
  /// A value more than this fraction of whose nonzero elements fp16 rounds
  /// to zero keeps its producer and consumers in fp32 (so does one with no
  /// element in fp16's normal range).
  double underflowFraction = 0.5;
  /// Without measured ranges: keep in fp32 what static bounds show can
  /// overflow fp16 (see StaticBounds.h).
  bool staticBounds = true;
};

/// Why a value measured as `r` must not be stored in fp16 under `options`
/// ("calibrated |x| max 1.7e+05 > 65504/4"), or nothing. `output` names the
/// node's output in the text when it has several (" (output 1)").
std::optional<std::string> rangeRule(const ValueRange &r,
                                     const RangeOptions &options,
                                     llvm::StringRef output = "");

class PrecisionAnalysis {
public:
  struct Decision {
    Compute compute = Compute::F32;
    bool accumulateF32 = false;
    PrecisionClass cls = PrecisionClass::deny;
    std::string rule;
  };
  /// Something the report lists: a guard, an out-of-range constant, a mask
  /// sentinel rewrite.
  struct Finding {
    mlir::Operation *op;
    std::string kind;
    std::string message;
  };

  /// `keepIoTypes`: the graph's inputs and outputs keep their types (what
  /// mp-assign-precision's keep-io-types decides); data movement that
  /// carries an input to an output of the same type then computes in it.
  /// `indexGuard`: how far back the shape/index guard reaches.
  PrecisionAnalysis(mlir::Operation *root, const PrecisionPolicy &policy,
                    const RangeOptions &ranges = {}, bool keepIoTypes = true,
                    IndexGuard indexGuard = IndexGuard::Arithmetic);

  /// Precision nodes in walk order (post-order: nested ops first).
  llvm::ArrayRef<mlir::Operation *> nodes() const { return order; }
  const Decision &decision(mlir::Operation *op) const {
    return decisions.find(op)->second;
  }
  /// Constant ops (mp.constant or mp.constant_of_shape) whose mask
  /// sentinels are rewritten when they are stored in fp16.
  const llvm::SetVector<mlir::Operation *> &maskSentinels() const {
    return sentinels;
  }
  llvm::ArrayRef<Finding> getFindings() const { return findings; }
  /// The plan and policy name of every node (precisionNodeKeys).
  const llvm::DenseMap<mlir::Operation *, std::string> &nodeKeys() const {
    return keys;
  }

private:
  void classify(const PrecisionPolicy &policy);
  void applyGuards(IndexGuard indexGuard);
  void checkConstants();
  void checkRanges(const RangeOptions &options);
  /// Keeps `op`, and every node reading result `result` of it, in fp32
  /// because of what is known of that value (`why`); `kind` names the
  /// finding.
  void keepValueFp32(mlir::Operation *op, unsigned result, llvm::StringRef kind,
                     const std::string &why);
  void propagate();
  /// The type `op` carries state in, and why: it reads an f32 (f16) graph
  /// input and its result is an f32 (f16) graph output ("carries fp32 state
  /// from graph input 'past' to graph output 'present'"), or nothing.
  std::optional<std::pair<Compute, std::string>>
  carriedState(mlir::Operation *op) const;

  llvm::SmallVector<mlir::Operation *> predecessors(mlir::Operation *op) const;
  llvm::SmallVector<mlir::Operation *> successors(mlir::Operation *op) const;
  bool isNode(mlir::Operation *op) const { return decisions.count(op); }

  mlir::Operation *root;
  bool keepIoTypes;
  /// Plan and policy names of the nodes (precisionNodeKeys).
  llvm::DenseMap<mlir::Operation *, std::string> keys;
  llvm::SmallVector<mlir::Operation *> order;
  llvm::DenseMap<mlir::Operation *, Decision> decisions;
  /// Nodes whose decision is final (safety rules and user overrides).
  llvm::DenseSet<mlir::Operation *> fixed;
  llvm::DenseSet<mlir::Operation *> decided;
  /// Nodes kept in fp32 by what is known of their values (checkRanges).
  llvm::DenseSet<mlir::Operation *> rangeRules;
  llvm::SetVector<mlir::Operation *> sentinels;
  std::vector<Finding> findings;
};

} // namespace mp

#endif // MP_PRECISION_ANALYSIS_H
