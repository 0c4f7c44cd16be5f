//===- FuseAttention.cpp - decomposed attention to mp.attention -----------===//
//
// Matching starts at each Softmax and walks up (mask, scale, Q.K^T) and down
// (P.V). Every step checks what makes the rewrite exact: the softmax axis,
// a scalar constant scale applied before the mask, a -inf fill for boolean
// masks, and no other consumer of an intermediate value. A Softmax that is
// next to a MatMul but fails a check is a near miss and is reported with
// the first check it failed.
//
//===----------------------------------------------------------------------===//

#include "CausalMask.h"
#include "ContribAttention.h"
#include "MergedHeadAttention.h"
#include "SymbolicDims.h"
#include "mp/Transforms/Passes.h"

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Dialect/Mp/IR/MpTypeInference.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace mp {
#define GEN_PASS_DEF_FUSEATTENTION
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

/// One matched attention site.
struct AttentionSite {
  Value q, k, v;
  /// K as the graph has it: [B, H, D, T] (the transpose is absorbed) when
  /// there is no transpose to absorb.
  bool kTransposed = false;
  Value mask;
  /// The mask marks the keys to drop (Where(cond, -inf, scores)).
  bool invertMask = false;
  /// The mask was a constant causal triangle: is_causal instead of a mask.
  bool causal = false;
  /// c of a soft cap c * tanh(scores / c) between the scale and the mask.
  double softcap = 0;
  /// K/V heads were repeated by Tile (query head h reads KV head h % Hkv):
  /// the fused op runs on query heads reordered to the grouped order
  /// (h / g) and the output is put back. 1 when not tiled.
  int64_t tiledGroups = 1;
  double scale = 1.0;
  /// The probabilities reach P.V through Where(IsNaN(P), 0, P) (torch's
  /// SDPA export: a fully masked row gives 0 instead of NaN); `guardZero`
  /// is that 0.
  /// The half type the scores were widened from to f32 (null if not).
  Type widenedFrom;
  bool nanGuard = false;
  Value guardZero;
  /// masked_fill with a finite fill at or below -1e30 (torch.finfo.min:
  /// Bark, GPT-2 style): Where(fillCondition, scores, fill), or with
  /// `fillInverted` Where(fillCondition, fill, scores). It becomes the
  /// additive mask Where(fillCondition, 0, fill), exact since such a fill
  /// absorbs any finite score; it also joins an added mask.
  Value fillCondition;
  double fill = 0;
  bool fillInverted = false;
  /// What the site was written with, for the report.
  SmallVector<std::string> pattern;
  /// The ops the site replaces, from Q.K^T to P.V.
  SmallVector<Operation *> ops;
  MatMulOp output;
};

/// The value of a single-element float constant, or of a small expression
/// over constants (a scale computed as 1 / Cast(head size)).
std::optional<double> scalarConstant(Value v) {
  std::optional<SmallVector<double>> values = getConstantFloats(v);
  if (!values || values->size() != 1)
    return std::nullopt;
  return values->front();
}

/// How the report names `op`: its ONNX node name, else its location.
std::string siteName(Operation *op) {
  std::string name = onnxNodeName(op);
  if (!name.empty())
    return name;
  llvm::raw_string_ostream os(name);
  op->getLoc().print(os);
  return name;
}

/// Whether `perm` swaps the last two axes and keeps the others.
bool swapsLastTwo(ArrayRef<int64_t> perm) {
  int64_t n = perm.size();
  if (n < 2)
    return false;
  for (int64_t i = 0; i < n - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
}

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }

/// For a K or V repeated per query head as repeat_kv writes it,
/// Reshape(Expand(Unsqueeze(x, [2]), [B, Hkv, g, T, D]), [B, Hkv*g, T, D]),
/// the unrepeated x; else null. (Tile repeats heads in the other order:
/// see tiledKv.) The head count, g and the head size must be proven (from
/// the types or the shape computations); the batch and sequence entries of
/// the two shapes may come from other values (dynamo's export reads them
/// off the inputs), and are only checked where they are constants.
Value repeatedKv(SymbolicDims &dims, Value v) {
  auto reshape = v.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {};
  auto expand = reshape.getInput().getDefiningOp<ExpandOp>();
  if (!expand)
    return {};
  auto unsqueeze = expand.getInput().getDefiningOp<UnsqueezeOp>();
  if (!unsqueeze || unsqueeze.getAxes().size() != 1 ||
      unsqueeze.getAxes()[0] != 2)
    return {};
  Value x = unsqueeze.getInput();
  if (rankOf(x) != 4 || rankOf(expand) != 5 || rankOf(v) != 4)
    return {};
  SymDim hkv = dims.dimOf(x, 1), g = dims.dimOf(expand, 2),
         d = dims.dimOf(x, 3);
  if (!hkv.value || !g.value || *g.value < 1 ||
      !dims.dimOf(expand, 1).sameAs(hkv) || !dims.dimOf(expand, 4).sameAs(d))
    return {};
  // [B, Hkv, g, T, D] -> [B, Hkv * g, T, D].
  if (!dims.dimOf(v, 1).sameAs(SymDim::constant(*hkv.value * *g.value)) ||
      !dims.dimOf(v, 3).sameAs(d))
    return {};
  auto differ = [](SymDim a, SymDim b) {
    return a.value && b.value && *a.value != *b.value;
  };
  for (int64_t i : {0, 2}) {
    int64_t j = i == 0 ? 0 : 3;
    if (differ(dims.dimOf(x, i), dims.dimOf(expand, j)) ||
        differ(dims.dimOf(x, i), dims.dimOf(v, i)))
      return {};
  }
  return x;
}

/// K^T as dynamo decomposes the transpose of a 4-D K:
/// Reshape(Transpose(Reshape(K, [-1, T, D]), [0, 2, 1]), [B, H, D, T]);
/// K, else null.
Value transposedByReshapes(SymbolicDims &dims, Value kt) {
  auto outer = kt.getDefiningOp<ReshapeOp>();
  if (!outer || rankOf(kt) != 4)
    return {};
  auto t = outer.getInput().getDefiningOp<TransposeOp>();
  if (!t || rankOf(t) != 3 || t.getPerm() != ArrayRef<int64_t>{0, 2, 1})
    return {};
  auto inner = t.getInput().getDefiningOp<ReshapeOp>();
  if (!inner)
    return {};
  Value k = inner.getInput();
  if (rankOf(k) != 4)
    return {};
  // The inner reshape keeps [T, D] as its last dims (so its first is B*H),
  // and the outer one splits B*H back.
  if (!dims.dimOf(inner, 1).sameAs(dims.dimOf(k, 2)) ||
      !dims.dimOf(inner, 2).sameAs(dims.dimOf(k, 3)))
    return {};
  const int64_t from[] = {0, 1, 3, 2};
  for (int64_t i = 0; i < 4; ++i) {
    SymDim want = dims.dimOf(k, from[i]);
    if (!want.isKnown() || !dims.dimOf(kt, i).sameAs(want))
      return {};
  }
  return k;
}

/// For K or V repeated per query head by Tile(x, [1, g, 1, 1]) (query head
/// h reads KV head h % Hkv), x and g; else null.
std::pair<Value, int64_t> tiledKv(Value v) {
  auto tile = v.getDefiningOp<TileOp>();
  if (!tile || rankOf(v) != 4)
    return {};
  std::optional<SmallVector<int64_t>> repeats =
      getConstantInts(tile.getRepeats());
  if (!repeats || repeats->size() != 4 || (*repeats)[0] != 1 ||
      (*repeats)[2] != 1 || (*repeats)[3] != 1 || (*repeats)[1] < 2)
    return {};
  return {tile.getInput(), (*repeats)[1]};
}

/// Matches the site around `softmax`, or says why it is not one. `dims`
/// is shared by every site of the pass (see runOnOperation).
FailureOr<AttentionSite> matchSite(SoftmaxOp softmax, std::string &reason,
                                   SymbolicDims &dims) {
  auto fail = [&](const Twine &why) {
    reason = why.str();
    return failure();
  };
  AttentionSite site;
  Value probs = softmax.getOutput();
  SmallVector<Operation *> guard;
  if (!probs.hasOneUse()) {
    // Where(IsNaN(P), 0, P): the only other consumer may be the IsNaN.
    WhereOp where;
    IsNaNOp isNan;
    for (Operation *user : probs.getUsers()) {
      if (auto n = dyn_cast<IsNaNOp>(user); n && !isNan)
        isNan = n;
      else if (auto w = dyn_cast<WhereOp>(user); w && !where)
        where = w;
      else
        return fail("the softmax result has another consumer");
    }
    if (!isNan || !where || where.getCondition() != isNan.getOutput() ||
        where.getY() != probs || !isNan.getOutput().hasOneUse())
      return fail("the softmax result has another consumer");
    std::optional<double> zero = scalarConstant(where.getX());
    if (!zero || *zero != 0)
      return fail("the softmax's NaN guard fills with a value other than 0");
    if (!where.getOutput().hasOneUse())
      return fail("the NaN-guarded softmax result has another consumer");
    site.nanGuard = true;
    site.guardZero = where.getX();
    site.pattern.push_back("nan-guard");
    guard = {isNan, where};
    probs = where.getOutput();
  }
  auto pv = dyn_cast<MatMulOp>(*probs.getUsers().begin());
  if (!pv || pv.getLhs() != probs)
    return fail("the softmax result does not feed a MatMul with V");
  int64_t rank = rankOf(probs);
  if (rank != 4)
    return fail("the scores are not 4-D [batch, heads, queries, keys]");
  ArrayRef<int64_t> axes = softmax.getAxes();
  if (axes.size() != 1 || (axes[0] != rank - 1 && axes[0] != -1))
    return fail("softmax is not on the last axis");

  // Walk up: an optional mask, then an optional scale, then Q.K^T.
  Value x = softmax.getInput();
  // Ops above the softmax, nearest first.
  SmallVector<Operation *> chain;
  Operation *def = x.getDefiningOp();
  if (auto add = dyn_cast_or_null<AddOp>(def)) {
    // The scores are the side that comes from a MatMul (maybe scaled and
    // soft-capped: Mul, Div and Tanh on the way).
    auto fromScores = [](Value s) {
      Operation *d = s.getDefiningOp();
      for (int step = 0;
           step < 5 && d && isa<MulOp, DivOp, TanhOp, CastOp, WhereOp>(d);
           ++step) {
        Value next = d->getOperand(0);
        if (isa<MulOp>(d) && scalarConstant(next))
          next = d->getOperand(1);
        if (auto where = dyn_cast<WhereOp>(d))
          next = scalarConstant(where.getY()) ? where.getX() : where.getY();
        d = next.getDefiningOp();
      }
      return isa_and_nonnull<MatMulOp>(d);
    };
    Value scores = fromScores(add.getLhs())   ? add.getLhs()
                   : fromScores(add.getRhs()) ? add.getRhs()
                                              : Value();
    if (!scores)
      return fail("the added mask is not next to the scores");
    if (!x.hasOneUse())
      return fail("the masked scores have another consumer");
    site.mask = scores == add.getLhs() ? add.getRhs() : add.getLhs();
    chain.push_back(add);
    x = scores;
    def = x.getDefiningOp();
  }
  if (auto where = dyn_cast_or_null<WhereOp>(def)) {
    // Where(keep, scores, -inf), or Where(drop, -inf, scores) as
    // masked_fill exports it.
    std::optional<double> fill = scalarConstant(where.getY());
    Value scores = where.getX();
    if (!fill && (fill = scalarConstant(where.getX()))) {
      scores = where.getY();
      site.invertMask = true;
    }
    if (!fill)
      return fail("the mask fill is not a scalar constant");
    if (*fill > -1e30)
      return fail("the mask fill is a finite value above -1e30, not -inf");
    if (!x.hasOneUse())
      return fail("the masked scores have another consumer");
    if (std::isinf(*fill) && !site.mask) {
      site.mask = where.getCondition();
    } else {
      site.fillCondition = where.getCondition();
      site.fill = *fill;
      site.fillInverted = site.invertMask;
      site.invertMask = false;
      site.pattern.push_back("fill-mask");
    }
    chain.push_back(where);
    x = scores;
  }
  // A soft cap, c * tanh(scores / c) (Gemma's order: after the scale,
  // before the mask, as mp.attention applies it).
  if (auto outer = x.getDefiningOp<MulOp>()) {
    for (unsigned i = 0; i < 2 && !site.softcap; ++i) {
      std::optional<double> c = scalarConstant(outer->getOperand(i));
      auto tanh = outer->getOperand(1 - i).getDefiningOp<TanhOp>();
      Operation *inner =
          tanh ? tanh.getInput().getDefiningOp() : nullptr;
      if (!c || !inner || !isa<MulOp, DivOp>(inner) || *c <= 0)
        continue;
      std::optional<double> d = scalarConstant(inner->getOperand(1));
      bool matches = d && (isa<DivOp>(inner) ? *d == *c
                                             : std::abs(*d * *c - 1) < 1e-6);
      if (!matches)
        continue;
      if (!x.hasOneUse() || !tanh->hasOneUse() ||
          !inner->getResult(0).hasOneUse())
        return fail("the soft-capped scores have another consumer");
      site.softcap = *c;
      chain.append({outer, tanh, inner});
      x = inner->getOperand(0);
    }
  }
  def = x.getDefiningOp();
  if (def && isa<MulOp, DivOp>(def)) {
    // scores * c, c * scores or scores / c.
    Value scores = def->getOperand(0);
    std::optional<double> c = scalarConstant(def->getOperand(1));
    if (!c && isa<MulOp>(def)) {
      c = scalarConstant(def->getOperand(0));
      scores = def->getOperand(1);
    }
    if (!c)
      return fail("the scale is not a scalar constant");
    if (isa_and_nonnull<AddOp, WhereOp>(scores.getDefiningOp()))
      return fail("the scale comes after the mask");
    if (!x.hasOneUse())
      return fail("the scaled scores have another consumer");
    site.scale = isa<DivOp>(def) ? 1.0 / *c : *c;
    chain.push_back(def);
    x = scores;
  } else if (def && isa<AddOp, WhereOp>(def)) {
    return fail("more than one mask");
  }
  // Half-precision scores widened to f32 before the mask and softmax, with
  // V widened too (TorchScript's fp16 SDPA): the fused op reads the half
  // Q, K and V (its scores and softmax are f32) and its output is widened.
  // (Its scores are not rounded to half first: closer to exact.)
  if (auto cast = x.getDefiningOp<CastOp>()) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    if (!getElementTypeOrSelf(x.getType()).isF32() ||
        !(from.isF16() || from.isBF16()))
      return fail("the scores are cast to another type than f32");
    if (!x.hasOneUse())
      return fail("the widened scores have another consumer");
    auto vCast = pv.getRhs().getDefiningOp<CastOp>();
    if (!vCast || getElementTypeOrSelf(vCast.getInput().getType()) != from)
      return fail("the scores are widened to f32 but V is not");
    site.widenedFrom = from;
    site.pattern.push_back("widened-scores");
    chain.push_back(cast);
    x = cast.getInput();
  }
  auto qk = dyn_cast_or_null<MatMulOp>(x.getDefiningOp());
  if (!qk)
    return fail("the scores do not come from a MatMul");
  if (!x.hasOneUse())
    return fail("the raw scores have another consumer");
  chain.push_back(qk);

  // sqrt(scale) applied to Q and to K (PyTorch's SDPA export).
  auto stripScale = [&](Value v) {
    auto mul = v.getDefiningOp<MulOp>();
    if (!mul || !v.hasOneUse())
      return v;
    for (unsigned i = 0; i < 2; ++i)
      if (std::optional<double> c = scalarConstant(mul->getOperand(i))) {
        site.scale *= *c;
        chain.push_back(mul);
        if (!llvm::is_contained(site.pattern, "scale-on-q-and-k"))
          site.pattern.push_back("scale-on-q-and-k");
        return mul->getOperand(1 - i);
      }
    return v;
  };
  site.q = stripScale(qk.getLhs());
  Value kt = stripScale(qk.getRhs());
  if (auto t = kt.getDefiningOp<TransposeOp>();
      t && swapsLastTwo(t.getPerm())) {
    site.k = stripScale(t.getInput());
  } else if (Value k = transposedByReshapes(dims, kt)) {
    site.k = stripScale(k);
    site.pattern.push_back("k-transposed-by-reshapes");
  } else {
    site.k = kt;
    site.kTransposed = true;
  }
  site.v = pv.getRhs();
  if (site.widenedFrom)
    site.v = site.v.getDefiningOp<CastOp>().getInput();
  // K/V repeated for grouped-query heads (Unsqueeze, Expand, Reshape: head
  // h reads KV head h / g) are read unrepeated.
  Value k = repeatedKv(dims, site.k), v = repeatedKv(dims, site.v);
  if (k && v && !site.kTransposed) {
    site.k = k;
    site.v = v;
    site.pattern.push_back("repeat-kv");
  }
  // Repeated by Tile instead: the heads interleave the other way round.
  auto [kBase, kGroups] = tiledKv(site.k);
  auto [vBase, vGroups] = tiledKv(site.v);
  if (kBase && vBase && kGroups == vGroups && !site.kTransposed) {
    site.k = kBase;
    site.v = vBase;
    site.tiledGroups = kGroups;
  }
  if (rankOf(site.q) != 4 || rankOf(site.k) != 4 || rankOf(site.v) != 4)
    return fail("Q, K and V are not all 4-D");
  auto dim = [&](Value v, int64_t i) {
    return dims.dimOf(v, i).value.value_or(ShapedType::kDynamic);
  };
  int64_t hq = dim(site.q, 1), hk = dim(site.k, 1), hv = dim(site.v, 1);
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hk) || hk != hv ||
      hk <= 0 || hq % hk != 0)
    return fail(llvm::formatv(
        "the head counts of Q, K and V ({0}, {1}, {2}) are unknown or do not "
        "divide (grouped-query attention needs Hq a multiple of Hkv)",
        ShapedType::isDynamic(hq) ? std::string("?") : std::to_string(hq),
        ShapedType::isDynamic(hk) ? std::string("?") : std::to_string(hk),
        ShapedType::isDynamic(hv) ? std::string("?") : std::to_string(hv)));
  auto batchDiffers = [](Value a, Value b) {
    int64_t x = cast<RankedTensorType>(a.getType()).getDimSize(0),
            y = cast<RankedTensorType>(b.getType()).getDimSize(0);
    return !ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y;
  };
  if (batchDiffers(site.q, site.k) || batchDiffers(site.k, site.v))
    return fail("Q, K and V do not share the batch dim");
  Type elt = getElementTypeOrSelf(site.q.getType());
  if (getElementTypeOrSelf(site.k.getType()) != elt ||
      getElementTypeOrSelf(site.v.getType()) != elt)
    return fail("Q, K and V differ in element type");
  // A constant causal triangle (sliced, Trilu, bool tril) becomes is_causal
  // (query i sees keys j <= i: the fused op has no past).
  if (site.mask) {
    auto scores = cast<RankedTensorType>(softmax.getType());
    MaskKind kind =
        !getElementTypeOrSelf(site.mask.getType()).isInteger(1)
            ? MaskKind::Additive
            : (site.invertMask ? MaskKind::Drop : MaskKind::Keep);
    if (scores.hasStaticShape() &&
        isCausalMask(site.mask, kind, scores.getDimSize(2),
                     scores.getDimSize(3), /*offset=*/0)) {
      site.mask = Value();
      site.invertMask = false;
      site.causal = true;
    }
  }
  // An additive mask in f32 over half Q/K/V (widened scores) must be the
  // 0/-inf one: it is read as the boolean it was selected by.
  if (site.mask && !getElementTypeOrSelf(site.mask.getType()).isInteger(1) &&
      getElementTypeOrSelf(site.mask.getType()) != elt) {
    auto select = site.mask.getDefiningOp<WhereOp>();
    std::optional<double> keep =
        select ? scalarConstant(select.getX()) : std::nullopt;
    std::optional<double> drop =
        select ? scalarConstant(select.getY()) : std::nullopt;
    if (!keep || !drop || *keep != 0 || !std::isinf(*drop) || *drop > 0)
      return fail("the f32 additive mask over half Q, K and V is not "
                  "Where(keep, 0, -inf)");
    site.mask = select.getCondition();
  }
  if (site.fillCondition && site.widenedFrom)
    return fail("a finite-fill mask over half Q, K and V");
  if (site.causal)
    site.pattern.push_back("causal");
  else if (site.mask)
    site.pattern.push_back(
        getElementTypeOrSelf(site.mask.getType()).isInteger(1)
            ? "bool-mask"
            : "additive-mask");
  site.ops.assign(chain.rbegin(), chain.rend());
  site.ops.push_back(softmax);
  site.ops.append(guard);
  site.ops.push_back(pv);
  site.output = pv;
  return site;
}

/// Whether `softmax` sits next to a MatMul: worth reporting when it does
/// not fuse (a classifier's softmax is not).
bool looksLikeAttention(SoftmaxOp softmax) {
  for (Operation *user : softmax.getOutput().getUsers())
    if (isa<MatMulOp>(user))
      return true;
  Value x = softmax.getInput();
  for (int i = 0; i < 3 && x; ++i) {
    Operation *def = x.getDefiningOp();
    if (!def)
      return false;
    if (isa<MatMulOp>(def))
      return true;
    if (def->getNumOperands() == 0)
      return false;
    x = def->getOperand(0);
  }
  return false;
}

/// Erases the ops of `module` left without uses or side effects.
void eraseDeadOps(ModuleOp module, RewriterBase &rewriter) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      rewriter.eraseOp(op);
}

struct FuseAttentionPass
    : public mp::impl::FuseAttentionBase<FuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    // Heads merged into the batch (BART-family exports) first, in the 4-D
    // form matched below.
    if (liftMergedHeadAttention(module, rewriter))
      eraseDeadOps(module, rewriter); // the 3-D chains, not to be matched
    SmallVector<SoftmaxOp> softmaxes;
    module.walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    llvm::json::Array fused, nearMisses;
    // One cache of symbolic dims for every site: a fresh one per site walked
    // the residual chain back through every earlier layer again (quadratic
    // in the layers). It stays valid because nothing it may have read is
    // erased before the loop ends: a fused site's output is replaced, not
    // erased (eraseDeadOps below), and an abandoned rewrite erases only ops
    // it built. A replaced value's dims still hold for its replacement.
    SymbolicDims dims;
    for (SoftmaxOp softmax : softmaxes) {
      std::string reason;
      std::string where = siteName(softmax);
      FailureOr<AttentionSite> site = matchSite(softmax, reason, dims);
      if (failed(site)) {
        if (looksLikeAttention(softmax))
          nearMisses.push_back(llvm::json::Object{
              {"softmax", where}, {"reason", reason}});
        continue;
      }
      llvm::json::Array nodes;
      for (Operation *op : site->ops)
        nodes.push_back(siteName(op));
      if (!rewrite(rewriter, *site, dims, reason)) {
        nearMisses.push_back(
            llvm::json::Object{{"softmax", where}, {"reason", reason}});
        continue;
      }
      llvm::json::Array pattern;
      for (const std::string &p : site->pattern)
        pattern.push_back(p);
      fused.push_back(llvm::json::Object{{"softmax", where},
                                         {"nodes", std::move(nodes)},
                                         {"pattern", std::move(pattern)},
                                         {"causal", site->causal}});
    }
    // onnxruntime's fused ops: rewritten where mp.attention holds them.
    llvm::json::Array kept;
    rewriteContribAttention(module, rewriter, fused, kept);
    // The replaced chains (and repeats or transposes only they read) are
    // dead now.
    if (!fused.empty())
      eraseDeadOps(module, rewriter);
    if (reportFile.empty())
      return;
    llvm::errs() << "mp-fuse-attention: fused " << fused.size()
                 << " attention site(s), " << nearMisses.size()
                 << " near miss(es), " << kept.size()
                 << " com.microsoft attention op(s) kept\n";
    std::error_code ec;
    llvm::raw_fd_ostream os(reportFile, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      module.emitError() << "cannot write the fusion report '" << reportFile
                         << "': " << ec.message();
      return signalPassFailure();
    }
    os << llvm::formatv("{0:2}\n", llvm::json::Value(llvm::json::Object{
                                       {"fused", std::move(fused)},
                                       {"near_misses", std::move(nearMisses)},
                                       {"kept", std::move(kept)}}));
  }

  /// Replaces the site with mp.attention; false (with `reason`) when the
  /// fused op would not have the site's result type.
  bool rewrite(RewriterBase &rewriter, AttentionSite &site, SymbolicDims &dims,
               std::string &reason) {
    MatMulOp pv = site.output;
    rewriter.setInsertionPoint(pv);
    SmallVector<Location> locs;
    for (Operation *op : site.ops)
      locs.push_back(op->getLoc());
    Location loc = rewriter.getFusedLoc(locs);
    Value mask = site.mask;
    if (site.invertMask)
      mask = NotOp::create(rewriter, loc, mask);
    // Ops built for the mask, erased again if the rewrite is abandoned.
    SmallVector<Operation *> maskOps;
    if (site.fillCondition) {
      Type elt = getElementTypeOrSelf(site.q.getType());
      auto scalar = [&](double value) -> Value {
        auto constant = ConstantOp::create(
            rewriter, loc,
            DenseElementsAttr::get(RankedTensorType::get({}, elt),
                                   rewriter.getFloatAttr(elt, value)));
        maskOps.push_back(constant);
        return constant;
      };
      Value zero = scalar(0), fill = scalar(site.fill);
      auto additive = WhereOp::create(rewriter, loc, site.fillCondition,
                                      site.fillInverted ? fill : zero,
                                      site.fillInverted ? zero : fill);
      maskOps.push_back(additive);
      mask = additive;
      if (site.mask) {
        auto joined = AddOp::create(rewriter, loc, additive, site.mask);
        maskOps.push_back(joined);
        mask = joined;
      }
    }
    Value k = site.k;
    if (site.kTransposed)
      k = TransposeOp::create(rewriter, loc, k,
                              rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}));
    // Tiled K/V: query head a*Hkv + c (which read KV head c) moves to
    // c*g + a, the grouped order; the output heads move back.
    Value q = site.q;
    int64_t g = site.tiledGroups;
    auto regroup = [&](Value x, int64_t outer, int64_t inner) -> Value {
      auto t = cast<RankedTensorType>(x.getType());
      if (t.getDimSize(1) == 1)
        return x; // broadcast over the heads
      auto shape = [&](ArrayRef<int64_t> dims) {
        return ConstantOp::create(
            rewriter, loc,
            DenseIntElementsAttr::get(
                RankedTensorType::get({(int64_t)dims.size()},
                                      rewriter.getI64Type()),
                dims));
      };
      ArrayRef<int64_t> d = t.getShape();
      Value split = ReshapeOp::create(
          rewriter, loc, x, shape({d[0], outer, inner, d[2], d[3]}));
      Value swapped = TransposeOp::create(
          rewriter, loc, split,
          rewriter.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
      return ReshapeOp::create(rewriter, loc, swapped,
                               shape({d[0], d[1], d[2], d[3]}));
    };
    int64_t hkv = g > 1 ? cast<RankedTensorType>(k.getType()).getDimSize(1) : 1;
    if (g > 1) {
      q = regroup(q, g, hkv);
      if (mask && cast<RankedTensorType>(mask.getType()).getRank() == 4)
        mask = regroup(mask, g, hkv);
    }
    // K and V joined to a past cache by Concat on the sequence axis become
    // the op's past; the present outputs then come from the op.
    Value v = site.v, pastK, pastV;
    ConcatOp joinK = !site.kTransposed && !site.causal ? pastJoin(k) : nullptr,
             joinV = joinK ? pastJoin(v) : nullptr;
    if (joinV) {
      site.pattern.push_back("past-concat");
      pastK = joinK.getInputs()[0];
      k = joinK.getInputs()[1];
      pastV = joinV.getInputs()[0];
      v = joinV.getInputs()[1];
    }
    // Dims the graph fixes through its shape computations but the types
    // lost (heads, head size) are made static by an Expand of Q, K and V
    // to those dims (1 keeps a dim as it is), so that the fused op's types
    // know its head counts. (An Expand lowers for inputs with dynamic dims;
    // a Reshape to a more static type does not.)
    {
      auto refine = [&](Value x) -> Value {
        if (!x)
          return x;
        auto t = cast<RankedTensorType>(x.getType());
        SmallVector<int64_t> entries(t.getRank(), 1);
        bool refined = false;
        for (int64_t i = 0; i < t.getRank(); ++i) {
          std::optional<int64_t> d = dims.dimOf(x, i).value;
          if (t.isDynamicDim(i) && d && *d > 1)
            entries[i] = *d, refined = true;
        }
        if (!refined)
          return x;
        auto shape = ConstantOp::create(
            rewriter, loc,
            DenseIntElementsAttr::get(
                RankedTensorType::get({t.getRank()}, rewriter.getI64Type()),
                entries));
        return ExpandOp::create(rewriter, loc, x, shape);
      };
      q = refine(q);
      k = refine(k);
      v = refine(v);
    }
    auto attention = AttentionOp::create(
        rewriter, loc, q, k, v, mask, pastK, pastV, Value(), Value(),
        rewriter.getBoolAttr(site.causal), rewriter.getI64IntegerAttr(0),
        rewriter.getI64IntegerAttr(0), rewriter.getI64IntegerAttr(0),
        rewriter.getF32FloatAttr(site.scale),
        rewriter.getF32FloatAttr(site.softcap),
        site.widenedFrom ? TypeAttr::get(rewriter.getF32Type()) : TypeAttr());
    // The inferred types may be more or less refined than the graph's
    // (dynamic shapes computed at run time): the op keeps the graph's.
    auto adopt = [](Value result, Type want) {
      if (result.getType() == want)
        return true;
      if (!isCompatibleReturnTypes(TypeRange{result.getType()},
                                   TypeRange{want}))
        return false;
      result.setType(want);
      return true;
    };
    Type outType = pv.getType();
    if (site.widenedFrom)
      outType = cast<RankedTensorType>(outType).clone(site.widenedFrom);
    if (!adopt(attention.getOutput(), outType)) {
      reason = "the fused result type differs from the MatMul's";
      rewriter.eraseOp(attention);
      if (site.kTransposed)
        rewriter.eraseOp(k.getDefiningOp());
      if (site.invertMask)
        rewriter.eraseOp(mask.getDefiningOp());
      for (Operation *op : llvm::reverse(maskOps))
        rewriter.eraseOp(op);
      return false;
    }
    Value out = attention.getOutput();
    if (site.widenedFrom)
      out = CastOp::create(rewriter, loc, out,
                           TypeAttr::get(rewriter.getF32Type()));
    if (g > 1)
      out = regroup(out, hkv, g);
    // The NaN guard moves to the output: for finite Q, K and V the fused
    // op's output is NaN exactly on the rows whose keys are all masked, and
    // those rows were 0 (a guard is not needed when no row can be fully
    // masked: no mask, or the causal one).
    if (site.nanGuard && site.mask) {
      Value isNan = IsNaNOp::create(rewriter, loc, out);
      out = WhereOp::create(rewriter, loc, isNan, site.guardZero, out);
    }
    // pv stays (dead) until eraseDeadOps: `dims` may hold its result.
    rewriter.replaceAllUsesWith(pv.getResult(), out);
    // The joined caches' other readers (the present outputs) take the op's.
    if (joinV) {
      // (Readers before the op, such as the Shape of repeat_kv's sizes,
      // keep the Concat.)
      auto after = [&](OpOperand &use) {
        return attention->getBlock() == use.getOwner()->getBlock() &&
               attention->isBeforeInBlock(use.getOwner());
      };
      if (adopt(attention.getPresentKey(), joinK.getType()))
        rewriter.replaceUsesWithIf(joinK, attention.getPresentKey(), after);
      if (adopt(attention.getPresentValue(), joinV.getType()))
        rewriter.replaceUsesWithIf(joinV, attention.getPresentValue(), after);
    }
    return true;
  }

  /// `x` as Concat(past, new) of 4-D [B, H, T, D] along the sequence axis.
  static ConcatOp pastJoin(Value x) {
    auto join = x.getDefiningOp<ConcatOp>();
    if (!join || join.getInputs().size() != 2)
      return nullptr;
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    int64_t axis = join.getAxis();
    if (rank != 4 || (axis != 2 && axis != -2))
      return nullptr;
    return join;
  }
};

} // namespace
