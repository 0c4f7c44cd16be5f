//===- RecurrentToLinalg.cpp - LSTM, GRU and RNN to linalg and scf --------===//
//
// One recurrence for the three ops; each contributes only its cell. Per
// direction: the input projection of every time step in one contraction
// (X·Wᵀ plus the biases that do not depend on the state), then an scf.for
// over time carrying the states (h, and c for LSTM) and the stacked hidden
// states; each step is the cell: contractions with R and generics over
// (batch, hidden) computing the gates. Statistics are kept in f32 for f16
// data. Time runs per batch element up to sequence_lens (reversed within it
// for the reverse direction); outputs past a sequence's end are zero, and
// its state stops updating, as in onnxruntime.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Dialect/Mp/IR/MpRecurrent.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// A recurrent activation with its alpha/beta (ONNX defaults when not given).
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

/// The activations of all `dirs` directions, as many per direction as
/// `defaults` has: the op's `names`, or `defaults` for each direction when
/// it gives none. Alpha and beta values are consumed in order by the
/// activations that take them (onnxruntime).
FailureOr<SmallVector<Activation>>
activationsOf(ArrayAttr names, ArrayAttr alphas, ArrayAttr betas,
              ArrayRef<StringRef> defaults, int64_t dirs) {
  SmallVector<std::string> lowered;
  for (Attribute a : names)
    lowered.push_back(cast<StringAttr>(a).getValue().lower());
  if (lowered.empty())
    for (int64_t d = 0; d < dirs; ++d)
      for (StringRef n : defaults)
        lowered.push_back(n.str());
  if ((int64_t)lowered.size() != (int64_t)defaults.size() * dirs)
    return failure();
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<Activation> acts;
  for (const std::string &name : lowered) {
    const RecurrentActivation *info = lookupRecurrentActivation(name);
    if (!info)
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

/// Tensors of one shape stacked along a new dim `axis`, cast to `elt`.
Value stack(OpBuilder &b, Location l, ArrayRef<Value> parts, int64_t axis,
            Type elt) {
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
    out =
        tensor::InsertSliceOp::create(b, l, cast, out, offsets, sizes, strides);
  }
  return out;
}

/// `v` with its dims permuted by `perm`.
Value transpose(OpBuilder &b, Location l, Value v, ArrayRef<int64_t> perm) {
  auto t = typeOf(v);
  SmallVector<int64_t> shape;
  SmallVector<Value> dynSizes;
  for (int64_t p : perm) {
    shape.push_back(t.getDimSize(p));
    if (t.isDynamicDim(p))
      dynSizes.push_back(dimValue(b, l, v, p));
  }
  Value init = emptyTensor(
      b, l, RankedTensorType::get(shape, t.getElementType()), dynSizes);
  return linalg::TransposeOp::create(b, l, v, init, perm).getResult()[0];
}

/// Rows [offset, offset + size) of `m` ([G*H, K]).
Value rowsOf(OpBuilder &b, Location l, Value m, int64_t offset, int64_t size) {
  auto t = typeOf(m);
  return tensor::ExtractSliceOp::create(
      b, l, RankedTensorType::get({size, t.getDimSize(1)}, t.getElementType()),
      m, ArrayRef<OpFoldResult>{b.getIndexAttr(offset), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(size),
                             b.getIndexAttr(t.getDimSize(1))},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// Elements [offset, offset + size) of the 1-D `v`.
Value part(OpBuilder &b, Location l, Value v, int64_t offset, int64_t size) {
  return tensor::ExtractSliceOp::create(
      b, l, RankedTensorType::get({size}, typeOf(v).getElementType()), v,
      ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

/// One direction of a recurrence, as its cell's step sees it.
struct Direction {
  int64_t index; ///< 0, or 1 for the backward half of bidirectional
  bool reverse;
  Value xw;    ///< [T, B, G*H] in `acc`: X·Wᵀ and the folded biases
  Value r;     ///< [G*H, H]: this direction's recurrent weights
  Value rBias; ///< [G*H] when the step adds Rb itself, else null
  Value lens;  ///< [B] or null
  Value steps; ///< T, an index
  int64_t hidden;
  Type acc;
  std::optional<double> clip;
  ArrayRef<Activation> acts;     ///< this direction's
  RankedTensorType stateType;    ///< [B, H] in `acc`
  SmallVector<Value> stateSizes; ///< its dynamic batch, if any

  Value emptyState(OpBuilder &b, Location l) const {
    return emptyTensor(b, l, stateType, stateSizes);
  }
};

/// The time index loop step `t` reads in a sequence of length `len`
/// (reversed within the sequence for the reverse direction), and whether `t`
/// is inside the sequence; steps past its end read step 0 (their result is
/// discarded).
std::pair<Value, Value> timeIndex(OpBuilder &b, Location l, Value t, Value len,
                                  bool reverse) {
  Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, t, len);
  Value tt = t;
  if (reverse)
    tt = arith::SubIOp::create(
        b, l, arith::SubIOp::create(b, l, len, indexConst(b, l, 1)), t);
  tt = arith::SelectOp::create(b, l, valid, tt, indexConst(b, l, 0));
  return {tt, valid};
}

/// One element (b, j) of a step's generic.
struct StepPoint {
  OpBuilder &b;
  Location l;
  const Direction &dir;
  Value bi, ji, tt, valid;

  Value column(int64_t k) const {
    return arith::AddIOp::create(b, l, ji, indexConst(b, l, k * dir.hidden));
  }
  /// Column k*H + j of this batch row of `v` ([B, n*H], a per-step value).
  Value at(Value v, int64_t k) const {
    return tensor::ExtractOp::create(b, l, v, ValueRange{bi, column(k)});
  }
  /// Gate k's input projection at this element's time.
  Value input(int64_t k) const {
    return tensor::ExtractOp::create(b, l, dir.xw,
                                     ValueRange{tt, bi, column(k)});
  }
  /// Activation `i` of this direction on `v`, clipped first when the op
  /// has `clip`.
  Value activate(int64_t i, Value v) const {
    if (dir.clip) {
      v = arith::MinimumFOp::create(b, l, v,
                                    scalarConst(b, l, dir.acc, *dir.clip));
      v = arith::MaximumFOp::create(b, l, v,
                                    scalarConst(b, l, dir.acc, -*dir.clip));
    }
    return dir.acts[i].apply(b, l, v);
  }
  Value add(Value x, Value y) const {
    return arith::AddFOp::create(b, l, x, y);
  }
  Value mul(Value x, Value y) const {
    return arith::MulFOp::create(b, l, x, y);
  }
  /// (1 - z) * a + z * c, the convex blend GRU updates its state with.
  Value blend(Value z, Value a, Value c) const {
    Value one = scalarConst(b, l, dir.acc, 1.0);
    return add(mul(arith::SubFOp::create(b, l, one, z), a), mul(z, c));
  }
};

using StepBody =
    function_ref<SmallVector<Value>(const StepPoint &, ValueRange current)>;

/// A generic over (b, j) of the [B, H] tensors `outs` at loop step `t`,
/// updating them in place (a loop-carried value must stay in its buffer):
/// `body` gives each element's new values from its current ones. With
/// `freeze`, elements past their sequence's end keep their current value.
SmallVector<Value> stepGeneric(OpBuilder &b, Location l, const Direction &dir,
                               Value t, ValueRange outs, bool freeze,
                               StepBody body) {
  MLIRContext *ctx = b.getContext();
  AffineExpr bd = getAffineDimExpr(0, ctx), jd = getAffineDimExpr(1, ctx);
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  if (dir.lens) {
    ins.push_back(dir.lens);
    maps.push_back(AffineMap::get(2, 0, {bd}, ctx));
  }
  maps.append(outs.size(), AffineMap::get(2, 0, {bd, jd}, ctx));
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, l, TypeRange(outs), ins, outs, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value len = dir.steps;
        if (dir.lens)
          len = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
        auto [tt, valid] = timeIndex(nb, nl, t, len, dir.reverse);
        StepPoint pt{nb,
                     nl,
                     dir,
                     linalg::IndexOp::create(nb, nl, 0),
                     linalg::IndexOp::create(nb, nl, 1),
                     tt,
                     valid};
        ValueRange current = a.take_back(outs.size());
        SmallVector<Value> next = body(pt, current);
        if (freeze)
          for (size_t k = 0; k < next.size(); ++k)
            next[k] =
                arith::SelectOp::create(nb, nl, valid, next[k], current[k]);
        linalg::YieldOp::create(nb, nl, next);
      });
  return SmallVector<Value>(generic.getResults());
}

/// A cell: the new states (h first) from the current ones at loop step `t`.
using StepFn = std::function<SmallVector<Value>(
    OpBuilder &, Location, const Direction &, Value t, ValueRange states)>;

/// What the recurrence needs from an op.
struct Recurrence {
  Value x, w, r, b, lens;
  SmallVector<Value, 2> initialStates; ///< h, c; null when absent
  StringRef direction;
  bool batchFirst;
  int64_t hidden;
  int64_t gates;
  FailureOr<SmallVector<Activation>> acts; ///< every direction's
  std::optional<double> clip;
  /// Rb is added to H·Rᵀ in each step (GRU's linear_before_reset) rather
  /// than folded into the input projection.
  bool biasInStep = false;
};

/// A recurrent op's operands and attributes, with `defaults` the activations
/// of one direction when the op gives none.
template <typename OpTy>
Recurrence recurrenceOf(OpTy op, int64_t gates, ArrayRef<StringRef> defaults,
                        SmallVector<Value, 2> initialStates) {
  StringRef dir = op.getDirection();
  int64_t dirs = dir == "bidirectional" ? 2 : 1;
  std::optional<double> clip;
  if (auto c = op.getClipAttr())
    clip = c.getValueAsDouble();
  return {op.getX(),
          op.getW(),
          op.getR(),
          op.getB(),
          op.getSequenceLens(),
          std::move(initialStates),
          dir,
          op.getLayout() == 1,
          (int64_t)op.getHiddenSize(),
          gates,
          activationsOf(op.getActivations(), op.getActivationAlpha(),
                        op.getActivationBeta(), defaults, dirs),
          clip};
}

/// One direction: Y [T, B, H] and the final states, in `acc`.
SmallVector<Value> runDirection(PatternRewriter &rw, Location loc,
                                const Recurrence &rec, Direction &dir, Value x,
                                ArrayRef<Value> initial, Value batch,
                                const StepFn &step) {
  MLIRContext *ctx = rw.getContext();
  int64_t d = dir.index, gh = rec.gates * rec.hidden;
  Type acc = dir.acc;
  Value w = sliceDirection(rw, loc, rec.w, d);
  dir.r = sliceDirection(rw, loc, rec.r, d);
  // B = [Wb, Rb]: Wb + Rb as one bias of the input projection, or Wb alone
  // when the step adds Rb.
  Value bias;
  if (rec.b) {
    Value bd = sliceDirection(rw, loc, rec.b, d);
    Value wb = part(rw, loc, bd, 0, gh), rb = part(rw, loc, bd, gh, gh);
    if (rec.biasInStep) {
      bias = wb;
      dir.rBias = rb;
    } else {
      bias = elementwise(rw, loc, RankedTensorType::get({gh}, acc),
                         ValueRange{wb, rb},
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return arith::AddFOp::create(
                               b, l, castScalar(b, l, a[0], acc),
                               castScalar(b, l, a[1], acc));
                         });
    }
  }
  dir.xw = projectRows(rw, loc, x, w, bias, acc); // [T, B, G*H]
  auto xt = typeOf(x);
  SmallVector<Value> allSizes;
  if (xt.isDynamicDim(0))
    allSizes.push_back(dir.steps);
  if (xt.isDynamicDim(1))
    allSizes.push_back(batch);
  auto allType = RankedTensorType::get(
      {xt.getDimSize(0), xt.getDimSize(1), rec.hidden}, acc);
  Value all = emptyTensor(rw, loc, allType, allSizes);
  SmallVector<Value> states;
  for (Value v : initial) {
    if (!v) {
      states.push_back(
          linalg::FillOp::create(rw, loc, scalarConst(rw, loc, acc, 0),
                                 ValueRange{dir.emptyState(rw, loc)})
              .getResult(0));
      continue;
    }
    states.push_back(elementwise(rw, loc, dir.stateType,
                                 sliceDirection(rw, loc, v, d),
                                 [&](OpBuilder &b, Location l, ValueRange a) {
                                   return castScalar(b, l, a[0], acc);
                                 }));
  }
  SmallVector<Value> iterInit(states);
  iterInit.push_back(all);
  size_t numStates = states.size();
  auto loop = scf::ForOp::create(
      rw, loc, indexConst(rw, loc, 0), dir.steps, indexConst(rw, loc, 1),
      iterInit, [&](OpBuilder &b, Location l, Value t, ValueRange iter) {
        SmallVector<Value> next =
            step(b, l, dir, t, iter.take_front(numStates));
        // Stack h_t at step t (reordered per sequence after the loop).
        SmallVector<OpFoldResult> offsets = {t, b.getIndexAttr(0),
                                             b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                           getAsOpFoldResult(batch),
                                           b.getIndexAttr(rec.hidden)};
        SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
        next.push_back(tensor::InsertSliceOp::create(b, l, next[0], iter.back(),
                                                     offsets, sizes, strides));
        scf::YieldOp::create(b, l, next);
      });
  Value stacked = loop.getResults().back();
  Value lens = dir.lens;
  // Y[t', b, j]: the state after time t' of sequence b, zero past its end.
  Value y = parallelGeneric(
      rw, loc, allType, lens ? ValueRange{lens} : ValueRange{},
      lens ? SmallVector<AffineMap>{AffineMap::get(
                 3, 0, {getAffineDimExpr(1, ctx)}, ctx)}
           : SmallVector<AffineMap>{},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value tp = linalg::IndexOp::create(b, l, 0);
        Value bi = linalg::IndexOp::create(b, l, 1);
        Value ji = linalg::IndexOp::create(b, l, 2);
        Value len = lens ? Value(arith::IndexCastOp::create(
                               b, l, b.getIndexType(), a[0]))
                         : dir.steps;
        auto [at, valid] = timeIndex(b, l, tp, len, dir.reverse);
        Value v =
            tensor::ExtractOp::create(b, l, stacked, ValueRange{at, bi, ji});
        return arith::SelectOp::create(b, l, valid, v,
                                       scalarConst(b, l, acc, 0.0));
      },
      allSizes);
  SmallVector<Value> results = {y};
  llvm::append_range(results, loop.getResults().take_front(numStates));
  return results;
}

/// Replaces `op` by the recurrence `rec` with cell `step`: results Y, then
/// the final states (Y_h, and Y_c for LSTM).
LogicalResult lowerRecurrence(Operation *op, const Recurrence &rec,
                              PatternRewriter &rw, const StepFn &step) {
  // Sequence length and batch may be known only at run time; the input
  // and hidden sizes may not (the weights fix the input size when the
  // input's type lost it).
  if (!typeOf(rec.w).hasStaticShape() || !typeOf(rec.r).hasStaticShape())
    return rw.notifyMatchFailure(op, "dynamic input or hidden size");
  if (failed(rec.acts))
    return rw.notifyMatchFailure(op, "unsupported activations");
  Location loc = op->getLoc();
  int64_t dirs = rec.direction == "bidirectional" ? 2 : 1;
  int64_t perDirection = rec.acts->size() / dirs;
  Type elt = typeOf(rec.x).getElementType(), acc = accumulatorType(elt);

  // Layout 0 inside: X [T, B, I], states [D, B, H].
  Value x = withStaticDim(rw, loc, op, rec.x, 2, typeOf(rec.w).getDimSize(2));
  if (rec.batchFirst)
    x = transpose(rw, loc, x, {1, 0, 2});
  Value steps = dimValue(rw, loc, x, 0), batch = dimValue(rw, loc, x, 1);
  SmallVector<Value> initial;
  for (Value v : rec.initialStates)
    initial.push_back(v && rec.batchFirst ? transpose(rw, loc, v, {1, 0, 2})
                                          : v);
  auto xt = typeOf(x);
  SmallVector<Value> stateSizes;
  if (xt.isDynamicDim(1))
    stateSizes.push_back(batch);

  // outputs[0]: Y per direction; outputs[1 + k]: state k per direction.
  SmallVector<SmallVector<Value>> outputs(1 + initial.size());
  for (int64_t d = 0; d < dirs; ++d) {
    Direction dir{
        d,
        rec.direction == "reverse" || d == 1,
        Value(),
        Value(),
        Value(),
        rec.lens,
        steps,
        rec.hidden,
        acc,
        rec.clip,
        ArrayRef<Activation>(*rec.acts).slice(perDirection * d, perDirection),
        RankedTensorType::get({xt.getDimSize(1), rec.hidden}, acc),
        stateSizes};
    for (auto [k, v] : llvm::enumerate(
             runDirection(rw, loc, rec, dir, x, initial, batch, step)))
      outputs[k].push_back(v);
  }
  // Y [T, D, B, H] (layout 0) or [B, T, D, H]; states [D, B, H] or
  // [B, D, H].
  SmallVector<Value> results;
  for (auto [k, parts] : llvm::enumerate(outputs)) {
    Value v = stack(rw, loc, parts, k == 0 ? 1 : 0, elt);
    if (rec.batchFirst)
      v = transpose(rw, loc, v,
                    k == 0 ? ArrayRef<int64_t>{2, 0, 1, 3}
                           : ArrayRef<int64_t>{1, 0, 2});
    results.push_back(v);
  }
  rw.replaceOp(op, results);
  return success();
}

struct LSTMLowering : public OpRewritePattern<LSTMOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LSTMOp op,
                                PatternRewriter &rewriter) const override {
    Recurrence rec = recurrenceOf(op, 4, {"sigmoid", "tanh", "tanh"},
                                  {op.getInitialH(), op.getInitialC()});
    Value peepholes = op.getP();
    bool coupled = op.getInputForget();
    return lowerRecurrence(
        op, rec, rewriter,
        [&](OpBuilder &b, Location l, const Direction &dir, Value t,
            ValueRange states) {
          Value hr = projectRows(b, l, states[0], dir.r, Value(), dir.acc);
          // Peepholes P = [p_i, p_o, p_f], each [H].
          Value p =
              peepholes ? sliceDirection(b, l, peepholes, dir.index) : Value();
          return stepGeneric(
              b, l, dir, t, states, /*freeze=*/true,
              [&](const StepPoint &pt, ValueRange cur) -> SmallVector<Value> {
                Value cPrev = cur[1];
                // gate + p_k * c when there are peepholes.
                auto peep = [&](int64_t k, Value c, Value g) -> Value {
                  if (!p)
                    return g;
                  Value pk = tensor::ExtractOp::create(
                      pt.b, pt.l, p, ValueRange{pt.column(k)});
                  return pt.add(g,
                                pt.mul(castScalar(pt.b, pt.l, pk, dir.acc), c));
                };
                auto gate = [&](int64_t k) {
                  return pt.add(pt.input(k), pt.at(hr, k));
                };
                // Gate order in W, R, B: i, o, f, c.
                Value i = pt.activate(0, peep(0, cPrev, gate(0)));
                Value f = coupled
                              ? Value(arith::SubFOp::create(
                                    pt.b, pt.l,
                                    scalarConst(pt.b, pt.l, dir.acc, 1.0), i))
                              : pt.activate(0, peep(2, cPrev, gate(2)));
                Value cand = pt.activate(1, gate(3));
                Value cNew = pt.add(pt.mul(f, cPrev), pt.mul(i, cand));
                Value o = pt.activate(0, peep(1, cNew, gate(1)));
                return {pt.mul(o, dir.acts[2].apply(pt.b, pt.l, cNew)), cNew};
              });
        });
  }
};

struct GRULowering : public OpRewritePattern<GRUOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GRUOp op,
                                PatternRewriter &rewriter) const override {
    Recurrence rec =
        recurrenceOf(op, 3, {"sigmoid", "tanh"}, {op.getInitialH()});
    bool linearBeforeReset = op.getLinearBeforeReset();
    rec.biasInStep = linearBeforeReset;
    int64_t hidden = rec.hidden;
    // Gate order in W, R, B: z, r, h; H' = (1 - z) * h~ + z * H.
    return lowerRecurrence(
        op, rec, rewriter,
        [&](OpBuilder &b, Location l, const Direction &dir, Value t,
            ValueRange states) -> SmallVector<Value> {
          Value h = states[0];
          if (linearBeforeReset) {
            // h~ = g(X·Whᵀ + Wbh + r * (H·Rhᵀ + Rbh)): one projection.
            Value hr = projectRows(b, l, h, dir.r, dir.rBias, dir.acc);
            return stepGeneric(
                b, l, dir, t, states, /*freeze=*/true,
                [&](const StepPoint &pt, ValueRange cur) -> SmallVector<Value> {
                  Value z = pt.activate(0, pt.add(pt.input(0), pt.at(hr, 0)));
                  Value r = pt.activate(0, pt.add(pt.input(1), pt.at(hr, 1)));
                  Value cand = pt.activate(
                      1, pt.add(pt.input(2), pt.mul(r, pt.at(hr, 2))));
                  return {pt.blend(z, cand, cur[0])};
                });
          }
          // h~ = g(X·Whᵀ + (r * H)·Rhᵀ + Wbh + Rbh): the reset state is
          // projected on its own.
          Value hr = projectRows(b, l, h, rowsOf(b, l, dir.r, 0, 2 * hidden),
                                 Value(), dir.acc);
          Value reset = stepGeneric(
              b, l, dir, t, dir.emptyState(b, l), /*freeze=*/false,
              [&](const StepPoint &pt, ValueRange) -> SmallVector<Value> {
                Value r = pt.activate(0, pt.add(pt.input(1), pt.at(hr, 1)));
                return {pt.mul(r, pt.at(h, 0))};
              })[0];
          Value rh =
              projectRows(b, l, reset, rowsOf(b, l, dir.r, 2 * hidden, hidden),
                          Value(), dir.acc);
          return stepGeneric(
              b, l, dir, t, states, /*freeze=*/true,
              [&](const StepPoint &pt, ValueRange cur) -> SmallVector<Value> {
                Value z = pt.activate(0, pt.add(pt.input(0), pt.at(hr, 0)));
                Value cand = pt.activate(1, pt.add(pt.input(2), pt.at(rh, 0)));
                return {pt.blend(z, cand, cur[0])};
              });
        });
  }
};

struct RNNLowering : public OpRewritePattern<RNNOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RNNOp op,
                                PatternRewriter &rewriter) const override {
    Recurrence rec = recurrenceOf(op, 1, {"tanh"}, {op.getInitialH()});
    // H' = f(X·Wᵀ + H·Rᵀ + Wb + Rb).
    return lowerRecurrence(
        op, rec, rewriter,
        [&](OpBuilder &b, Location l, const Direction &dir, Value t,
            ValueRange states) {
          Value hr = projectRows(b, l, states[0], dir.r, Value(), dir.acc);
          return stepGeneric(
              b, l, dir, t, states, /*freeze=*/true,
              [&](const StepPoint &pt, ValueRange) -> SmallVector<Value> {
                return {pt.activate(0, pt.add(pt.input(0), pt.at(hr, 0)))};
              });
        });
  }
};

} // namespace

void populateRecurrentToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LSTMLowering, GRULowering, RNNLowering>(patterns.getContext());
}

} // namespace mp
