//===- Policy.h - mixed-precision policy ------------------------*- C++ -*-===//
//
// A precision policy classifies ONNX op types as allow / infer / deny /
// clear (as TensorFlow's auto-mixed-precision does) and lets users override
// single nodes by name or regex. The built-in default comes from
// `defaultPolicyTable()`; a JSON policy file (schema in docs/precision.md)
// edits it.
//
//===----------------------------------------------------------------------===//

#ifndef MP_PRECISION_POLICY_H
#define MP_PRECISION_POLICY_H

#include "mp/Dialect/Mp/IR/MpDialect.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mp {

/// The element type an op computes in.
enum class Compute { F16, F32 };

/// How far back the shape/index guard keeps ops in their types.
enum class IndexGuard {
  /// The arithmetic that computes a shape, index or count, back to the
  /// contractions (the built-in allow ops: MatMul, Conv, attention, ...)
  /// whose outputs it reads; those follow their class.
  Arithmetic,
  /// Every op the shape, index or count depends on, contractions included:
  /// discrete results computed from learned values (output lengths from
  /// predicted durations, argmax-chosen tokens) are those of fp32.
  Exact,
};

/// "arithmetic" or "exact".
llvm::StringRef stringifyIndexGuard(IndexGuard guard);
/// The IndexGuard named `name`, or nothing.
std::optional<IndexGuard> parseIndexGuard(llvm::StringRef name);

/// One row of the built-in policy.
struct DefaultPolicyEntry {
  /// ONNX op type (default domain or com.microsoft).
  const char *opType;
  /// The mp op the importer produces for it.
  const char *mpOp;
  PrecisionClass cls;
  /// Sums/statistics in f32 even when the op computes in f16.
  bool accumulateF32;
  /// Why this class: shown in docs and plans.
  const char *reason;
};

/// The built-in policy, one row per ONNX op type that carries float data.
llvm::ArrayRef<DefaultPolicyEntry> defaultPolicyTable();

/// Prints the built-in policy as a markdown table: op type, mp op, class,
/// fp32 accumulation, reason.
void printDefaultPolicyTable(llvm::raw_ostream &os);

/// The default-table row of an ONNX op type, or of an mp op name.
const DefaultPolicyEntry *findDefaultEntry(llvm::StringRef opTypeOrMpOp);

/// What a policy says about one node beyond its op type's class.
struct NodeOverride {
  std::optional<PrecisionClass> cls;
  std::optional<Compute> compute;
  /// The rule to report with a forced `compute` (plan files carry the rule
  /// that decided originally, so that a plan reproduces its IR exactly).
  std::optional<std::string> rule;
};

/// A parsed policy.
class PrecisionPolicy {
public:
  /// The built-in default policy.
  static PrecisionPolicy builtin();

  /// Parses a JSON policy; `source` names the file in messages. Errors name
  /// the key path and, for syntax errors, the line and column.
  static std::unique_ptr<PrecisionPolicy>
  parse(llvm::StringRef json, llvm::StringRef source, std::string &error,
        std::vector<std::string> &warnings);

  /// Reads and parses a policy file.
  static std::unique_ptr<PrecisionPolicy>
  load(llvm::StringRef path, std::string &error,
       std::vector<std::string> &warnings);

  /// The class of `opType` (ONNX op type).
  PrecisionClass classOf(llvm::StringRef opType) const;

  /// The override for the node named `name`, combining the exact-name entry
  /// (which wins) with the first matching regex. Records regex matches.
  NodeOverride overrideFor(llvm::StringRef name) const;

  /// Regexes that matched no node (a warning after a run).
  std::vector<std::string> unmatchedPatterns() const;

  std::optional<bool> keepIoTypes;
  /// The policy's `index_guard` (default: IndexGuard::Arithmetic).
  std::optional<IndexGuard> indexGuard;

private:
  struct Pattern {
    std::string text;
    std::unique_ptr<llvm::Regex> regex;
    NodeOverride value;
    mutable bool matched = false;
  };
  llvm::StringMap<PrecisionClass> opClasses;
  std::optional<PrecisionClass> unlistedClass;
  llvm::StringMap<NodeOverride> nodes;
  std::vector<Pattern> patterns;
};

} // namespace mp

#endif // MP_PRECISION_POLICY_H
