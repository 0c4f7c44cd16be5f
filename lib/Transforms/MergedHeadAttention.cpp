//===- MergedHeadAttention.cpp - attention over heads merged in the batch -===//
//
// Trimmed from SpeechT5's decoder step (both exporters):
//   q3 = Reshape(q4 [B, H, S, D]) : [B*H, S, D]      (k3, v3 likewise)
//   s3 = MatMul(q3, Transpose(k3, [0, 2, 1]))        [B*H, S, T]
//   s4 = Reshape(s3) : [B, H, S, T];  m4 = Add(s4, mask)
//   p3 = Softmax(Reshape(m4) : [B*H, S, T], axis 2)
//   o4 = Reshape(MatMul(p3, v3)) : [B, H, S, D]
// Every reshape is checked to merge or split exactly the first two dims
// (SymbolicDims proves the other dims equal; the element count fixes the
// merged one), so the lifted chain computes the same values.
//
//===----------------------------------------------------------------------===//

#include "MergedHeadAttention.h"
#include "SymbolicDims.h"

#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mp;

namespace {

int64_t rankOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getRank() : -1;
}

/// The 4-D [B, H, S, D] tensor that `v` merges to [B*H, S, D], or null.
Value mergedFrom(SymbolicDims &dims, Value v) {
  auto reshape = v.getDefiningOp<ReshapeOp>();
  if (!reshape || rankOf(v) != 3 || rankOf(reshape.getInput()) != 4)
    return {};
  Value x = reshape.getInput();
  if (!dims.dimOf(v, 1).sameAs(dims.dimOf(x, 2)) ||
      !dims.dimOf(v, 2).sameAs(dims.dimOf(x, 3)))
    return {};
  return x;
}

/// Whether the 4-D `a` and `b` have the same first two dims.
bool sameHeads(SymbolicDims &dims, Value a, Value b) {
  return dims.dimOf(a, 0).sameAs(dims.dimOf(b, 0)) &&
         dims.dimOf(a, 1).sameAs(dims.dimOf(b, 1));
}

/// Whether the 4-D `split`, a reshape of the 3-D `merged` [B*H, S, X], is
/// [B, H, S, X] with B and H those of `heads`.
bool splitsLike(SymbolicDims &dims, Value split, Value merged, Value heads) {
  auto reshape = split.getDefiningOp<ReshapeOp>();
  return reshape && reshape.getInput() == merged && rankOf(split) == 4 &&
         sameHeads(dims, split, heads) &&
         dims.dimOf(split, 2).sameAs(dims.dimOf(merged, 1));
}

/// One site: the 4-D operands and the ops between the scores and softmax.
struct Site {
  SoftmaxOp softmax;
  MatMulOp qk, pv;
  Value q4, k4, v4;
  /// Scalar Mul/Div on the 3-D scores, nearest the MatMul first.
  SmallVector<Operation *> scale;
  /// The mask Add on the 4-D view, and which operand is the mask.
  AddOp maskAdd;
  unsigned maskOperand = 1;
  ReshapeOp output;
};

bool isScalarConstant(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return c && t && t.getNumElements() == 1;
}

FailureOr<Site> match(SymbolicDims &dims, SoftmaxOp softmax) {
  Site site;
  site.softmax = softmax;
  Value x = softmax.getInput();
  ArrayRef<int64_t> axes = softmax.getAxes();
  if (rankOf(x) != 3 || axes.size() != 1 || (axes[0] != 2 && axes[0] != -1) ||
      !softmax->hasOneUse())
    return failure();
  // P.V, split back to [B, H, S, D].
  auto pv = dyn_cast<MatMulOp>(*softmax->getUsers().begin());
  if (!pv || pv.getLhs() != softmax.getResult() || !pv->hasOneUse())
    return failure();
  site.pv = pv;
  site.v4 = mergedFrom(dims, pv.getRhs());
  // The mask, added on a [B, H, S, T] view of the scores.
  Value scores = x, viewed;
  if (auto back = x.getDefiningOp<ReshapeOp>();
      back && rankOf(back.getInput()) == 4) {
    auto add = back.getInput().getDefiningOp<AddOp>();
    if (!add || !x.hasOneUse() || !add->hasOneUse())
      return failure();
    for (unsigned i : {0u, 1u}) {
      auto view = add->getOperand(i).getDefiningOp<ReshapeOp>();
      if (view && rankOf(view.getInput()) == 3 && view->hasOneUse()) {
        site.maskAdd = add;
        site.maskOperand = 1 - i;
        scores = viewed = view.getInput();
        break;
      }
    }
    if (!site.maskAdd)
      return failure();
    // The view back must merge the first two dims of the masked scores.
    if (!dims.dimOf(x, 1).sameAs(dims.dimOf(add, 2)) ||
        !dims.dimOf(x, 2).sameAs(dims.dimOf(add, 3)))
      return failure();
  }
  // Scalar scales on the 3-D scores.
  while (Operation *def = scores.getDefiningOp()) {
    if (!isa<MulOp, DivOp>(def) || !isScalarConstant(def->getOperand(1)) ||
        !def->getResult(0).hasOneUse())
      break;
    site.scale.insert(site.scale.begin(), def);
    scores = def->getOperand(0);
  }
  auto qk = scores.getDefiningOp<MatMulOp>();
  if (!qk || !scores.hasOneUse())
    return failure();
  site.qk = qk;
  auto kt = qk.getRhs().getDefiningOp<TransposeOp>();
  if (!kt || kt.getPerm() != ArrayRef<int64_t>{0, 2, 1})
    return failure();
  site.q4 = mergedFrom(dims, qk.getLhs());
  site.k4 = mergedFrom(dims, kt.getInput());
  if (!site.q4 || !site.k4 || !site.v4 || !sameHeads(dims, site.q4, site.k4) ||
      !sameHeads(dims, site.q4, site.v4))
    return failure();
  // The view of the scores the mask is added to is [B, H, S, T].
  if (site.maskAdd) {
    Value view = site.maskAdd->getOperand(1 - site.maskOperand);
    if (!splitsLike(dims, view, viewed, site.q4))
      return failure();
  }
  auto output = dyn_cast<ReshapeOp>(*pv->getUsers().begin());
  if (!output || !splitsLike(dims, output, pv.getResult(), site.q4))
    return failure();
  site.output = output;
  return site;
}

/// Builds the 4-D chain in front of the site's output reshape and replaces
/// it; false (nothing left behind) when the result type is not compatible
/// with the graph's.
bool lift(RewriterBase &rewriter, Site site) {
  Operation *before = site.output->getPrevNode();
  rewriter.setInsertionPoint(site.output);
  Value kt = TransposeOp::create(rewriter, site.qk.getLoc(), site.k4,
                                 rewriter.getDenseI64ArrayAttr({0, 1, 3, 2}));
  Value s = MatMulOp::create(rewriter, site.qk.getLoc(), site.q4, kt);
  for (Operation *op : site.scale)
    s = isa<MulOp>(op) ? Value(MulOp::create(rewriter, op->getLoc(), s,
                                             op->getOperand(1)))
                       : Value(DivOp::create(rewriter, op->getLoc(), s,
                                             op->getOperand(1)));
  if (site.maskAdd) {
    Value mask = site.maskAdd->getOperand(site.maskOperand);
    s = site.maskOperand == 1
            ? AddOp::create(rewriter, site.maskAdd.getLoc(), s, mask)
            : AddOp::create(rewriter, site.maskAdd.getLoc(), mask, s);
  }
  Value p = SoftmaxOp::create(rewriter, site.softmax.getLoc(), s,
                              rewriter.getDenseI64ArrayAttr({3}));
  Value o = MatMulOp::create(rewriter, site.pv.getLoc(), p, site.v4);
  Type want = site.output.getType();
  if (o.getType() != want) {
    if (!isCompatibleReturnTypes(TypeRange{o.getType()}, TypeRange{want})) {
      SmallVector<Operation *> built;
      for (Operation *x = site.output->getPrevNode(); x && x != before;
           x = x->getPrevNode())
        built.push_back(x);
      for (Operation *x : built)
        rewriter.eraseOp(x);
      return false;
    }
    o.setType(want);
  }
  rewriter.replaceOp(site.output, o);
  return true;
}

} // namespace

unsigned mp::liftMergedHeadAttention(ModuleOp module, RewriterBase &rewriter) {
  SmallVector<SoftmaxOp> softmaxes;
  module.walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
  SmallVector<Site> sites;
  {
    SymbolicDims dims; // read-only while the graph is unchanged
    for (SoftmaxOp softmax : softmaxes)
      if (FailureOr<Site> site = match(dims, softmax); succeeded(site))
        sites.push_back(*site);
  }
  return llvm::count_if(sites,
                        [&](const Site &site) { return lift(rewriter, site); });
}
