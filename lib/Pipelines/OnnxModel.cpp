//===- OnnxModel.cpp - an ONNX model and the modules built from it --------===//

#include "mp/Pipelines/OnnxModel.h"
#include "mp/Dialect/Mp/IR/MpDialect.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Import/OnnxImporter.h"
#include "mp/Pipelines/Pipelines.h"
#include "mp/Precision/Policy.h"
#include "mp/Support/CompileCache.h"
#include "mp/Support/CompileCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Path.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace mp {

/// Integer and bool inputs with at most this many elements are compiled in.
constexpr int64_t kMaxCompiledInElements = 64;
/// The input mp-kv-cache-in-place adds (its default length-input).
static std::string fillLevelInput() {
  return KvCacheInPlaceOptions().lengthInput;
}

void registerModelDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registry.insert<MpDialect>();
}

std::optional<std::string> modelFilesKey(MLIRContext *ctx, StringRef modelPath,
                                         StringRef policyFile,
                                         StringRef rangesFile) {
  bool ok = true;
  std::string key;
  llvm::raw_string_ostream os(key);
  auto file = [&](const Twine &what, StringRef path) {
    std::optional<std::string> hash = hashFile(path);
    ok &= hash.has_value();
    os << what << " " << hash.value_or("?") << "\n";
  };
  file("model", modelPath);
  std::vector<std::string> external;
  {
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    ok &= succeeded(listExternalDataFiles(modelPath, ctx, external));
  }
  StringRef dir = llvm::sys::path::parent_path(modelPath);
  for (const std::string &path : external)
    file("external " + StringRef(path).drop_front(dir.size()), path);
  if (!policyFile.empty())
    file("policy", policyFile);
  if (!rangesFile.empty())
    file("ranges", rangesFile);
  if (!ok)
    return std::nullopt;
  return key;
}

std::unique_ptr<OnnxModel> OnnxModel::load(MLIRContext *ctx, StringRef path,
                                           const ModelOptions &options) {
  Location loc = FileLineColLoc::get(ctx, path, 0, 0);
  if (!options.policyFile.empty() && !options.mixed)
    return emitError(loc) << "a precision policy only applies to mixed "
                             "precision",
           nullptr;
  if ((!options.rangesFile.empty() || !options.planFile.empty()) &&
      !options.mixed)
    return emitError(loc) << "calibration ranges and plans only apply to "
                             "mixed precision",
           nullptr;
  if (options.shadowFp16 && (!options.mixed || options.exposeValues))
    return emitError(loc) << "fp16 shadows need mixed precision, and expose "
                             "values themselves",
           nullptr;
  if (options.exposeValues && !options.trainingStep.empty())
    return emitError(loc) << "a training step's values cannot be exposed",
           nullptr;
  if (!options.lossScaling.empty() && options.trainingStep.empty())
    return emitError(loc) << "loss scaling only applies to a training step",
           nullptr;
  if (!options.policyFile.empty()) {
    // Checked now, not at the first run (warnings come with the run).
    std::string error;
    std::vector<std::string> warnings;
    if (!PrecisionPolicy::load(options.policyFile, error, warnings))
      return emitError(loc) << error, nullptr;
  }
  std::vector<GraphValueInfo> ins, outs;
  if (failed(readOnnxSignature(path, ctx, ins, outs)))
    return nullptr;
  auto model = std::unique_ptr<OnnxModel>(new OnnxModel());
  model->ctx = ctx;
  model->modelPath = path.str();
  model->modelOptions = options;
  for (const GraphValueInfo &v : ins)
    model->inputSpecs.push_back({v.name, v.type.getElementType(),
                                 SmallVector<int64_t>(v.type.getShape())});
  for (const GraphValueInfo &v : outs) {
    TensorSpec spec{v.name, {}, {}};
    if (v.type) {
      spec.elementType = v.type.getElementType();
      spec.shape.assign(v.type.getShape().begin(), v.type.getShape().end());
    }
    model->outputSpecs.push_back(spec);
  }
  // Import now, so that unsupported ops are reported before the first run
  // and the inputs that decide shapes are known. With integer inputs the
  // import may need their values; a failure then waits for them.
  bool anyInteger = llvm::any_of(model->inputSpecs, [](const TensorSpec &s) {
    return isa<IntegerType>(s.elementType);
  });
  OwningOpRef<ModuleOp> probe;
  // A graph with an If whose branches differ in rank imports only with the
  // input shapes: each variant imports it then.
  bool needsShapes = false;
  {
    std::optional<ScopedDiagnosticHandler> quiet;
    if (anyInteger)
      quiet.emplace(ctx, [](Diagnostic &) { return success(); });
    ImportOptions probeOptions;
    probeOptions.needsInputShapes = &needsShapes;
    probe = importOnnxFile(path, ctx, probeOptions);
  }
  if (!probe && !anyInteger && !needsShapes)
    return nullptr;
  model->importNeedsShapes = needsShapes;
  if (probe && !options.trainingStep.empty()) {
    // The step's signature replaces the model's.
    if (failed(model->buildTrainingStep(*probe)))
      return nullptr;
    auto func = *probe->getOps<func::FuncOp>().begin();
    model->inputSpecs.clear();
    model->outputSpecs.clear();
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
      model->inputSpecs.push_back(
          {func.getArgAttrOfType<StringAttr>(i, "mp.name").str(),
           getElementTypeOrSelf(type),
           SmallVector<int64_t>(cast<ShapedType>(type).getShape())});
    for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
      model->outputSpecs.push_back(
          {func.getResultAttrOfType<StringAttr>(i, "mp.name").str(),
           getElementTypeOrSelf(type),
           SmallVector<int64_t>(cast<ShapedType>(type).getShape())});
    model->findShapeInputs(*probe);
    model->knowsShapeInputs = true;
    // The variants import again and rebuild the step.
    return model;
  }
  if (options.maxSeqLen > 0 && !options.fuseAttention)
    return emitError(loc) << "max_seq_len keeps the KV caches of fused "
                             "attention in place: enable attention fusion "
                             "too",
           nullptr;
  if (probe) {
    model->findShapeInputs(*probe);
    model->knowsShapeInputs = true;
    if (options.maxSeqLen > 0 && failed(model->describeInPlaceCaches(*probe)))
      return nullptr;
    model->firstImport = std::move(probe);
  }
  return model;
}

/// Whether `v` reaches an operand that decides a result shape or which
/// branch of an If runs, directly or
/// through integer arithmetic and shape ops (Add, Concat, Cast, Unsqueeze..)
/// or small float arithmetic (a window size cast to float for a Range).
/// Values that only feed data (Gather indices into float tables, masks)
/// do not, and neither does anything through Shape or Size, whose results
/// do not depend on values. With `runtimeShapes` (dynamic-shape variants)
/// only the operands the lowering needs as constants count: Reshape,
/// Expand, ConstantOfShape, Range, Tile, Trilu, TopK's k, OneHot's depth,
/// Pad's pads, GroupQueryAttention's total_sequence_length and an If's
/// condition take run-time values there.
static bool decidesShape(Value v, llvm::SmallPtrSetImpl<Operation *> &seen,
                         bool runtimeShapes) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    Value operand = use.get();
    unsigned i = use.getOperandNumber();
    auto is = [&](Value x) { return x && x == operand; };
    bool sizesRunTime =
        (isa<ReshapeOp, ExpandOp>(user) && i == 1) ||
        isa<ConstantOfShapeOp, RangeOp>(user) ||
        (isa<TileOp>(user) && is(cast<TileOp>(user).getRepeats())) ||
        (isa<TriluOp>(user) && is(cast<TriluOp>(user).getK())) ||
        (isa<TopKOp>(user) && is(cast<TopKOp>(user).getK())) ||
        (isa<OneHotOp>(user) && is(cast<OneHotOp>(user).getDepth())) ||
        (isa<PadOp>(user) && is(cast<PadOp>(user).getPads())) ||
        (isa<GroupQueryAttentionOp>(user) &&
         is(cast<GroupQueryAttentionOp>(user).getTotalSequenceLength()));
    bool direct =
        (!runtimeShapes && sizesRunTime) ||
        (isa<SliceOp, ResizeOp>(user) && i != 0) ||
        (isa<PadOp>(user) && is(cast<PadOp>(user).getAxes())) ||
        // An If's condition: compiled in, the branch is chosen at compile
        // time and no device value is read on the host (CUDA target);
        // dynamic-shape variants take it at run time (scf.if).
        (!runtimeShapes && isa<IfOp>(user) &&
         is(cast<IfOp>(user).getCondition()));
    if (direct)
      return true;
    if (isa<ShapeOp, SizeOp>(user) || !seen.insert(user).second)
      continue;
    for (Value r : user->getResults()) {
      auto type = dyn_cast<RankedTensorType>(r.getType());
      bool small = type && type.hasStaticShape() &&
                   type.getNumElements() <= kMaxCompiledInElements;
      if ((isa<IntegerType>(getElementTypeOrSelf(r.getType())) || small) &&
          decidesShape(r, seen, runtimeShapes))
        return true;
    }
  }
  return false;
}

void OnnxModel::findShapeInputs(ModuleOp module) {
  auto funcs = module.getOps<func::FuncOp>();
  if (funcs.empty())
    return;
  func::FuncOp func = *funcs.begin();
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto name = func.getArgAttrOfType<StringAttr>(i, "mp.name");
    auto type = cast<RankedTensorType>(arg.getType());
    if (!name || !type.hasStaticShape() ||
        type.getNumElements() > kMaxCompiledInElements)
      continue;
    llvm::SmallPtrSet<Operation *, 16> seen;
    if (decidesShape(arg, seen, modelOptions.dynamicShapes))
      shapeInputs.insert(name.getValue());
  }
}

Location OnnxModel::fileLoc() const {
  return FileLineColLoc::get(ctx, modelPath, 0, 0);
}

bool OnnxModel::nameInputs(std::vector<HostTensor> &inputs) const {
  for (auto [i, t] : llvm::enumerate(inputs)) {
    if (!t.name.empty())
      continue;
    if (i >= inputSpecs.size())
      return emitError(fileLoc())
                 << "input #" << i << " is " << t.describe() << ", but '"
                 << modelPath << "' has " << inputSpecs.size() << " input(s)",
             false;
    t.name = inputSpecs[i].name;
  }
  return true;
}

bool OnnxModel::checkInputs(ArrayRef<HostTensor> inputs) const {
  Location loc = fileLoc();
  for (auto [i, t] : llvm::enumerate(inputs)) {
    StringRef name = t.name;
    auto spec = llvm::find_if(
        inputSpecs, [&](const TensorSpec &s) { return s.name == name; });
    if (spec == inputSpecs.end())
      return emitError(loc)
                 << "the model has no input named '" << t.name << "'",
             false;
    for (const HostTensor &other : inputs.take_front(i))
      if (other.name == t.name)
        return emitError(loc) << "input '" << t.name << "' is given twice",
               false;
    if (failed(checkInputTensor(
            loc, t.name, RankedTensorType::get(spec->shape, spec->elementType),
            t)))
      return false;
  }
  for (const TensorSpec &spec : inputSpecs)
    if (llvm::none_of(inputs,
                      [&](const HostTensor &t) { return t.name == spec.name; }))
      return emitError(loc)
                 << "missing input '" << spec.name << "' ("
                 << RankedTensorType::get(spec.shape, spec.elementType) << ")",
             false;
  return true;
}

LogicalResult OnnxModel::describeInPlaceCaches(ModuleOp probe) {
  // What the variants will do to the graph, on a copy: fuse attention and
  // assign precision; the caches are then stored as the attention reads
  // them (through at most one cast, as mp-kv-cache-in-place takes them).
  OwningOpRef<ModuleOp> copy = probe.clone();
  PassManager pm(ctx, ModuleOp::getOperationName());
  pm.addPass(createFuseAttention());
  if (modelOptions.mixed)
    buildMixedPrecisionPipeline(pm, assignOptions());
  if (failed(pm.run(*copy)))
    return failure();
  auto func = *copy->getOps<func::FuncOp>().begin();
  auto throughCast = [](Value v) -> Value {
    if (auto cast = v.getDefiningOp<CastOp>())
      return cast.getInput();
    return v;
  };
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  func.walk([&](AttentionOp op) {
    if (!op.getPastKey())
      return;
    for (auto [past, present] :
         {std::make_pair(op.getPastKey(), op.getPresentKey()),
          std::make_pair(op.getPastValue(), op.getPresentValue())}) {
      Type stored = getElementTypeOrSelf(past);
      if (auto arg = dyn_cast<BlockArgument>(throughCast(past)))
        inputSpecs[arg.getArgNumber()].elementType = stored;
      for (OpOperand &use : present.getUses()) {
        Operation *user = use.getOwner();
        if (auto cast = dyn_cast<CastOp>(user); cast && cast->hasOneUse())
          user = *cast->getUsers().begin();
        if (user == ret.getOperation())
          for (OpOperand &out : ret->getOpOperands())
            if (throughCast(out.get()) == present)
              outputSpecs[out.getOperandNumber()].elementType = stored;
      }
    }
  });
  inputSpecs.push_back(
      TensorSpec{fillLevelInput(), IntegerType::get(ctx, 64), {}});
  return success();
}

LogicalResult OnnxModel::pinShapes(ArrayRef<HostTensor> pinned) {
  for (const HostTensor &t : pinned)
    pinnedShapes[t.name] = SmallVector<int64_t>(t.shape);
  if (knowsShapeInputs || !importNeedsShapes ||
      !modelOptions.trainingStep.empty())
    return success();
  ImportOptions options;
  options.inputShapes = pinnedShapes;
  OwningOpRef<ModuleOp> probe = importOnnxFile(modelPath, ctx, options);
  if (!probe)
    return failure();
  findShapeInputs(*probe);
  knowsShapeInputs = true;
  firstImport = std::move(probe);
  return success();
}

bool OnnxModel::isCompiledIn(const HostTensor &t) const {
  // The fill level of in-place caches changes every step.
  if (modelOptions.maxSeqLen > 0 && t.name == fillLevelInput())
    return false;
  if (t.numElements() > kMaxCompiledInElements)
    return false;
  if (knowsShapeInputs)
    return shapeInputs.contains(t.name);
  // The import needed input values (axes, split sizes, Dropout's
  // training_mode given as inputs): every small integer or bool input.
  return isa<IntegerType>(t.elementType);
}

std::string OnnxModel::variantKey(ArrayRef<HostTensor> inputs) const {
  std::string key;
  for (const TensorSpec &spec : inputSpecs) {
    const HostTensor &t = *llvm::find_if(
        inputs, [&](const HostTensor &t) { return t.name == spec.name; });
    // A dynamic-shape variant serves every shape of its runtime inputs.
    key += t.name + ":" +
           (modelOptions.dynamicShapes && !isCompiledIn(t)
                ? "rank " + std::to_string(t.shape.size()) + " of " +
                      HostTensor{"", t.elementType, {}, {}}.describe()
                : t.describe());
    if (isCompiledIn(t))
      key += "=" + std::string(t.data.begin(), t.data.end());
    key += ";";
  }
  return key;
}

OwningOpRef<ModuleOp>
OnnxModel::buildVariant(ArrayRef<HostTensor> inputs,
                        std::vector<HostTensor> &runtimeInputs,
                        const CompileProgress &progress) {
  StageTimer timer(progress);
  ImportOptions importOptions;
  runtimeInputs.clear();
  for (const HostTensor &t : inputs) {
    // Specialized variants know their shapes at import (used by graphs with
    // an If whose branches differ in rank).
    if (!modelOptions.dynamicShapes)
      importOptions.inputShapes[t.name] = SmallVector<int64_t>(t.shape);
    else if (auto pin = pinnedShapes.find(t.name); pin != pinnedShapes.end())
      importOptions.inputShapes[t.name] = pin->second;
    if (isCompiledIn(t)) {
      auto type = RankedTensorType::get(t.shape, t.elementType);
      // MLIR packs i1 elements as bits; host bools are one byte each.
      if (t.elementType.isInteger(1)) {
        SmallVector<bool> bits;
        for (char c : t.data)
          bits.push_back(c != 0);
        importOptions.constantInputs[t.name] =
            DenseElementsAttr::get(type, bits);
      } else {
        importOptions.constantInputs[t.name] =
            DenseElementsAttr::getFromRawBuffer(type, t.data);
      }
      continue;
    }
    runtimeInputs.push_back(t);
  }
  // The import done at load serves the first variant without constants.
  OwningOpRef<ModuleOp> module;
  if (importOptions.constantInputs.empty() && firstImport)
    module = std::move(firstImport);
  else
    module = importOnnxFile(modelPath, ctx, importOptions);
  firstImport = nullptr;
  if (!module)
    return nullptr;
  timer.done("import");
  if (!modelOptions.trainingStep.empty() && failed(buildTrainingStep(*module)))
    return nullptr;
  if (modelOptions.fuseAttention || modelOptions.mixed ||
      modelOptions.exposeValues || modelOptions.shadowFp16) {
    PassManager pm(ctx, ModuleOp::getOperationName());
    if (modelOptions.fuseAttention)
      pm.addPass(createFuseAttention());
    if (modelOptions.exposeValues)
      pm.addPass(createExposeValues());
    if (modelOptions.shadowFp16) {
      pm.addPass(createAssignPrecision(assignOptions()));
      pm.addPass(createShadowFp16());
      InsertCastsOptions casts;
      casts.keepIoTypes = KeepIoTypes::Yes;
      pm.addPass(createInsertCasts(casts));
    } else if (modelOptions.mixed) {
      buildMixedPrecisionPipeline(pm, assignOptions());
    }
    if (failed(pm.run(*module)))
      return nullptr;
  }
  timer.done("fusion and precision");
  return module;
}

LogicalResult OnnxModel::buildTrainingStep(ModuleOp module) const {
  PassManager pm(ctx, ModuleOp::getOperationName());
  auto addPass = [&](std::unique_ptr<Pass> pass, StringRef opts) {
    if (failed(pass->initializeOptions(opts, [&](const Twine &msg) {
          return emitError(fileLoc()) << pass->getArgument() << ": " << msg;
        })))
      return failure();
    pm.addPass(std::move(pass));
    return success();
  };
  if (failed(addPass(createBuildTrainingStep(), modelOptions.trainingStep)))
    return failure();
  if (!modelOptions.lossScaling.empty() &&
      failed(addPass(createInsertLossScaling(), modelOptions.lossScaling)))
    return failure();
  return pm.run(module);
}

AssignPrecisionOptions OnnxModel::assignOptions() const {
  AssignPrecisionOptions assign;
  assign.policyFile = modelOptions.policyFile;
  assign.rangesFile = modelOptions.rangesFile;
  assign.planFile = modelOptions.planFile;
  assign.keepIoTypes = KeepIoTypes::Yes;
  return assign;
}

EntryOptions OnnxModel::entryOptions() const {
  EntryOptions entry;
  entry.maxSeqLen = modelOptions.maxSeqLen;
  entry.dynamicShapes = modelOptions.dynamicShapes;
  return entry;
}

} // namespace mp
