//===- RecurrentToLinalg.cpp - LSTM to linalg and scf ---------------------===//
//
// Per direction: the input projection of every time step in one contraction
// (X·Wᵀ + Wb + Rb), then an scf.for over time carrying h, c and the stacked
// hidden states; each step is one contraction (h·Rᵀ) and one generic
// computing the gates, c and h. Statistics are kept in f32 for f16 data.
// Time runs per batch element up to sequence_lens (reversed within it for
// the reverse direction); outputs past a sequence's end are zero, and its
// state stops updating, as in onnxruntime.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// An LSTM activation with its alpha/beta (ONNX defaults when not given).
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;

  Value apply(OpBuilder &b, Location l, Value x) const {
    Type t = x.getType();
    auto c = [&](double v) { return scalarConst(b, l, t, v); };
    auto sigmoid = [&](Value v) -> Value {
      Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, v));
      return arith::DivFOp::create(b, l, c(1), arith::AddFOp::create(b, l, c(1), e));
    };
    auto mul = [&](Value a, Value v) -> Value {
      return arith::MulFOp::create(b, l, a, v);
    };
    if (name == "sigmoid")
      return sigmoid(x);
    if (name == "tanh")
      return math::TanhOp::create(b, l, x);
    if (name == "relu")
      return arith::MaximumFOp::create(b, l, x, c(0));
    if (name == "hardsigmoid")
      return arith::MinimumFOp::create(
          b, l, c(1),
          arith::MaximumFOp::create(
              b, l, c(0), arith::AddFOp::create(b, l, mul(c(alpha), x), c(beta))));
    if (name == "leakyrelu") {
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, c(0));
      return arith::SelectOp::create(b, l, neg, mul(c(alpha), x), x);
    }
    if (name == "thresholdedrelu") {
      Value above =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, c(alpha));
      return arith::SelectOp::create(b, l, above, x, c(0));
    }
    if (name == "scaledtanh")
      return mul(c(alpha), math::TanhOp::create(b, l, mul(c(beta), x)));
    if (name == "affine")
      return arith::AddFOp::create(b, l, mul(c(alpha), x), c(beta));
    if (name == "elu") {
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, c(0));
      Value em1 = arith::SubFOp::create(b, l, math::ExpOp::create(b, l, x), c(1));
      return arith::SelectOp::create(b, l, neg, mul(c(alpha), em1), x);
    }
    if (name == "softsign")
      return arith::DivFOp::create(
          b, l, x, arith::AddFOp::create(b, l, c(1), math::AbsFOp::create(b, l, x)));
    // softplus
    return math::LogOp::create(
        b, l, arith::AddFOp::create(b, l, c(1), math::ExpOp::create(b, l, x)));
  }
};

/// The activation names mp lowers, with whether they take alpha / beta and
/// their ONNX defaults.
struct ActivationInfo {
  StringRef name;
  bool usesAlpha, usesBeta;
  double alpha, beta;
};
constexpr ActivationInfo kActivations[] = {
    {"sigmoid", false, false, 0, 0},     {"tanh", false, false, 0, 0},
    {"relu", false, false, 0, 0},        {"hardsigmoid", true, true, 0.2, 0.5},
    {"leakyrelu", true, false, 0.01, 0}, {"thresholdedrelu", true, false, 1.0, 0},
    {"scaledtanh", true, true, 1.0, 1.0}, {"affine", true, true, 1.0, 0},
    {"elu", true, false, 1.0, 0},        {"softsign", false, false, 0, 0},
    {"softplus", false, false, 0, 0},
};

/// f, g, h per direction from the op's attributes: alpha and beta values are
/// consumed in order by the activations that take them (onnxruntime).
FailureOr<SmallVector<Activation>> activationsOf(LSTMOp op, int64_t dirs) {
  SmallVector<std::string> names;
  for (Attribute a : op.getActivations())
    names.push_back(cast<StringAttr>(a).getValue().lower());
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d)
      names.append({"sigmoid", "tanh", "tanh"});
  if ((int64_t)names.size() != 3 * dirs)
    return failure();
  auto alphas = op.getActivationAlpha(), betas = op.getActivationBeta();
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<Activation> acts;
  for (const std::string &name : names) {
    const ActivationInfo *info = llvm::find_if(
        kActivations, [&](const ActivationInfo &i) { return i.name == name; });
    if (info == std::end(kActivations))
      return failure();
    Activation a{name, info->alpha, info->beta};
    if (info->usesAlpha && nextAlpha < alphas.size())
      a.alpha = cast<FloatAttr>(alphas[nextAlpha++]).getValueAsDouble();
    if (info->usesBeta && nextBeta < betas.size())
      a.beta = cast<FloatAttr>(betas[nextBeta++]).getValueAsDouble();
    acts.push_back(a);
  }
  return acts;
}

/// `v` ([D, ...]) at direction `d`, without the leading dim.
Value sliceDirection(OpBuilder &b, Location l, Value v, int64_t d) {
  auto t = typeOf(v);
  SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0)),
      sizes, strides(t.getRank(), b.getIndexAttr(1));
  offsets[0] = b.getIndexAttr(d);
  sizes.push_back(b.getIndexAttr(1));
  for (int64_t i = 1; i < t.getRank(); ++i)
    sizes.push_back(getAsOpFoldResult(dimValue(b, l, v, i)));
  auto type = RankedTensorType::get(t.getShape().drop_front(), t.getElementType());
  return tensor::ExtractSliceOp::create(b, l, type, v, offsets, sizes, strides);
}

/// out[.., g] = sum_k lhs[.., k] * rhs[g, k] (+ bias[g]) in `acc`.
Value projectRows(OpBuilder &b, Location l, Value lhs, Value rhs, Value bias,
                  Type acc) {
  MLIRContext *ctx = b.getContext();
  auto lt = typeOf(lhs);
  int64_t rank = lt.getRank();
  SmallVector<int64_t> shape(lt.getShape().drop_back());
  shape.push_back(typeOf(rhs).getDimSize(0));
  auto outType = RankedTensorType::get(shape, acc);
  // Dims (outer.., g, k) for contract().
  SmallVector<AffineExpr> lhsE;
  for (int64_t i = 0; i < rank - 1; ++i)
    lhsE.push_back(getAffineDimExpr(i, ctx));
  lhsE.push_back(getAffineDimExpr(rank, ctx));
  AffineMap rhsMap = AffineMap::get(
      rank + 1, 0, {getAffineDimExpr(rank - 1, ctx), getAffineDimExpr(rank, ctx)},
      ctx);
  Value init;
  SmallVector<Value> rows;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (lt.isDynamicDim(i))
      rows.push_back(dimValue(b, l, lhs, i));
  if (bias)
    init = parallelGeneric(
        b, l, outType, bias,
        AffineMap::get(rank, 0, {getAffineDimExpr(rank - 1, ctx)}, ctx),
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          return castScalar(nb, nl, a[0], acc);
        },
        rows);
  return contract(b, l, outType, lhs, AffineMap::get(rank + 1, 0, lhsE, ctx),
                  rhs, rhsMap, acc, init);
}

struct LSTMLowering : public OpRewritePattern<LSTMOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LSTMOp op,
                                PatternRewriter &rewriter) const override {
    // Sequence length and batch may be known only at run time; the input
    // and hidden sizes may not.
    if (typeOf(op.getX()).isDynamicDim(2) || !typeOf(op.getW()).hasStaticShape() ||
        !typeOf(op.getR()).hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic input or hidden size");
    Location loc = op.getLoc();
    bool batchFirst = op.getLayout() == 1;
    StringRef dir = op.getDirection();
    int64_t dirs = dir == "bidirectional" ? 2 : 1;
    FailureOr<SmallVector<Activation>> acts = activationsOf(op, dirs);
    if (failed(acts))
      return rewriter.notifyMatchFailure(op, "unsupported activations");
    int64_t hidden = op.getHiddenSize();
    Type elt = typeOf(op.getX()).getElementType(), acc = accumulatorType(elt);

    // Layout 0 inside: X [T, B, I], states [D, B, H].
    Value x = op.getX();
    if (batchFirst)
      x = transpose(rewriter, loc, x, {1, 0, 2});
    Value steps = dimValue(rewriter, loc, x, 0),
          batch = dimValue(rewriter, loc, x, 1);
    auto swapBD = [&](Value v) {
      return v && batchFirst ? transpose(rewriter, loc, v, {1, 0, 2}) : v;
    };
    Value h0 = swapBD(op.getInitialH()), c0 = swapBD(op.getInitialC());

    SmallVector<Value> ys, hs, cs;
    for (int64_t d = 0; d < dirs; ++d) {
      bool reverse = dir == "reverse" || d == 1;
      auto [y, h, c] = runDirection(rewriter, loc, op, x, h0, c0, d, reverse,
                                 ArrayRef<Activation>(*acts).slice(3 * d, 3),
                                 steps, batch, hidden, acc);
      ys.push_back(y);
      hs.push_back(h);
      cs.push_back(c);
    }
    // Y [T, D, B, H] (layout 0) or [B, T, D, H]; Y_h, Y_c [D, B, H] or
    // [B, D, H].
    auto y = stack(rewriter, loc, ys, 1, elt);
    auto yh = stack(rewriter, loc, hs, 0, elt);
    auto yc = stack(rewriter, loc, cs, 0, elt);
    if (batchFirst) {
      y = transpose(rewriter, loc, y, {2, 0, 1, 3});
      yh = transpose(rewriter, loc, yh, {1, 0, 2});
      yc = transpose(rewriter, loc, yc, {1, 0, 2});
    }
    rewriter.replaceOp(op, {y, yh, yc});
    return success();
  }

  /// One direction: (Y [T, B, H], h [B, H], c [B, H]) in `acc`.
  std::tuple<Value, Value, Value>
  runDirection(PatternRewriter &rw, Location loc, LSTMOp op, Value x, Value h0,
            Value c0, int64_t d, bool reverse, ArrayRef<Activation> acts,
            Value steps, Value batch, int64_t hidden, Type acc) const {
    MLIRContext *ctx = op.getContext();
    int64_t h4 = 4 * hidden;
    Value w = sliceDirection(rw, loc, op.getW(), d);
    Value r = sliceDirection(rw, loc, op.getR(), d);
    // Wb + Rb as one [4H] bias.
    auto half = [&](Value v, int64_t offset, int64_t size) -> Value {
      return tensor::ExtractSliceOp::create(
          rw, loc, RankedTensorType::get({size}, typeOf(v).getElementType()), v,
          ArrayRef<OpFoldResult>{rw.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{rw.getIndexAttr(size)},
          ArrayRef<OpFoldResult>{rw.getIndexAttr(1)});
    };
    Value bias;
    if (op.getB()) {
      Value bd = sliceDirection(rw, loc, op.getB(), d);
      bias = elementwise(rw, loc, RankedTensorType::get({h4}, acc),
                         ValueRange{half(bd, 0, h4), half(bd, h4, h4)},
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return arith::AddFOp::create(
                               b, l, castScalar(b, l, a[0], acc),
                               castScalar(b, l, a[1], acc));
                         });
    }
    Value xw = projectRows(rw, loc, x, w, bias, acc); // [T, B, 4H]
    auto xt = typeOf(x);
    auto stateType = RankedTensorType::get({xt.getDimSize(1), hidden}, acc);
    SmallVector<Value> stateSizes, allSizes;
    if (xt.isDynamicDim(0))
      allSizes.push_back(steps);
    if (xt.isDynamicDim(1)) {
      stateSizes.push_back(batch);
      allSizes.push_back(batch);
    }
    auto initState = [&](Value v) -> Value {
      if (!v)
        return linalg::FillOp::create(
                   rw, loc, scalarConst(rw, loc, acc, 0),
                   ValueRange{emptyTensor(rw, loc, stateType, stateSizes)})
            .getResult(0);
      Value s = sliceDirection(rw, loc, v, d);
      return elementwise(rw, loc, stateType, s,
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return castScalar(b, l, a[0], acc);
                         });
    };
    // Peepholes P = [p_i, p_o, p_f], each [H].
    SmallVector<Value> peeps;
    if (op.getP()) {
      Value p = sliceDirection(rw, loc, op.getP(), d);
      for (int64_t k = 0; k < 3; ++k)
        peeps.push_back(half(p, k * hidden, hidden));
    }
    Value lens = op.getSequenceLens();
    auto allType = RankedTensorType::get(
        {xt.getDimSize(0), xt.getDimSize(1), hidden}, acc);
    Value all = emptyTensor(rw, loc, allType, allSizes);
    std::optional<double> clip;
    if (auto c = op.getClipAttr())
      clip = c.getValueAsDouble();
    bool coupled = op.getInputForget();

    auto loop = scf::ForOp::create(
        rw, loc, indexConst(rw, loc, 0), steps, indexConst(rw, loc, 1),
        ValueRange{initState(h0), initState(c0), all},
        [&](OpBuilder &b, Location l, Value t, ValueRange iter) {
          Value h = iter[0], c = iter[1];
          Value hr = projectRows(b, l, h, r, Value(), acc); // [B, 4H]
          // Gates over (b, j), updating h and c in place (a loop-carried
          // value must stay in its buffer); hr and xw are read at column
          // k*H + j.
          SmallVector<Value> ins;
          SmallVector<AffineMap> maps;
          AffineExpr bd = getAffineDimExpr(0, ctx), jd = getAffineDimExpr(1, ctx);
          if (lens) {
            ins.push_back(lens);
            maps.push_back(AffineMap::get(2, 0, {bd}, ctx));
          }
          for (Value p : peeps) {
            ins.push_back(p);
            maps.push_back(AffineMap::get(2, 0, {jd}, ctx));
          }
          SmallVector<Type> outTypes = {stateType, stateType};
          SmallVector<AffineMap> allMaps = maps;
          allMaps.push_back(AffineMap::get(2, 0, {bd, jd}, ctx));
          allMaps.push_back(AffineMap::get(2, 0, {bd, jd}, ctx));
          SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
          auto gates = linalg::GenericOp::create(
              b, l, outTypes, ins, ValueRange{h, c}, allMaps, iterators,
              [&](OpBuilder &nb, Location nl, ValueRange a) {
                Value bi = linalg::IndexOp::create(nb, nl, 0);
                Value ji = linalg::IndexOp::create(nb, nl, 1);
                Value hPrev = a[a.size() - 2], cPrev = a[a.size() - 1];
                unsigned next = 0;
                // This batch element's length and time index.
                Value len = steps;
                if (lens)
                  len = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                   a[next++]);
                Value valid = arith::CmpIOp::create(
                    nb, nl, arith::CmpIPredicate::slt, t, len);
                Value tt = t;
                if (reverse)
                  tt = arith::SubIOp::create(
                      nb, nl, arith::SubIOp::create(nb, nl, len, indexConst(nb, nl, 1)),
                      t);
                // Out-of-range steps read step 0 (the result is discarded).
                tt = arith::SelectOp::create(nb, nl, valid, tt, indexConst(nb, nl, 0));
                Value pI, pO, pF;
                if (!peeps.empty()) {
                  pI = castScalar(nb, nl, a[next++], acc);
                  pO = castScalar(nb, nl, a[next++], acc);
                  pF = castScalar(nb, nl, a[next++], acc);
                }
                auto gate = [&](int64_t k) -> Value {
                  Value col = arith::AddIOp::create(nb, nl, ji,
                                                    indexConst(nb, nl, k * hidden));
                  Value fromX = tensor::ExtractOp::create(
                      nb, nl, xw, ValueRange{tt, bi, col});
                  Value fromH = tensor::ExtractOp::create(
                      nb, nl, hr, ValueRange{bi, col});
                  return arith::AddFOp::create(nb, nl, fromX, fromH);
                };
                auto clipped = [&](Value v) -> Value {
                  if (!clip)
                    return v;
                  v = arith::MinimumFOp::create(nb, nl, v,
                                                scalarConst(nb, nl, acc, *clip));
                  return arith::MaximumFOp::create(
                      nb, nl, v, scalarConst(nb, nl, acc, -*clip));
                };
                auto fma = [&](Value p, Value v, Value g) -> Value {
                  return p ? Value(arith::AddFOp::create(
                                 nb, nl, g, arith::MulFOp::create(nb, nl, p, v)))
                           : g;
                };
                // Gate order in W, R, B: i, o, f, c.
                Value i = acts[0].apply(nb, nl, clipped(fma(pI, cPrev, gate(0))));
                Value f =
                    coupled
                        ? Value(arith::SubFOp::create(
                              nb, nl, scalarConst(nb, nl, acc, 1.0), i))
                        : acts[0].apply(nb, nl, clipped(fma(pF, cPrev, gate(2))));
                Value cand = acts[1].apply(nb, nl, clipped(gate(3)));
                Value cNew = arith::AddFOp::create(
                    nb, nl, arith::MulFOp::create(nb, nl, f, cPrev),
                    arith::MulFOp::create(nb, nl, i, cand));
                Value o = acts[0].apply(nb, nl, clipped(fma(pO, cNew, gate(1))));
                Value hNew =
                    arith::MulFOp::create(nb, nl, o, acts[2].apply(nb, nl, cNew));
                linalg::YieldOp::create(
                    nb, nl,
                    ValueRange{arith::SelectOp::create(nb, nl, valid, hNew, hPrev),
                               arith::SelectOp::create(nb, nl, valid, cNew, cPrev)});
              });
          Value hNext = gates.getResult(0), cNext = gates.getResult(1);
          // Stack h_t at step t (reordered per sequence after the loop).
          SmallVector<OpFoldResult> offsets = {t, b.getIndexAttr(0),
                                               b.getIndexAttr(0)};
          SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                             getAsOpFoldResult(batch),
                                             b.getIndexAttr(hidden)};
          SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
          Value nextAll = tensor::InsertSliceOp::create(b, l, hNext, iter[2],
                                                        offsets, sizes, strides);
          scf::YieldOp::create(b, l, ValueRange{hNext, cNext, nextAll});
        });
    Value stacked = loop.getResult(2);
    // Y[t', b, j]: the state after time t' of sequence b, zero past its end.
    Value y = parallelGeneric(
        rw, loc, allType, lens ? ValueRange{lens} : ValueRange{},
        lens ? SmallVector<AffineMap>{AffineMap::get(3, 0, {getAffineDimExpr(1, ctx)}, ctx)}
             : SmallVector<AffineMap>{},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value tp = linalg::IndexOp::create(b, l, 0);
          Value bi = linalg::IndexOp::create(b, l, 1);
          Value ji = linalg::IndexOp::create(b, l, 2);
          Value len = lens ? Value(arith::IndexCastOp::create(
                                 b, l, b.getIndexType(), a[0]))
                           : steps;
          Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              tp, len);
          Value step = tp;
          if (reverse)
            step = arith::SubIOp::create(
                b, l, arith::SubIOp::create(b, l, len, indexConst(b, l, 1)), tp);
          step = arith::SelectOp::create(b, l, valid, step, indexConst(b, l, 0));
          Value v = tensor::ExtractOp::create(b, l, stacked,
                                              ValueRange{step, bi, ji});
          return arith::SelectOp::create(b, l, valid, v,
                                         scalarConst(b, l, acc, 0.0));
        },
        allSizes);
    return {y, loop.getResult(0), loop.getResult(1)};
  }

  /// Tensors of one shape stacked along a new dim `axis`, cast to `elt`.
  static Value stack(OpBuilder &b, Location l, ArrayRef<Value> parts,
                     int64_t axis, Type elt) {
    auto t = typeOf(parts[0]);
    SmallVector<int64_t> shape(t.getShape());
    shape.insert(shape.begin() + axis, parts.size());
    SmallVector<Value> dynSizes;
    SmallVector<OpFoldResult> partSizes;
    for (int64_t d = 0; d < t.getRank(); ++d) {
      Value size = dimValue(b, l, parts[0], d);
      if (t.isDynamicDim(d))
        dynSizes.push_back(size);
      partSizes.push_back(getAsOpFoldResult(size));
    }
    Value out = emptyTensor(b, l, RankedTensorType::get(shape, elt), dynSizes);
    for (auto [i, p] : llvm::enumerate(parts)) {
      Value cast = castElements(b, l, p, elt);
      SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)),
          sizes(partSizes), strides(shape.size(), b.getIndexAttr(1));
      offsets[axis] = b.getIndexAttr(i);
      sizes.insert(sizes.begin() + axis, b.getIndexAttr(1));
      out = tensor::InsertSliceOp::create(b, l, cast, out, offsets, sizes,
                                          strides);
    }
    return out;
  }

  static Value transpose(OpBuilder &b, Location l, Value v,
                         ArrayRef<int64_t> perm) {
    auto t = typeOf(v);
    SmallVector<int64_t> shape;
    SmallVector<Value> dynSizes;
    for (int64_t p : perm) {
      shape.push_back(t.getDimSize(p));
      if (t.isDynamicDim(p))
        dynSizes.push_back(dimValue(b, l, v, p));
    }
    Value init = emptyTensor(b, l, RankedTensorType::get(shape, t.getElementType()),
                             dynSizes);
    return linalg::TransposeOp::create(b, l, v, init, perm).getResult()[0];
  }
};

} // namespace

void populateRecurrentToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LSTMLowering>(patterns.getContext());
}

} // namespace mp
