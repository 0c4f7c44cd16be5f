//===- CpuRunner.cpp - JIT-compile and run an mp module on the CPU --------===//

#include "mp/Execution/CpuRunner.h"
#include "JitObject.h"

#include "mp/BufferPool.h"
#include "mp/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unistd.h>

using namespace mlir;

namespace mp {

//===----------------------------------------------------------------------===//
// Run-time checks
//===----------------------------------------------------------------------===//

// Checks of compiled code (cf.assert: indices read from data) lower
// to `puts(message)` and `abort()`. The JIT binds both names to the two
// functions below, so that a failed check ends the run, not the process:
// the run returns the check's message as its error. Memory the run had
// taken from the pool is not given back.

/// The message of this thread's failed check.
static thread_local std::string failedCheck;
/// Where a failed check returns to: set while this thread runs an entry.
static thread_local std::jmp_buf *checkExit = nullptr;

/// `puts` of compiled code: a failed check's message.
static int recordCheckMessage(const char *message) {
  failedCheck = message;
  return 0;
}

/// `abort` of compiled code: back to the run that failed the check.
[[noreturn]] static void failCheck() {
  if (checkExit)
    std::longjmp(*checkExit, 1);
  std::abort();
}

/// Calls the packed entry `entry`; false with `error` set when it fails,
/// a failed run-time check included.
static bool invokeChecked(JitObject::PackedFunction entry,
                          MutableArrayRef<void *> args, std::string &error) {
  std::jmp_buf jump;
  failedCheck.clear();
  checkExit = &jump;
  if (setjmp(jump) != 0) {
    checkExit = nullptr;
    error = failedCheck.empty() ? "a run-time check of the model failed"
                                : failedCheck;
    return false;
  }
  entry(args.data());
  checkExit = nullptr;
  return true;
}

llvm::orc::SymbolMap jitRuntimeSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  auto bind = [&](StringRef name, auto *fn) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                               llvm::JITSymbolFlags::Exported};
  };
  // Buffers come from the pool, so a run reuses the previous run's memory.
  bind("_mlir_memref_to_llvm_alloc", &poolAlloc);
  bind("_mlir_memref_to_llvm_aligned_alloc", &poolAlignedAlloc);
  bind("_mlir_memref_to_llvm_free", &poolFree);
  // Run-time checks: a failure ends the run (see failCheck).
  bind("puts", &recordCheckMessage);
  bind("abort", &failCheck);
  return symbols;
}

CpuRunner::~CpuRunner() = default;

/// Whether the inputs given fit the entry: caches re-typed to their
/// capacity (and storage type) must be given so.
static bool checkGivenInputs(const EntrySignature &signature,
                             ArrayRef<HostTensor> inputs, int64_t maxSeqLen,
                             Location loc) {
  for (const HostTensor &spec : signature.inputs) {
    auto given = llvm::find_if(
        inputs, [&](const HostTensor &t) { return t.name == spec.name; });
    std::string error;
    if (given != inputs.end() && !fitsSpec(spec, *given, error))
      return emitError(loc)
                 << "input '" << spec.name << "' is " << given->describe()
                 << ", the compiled step takes " << spec.describe()
                 << (maxSeqLen > 0 ? " (KV caches hold max_seq_len positions)"
                                   : ""),
             false;
  }
  return true;
}

/// The object code `engine` compiled (one module, one object).
static bool readObject(ExecutionEngine &engine, std::string &object,
                       std::string &error) {
  SmallString<128> path;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("mp-jit", "o", fd, path)) {
    error = "cannot create a temporary file: " + ec.message();
    return false;
  }
  ::close(fd);
  engine.dumpToObjectFile(path);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  llvm::sys::fs::remove(path);
  if (!buffer || (*buffer)->getBufferSize() == 0) {
    error = "the JIT wrote no object code";
    return false;
  }
  object = (*buffer)->getBuffer().str();
  return true;
}

std::unique_ptr<CpuRunner>
CpuRunner::load(StringRef object, EntrySignature signature,
                ArrayRef<HostTensor> inputs, const EntryOptions &entryOptions,
                Location loc, std::string &linkError) {
  auto runner = std::unique_ptr<CpuRunner>(new CpuRunner());
  runner->signature = std::move(signature);
  if (!checkGivenInputs(runner->signature, inputs, entryOptions.maxSeqLen, loc))
    return nullptr;
  runner->updatedBy = runner->signature.updatedBy();
  runner->object = JitObject::load(object, linkError);
  if (runner->object)
    runner->entry =
        runner->object->lookupPacked(runner->signature.symbol, linkError);
  return runner->entry ? std::move(runner) : nullptr;
}

std::unique_ptr<CpuRunner> CpuRunner::compile(OwningOpRef<ModuleOp> module,
                                              ArrayRef<HostTensor> inputs,
                                              const EntryOptions &entryOptions,
                                              std::string *object,
                                              const CompileProgress &progress) {
  StageTimer timer(progress);
  MLIRContext *ctx = module->getContext();
  Location loc = module->getLoc();
  auto runner = std::unique_ptr<CpuRunner>(new CpuRunner());
  if (failed(prepareEntry(*module, inputs, runner->signature, entryOptions)))
    return nullptr;
  if (!checkGivenInputs(runner->signature, inputs, entryOptions.maxSeqLen, loc))
    return nullptr;
  runner->updatedBy = runner->signature.updatedBy();

  PassManager lower(ctx, ModuleOp::getOperationName());
  // MP_JIT_GPU_MAPPING=1 (testing): the CUDA target's generic kernels,
  // their block and thread loops run on the CPU.
  const char *gpuMapping = std::getenv("MP_JIT_GPU_MAPPING");
  if (gpuMapping && *gpuMapping && StringRef(gpuMapping) != "0")
    buildGpuMappingOnCpuPipeline(
        lower, /*resultsAsOutParams=*/!runner->signature.returnsOutputs,
        /*pooledAllocations=*/true);
  else
    buildCpuPipeline(lower,
                     /*resultsAsOutParams=*/!runner->signature.returnsOutputs,
                     /*pooledAllocations=*/true);
  if (failed(lower.run(*module)))
    return nullptr;
  timer.done("lowering");

  initializeJitTarget();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  ExecutionEngineOptions options;
  // Optimize for this machine: without a target machine LLVM's cost model
  // knows no vector registers and the loop vectorizer stays idle; the host
  // features also turn f16 conversions into F16C instructions.
  auto hostBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostBuilder)
    return emitError(loc) << "cannot describe the host CPU for the JIT: "
                          << llvm::toString(hostBuilder.takeError()),
           nullptr;
  hostBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto hostMachine = hostBuilder->createTargetMachine();
  if (!hostMachine)
    return emitError(loc) << "cannot create a target machine for the JIT: "
                          << llvm::toString(hostMachine.takeError()),
           nullptr;
  auto transformer = makeOptimizingTransformer(/*optLevel=*/3,
                                               /*sizeLevel=*/0,
                                               hostMachine->get());
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // memrefCopy and friends, for copies between strided buffers.
  SmallVector<StringRef> libs = {MP_MLIR_C_RUNNER_UTILS};
  options.sharedLibPaths = libs;
  // The compile cache keeps the object code.
  options.enableObjectDump = object != nullptr;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine)
    return emitError(loc) << "JIT compilation failed: "
                          << llvm::toString(engine.takeError()),
           nullptr;
  (*engine)->registerSymbols(jitRuntimeSymbols);
  auto entry = (*engine)->lookupPacked(runner->signature.symbol);
  if (!entry)
    return emitError(loc) << "JIT compilation failed: "
                          << llvm::toString(entry.takeError()),
           nullptr;
  runner->entry = *entry;
  timer.done("LLVM");
  std::string error;
  if (object && !readObject(**engine, *object, error)) {
    emitWarning(loc) << "the compiled model is not cached: " << error;
    object->clear();
  }
  runner->engine = std::move(*engine);
  return runner;
}

/// A memref descriptor {allocated, aligned, offset, sizes[R], strides[R]}
/// over `data` with a row-major layout.
static std::vector<int64_t> descriptor(void *data, ArrayRef<int64_t> shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

/// Checks that inputs whose dims the model names alike ("batch") agree,
/// for an entry that keeps dynamic dims (a specialized one checks shapes).
static bool checkNamedDims(const EntrySignature &sig,
                           ArrayRef<const HostTensor *> given,
                           std::string &error) {
  llvm::StringMap<std::pair<int64_t, std::string>> seen;
  for (auto [i, t] : llvm::enumerate(given)) {
    if (i >= sig.declaredInputs.size())
      break;
    const auto &declared = sig.declaredInputs[i];
    for (auto [d, name] : llvm::enumerate(declared.names)) {
      if (name.empty() || d >= t->shape.size())
        continue;
      auto [it, inserted] =
          seen.try_emplace(name, t->shape[d], t->name);
      if (inserted || it->second.first == t->shape[d])
        continue;
      error = "input '" + t->name + "' has " + name + " = " +
              std::to_string(t->shape[d]) + " (dim " + std::to_string(d) +
              "), input '" + it->second.second + "' has " + name + " = " +
              std::to_string(it->second.first);
      return false;
    }
  }
  return true;
}

/// Moves the outputs an entry returned (descriptors at `results`, in
/// order) into `out`, and frees their buffers.
static bool takeReturnedOutputs(const int64_t *results,
                                std::vector<HostTensor> &out,
                                std::string &error) {
  llvm::SmallPtrSet<void *, 8> freed;
  bool ok = true;
  for (HostTensor &t : out) {
    size_t rank = t.shape.size();
    void *allocated = reinterpret_cast<void *>(results[0]);
    auto *aligned = reinterpret_cast<const char *>(results[1]);
    int64_t offset = results[2];
    t.shape.assign(results + 3, results + 3 + rank);
    const int64_t *strides = results + 3 + rank;
    results += 3 + 2 * rank;
    int64_t expected = 1;
    for (size_t d = rank; d-- > 0;) {
      ok &= t.shape[d] == 1 || strides[d] == expected;
      expected *= t.shape[d];
    }
    size_t bytes = t.numElements() * HostTensor::elementBytes(t.elementType);
    if (ok)
      t.data.assign(aligned + offset * HostTensor::elementBytes(t.elementType),
                    aligned + offset * HostTensor::elementBytes(t.elementType) +
                        bytes);
    else
      error = "output '" + t.name + "' came back with a strided layout";
    if (allocated && freed.insert(allocated).second)
      poolFree(allocated);
  }
  return ok;
}

bool CpuRunner::run(ArrayRef<HostTensor> inputs, std::vector<HostTensor> &out,
                    std::string &error) {
  if (!signature.checkKvCache(inputs, error))
    return false;
  out = signature.outputs;
  std::vector<const HostTensor *> given;
  for (const HostTensor &spec : signature.inputs) {
    auto it = llvm::find_if(inputs, [&](const HostTensor &t) {
      return t.name == spec.name;
    });
    if (it == inputs.end()) {
      error = "missing input '" + spec.name + "'";
      return false;
    }
    if (!fitsSpec(spec, *it, error))
      return false;
    given.push_back(&*it);
  }
  if (signature.returnsOutputs && !checkNamedDims(signature, given, error))
    return false;
  std::vector<std::vector<int64_t>> descriptors;
  for (auto [i, t] : llvm::enumerate(given)) {
    if (updatedBy[i] >= 0) {
      // A cache updated in place: the step writes into the output, which
      // starts as a copy of the input.
      HostTensor &o = out[updatedBy[i]];
      o.data = t->data;
      descriptors.push_back(descriptor(o.data.data(), o.shape));
      continue;
    }
    // Not copied: the compiled code never writes its other arguments.
    descriptors.push_back(
        descriptor(const_cast<char *>(t->data.data()), t->shape));
  }
  if (!signature.returnsOutputs)
    for (auto [j, t] : llvm::enumerate(out)) {
      if (signature.inPlaceOf[j] >= 0)
        continue;
      t.data.assign(t.numElements() * HostTensor::elementBytes(t.elementType),
                    0);
      descriptors.push_back(descriptor(t.data.data(), t.shape));
    }
  // Returned outputs: their descriptors, one after the other.
  std::vector<int64_t> results;
  for (const HostTensor &t : out)
    results.resize(results.size() + 3 + 2 * t.shape.size());
  std::vector<void *> pointers, args;
  if (signature.returnsOutputs)
    pointers.push_back(results.data());
  for (auto &d : descriptors)
    pointers.push_back(d.data());
  for (void *&p : pointers)
    args.push_back(&p);
  if (!invokeChecked(entry, args, error))
    return false;
  return !signature.returnsOutputs ||
         takeReturnedOutputs(results.data(), out, error);
}

} // namespace mp
