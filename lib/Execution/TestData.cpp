//===- TestData.cpp - test tensors on disk and output checks --------------===//

#include "mp/Execution/TestData.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

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

std::pair<double, double> Tolerances::forOutput(const HostTensor &t) const {
  bool half = mixed || t.elementType.isF16() || t.elementType.isBF16();
  return {rtol >= 0 ? rtol : (half ? 1e-2 : fp32Rtol),
          atol >= 0 ? atol : (half ? 1e-2 : fp32Atol)};
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
  for (auto [i, t] : llvm::enumerate(outputs)) {
    if (table)
      *table << llvm::format("%-28s %-22s", t.name.c_str(),
                             t.describe().c_str());
    if (i >= expectedFiles.size()) {
      if (table)
        *table << "\n";
      continue;
    }
    HostTensor expected;
    if (!readTensorFile(expectedFiles[i], ctx, expected, error))
      return false;
    auto [rt, at] = tolerances.forOutput(t);
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
  return true;
}

} // namespace mp
