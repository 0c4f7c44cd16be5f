//===- ValueRanges.h - value statistics measured on calibration data -*- C++
//-*-===//
//
// What the fp32 build of a model computed, per node output, on calibration
// inputs: the range of its values and how many of them fp16 cannot hold.
// mp-run --calibrate measures them (mp-expose-values makes every node output
// a graph output); mp-assign-precision="ranges=FILE" keeps in fp32 the nodes
// whose values would overflow fp16 or mostly leave its normal range. Nodes
// are named by precisionNodeKeys, as plans and policies name them.
//
//===----------------------------------------------------------------------===//

#ifndef MP_PRECISION_VALUERANGES_H
#define MP_PRECISION_VALUERANGES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>

namespace mp {

/// fp16's largest finite value.
constexpr double kFp16Max = 65504.0;
/// fp16's smallest normal magnitude (2^-14); below it values lose bits.
constexpr double kFp16MinNormal = 6.103515625e-05;
/// Magnitudes below half of fp16's smallest subnormal (2^-25) round to zero.
constexpr double kFp16FlushBelow = 2.98023223876953125e-08;

/// Statistics of one float output of a node over every calibration sample.
struct ValueRange {
  double min = 0, max = 0, absMax = 0;
  /// Elements seen, nonzero ones, nonzero ones with |x| below fp16's normal
  /// range, nonzero ones fp16 rounds to zero, and NaN or infinite ones
  /// (skipped by min/max).
  int64_t count = 0, nonzero = 0, belowNormal = 0, flushToZero = 0,
          nonFinite = 0;

  /// Adds `values` (fp32 data).
  void add(llvm::ArrayRef<float> values);
  /// Fraction of the nonzero values below fp16's normal range.
  double belowNormalFraction() const {
    return nonzero ? double(belowNormal) / double(nonzero) : 0.0;
  }
  /// Fraction of the nonzero values that fp16 rounds to zero.
  double flushFraction() const {
    return nonzero ? double(flushToZero) / double(nonzero) : 0.0;
  }
};

/// Calibration statistics by node key and result index.
class ValueRanges {
public:
  /// Reads a file written by toJSON. Null with `error` ("FILE: path:
  /// message") when it cannot be read or is malformed.
  static std::unique_ptr<ValueRanges> load(llvm::StringRef path,
                                           std::string &error);

  /// The statistics of output `result` of node `key`, if measured.
  const ValueRange *find(llvm::StringRef key, unsigned result) const;
  /// Adds one sample of output `result` of node `key`.
  void add(llvm::StringRef key, unsigned result, llvm::ArrayRef<float> values);
  /// Counts one calibration sample (one set of inputs).
  void countSample() { ++numSamples; }
  int64_t samples() const { return numSamples; }
  size_t numNodes() const { return nodes.size(); }
  /// The measured node keys, sorted.
  llvm::SmallVector<llvm::StringRef> keys() const;

  /// {"version": 1, "kind": "mp-calibration", "model", "samples",
  ///  "nodes": {KEY: [{"result", "min", "max", "abs_max", "count",
  ///  "nonzero", "below_normal", "flush_to_zero", "non_finite"}, ...]}},
  ///  keys sorted.
  llvm::json::Value toJSON(llvm::StringRef model) const;

private:
  llvm::StringMap<llvm::SmallVector<std::optional<ValueRange>, 1>> nodes;
  int64_t numSamples = 0;
};

} // namespace mp

#endif // MP_PRECISION_VALUERANGES_H
