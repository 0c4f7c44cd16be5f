//===- TestTree.cpp - run an ONNX backend-test style tree -----------------===//

#include "mp/Execution/TestTree.h"
#include "mp/Execution/CapturedDiagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <cstring>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;

namespace mp {

/// The folders under `dir` (or `dir`) that hold a model.onnx, sorted.
static std::vector<std::string> findCases(StringRef dir) {
  std::vector<std::string> cases;
  auto isCase = [](StringRef d) {
    SmallString<256> m(d);
    llvm::sys::path::append(m, "model.onnx");
    return llvm::sys::fs::exists(m);
  };
  if (isCase(dir))
    return {dir.str()};
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
       it != end && !ec; it.increment(ec))
    // is_directory follows links: a tree of symlinked cases works too.
    if (llvm::sys::fs::is_directory(it->path()) && isCase(it->path()))
      cases.push_back(it->path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

/// The test_data_set_* folders of a case, sorted.
static std::vector<std::string> dataSets(StringRef caseDir) {
  std::vector<std::string> sets;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(caseDir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      sets.push_back(it->path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

/// Errors that mean "mp does not handle this model" rather than "mp got it
/// wrong".
static bool isUnsupported(StringRef error) {
  return error.contains("unsupported") || error.contains("not supported") ||
         error.contains("imports no default-domain") ||
         error.contains("failed to legalize") ||
         error.contains("has no CPU lowering") ||
         error.contains("cannot be imported");
}

/// Runs one case; the verdict line without the case name ("PASS",
/// "FAIL: ...", "SKIP: ...").
static std::string runCase(StringRef caseDir, const TestTreeOptions &options) {
  DialectRegistry registry;
  registerModelDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false);
  CapturedDiagnostics diagnostics(&ctx, /*keepWarnings=*/false);
  SmallString<256> modelPath(caseDir);
  llvm::sys::path::append(modelPath, "model.onnx");
  auto failure = [&](const std::string &fallback) {
    // The line names the case already: drop "<model>:0:0: ".
    std::string first = diagnostics.firstError();
    std::string prefix = (modelPath + ":0:0: ").str();
    StringRef error = first;
    error.consume_front(prefix);
    if (error.empty())
      error = fallback;
    return (isUnsupported(error) ? "SKIP: " : "FAIL: ") + error.str();
  };
  std::unique_ptr<JitModel> model = JitModel::load(&ctx, modelPath, options.model);
  if (!model)
    return failure("cannot load the model");
  std::vector<std::string> sets = dataSets(caseDir);
  if (sets.empty())
    return "FAIL: no test_data_set_* folder";
  for (const std::string &set : sets) {
    std::vector<HostTensor> inputs;
    std::string error;
    for (const std::string &file : numberedFiles(set, "input")) {
      HostTensor t;
      if (!readTensorFile(file, &ctx, t, error))
        return "FAIL: " + error;
      inputs.push_back(std::move(t));
    }
    std::vector<HostTensor> outputs;
    if (!model->nameInputs(inputs) || !model->run(inputs, outputs))
      return failure("the run failed");
    bool passed = true;
    std::string why;
    // ONNX backend cases (test_*) are checked as the ONNX runner checks
    // them; other folders are models, checked as `mp-run --compare` does.
    Tolerances tolerances = options.tolerances;
    if (!llvm::sys::path::filename(caseDir).starts_with("test_")) {
      tolerances.fp32Rtol = options.modelTolerances.fp32Rtol;
      tolerances.fp32Atol = options.modelTolerances.fp32Atol;
    }
    if (!compareOutputs(outputs, numberedFiles(set, "output"), &ctx,
                        tolerances, nullptr, passed, why, error))
      return "FAIL: " + error;
    if (!passed)
      return "FAIL: " + llvm::sys::path::filename(set).str() + ": " + why;
  }
  return "PASS";
}

/// Runs `runCase` in a child process with a time limit.
static std::string runCaseIsolated(StringRef caseDir,
                                   const TestTreeOptions &options) {
  int fds[2];
  if (pipe(fds) != 0)
    return std::string("FAIL: pipe: ") + std::strerror(errno);
  pid_t pid = fork();
  if (pid < 0)
    return std::string("FAIL: fork: ") + std::strerror(errno);
  if (pid == 0) {
    close(fds[0]);
    // The verdict carries the first error; a crash's stack dump would only
    // bury the report.
    int devNull = open("/dev/null", O_WRONLY);
    if (devNull >= 0)
      dup2(devNull, STDERR_FILENO);
    std::string verdict = runCase(caseDir, options);
    std::replace(verdict.begin(), verdict.end(), '\n', ' ');
    ssize_t ignored = write(fds[1], verdict.data(), verdict.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string verdict;
  bool timedOut = false;
  int remainingMs = options.timeoutSeconds * 1000;
  char buf[4096];
  while (true) {
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, 1000);
    if (ready > 0) {
      ssize_t n = read(fds[0], buf, sizeof(buf));
      if (n <= 0)
        break;
      verdict.append(buf, n);
      continue;
    }
    if ((remainingMs -= 1000) <= 0) {
      kill(pid, SIGKILL);
      timedOut = true;
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timedOut)
    return "FAIL: timed out after " + std::to_string(options.timeoutSeconds) +
           " s";
  if (WIFSIGNALED(status))
    return "FAIL: crashed (" + std::string(strsignal(WTERMSIG(status))) + ")";
  if (verdict.empty())
    return "FAIL: the case process exited with status " +
           std::to_string(WEXITSTATUS(status)) + " and no verdict";
  return verdict;
}

TestTreeCounts runTestTree(StringRef dir, const TestTreeOptions &options,
                           llvm::raw_ostream &os) {
  TestTreeCounts counts;
  for (const std::string &caseDir : findCases(dir)) {
    std::string verdict = runCaseIsolated(caseDir, options);
    // Names relative to `dir` stay unique in nested trees.
    StringRef name = caseDir;
    if (name.consume_front(dir))
      name = name.ltrim('/');
    if (name.empty())
      name = llvm::sys::path::filename(caseDir);
    StringRef kind = StringRef(verdict).take_front(4);
    counts.passed += kind == "PASS";
    counts.failed += kind == "FAIL";
    counts.skipped += kind == "SKIP";
    os << kind << " " << name;
    if (verdict.size() > 4)
      os << StringRef(verdict).drop_front(4);
    os << "\n";
    os.flush();
  }
  os << counts.passed << " passed, " << counts.failed << " failed, "
     << counts.skipped << " skipped\n";
  return counts;
}

} // namespace mp
