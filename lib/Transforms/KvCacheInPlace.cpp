//===- KvCacheInPlace.cpp - fixed-capacity KV caches updated in place -----===//
//
// A decoder step exported to ONNX reads past_key [B, H, P, D], joins the new
// K/V to it with a Concat and returns the joined cache: every step copies
// the whole cache, and P changes from step to step. This pass gives each
// cache a capacity fixed at compile time and a run-time fill level, so the
// step writes only its new positions, into the caller's buffer.
//
//===----------------------------------------------------------------------===//

#include "NamedSignature.h"

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/OpInfo.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"

namespace mp {
#define GEN_PASS_DEF_KVCACHEINPLACE
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

/// A cache input feeding an attention operand: the function argument and
/// the cast between them, if any.
struct CacheInput {
  BlockArgument arg;
  CastOp cast;
};

/// A cache output: the return operand index and the cast before it, if any.
struct CacheOutput {
  unsigned result;
  CastOp cast;
};

/// `v` as a graph input read only here, directly or through one cast.
FailureOr<CacheInput> cacheInput(Value v, std::string &why) {
  CacheInput in;
  if (auto cast = v.getDefiningOp<CastOp>()) {
    if (!cast->hasOneUse())
      return why = "its past cache is converted for more than one use",
             failure();
    in.cast = cast;
    v = cast.getInput();
  }
  in.arg = dyn_cast<BlockArgument>(v);
  if (!in.arg || !isa<func::FuncOp>(in.arg.getOwner()->getParentOp()))
    return why = "its past cache is computed, not a graph input", failure();
  if (!in.arg.hasOneUse())
    return why = "its past cache input has other uses", failure();
  return in;
}

/// `v` as a graph output and nothing else, directly or through one cast.
FailureOr<CacheOutput> cacheOutput(Value v, std::string &why) {
  CacheOutput out;
  if (!v.hasOneUse())
    return why = "its present cache is not only a graph output", failure();
  Operation *user = *v.getUsers().begin();
  if (auto cast = dyn_cast<CastOp>(user)) {
    if (!cast->hasOneUse())
      return why = "its present cache is not only a graph output", failure();
    out.cast = cast;
    user = *cast->getUsers().begin();
    v = cast.getResult();
  }
  if (!isa<func::ReturnOp>(user))
    return why = "its present cache is not only a graph output", failure();
  out.result = v.getUses().begin()->getOperandNumber();
  return out;
}

/// " (from node 'N')": the first ONNX node the fused attention came from,
/// for messages whose location prints as the model file.
std::string nodeSuffix(AttentionOp op) {
  std::string node = onnxNodeName(op);
  return node.empty() ? "" : " (from node '" + node + "')";
}

/// Whether every element of `attr` is the same.
bool isUniform(DenseElementsAttr attr) {
  if (attr.isSplat())
    return true;
  if (auto ints = dyn_cast<DenseIntElementsAttr>(attr)) {
    auto values = ints.getValues<APInt>();
    return llvm::all_equal(values);
  }
  if (auto floats = dyn_cast<DenseFPElementsAttr>(attr)) {
    auto values = floats.getValues<APFloat>();
    return llvm::all_of(values, [&](const APFloat &v) {
      return v.bitwiseIsEqual(*values.begin());
    });
  }
  return false;
}

/// Why the mask of `op` would mean something else with its cache in place,
/// or "". The graph is specialized to a past of capacity - new positions,
/// so mask logic computed from the cache length (a causal triangle over
/// several new positions, a sliding window) folded into constants for
/// queries at the end of the buffer, while the step's queries sit at the
/// fill level. Only a mask whose folded part is uniform (the causal row of
/// a single new position: every key) means the same at every fill level;
/// the rest of it comes from graph inputs (attention_mask), which the
/// caller gives for the buffer's slots. Gather indices are positions, not
/// mask values, and are not looked at.
std::string maskDependsOnCacheLength(AttentionOp op) {
  Value mask = op.getAttnMask();
  if (!mask)
    return "";
  SmallVector<Value> work{mask};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || !seen.insert(v).second)
      continue;
    if (auto constant = dyn_cast<ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      Type element = getElementTypeOrSelf(v.getType());
      if (dense && (element.isInteger(1) || isa<FloatType>(element)) &&
          !isUniform(dense))
        return "its mask folds to positions computed from the cache length "
               "(a sliding window, or causal rows of several new positions), "
               "which would sit at the end of the buffer instead of at the "
               "fill level; compile this step without max-seq-len";
      continue;
    }
    if (isa<GatherOp, GatherNDOp, GatherElementsOp>(def)) {
      work.push_back(def->getOperand(0));
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return "";
}

/// The converted form of one attention op.
struct Site {
  AttentionOp op;
  CacheInput pastKey, pastValue;
  CacheOutput presentKey, presentValue;
  int64_t fresh = 0; ///< New positions per step.
};

/// Why `op` cannot take in-place caches (empty if it can), filling `site`.
std::string check(AttentionOp op, int64_t capacity, Site &site) {
  std::string why;
  if (op.getPastLength())
    return "it has a fill level already";
  if (op.getNonpadKvSeqlen())
    return "it has nonpad_kv_seqlen";
  if (!op.getQkMatmulOutput().use_empty())
    return "its qk_matmul_output is used";
  site.op = op;
  FailureOr<CacheInput> pk = cacheInput(op.getPastKey(), why);
  if (failed(pk))
    return why;
  FailureOr<CacheInput> pv = cacheInput(op.getPastValue(), why);
  if (failed(pv))
    return why;
  FailureOr<CacheOutput> ok = cacheOutput(op.getPresentKey(), why);
  if (failed(ok))
    return why;
  FailureOr<CacheOutput> ov = cacheOutput(op.getPresentValue(), why);
  if (failed(ov))
    return why;
  site.pastKey = *pk;
  site.pastValue = *pv;
  site.presentKey = *ok;
  site.presentValue = *ov;
  for (Value past : {op.getPastKey(), op.getPastValue()}) {
    ArrayRef<int64_t> s = shapeOf(past);
    if (ShapedType::isDynamic(s[0]) || ShapedType::isDynamic(s[1]) ||
        ShapedType::isDynamic(s[3]))
      return "its cache dims other than the sequence are dynamic (pin the "
             "inputs' shapes)";
  }
  ArrayRef<int64_t> k = shapeOf(op.getK());
  int64_t fresh = k.size() == 4 ? k[2] : k[1];
  if (ShapedType::isDynamic(fresh))
    return "its number of new positions is dynamic (pin the inputs' shapes)";
  if (fresh > capacity)
    return "it writes " + std::to_string(fresh) +
           " new positions, more than max-seq-len (" +
           std::to_string(capacity) + ")";
  site.fresh = fresh;
  if (op.getAttnMask()) {
    // The mask covers the pinned past and the new positions: it spans the
    // buffer only if they fill it.
    int64_t pinned = shapeOf(op.getPastKey())[2];
    if (ShapedType::isDynamic(pinned) || pinned + fresh != capacity)
      return "its mask spans the pinned past and the new positions, not the "
             "buffer: pin the past inputs' sequence length to max-seq-len - " +
             std::to_string(fresh) + " = " + std::to_string(capacity - fresh) +
             " (a mask input then covers " + std::to_string(capacity) +
             " positions)";
    if (std::string why = maskDependsOnCacheLength(op); !why.empty())
      return why;
  }
  return "";
}

struct KvCacheInPlacePass
    : public mp::impl::KvCacheInPlaceBase<KvCacheInPlacePass> {
  using KvCacheInPlaceBase::KvCacheInPlaceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxSeqLen <= 0) {
      emitError(module.getLoc())
          << "mp-kv-cache-in-place: max-seq-len must be positive, got "
          << static_cast<int64_t>(maxSeqLen);
      return signalPassFailure();
    }
    func::FuncOp func = entryFunction(module, getArgument());
    if (!func)
      return signalPassFailure();
    SmallVector<Site> sites;
    bool failedAny = false;
    func.walk([&](AttentionOp op) {
      if (!op.getPastKey())
        return;
      Site site;
      std::string why = check(op, maxSeqLen, site);
      if (why.empty()) {
        sites.push_back(site);
        return;
      }
      op.emitError() << "cannot keep this attention's KV cache in place"
                     << nodeSuffix(op) << ": " << why;
      failedAny = true;
    });
    for (Site &site : sites)
      if (site.fresh != sites.front().fresh) {
        site.op.emitError()
            << "cannot keep this attention's KV cache in place"
            << nodeSuffix(site.op) << ": it writes " << site.fresh
            << " new positions, another attention " << sites.front().fresh
            << " (one fill level serves them all)";
        failedAny = true;
      }
    if (failedAny)
      return signalPassFailure();
    if (sites.empty()) {
      emitError(func.getLoc())
          << "mp-kv-cache-in-place: no mp.attention reads a KV cache (past "
             "key/value) from the graph inputs; fuse attention first "
             "(mp-fuse-attention) or compile without max-seq-len";
      return signalPassFailure();
    }
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, "mp.name");
          name && name.getValue() == lengthInput) {
        emitError(func.getLoc())
            << "mp-kv-cache-in-place: the graph has an input named '"
            << lengthInput << "' already; choose another length-input";
        return signalPassFailure();
      }
    convert(func, sites);
  }

  void convert(func::FuncOp func, MutableArrayRef<Site> sites) {
    Builder b(func.getContext());
    Value length = addNamedArgument(
        func, RankedTensorType::get({}, b.getI64Type()), lengthInput);
    auto ret = cast<func::ReturnOp>(func.front().getTerminator());
    for (Site &site : sites) {
      AttentionOp op = site.op;
      auto retype = [&](CacheInput in) {
        auto past = cast<RankedTensorType>(
            (in.cast ? in.cast.getResult() : Value(in.arg)).getType());
        SmallVector<int64_t> shape(past.getShape());
        shape[2] = maxSeqLen;
        in.arg.setType(RankedTensorType::get(shape, past.getElementType()));
        if (in.cast) {
          in.cast.getResult().replaceAllUsesWith(in.arg);
          in.cast.erase();
        }
      };
      retype(site.pastKey);
      retype(site.pastValue);
      op.getPastLengthMutable().assign(length);
      // The present caches and the scores take the capacity as their key
      // count.
      SmallVector<Type> inferred;
      if (failed(AttentionOp::inferReturnTypes(
              op.getContext(), op.getLoc(), op->getOperands(),
              op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
              op->getRegions(), inferred)))
        return signalPassFailure();
      for (auto [result, type] : llvm::zip(op->getResults(), inferred))
        result.setType(type);
      // The present output is the past input's buffer after the step.
      auto reroute = [&](CacheOutput out, Value present, CacheInput in) {
        ret->setOperand(out.result, present);
        if (out.cast)
          out.cast.erase();
        func.setArgAttr(in.arg.getArgNumber(), "mp.updated_in_place",
                        b.getI64IntegerAttr(out.result));
        func.setResultAttr(out.result, "mp.in_place_of",
                           b.getI64IntegerAttr(in.arg.getArgNumber()));
      };
      reroute(site.presentKey, op.getPresentKey(), site.pastKey);
      reroute(site.presentValue, op.getPresentValue(), site.pastValue);
    }
    func.setType(b.getFunctionType(func.front().getArgumentTypes(),
                                   ret.getOperandTypes()));
    func->setAttr(
        "mp.kv_cache",
        b.getDictionaryAttr(
            {b.getNamedAttr("length_input", b.getStringAttr(lengthInput)),
             b.getNamedAttr("capacity", b.getI64IntegerAttr(maxSeqLen)),
             b.getNamedAttr("new_positions",
                            b.getI64IntegerAttr(sites.front().fresh))}));
  }
};

} // namespace

void mp::markInPlaceTensorScatters(func::FuncOp func) {
  Builder b(func.getContext());
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  func.walk([&](TensorScatterOp op) {
    auto arg = dyn_cast<BlockArgument>(op.getPastCache());
    if (!arg || arg.getOwner() != &func.front() || !arg.hasOneUse() ||
        !op.writesSlices() || func.getArgAttr(arg.getArgNumber(),
                                              "mp.updated_in_place"))
      return;
    // Returned once, as it is; other readers (the attention) are fine.
    SmallVector<unsigned> returned;
    for (OpOperand &use : op.getResult().getUses())
      if (use.getOwner() == ret.getOperation())
        returned.push_back(use.getOperandNumber());
    if (returned.size() != 1 ||
        func.getResultAttr(returned.front(), "mp.in_place_of"))
      return;
    func.setArgAttr(arg.getArgNumber(), "mp.updated_in_place",
                    b.getI64IntegerAttr(returned.front()));
    func.setResultAttr(returned.front(), "mp.in_place_of",
                       b.getI64IntegerAttr(arg.getArgNumber()));
  });
}
