//===- CpuRunner.cpp - JIT-compile and run an mp module on the CPU --------===//

#include "mp/Execution/CpuRunner.h"

#include "mp/BufferPool.h"
#include "mp/Transforms/Passes.h"

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
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;

namespace mp {

CpuRunner::~CpuRunner() = default;

LogicalResult checkInputTensor(Location loc, StringRef name, Type declared,
                               const HostTensor &given) {
  auto ranked = cast<RankedTensorType>(declared);
  bool ok = ranked.getElementType() == given.elementType &&
            ranked.getRank() == (int64_t)given.shape.size();
  for (auto [d, g] : llvm::zip(ranked.getShape(), given.shape))
    ok &= ShapedType::isDynamic(d) || d == g;
  if (ok)
    return success();
  return emitError(loc) << "input '" << name << "' is " << given.describe()
                        << ", the model expects " << declared;
}

bool fitsSpec(const HostTensor &spec, const HostTensor &given,
              std::string &error) {
  bool ok = spec.elementType == given.elementType &&
            spec.shape.size() == given.shape.size();
  for (size_t i = 0; ok && i < spec.shape.size(); ++i)
    ok = ShapedType::isDynamic(spec.shape[i]) || spec.shape[i] == given.shape[i];
  ok &= (int64_t)given.data.size() ==
        given.numElements() * HostTensor::elementBytes(given.elementType);
  if (!ok)
    error = "input '" + spec.name + "' is " + given.describe() +
            ", the compiled model takes " + spec.describe();
  return ok;
}

/// "name=2x3x4" pins for mp-specialize-shapes.
static std::string shapePin(const HostTensor &t) {
  std::string s = t.name + "=";
  for (auto [i, d] : llvm::enumerate(t.shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s;
}

/// The declared shape of a function argument or result: `type`'s dims and
/// the `mp.dims` names the importer attached.
static EntrySignature::DeclaredShape declaredShape(Type type,
                                                   DictionaryAttr attrs) {
  EntrySignature::DeclaredShape shape;
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    shape.sizes.assign(ranked.getShape().begin(), ranked.getShape().end());
  auto names = attrs ? attrs.getAs<ArrayAttr>("mp.dims") : ArrayAttr();
  for (size_t i = 0; i < shape.sizes.size(); ++i) {
    auto name = names && i < names.size()
                    ? dyn_cast<StringAttr>(names[i])
                    : StringAttr();
    shape.names.push_back(name ? name.str() : "");
  }
  return shape;
}

std::vector<int> EntrySignature::updatedBy() const {
  std::vector<int> by(inputs.size(), -1);
  for (auto [j, of] : llvm::enumerate(inPlaceOf))
    if (of >= 0)
      by[of] = j;
  return by;
}

bool EntrySignature::checkKvCache(ArrayRef<HostTensor> given,
                                  std::string &error) const {
  if (kvCache.lengthInput < 0)
    return true;
  const std::string &name = inputs[kvCache.lengthInput].name;
  auto it = llvm::find_if(given, [&](const HostTensor &t) {
    return t.name == name;
  });
  if (it == given.end() || it->data.size() != sizeof(int64_t)) {
    error = "input '" + name + "' must be one int64 (the filled KV cache "
            "positions)";
    return false;
  }
  int64_t length;
  std::memcpy(&length, it->data.data(), sizeof(length));
  if (length >= 0 && length <= kvCache.capacity - kvCache.newPositions)
    return true;
  error = "input '" + name + "' is " + std::to_string(length) + ": with " +
          std::to_string(kvCache.newPositions) +
          " new position(s) per step the KV cache needs " +
          std::to_string(length + kvCache.newPositions) +
          " positions, and it holds 0 to " +
          std::to_string(kvCache.capacity) + " (mp-compile --max-seq-len)";
  return false;
}

/// Records the in-place caches mp-kv-cache-in-place (or a TensorScatter)
/// marked, and lets the step write their inputs: the caller passes the
/// output's buffer as the input. The results stay until bufferization has
/// placed them in their input's buffer (mp-drop-in-place-results).
static void recordInPlaceCaches(func::FuncOp func, EntrySignature &entry) {
  MLIRContext *ctx = func.getContext();
  entry.inPlaceOf.assign(func.getNumResults(), -1);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (auto of = func.getResultAttrOfType<IntegerAttr>(i, "mp.in_place_of")) {
      entry.inPlaceOf[i] = of.getInt();
      func.setArgAttr(of.getInt(), "bufferization.writable",
                      BoolAttr::get(ctx, true));
    }
  if (auto cache = func->getAttrOfType<DictionaryAttr>("mp.kv_cache")) {
    auto length = cache.getAs<StringAttr>("length_input");
    for (auto [i, t] : llvm::enumerate(entry.inputs))
      if (length && t.name == length.getValue())
        entry.kvCache.lengthInput = i;
    entry.kvCache.capacity = cache.getAs<IntegerAttr>("capacity").getInt();
    entry.kvCache.newPositions =
        cache.getAs<IntegerAttr>("new_positions").getInt();
    func->removeAttr("mp.kv_cache");
  }
}

LogicalResult prepareEntry(ModuleOp module, ArrayRef<HostTensor> inputs,
                           EntrySignature &entry,
                           const EntryOptions &options) {
  MLIRContext *ctx = module->getContext();
  Location loc = module->getLoc();
  auto funcs = module.getOps<func::FuncOp>();
  if (funcs.empty())
    return emitError(loc) << "the module has no function to run";
  func::FuncOp func = *funcs.begin();

  // Inputs by graph-input name, checked before anything is compiled.
  std::vector<std::string> names, pins;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto name = func.getArgAttrOfType<StringAttr>(i, "mp.name");
    std::string argName = name ? name.str() : "#" + std::to_string(i);
    const HostTensor *given = nullptr;
    for (const HostTensor &t : inputs)
      if (t.name == argName)
        given = &t;
    if (!given)
      return emitError(loc) << "missing input '" << argName << "' (" << type
                            << ")";
    // A cache the in-place pass will store in the attention's type may be
    // given in it already; the compiled signature is checked later.
    Type expected = type;
    if (options.maxSeqLen > 0 && isa<FloatType>(getElementTypeOrSelf(type)) &&
        isa<FloatType>(given->elementType))
      expected = cast<RankedTensorType>(type).clone(given->elementType);
    if (failed(checkInputTensor(loc, argName, expected, *given)))
      return failure();
    entry.declaredInputs.push_back(
        declaredShape(type, func.getArgAttrDict(i)));
    names.push_back(argName);
    if (!options.dynamicShapes ||
        llvm::is_contained(options.pinnedInputs, argName))
      pins.push_back(shapePin(*given));
  }
  if (options.dynamicShapes && options.maxSeqLen > 0)
    return emitError(loc) << "in-place KV caches (max_seq_len) need static "
                             "shapes: run without dynamic shapes";
  // The fill level of in-place caches is an argument only after
  // mp-kv-cache-in-place.
  KvCacheInPlaceOptions inPlace;
  inPlace.maxSeqLen = options.maxSeqLen;
  for (const HostTensor &t : inputs)
    if (!llvm::is_contained(names, t.name) &&
        !(options.maxSeqLen > 0 && t.name == inPlace.lengthInput))
      return emitError(loc) << "the model has no input named '" << t.name
                            << "'";

  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    entry.declaredOutputs.push_back(
        declaredShape(type, func.getResultAttrDict(i)));
  PassManager pm(ctx, ModuleOp::getOperationName());
  SpecializeShapesOptions specialize;
  specialize.shapes.assign(pins.begin(), pins.end());
  pm.addPass(createSpecializeShapes(specialize));
  if (options.maxSeqLen > 0)
    pm.addPass(createKvCacheInPlace(inPlace));
  if (failed(pm.run(module)))
    return failure();
  // The arguments as specialized (the in-place pass re-types the caches
  // and adds their fill level).
  auto describe = [&](Type type, StringRef name,
                      StringRef what) -> FailureOr<HostTensor> {
    HostTensor spec;
    spec.name = name.str();
    auto ranked = cast<RankedTensorType>(type);
    if (!ranked.hasStaticShape() && !options.dynamicShapes)
      return emitError(loc) << what << " '" << spec.name
                            << "' keeps a dynamic shape " << type
                            << " after specializing to the inputs",
             failure();
    spec.elementType = ranked.getElementType();
    spec.shape.assign(ranked.getShape().begin(), ranked.getShape().end());
    return spec;
  };
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto name = func.getArgAttrOfType<StringAttr>(i, "mp.name");
    FailureOr<HostTensor> spec =
        describe(type, name ? name.getValue() : "#" + std::to_string(i),
                 "input");
    if (failed(spec))
      return failure();
    entry.inputs.push_back(std::move(*spec));
    if (i >= entry.declaredInputs.size())
      entry.declaredInputs.push_back(
          declaredShape(type, func.getArgAttrDict(i)));
  }
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    auto name = func.getResultAttrOfType<StringAttr>(i, "mp.name");
    FailureOr<HostTensor> spec = describe(
        type, name ? name.getValue() : "output_" + std::to_string(i),
        "output");
    if (failed(spec))
      return failure();
    entry.outputs.push_back(std::move(*spec));
  }
  // ONNX-24 caches written by TensorScatter update their input in place.
  markInPlaceTensorScatters(func);
  // ONNX names and dims are not LLVM argument attributes.
  // The caller's input buffers are read in place: bufferization must copy
  // before it writes into one (it drops the attribute when done).
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttrs(i, ArrayRef<NamedAttribute>{NamedAttribute(
                            StringAttr::get(ctx, "bufferization.writable"),
                            BoolAttr::get(ctx, false))});
  // Of the result attributes only the in-place marks stay (for
  // mp-drop-in-place-results).
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    Attribute of = func.getResultAttr(i, "mp.in_place_of");
    func.setResultAttrs(i, ArrayRef<NamedAttribute>{});
    if (of)
      func.setResultAttr(i, "mp.in_place_of", of);
  }
  recordInPlaceCaches(func, entry);
  entry.returnsOutputs = options.dynamicShapes;
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  entry.symbol = ("_mlir_ciface_" + func.getName()).str();
  return success();
}

std::unique_ptr<CpuRunner> CpuRunner::compile(OwningOpRef<ModuleOp> module,
                                              ArrayRef<HostTensor> inputs,
                                              const EntryOptions &entryOptions) {
  MLIRContext *ctx = module->getContext();
  Location loc = module->getLoc();
  auto runner = std::unique_ptr<CpuRunner>(new CpuRunner());
  if (failed(prepareEntry(*module, inputs, runner->signature, entryOptions)))
    return nullptr;
  // Caches re-typed to their capacity (and storage type) must be given so.
  for (const HostTensor &spec : runner->signature.inputs) {
    auto given = llvm::find_if(
        inputs, [&](const HostTensor &t) { return t.name == spec.name; });
    std::string error;
    if (given != inputs.end() && !fitsSpec(spec, *given, error))
      return emitError(loc)
                 << "input '" << spec.name << "' is " << given->describe()
                 << ", the compiled step takes " << spec.describe()
                 << (entryOptions.maxSeqLen > 0
                         ? " (KV caches hold max_seq_len positions)"
                         : ""),
             nullptr;
  }
  runner->entry = runner->signature.symbol;
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

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
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
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine)
    return emitError(loc) << "JIT compilation failed: "
                          << llvm::toString(engine.takeError()),
           nullptr;
  // Buffers come from the pool, so a run reuses the previous run's memory.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto bind = [&](StringRef name, auto *fn) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                 llvm::JITSymbolFlags::Exported};
    };
    bind("_mlir_memref_to_llvm_alloc", &poolAlloc);
    bind("_mlir_memref_to_llvm_aligned_alloc", &poolAlignedAlloc);
    bind("_mlir_memref_to_llvm_free", &poolFree);
    return symbols;
  });
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
  if (llvm::Error e = engine->invokePacked(entry, args)) {
    error = "running the model failed: " + llvm::toString(std::move(e));
    return false;
  }
  return !signature.returnsOutputs ||
         takeReturnedOutputs(results.data(), out, error);
}

} // namespace mp
