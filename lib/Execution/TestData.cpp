//===- TestData.cpp - test tensors on disk and output checks --------------===//

#include "mp/Execution/TestData.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mlir;

namespace mp {

bool writeOutputs(StringRef dir, ArrayRef<HostTensor> outputs,
                  std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = ("cannot create '" + dir + "': " + ec.message()).str();
    return false;
  }
  for (const HostTensor &t : outputs) {
    std::string file = t.name;
    for (char &c : file)
      if (!llvm::isAlnum(c) && c != '.' && c != '-' && c != '_')
        c = '_';
    SmallString<256> p(dir);
    llvm::sys::path::append(p, file + ".npy");
    if (!writeNpy(p, t, error))
      return false;
  }
  return true;
}

/// A double as raw_ostream prints it ("1.000000e-04").
static std::string str(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << v;
  return s;
}

/// "0.125", "3.2e-05".
static std::string shortNum(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

/// The largest finite |x| of `t` (0 if none).
static double maxFiniteAbs(const HostTensor &t) {
  double m = 0;
  for (int64_t i = 0, n = t.numElements(); i < n; ++i)
    if (double v = std::fabs(t.at(i)); std::isfinite(v))
      m = std::max(m, v);
  return m;
}

std::pair<double, double>
Tolerances::forOutput(const HostTensor &actual,
                      const HostTensor &expected) const {
  bool half =
      mixed || actual.elementType.isF16() || actual.elementType.isBF16();
  if (!half)
    return {rtol >= 0 ? rtol : fp32Rtol, atol >= 0 ? atol : fp32Atol};
  double scale = std::clamp(maxFiniteAbs(expected), 1e-3, 1.0);
  return {rtol >= 0 ? rtol : 1e-2, atol >= 0 ? atol : 1e-2 * scale};
}

/// The reference of each output (by index into `outputs`; -1: none), read
/// from `files`: by the tensor's name, else by position. Sets `why` on a
/// count mismatch or a reference that names no output; no files (nothing
/// to compare with) is not a mismatch.
static bool pairReferences(ArrayRef<HostTensor> outputs,
                           ArrayRef<std::string> files, MLIRContext *ctx,
                           std::vector<HostTensor> &refs,
                           std::vector<int> &refOf, std::string &why,
                           std::string &error) {
  refOf.assign(outputs.size(), -1);
  for (const std::string &file : files) {
    HostTensor t;
    if (!readTensorFile(file, ctx, t, error))
      return false;
    refs.push_back(std::move(t));
  }
  for (auto [i, ref] : llvm::enumerate(refs)) {
    size_t slot = i;
    if (!ref.name.empty()) {
      auto it = llvm::find_if(
          outputs, [&](const HostTensor &o) { return o.name == ref.name; });
      if (it == outputs.end()) {
        why = "reference '" + ref.name + "' (" +
              llvm::sys::path::filename(files[i]).str() +
              ") names no output of the model";
        continue;
      }
      slot = it - outputs.begin();
    }
    if (slot < outputs.size() && refOf[slot] < 0)
      refOf[slot] = i;
  }
  if (why.empty() && !refs.empty() && refs.size() != outputs.size())
    why = "the model has " + std::to_string(outputs.size()) + " outputs but " +
          std::to_string(refs.size()) + " references were given";
  return true;
}

bool compareOutputs(ArrayRef<HostTensor> outputs,
                    ArrayRef<std::string> expectedFiles, MLIRContext *ctx,
                    const Tolerances &tolerances, llvm::raw_ostream *table,
                    bool &allPassed, std::string &firstFailure,
                    std::string &error) {
  allPassed = true;
  auto fail = [&](const std::string &why) {
    if (firstFailure.empty())
      firstFailure = why;
    allPassed = false;
  };
  if (table)
    *table << llvm::format("%-28s %-22s %12s %12s %8s  %s\n", "output", "type",
                           "max abs err", "max rel err", "argmax",
                           expectedFiles.empty() ? "" : "result");
  std::vector<HostTensor> refs;
  std::vector<int> refOf;
  std::string pairing;
  if (!pairReferences(outputs, expectedFiles, ctx, refs, refOf, pairing, error))
    return false;
  for (auto [i, t] : llvm::enumerate(outputs)) {
    if (table)
      *table << llvm::format("%-28s %-22s", t.name.c_str(),
                             t.describe().c_str());
    if (refOf[i] < 0) {
      if (table)
        *table << (expectedFiles.empty() ? "\n" : "  FAIL: no reference\n");
      if (!expectedFiles.empty())
        fail("output '" + t.name + "' has no reference");
      continue;
    }
    const HostTensor &expected = refs[refOf[i]];
    auto [rt, at] = tolerances.forOutput(t, expected);
    Comparison c = compare(t, expected, rt, at);
    if (!c.shapeMatches) {
      if (table)
        *table << "  FAIL: expected " << expected.describe() << "\n";
      fail("output '" + t.name + "' is " + t.describe() + ", expected " +
           expected.describe());
      continue;
    }
    std::string detail;
    if (!c.passed())
      detail = " (" + std::to_string(c.mismatches) +
               " elements beyond rtol=" + str(rt) + " atol=" + str(at) + ")";
    if (c.nonFinite)
      detail += " [" + std::to_string(c.nonFinite) + " non-finite]";
    if (table)
      *table << llvm::format(" %12.3g %12.3g %7.1f%%  %s", c.maxAbs, c.maxRel,
                             100 * c.argmaxAgreement,
                             c.passed() ? "PASS" : "FAIL")
             << detail << "\n";
    if (!c.passed())
      fail("output '" + t.name + "': max abs err " +
           shortNum(c.maxAbs) + detail);
  }
  if (!pairing.empty()) {
    if (table)
      *table << "FAIL: " << pairing << "\n";
    fail(pairing);
  }
  return true;
}

} // namespace mp
