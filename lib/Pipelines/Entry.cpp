//===- Entry.cpp - a module's entry point for one set of inputs -----------===//

#include "mp/Pipelines/Entry.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/PassManager.h"

#include <cstring>

using namespace mlir;

namespace mp {

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
    ok =
        ShapedType::isDynamic(spec.shape[i]) || spec.shape[i] == given.shape[i];
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
    auto name = names && i < names.size() ? dyn_cast<StringAttr>(names[i])
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
  auto it =
      llvm::find_if(given, [&](const HostTensor &t) { return t.name == name; });
  if (it == given.end() || it->data.size() != sizeof(int64_t)) {
    error = "input '" + name +
            "' must be one int64 (the filled KV cache "
            "positions)";
    return false;
  }
  int64_t length;
  std::memcpy(&length, it->data.data(), sizeof(length));
  if (length >= 0 && length <= kvCache.capacity - kvCache.newPositions)
    return true;
  error = "input '" + name + "' is " + std::to_string(length) +
          ", out of range [0, " +
          std::to_string(kvCache.capacity - kvCache.newPositions + 1) +
          "): with " + std::to_string(kvCache.newPositions) +
          " new position(s) per step the KV cache needs " +
          std::to_string(length + kvCache.newPositions) +
          " positions, and it holds 0 to " + std::to_string(kvCache.capacity) +
          " (max_seq_len)";
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
                           EntrySignature &entry, const EntryOptions &options) {
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
      return emitError(loc)
             << "missing input '" << argName << "' (" << type << ")";
    // A cache the in-place pass will store in the attention's type may be
    // given in it already; the compiled signature is checked later.
    Type expected = type;
    if (options.maxSeqLen > 0 && isa<FloatType>(getElementTypeOrSelf(type)) &&
        isa<FloatType>(given->elementType))
      expected = cast<RankedTensorType>(type).clone(given->elementType);
    if (failed(checkInputTensor(loc, argName, expected, *given)))
      return failure();
    entry.declaredInputs.push_back(declaredShape(type, func.getArgAttrDict(i)));
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
      return emitError(loc)
             << "the model has no input named '" << t.name << "'";

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
  bool sizedByValues = false;
  auto describe = [&](Type type, StringRef name,
                      StringRef what) -> FailureOr<HostTensor> {
    HostTensor spec;
    spec.name = name.str();
    auto ranked = cast<RankedTensorType>(type);
    // Pinned inputs are static; an output that stays dynamic has a size
    // decided by values (NonZero, lengths computed from durations) and is
    // allocated by the run.
    if (!ranked.hasStaticShape() && !options.dynamicShapes && what == "input")
      return emitError(loc)
                 << what << " '" << spec.name << "' keeps a dynamic shape "
                 << type << " after specializing to the inputs",
             failure();
    if (!ranked.hasStaticShape() && what == "output")
      sizedByValues = true;
    spec.elementType = ranked.getElementType();
    spec.shape.assign(ranked.getShape().begin(), ranked.getShape().end());
    return spec;
  };
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto name = func.getArgAttrOfType<StringAttr>(i, "mp.name");
    FailureOr<HostTensor> spec = describe(
        type, name ? name.getValue() : "#" + std::to_string(i), "input");
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
        type, name ? name.getValue() : "output_" + std::to_string(i), "output");
    if (failed(spec))
      return failure();
    entry.outputs.push_back(std::move(*spec));
  }
  // Outputs of run-time size come back allocated by the compiled code; a
  // model whose dims are all static under dynamic shapes is a static library.
  auto hasDynamicDim = [](ArrayRef<HostTensor> list) {
    return llvm::any_of(list, [](const HostTensor &t) {
      return llvm::is_contained(t.shape, ShapedType::kDynamic);
    });
  };
  entry.returnsOutputs = sizedByValues || hasDynamicDim(entry.inputs);
  // ONNX-24 caches written by TensorScatter update their input in place,
  // unless every output comes back allocated by the run (a cache updated in
  // place has no returned descriptor).
  if (!entry.returnsOutputs)
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
  func->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  entry.symbol = ("_mlir_ciface_" + func.getName()).str();
  return success();
}

} // namespace mp
