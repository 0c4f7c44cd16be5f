//===- CpuRunner.cpp - JIT-compile and run an mp module on the CPU --------===//

#include "mp/Execution/CpuRunner.h"
#include "mp/BufferPool.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

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

LogicalResult prepareEntry(ModuleOp module, ArrayRef<HostTensor> inputs,
                           EntrySignature &entry) {
  MLIRContext *ctx = module->getContext();
  Location loc = module->getLoc();
  auto funcs = module.getOps<func::FuncOp>();
  if (funcs.empty())
    return emitError(loc) << "the module has no function to run";
  func::FuncOp func = *funcs.begin();

  // Inputs by graph-input name, checked before anything is compiled.
  std::vector<std::string> pins;
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
    if (failed(checkInputTensor(loc, argName, type, *given)))
      return failure();
    HostTensor spec;
    spec.name = argName;
    spec.elementType = given->elementType;
    spec.shape = given->shape;
    entry.inputs.push_back(std::move(spec));
    entry.declaredInputs.push_back(
        declaredShape(type, func.getArgAttrDict(i)));
    pins.push_back(shapePin(*given));
  }
  for (const HostTensor &t : inputs)
    if (llvm::none_of(entry.inputs,
                      [&](const HostTensor &s) { return s.name == t.name; }))
      return emitError(loc) << "the model has no input named '" << t.name
                            << "'";

  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    entry.declaredOutputs.push_back(
        declaredShape(type, func.getResultAttrDict(i)));
  PassManager pm(ctx, ModuleOp::getOperationName());
  SpecializeShapesOptions specialize;
  specialize.shapes.assign(pins.begin(), pins.end());
  pm.addPass(createSpecializeShapes(specialize));
  if (failed(pm.run(module)))
    return failure();
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    HostTensor spec;
    auto name = func.getResultAttrOfType<StringAttr>(i, "mp.name");
    spec.name = name ? name.str() : "output_" + std::to_string(i);
    auto ranked = cast<RankedTensorType>(type);
    if (!ranked.hasStaticShape())
      return emitError(loc) << "output '" << spec.name
                            << "' keeps a dynamic shape " << type
                            << " after specializing to the inputs";
    spec.elementType = ranked.getElementType();
    spec.shape.assign(ranked.getShape().begin(), ranked.getShape().end());
    entry.outputs.push_back(spec);
  }
  // ONNX names and dims are not LLVM argument attributes.
  // The caller's input buffers are read in place: bufferization must copy
  // before it writes into one (it drops the attribute when done).
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttrs(i, ArrayRef<NamedAttribute>{NamedAttribute(
                            StringAttr::get(ctx, "bufferization.writable"),
                            BoolAttr::get(ctx, false))});
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    func.setResultAttrs(i, ArrayRef<NamedAttribute>{});
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  entry.symbol = ("_mlir_ciface_" + func.getName()).str();
  return success();
}

std::unique_ptr<CpuRunner> CpuRunner::compile(OwningOpRef<ModuleOp> module,
                                              ArrayRef<HostTensor> inputs) {
  MLIRContext *ctx = module->getContext();
  Location loc = module->getLoc();
  auto runner = std::unique_ptr<CpuRunner>(new CpuRunner());
  EntrySignature signature;
  if (failed(prepareEntry(*module, inputs, signature)))
    return nullptr;
  for (const HostTensor &t : signature.inputs)
    runner->inputNames.push_back(t.name);
  runner->outputs = signature.outputs;
  runner->entry = signature.symbol;

  PassManager lower(ctx, ModuleOp::getOperationName());
  buildCpuPipeline(lower, /*resultsAsOutParams=*/true,
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

bool CpuRunner::run(ArrayRef<HostTensor> inputs, std::vector<HostTensor> &out,
                    std::string &error) {
  std::vector<std::vector<int64_t>> descriptors;
  for (const std::string &name : inputNames) {
    auto it = llvm::find_if(inputs, [&](const HostTensor &t) {
      return t.name == name;
    });
    if (it == inputs.end()) {
      error = "missing input '" + name + "'";
      return false;
    }
    // Not copied: the compiled code never writes its arguments.
    descriptors.push_back(
        descriptor(const_cast<char *>(it->data.data()), it->shape));
  }
  out = outputs;
  for (HostTensor &t : out) {
    t.data.assign(t.numElements() * HostTensor::elementBytes(t.elementType), 0);
    descriptors.push_back(descriptor(t.data.data(), t.shape));
  }
  std::vector<void *> pointers, args;
  for (auto &d : descriptors)
    pointers.push_back(d.data());
  for (void *&p : pointers)
    args.push_back(&p);
  if (llvm::Error e = engine->invokePacked(entry, args)) {
    error = "running the model failed: " + llvm::toString(std::move(e));
    return false;
  }
  return true;
}

} // namespace mp
