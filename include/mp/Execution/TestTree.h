//===- TestTree.h - run an ONNX backend-test style tree ---------*- C++ -*-===//

#ifndef MP_EXECUTION_TESTTREE_H
#define MP_EXECUTION_TESTTREE_H

#include "mp/Execution/JitModel.h"
#include "mp/Execution/TestData.h"

namespace mp {

struct TestTreeOptions {
  ModelOptions model;
  /// For ONNX backend cases (folders named `test_*`).
  Tolerances tolerances;
  /// For any other case folder (a model); only its fp32 defaults are read,
  /// explicit --rtol/--atol in `tolerances` apply to both.
  Tolerances modelTolerances;
  /// Seconds a case may take (compile and every data set) before it is
  /// killed and counted as failed.
  unsigned timeoutSeconds = 300;
};

struct TestTreeCounts {
  int passed = 0, failed = 0, skipped = 0;
};

/// Runs every `model.onnx` under `dir` (or `dir` itself, if it holds one)
/// against each of its `test_data_set_*` folders. Each case runs in a child
/// process, so a crash or a hang fails that case only. Prints one line per
/// case as it finishes (`PASS name`, `FAIL name: why`, `SKIP name: the
/// unsupported op or type`) and ends with `N passed, N failed, N skipped`.
TestTreeCounts runTestTree(llvm::StringRef dir, const TestTreeOptions &options,
                           llvm::raw_ostream &os);

} // namespace mp

#endif // MP_EXECUTION_TESTTREE_H
