//===- Gradients.cpp - reverse-mode differentiation of mp graphs ----------===//
//
// One vector-Jacobian product per op kind, written with mp ops. Operands
// that were broadcast get their gradient summed back to their shape. Shapes
// are static here: the training step is built for one batch shape.
//
//===----------------------------------------------------------------------===//

#include "mp/Transforms/Gradients.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace mp {
namespace {

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// The integer values of a constant operand, if it is one.
std::optional<SmallVector<int64_t>> constantInts(Value v) {
  DenseIntElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  return llvm::map_to_vector(attr.getValues<APInt>(), [](const APInt &i) {
    return i.getSExtValue();
  });
}

/// The value of a constant splat float operand, if it is one.
std::optional<double> constantSplat(Value v) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// Builds mp ops for the backward pass at one insertion point.
class GraphBuilder {
public:
  GraphBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &b;
  Location loc;

  static ArrayRef<int64_t> shape(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  static Type elt(Value v) { return getElementTypeOrSelf(v.getType()); }

  Value i64s(ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({(int64_t)values.size()},
                                      b.getI64Type());
    return ConstantOp::create(b, loc, DenseIntElementsAttr::get(type, values));
  }
  /// A rank-0 constant of float type `type`.
  Value scalar(double v, Type type) {
    auto t = RankedTensorType::get({}, type);
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, b.getFloatAttr(type, v)));
  }
  Value zerosLike(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), 0.0)));
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value scale(Value x, double s) {
    return s == 1.0 ? x : mul(x, scalar(s, elt(x)));
  }
  Value castTo(Value x, Type to) {
    return elt(x) == to ? x : CastOp::create(b, loc, x, TypeAttr::get(to));
  }
  Value where(Value c, Value x, Value y) {
    return WhereOp::create(b, loc, c, x, y);
  }
  Value matmul(Value x, Value y) { return MatMulOp::create(b, loc, x, y); }
  Value reshape(Value x, ArrayRef<int64_t> to) {
    if (shape(x) == to)
      return x;
    return ReshapeOp::create(b, loc, x, i64s(to));
  }
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    return TransposeOp::create(b, loc, x, b.getDenseI64ArrayAttr(perm));
  }
  /// Swaps the last two dims.
  Value transposeLast2(Value x) {
    SmallVector<int64_t> perm =
        llvm::to_vector(llvm::seq<int64_t>(0, shape(x).size()));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return transpose(x, perm);
  }
  Value reduceSum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
    return ReduceSumOp::create(b, loc, x, axes, keepdims, false);
  }
  Value reduceMean(Value x, ArrayRef<int64_t> axes) {
    return ReduceMeanOp::create(b, loc, x, axes, true, false);
  }
  Value expand(Value x, ArrayRef<int64_t> to) {
    if (shape(x) == to)
      return x;
    return ExpandOp::create(b, loc, x, i64s(to));
  }
  /// The gradient of an operand of shape `to` that numpy broadcasting
  /// stretched to the shape of `g`: `g` summed over the stretched dims.
  Value sumTo(Value g, ArrayRef<int64_t> to) {
    ArrayRef<int64_t> from = shape(g);
    if (from == to)
      return g;
    size_t lead = from.size() - to.size();
    SmallVector<int64_t> axes;
    for (size_t i = 0; i < from.size(); ++i)
      if (i < lead || (to[i - lead] == 1 && from[i] != 1))
        axes.push_back(i);
    return reshape(axes.empty() ? g : reduceSum(g, axes, true), to);
  }
  /// `x[..., start:end, ...]` along `axis`.
  Value sliceAxis(Value x, int64_t axis, int64_t start, int64_t end) {
    return SliceOp::create(b, loc, x, i64s({start}), i64s({end}),
                           i64s({axis}), Value());
  }
};

/// The operand gradients of `op` given its result gradients (null where a
/// result has none); null entries for operands without a gradient.
using Grads = SmallVector<Value>;

FailureOr<Grads> binaryGrads(GraphBuilder &g, Operation *op, Value dy) {
  Value x = op->getOperand(0), y = op->getOperand(1);
  auto sx = GraphBuilder::shape(x), sy = GraphBuilder::shape(y);
  return TypeSwitch<Operation *, FailureOr<Grads>>(op)
      .Case([&](AddOp) { return Grads{g.sumTo(dy, sx), g.sumTo(dy, sy)}; })
      .Case([&](SubOp) {
        return Grads{g.sumTo(dy, sx), g.sumTo(g.neg(dy), sy)};
      })
      .Case([&](MulOp) {
        return Grads{g.sumTo(g.mul(dy, y), sx), g.sumTo(g.mul(dy, x), sy)};
      })
      .Case([&](DivOp) {
        Value dx = g.div(dy, y);
        Value dd = g.neg(g.mul(dx, op->getResult(0)));
        return Grads{g.sumTo(dx, sx), g.sumTo(dd, sy)};
      })
      .Default([](Operation *) { return failure(); });
}

/// d/dx of unary ops, as dy times the local derivative.
FailureOr<Value> unaryGrad(GraphBuilder &g, Operation *op, Value dy) {
  Value x = op->getOperand(0), y = op->getResult(0);
  Type t = GraphBuilder::elt(x);
  auto one = [&] { return g.scalar(1.0, t); };
  return TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case<NegOp>([&](auto) { return g.neg(dy); })
      .Case<IdentityOp>([&](auto) { return dy; })
      .Case([&](ReluOp) {
        Value positive = GreaterOp::create(g.b, g.loc, x, g.scalar(0.0, t));
        return g.where(positive, dy, g.scalar(0.0, t));
      })
      .Case([&](LeakyReluOp r) {
        Value positive = GreaterOp::create(g.b, g.loc, x, g.scalar(0.0, t));
        return g.where(positive, dy,
                       g.scale(dy, r.getAlpha().convertToDouble()));
      })
      .Case([&](SigmoidOp) {
        return g.mul(dy, g.mul(y, g.sub(one(), y)));
      })
      .Case([&](TanhOp) { return g.mul(dy, g.sub(one(), g.mul(y, y))); })
      .Case([&](ExpOp) { return g.mul(dy, y); })
      .Case([&](LogOp) { return g.div(dy, x); })
      .Case([&](SqrtOp) { return g.div(g.scale(dy, 0.5), y); })
      .Case([&](ReciprocalOp) { return g.neg(g.mul(dy, g.mul(y, y))); })
      .Case([&](AbsOp) { return g.mul(dy, SignOp::create(g.b, g.loc, x)); })
      .Case([&](ErfOp) {
        // 2/sqrt(pi) * exp(-x^2)
        Value e = ExpOp::create(g.b, g.loc, g.neg(g.mul(x, x)));
        return g.mul(dy, g.scale(e, 2.0 / std::sqrt(M_PI)));
      })
      .Case([&](GeluOp gelu) -> FailureOr<Value> {
        if (gelu.getApproximate() == "tanh") {
          // u = c (x + a x^3), t = tanh(u):
          // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)
          const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
          Value x2 = g.mul(x, x);
          Value u = g.scale(g.add(x, g.scale(g.mul(x2, x), a)), c);
          Value th = TanhOp::create(g.b, g.loc, u);
          Value du = g.scale(g.add(one(), g.scale(x2, 3 * a)), c);
          Value d = g.add(g.scale(g.add(one(), th), 0.5),
                          g.mul(g.scale(x, 0.5),
                                g.mul(g.sub(one(), g.mul(th, th)), du)));
          return g.mul(dy, d);
        }
        // Phi(x) + x phi(x)
        Value cdf = g.scale(
            g.add(one(), ErfOp::create(g.b, g.loc, g.scale(x, M_SQRT1_2))), 0.5);
        Value pdf = g.scale(
            ExpOp::create(g.b, g.loc, g.scale(g.mul(x, x), -0.5)),
            1.0 / std::sqrt(2.0 * M_PI));
        return g.mul(dy, g.add(cdf, g.mul(x, pdf)));
      })
      .Case([&](CastOp) { return g.castTo(dy, t); })
      .Default([](Operation *) { return failure(); });
}

/// Gradients of MatMul (rank >= 2 operands) and Gemm.
FailureOr<Grads> contractionGrads(GraphBuilder &g, Operation *op, Value dy) {
  if (auto mm = dyn_cast<MatMulOp>(op)) {
    Value a = mm.getLhs(), b = mm.getRhs();
    auto sa = GraphBuilder::shape(a), sb = GraphBuilder::shape(b);
    if (sa.size() < 2 || sb.size() < 2)
      return failure();
    Value da = g.sumTo(g.matmul(dy, g.transposeLast2(b)), sa);
    Value db;
    if (sb.size() == 2 && sa.size() > 2) {
      // A linear layer over a batch: one [k, rows] x [rows, n] product
      // instead of a batched one summed afterwards.
      int64_t k = sa.back(), n = sb.back();
      int64_t rows = ShapedType::getNumElements(sa) / k;
      db = g.matmul(g.transposeLast2(g.reshape(a, {rows, k})),
                    g.reshape(dy, {rows, n}));
    } else {
      db = g.sumTo(g.matmul(g.transposeLast2(a), dy), sb);
    }
    return Grads{da, db};
  }
  auto gemm = cast<GemmOp>(op);
  Value a = gemm.getA(), b = gemm.getB();
  double alpha = gemm.getAlpha().convertToDouble();
  Value opA = gemm.getTransA() ? g.transposeLast2(a) : a;
  Value opB = gemm.getTransB() ? g.transposeLast2(b) : b;
  Value dOpA = g.scale(g.matmul(dy, g.transposeLast2(opB)), alpha);
  Value dOpB = g.scale(g.matmul(g.transposeLast2(opA), dy), alpha);
  Grads grads{gemm.getTransA() ? g.transposeLast2(dOpA) : dOpA,
              gemm.getTransB() ? g.transposeLast2(dOpB) : dOpB};
  if (Value c = gemm.getC())
    grads.push_back(g.sumTo(g.scale(dy, gemm.getBeta().convertToDouble()),
                            GraphBuilder::shape(c)));
  return grads;
}

/// The attributes of a 1-D convolution (group 1).
struct Conv1d {
  int64_t stride, dilation, padBegin, padEnd;

  template <typename OpTy> static Conv1d of(OpTy op) {
    return {op.getStrides()[0], op.getDilations()[0], op.getPads()[0],
            op.getPads()[1]};
  }

  /// `x` [N, C, L] convolved with `w` [M, C, k]: [N, M, L'].
  Value apply(GraphBuilder &g, Value x, Value w) const {
    OpBuilder &b = g.b;
    auto arr = [&](ArrayRef<int64_t> v) { return b.getDenseI64ArrayAttr(v); };
    return ConvOp::create(b, g.loc, x, w, Value(), b.getStringAttr("NOTSET"),
                          arr({dilation}), b.getI64IntegerAttr(1),
                          arr({GraphBuilder::shape(w)[2]}),
                          arr({padBegin, padEnd}), arr({stride}));
  }

  /// The weight gradient shared by Conv and ConvTranspose:
  /// out[q, p, j] = sum_{n,i} a[n, p, j*dilation + i*stride - padBegin]
  /// * b[n, q, i] for j < k, i.e. a convolution over the batch with batch
  /// and channels swapped, `b` as the kernel, stride and dilation swapped.
  Value weightGrad(GraphBuilder &g, Value a, Value b, int64_t k) const {
    Conv1d swapped{dilation, stride, padBegin, padEnd};
    Value out = swapped.apply(g, g.transpose(a, {1, 0, 2}),
                              g.transpose(b, {1, 0, 2}));
    if (GraphBuilder::shape(out)[2] != k)
      out = g.sliceAxis(out, 2, 0, k);
    return g.transpose(out, {1, 0, 2});
  }
};

/// The gradient of a per-channel bias of an [N, C, L] result.
Value channelBiasGrad(GraphBuilder &g, Value dy, Value bias) {
  return g.reshape(g.reduceSum(dy, {0, 2}, false), GraphBuilder::shape(bias));
}

/// Gradients of a 1-D convolution (group 1) as convolutions.
FailureOr<Grads> convGrads(GraphBuilder &g, ConvOp conv, Value dy) {
  Value x = conv.getInput(), w = conv.getWeight();
  Conv1d c = Conv1d::of(conv);
  int64_t len = GraphBuilder::shape(x)[2], k = GraphBuilder::shape(w)[2];
  int64_t outLen = GraphBuilder::shape(dy)[2];
  OpBuilder &b = g.b;
  auto arr = [&](ArrayRef<int64_t> v) { return b.getDenseI64ArrayAttr(v); };
  // dX: the transposed convolution of dY with the same weights; output
  // padding restores the input positions the forward stride skipped.
  int64_t outputPadding = len - (c.stride * (outLen - 1) +
                                 c.dilation * (k - 1) + 1 - c.padBegin -
                                 c.padEnd);
  Value dx = ConvTransposeOp::create(
      b, g.loc, dy, w, Value(), b.getStringAttr("NOTSET"), arr({c.dilation}),
      b.getI64IntegerAttr(1), arr({k}), arr({outputPadding}),
      arr({c.padBegin, c.padEnd}), arr({c.stride}));
  // dW[m, c, j] = sum_{n,t} dY[n, m, t] X[n, c, t*s + j*d - pb].
  Grads grads{dx, c.weightGrad(g, x, dy, k)};
  if (Value bias = conv.getBias())
    grads.push_back(channelBiasGrad(g, dy, bias));
  return grads;
}

/// Gradients of a 1-D transposed convolution (group 1): the forward
/// convolution of dY for the input, a swapped convolution for the weights.
FailureOr<Grads> convTransposeGrads(GraphBuilder &g, ConvTransposeOp conv,
                                    Value dy) {
  Value x = conv.getInput(), w = conv.getWeight();
  Conv1d c = Conv1d::of(conv);
  int64_t len = GraphBuilder::shape(x)[2], k = GraphBuilder::shape(w)[2];
  // W [C, M, k] is already a convolution weight from M to C channels. The
  // output padding only adds positions past the last input's reach.
  Value dx = c.apply(g, dy, w);
  if (GraphBuilder::shape(dx)[2] != len)
    dx = g.sliceAxis(dx, 2, 0, len);
  // dW[c, m, j] = sum_{n,i} X[n, c, i] dY[n, m, i*s + j*d - pb].
  Grads grads{dx, c.weightGrad(g, dy, x, k)};
  if (Value bias = conv.getBias())
    grads.push_back(channelBiasGrad(g, dy, bias));
  return grads;
}

/// Gradients of mp.attention (softcap 0, no nonpad_kv_seqlen): the scores
/// and probabilities are recomputed from Q and K, then the usual
/// dV = P^T dO, dS = P (dP - rowsum(dP P)), dQ = dS K, dK = dS^T Q.
/// Grouped-query K/V heads sum the gradients of their query heads; the
/// gradient of a joined past is dropped (it is state, not a weight).
FailureOr<Grads> attentionGrads(GraphBuilder &g, AttentionOp op,
                                ArrayRef<Value> dys) {
  if (dys[1] || dys[2] || dys[3] || op.getSoftcap().convertToDouble() != 0 ||
      op.getNonpadKvSeqlen() || op.getPastLength())
    return failure();
  Value q = op.getQ(), k = op.getK(), v = op.getV(), dOut = dys[0];
  auto sq = GraphBuilder::shape(q), sk = GraphBuilder::shape(k);
  bool is3d = sq.size() == 3;
  int64_t batch = sq[0];
  int64_t hq = is3d ? (int64_t)op.getQNumHeads() : sq[1];
  int64_t hk = is3d ? (int64_t)op.getKvNumHeads() : sk[1];
  // 3-D [B, S, H*D] <-> 4-D [B, H, S, D].
  auto to4d = [&](Value x, int64_t heads) {
    if (!is3d)
      return x;
    auto s = GraphBuilder::shape(x);
    return g.transpose(g.reshape(x, {s[0], s[1], heads, s[2] / heads}),
                       {0, 2, 1, 3});
  };
  auto to3d = [&](Value x) {
    if (!is3d)
      return x;
    auto s = GraphBuilder::shape(x);
    return g.reshape(g.transpose(x, {0, 2, 1, 3}), {s[0], s[2], s[1] * s[3]});
  };
  Value q4 = to4d(q, hq), k4 = to4d(k, hk), v4 = to4d(v, hk);
  Value dO = to4d(dOut, hq);
  int64_t past = 0;
  Value kf = k4, vf = v4;
  if (Value pk = op.getPastKey()) {
    past = GraphBuilder::shape(pk)[2];
    kf = ConcatOp::create(g.b, g.loc, ValueRange{pk, k4}, 2);
    vf = ConcatOp::create(g.b, g.loc, ValueRange{op.getPastValue(), v4}, 2);
  }
  auto sf = GraphBuilder::shape(kf);
  int64_t total = sf[2], dim = sf[3], seq = GraphBuilder::shape(q4)[2];
  int64_t rep = hq / hk;
  // K/V heads repeated for their query heads (grouped-query attention).
  auto repeat = [&](Value x) {
    if (rep == 1)
      return x;
    Value x5 = g.reshape(x, {batch, hk, 1, total, dim});
    return g.reshape(g.expand(x5, {batch, hk, rep, total, dim}),
                     {batch, hq, total, dim});
  };
  auto unrepeat = [&](Value x) {
    if (rep == 1)
      return x;
    return g.reshape(g.reduceSum(g.reshape(x, {batch, hk, rep, total, dim}),
                                 {2}, false),
                     {batch, hk, total, dim});
  };
  Value kx = repeat(kf), vx = repeat(vf);
  Type t = GraphBuilder::elt(q);
  double scale = op.getScale() ? op.getScale()->convertToDouble()
                               : 1.0 / std::sqrt((double)dim);
  Value scores = g.scale(g.matmul(q4, g.transposeLast2(kx)), scale);
  Value negInf = g.scalar(-std::numeric_limits<double>::infinity(), t);
  if (Value mask = op.getAttnMask()) {
    if (getElementTypeOrSelf(mask.getType()).isInteger(1))
      scores = g.where(mask, scores, negInf);
    else
      scores = g.add(scores, g.castTo(mask, t));
  }
  if (op.getIsCausal()) {
    // Bottom-right aligned: query i sees keys j <= i + total - seq.
    SmallVector<bool> allowed;
    for (int64_t i = 0; i < seq; ++i)
      for (int64_t j = 0; j < total; ++j)
        allowed.push_back(j <= i + total - seq);
    auto maskType = RankedTensorType::get({seq, total}, g.b.getI1Type());
    Value causal = ConstantOp::create(
        g.b, g.loc, DenseElementsAttr::get(maskType, ArrayRef<bool>(allowed)));
    scores = g.where(causal, scores, negInf);
  }
  Value p = SoftmaxOp::create(g.b, g.loc, scores, g.b.getDenseI64ArrayAttr({3}));
  Value dvx = g.matmul(g.transposeLast2(p), dO);
  Value dp = g.matmul(dO, g.transposeLast2(vx));
  Value ds = g.mul(p, g.sub(dp, g.reduceSum(g.mul(dp, p), {3}, true)));
  Value dq = g.scale(g.matmul(ds, kx), scale);
  Value dkx = g.scale(g.matmul(g.transposeLast2(ds), q4), scale);
  Value dk = unrepeat(dkx), dv = unrepeat(dvx);
  if (past) {
    dk = g.sliceAxis(dk, 2, past, total);
    dv = g.sliceAxis(dv, 2, past, total);
  }
  return Grads{to3d(dq), to3d(dk), to3d(dv)};
}

/// Gradients of reductions, softmaxes and LayerNorm.
FailureOr<Grads> normalizationGrads(GraphBuilder &g, Operation *op,
                                    ArrayRef<Value> dys) {
  Value x = op->getOperand(0), dy = dys[0];
  auto sx = GraphBuilder::shape(x);
  auto reducedAxes = [&](ArrayRef<int64_t> axes, bool noop) {
    SmallVector<int64_t> all = llvm::map_to_vector(axes, [&](int64_t a) {
      return a < 0 ? a + (int64_t)sx.size() : a;
    });
    if (all.empty() && !noop)
      all = llvm::to_vector(llvm::seq<int64_t>(0, sx.size()));
    return all;
  };
  // The axes [axis, rank) a normalization works over.
  auto axesFrom = [&](int64_t axis) {
    int64_t rank = sx.size();
    return llvm::to_vector(
        llvm::seq<int64_t>(axis < 0 ? axis + rank : axis, rank));
  };
  // dy of a reduction brought back to the input's shape.
  auto spread = [&](ArrayRef<int64_t> axes) {
    SmallVector<int64_t> kept = llvm::to_vector(sx);
    for (int64_t a : axes)
      kept[a] = 1;
    return g.expand(g.reshape(dy, kept), sx);
  };
  return TypeSwitch<Operation *, FailureOr<Grads>>(op)
      .Case([&](ReduceSumOp r) {
        return Grads{spread(
            reducedAxes(r.getAxes(), r.getNoopWithEmptyAxes()))};
      })
      .Case([&](ReduceMeanOp r) {
        SmallVector<int64_t> axes =
            reducedAxes(r.getAxes(), r.getNoopWithEmptyAxes());
        double n = 1;
        for (int64_t a : axes)
          n *= sx[a];
        return Grads{g.scale(spread(axes), 1.0 / n)};
      })
      .Case([&](SoftmaxOp s) {
        Value y = s.getResult();
        Value dot = g.reduceSum(g.mul(dy, y), s.getAxes(), true);
        return Grads{g.mul(y, g.sub(dy, dot))};
      })
      .Case([&](LogSoftmaxOp s) {
        Value p = ExpOp::create(g.b, g.loc, s.getResult());
        return Grads{
            g.sub(dy, g.mul(p, g.reduceSum(dy, s.getAxes(), true)))};
      })
      .Case([&](RMSNormOp rms) -> FailureOr<Grads> {
        if (dys[1])
          return failure(); // the statistics output is not differentiated
        SmallVector<int64_t> axes = axesFrom((int64_t)rms.getAxis());
        Value rstd = g.castTo(rms.getInvStdDev(), GraphBuilder::elt(x));
        Value xhat = g.mul(x, rstd);
        Value dxhat = g.mul(dy, rms.getScale());
        Value m = g.reduceMean(g.mul(dxhat, xhat), axes);
        Value dx = g.mul(rstd, g.sub(dxhat, g.mul(xhat, m)));
        return Grads{dx, g.sumTo(g.mul(dy, xhat),
                                 GraphBuilder::shape(rms.getScale()))};
      })
      .Case([&](LayerNormOp ln) -> FailureOr<Grads> {
        if (dys[1] || dys[2])
          return failure(); // the statistics outputs are not differentiated
        SmallVector<int64_t> axes = axesFrom((int64_t)ln.getAxis());
        Type t = GraphBuilder::elt(x);
        Value mean = g.castTo(ln.getMean(), t);
        Value rstd = g.castTo(ln.getInvStdDev(), t);
        Value xhat = g.mul(g.sub(x, mean), rstd);
        Value dxhat = g.mul(dy, ln.getScale());
        Value m1 = g.reduceMean(dxhat, axes);
        Value m2 = g.reduceMean(g.mul(dxhat, xhat), axes);
        Value dx = g.mul(rstd, g.sub(g.sub(dxhat, m1), g.mul(xhat, m2)));
        Grads grads{dx, g.sumTo(g.mul(dy, xhat),
                                GraphBuilder::shape(ln.getScale()))};
        if (Value bias = ln.getBias())
          grads.push_back(g.sumTo(dy, GraphBuilder::shape(bias)));
        return grads;
      })
      .Default([](Operation *) { return failure(); });
}

/// Gradients of data movement: the inverse movement of dy.
FailureOr<Grads> movementGrads(GraphBuilder &g, Operation *op, Value dy) {
  Value x = op->getOperand(0);
  auto sx = GraphBuilder::shape(x);
  return TypeSwitch<Operation *, FailureOr<Grads>>(op)
      .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(
          [&](auto) { return Grads{g.reshape(dy, sx)}; })
      .Case([&](ExpandOp) { return Grads{g.sumTo(dy, sx)}; })
      .Case([&](TransposeOp t) {
        SmallVector<int64_t> inverse(t.getPerm().size());
        for (auto [i, p] : llvm::enumerate(t.getPerm()))
          inverse[p] = i;
        return Grads{g.transpose(dy, inverse)};
      })
      .Case([&](ConcatOp c) {
        int64_t axis = (int64_t)c.getAxis();
        if (axis < 0)
          axis += sx.size();
        Grads grads;
        int64_t offset = 0;
        for (Value in : c.getInputs()) {
          int64_t len = GraphBuilder::shape(in)[axis];
          grads.push_back(g.sliceAxis(dy, axis, offset, offset + len));
          offset += len;
        }
        return grads;
      })
      .Case([&](SliceOp s) -> FailureOr<Grads> {
        auto starts = constantInts(s.getStarts());
        auto ends = constantInts(s.getEnds());
        std::optional<SmallVector<int64_t>> axes, steps;
        if (s.getAxes())
          axes = constantInts(s.getAxes());
        if (s.getSteps())
          steps = constantInts(s.getSteps());
        if (!starts || !ends || (s.getAxes() && !axes) ||
            (s.getSteps() && !steps))
          return failure();
        int64_t rank = sx.size();
        SmallVector<int64_t> pads(2 * rank, 0);
        for (size_t i = 0; i < starts->size(); ++i) {
          if (steps && (*steps)[i] != 1)
            return failure();
          int64_t a = axes ? (*axes)[i] : (int64_t)i;
          if (a < 0)
            a += rank;
          int64_t dim = sx[a];
          auto clampIndex = [&](int64_t v) {
            if (v < 0)
              v += dim;
            return std::clamp<int64_t>(v, 0, dim);
          };
          int64_t begin = clampIndex((*starts)[i]);
          int64_t end = std::max(begin, clampIndex((*ends)[i]));
          pads[a] = begin;
          pads[rank + a] = dim - end;
        }
        return Grads{PadOp::create(g.b, g.loc, dy, g.i64s(pads), Value(),
                                   Value(), g.b.getStringAttr("constant"))
                         .getResult()};
      })
      .Case([&](GatherOp gather) -> FailureOr<Grads> {
        // Embedding lookup: the rows of dy land where the indices point,
        // summed, as a one-hot matrix product.
        if ((int64_t)gather.getAxis() != 0)
          return failure();
        Value indices = gather.getIndices();
        int64_t rows = sx[0];
        int64_t n = ShapedType::getNumElements(GraphBuilder::shape(indices));
        int64_t width = ShapedType::getNumElements(sx) / rows;
        Value idx = g.reshape(g.castTo(indices, g.b.getI64Type()), {n, 1});
        auto rangeType = RankedTensorType::get({1, rows}, g.b.getI64Type());
        Value range = ConstantOp::create(
            g.b, g.loc,
            DenseIntElementsAttr::get(
                rangeType, llvm::to_vector(llvm::seq<int64_t>(0, rows))));
        // Negative indices count from the end.
        Value wrapped = WhereOp::create(
            g.b, g.loc,
            LessOp::create(g.b, g.loc, idx, g.i64s({0})),
            AddOp::create(g.b, g.loc, idx, g.i64s({rows})), idx);
        Value hit = EqualOp::create(g.b, g.loc, wrapped, range);
        Value oneHot = g.castTo(hit, GraphBuilder::elt(x));
        Value dx = g.matmul(g.transposeLast2(oneHot),
                            g.reshape(dy, {n, width}));
        return Grads{g.reshape(dx, sx), Value()};
      })
      .Case([&](WhereOp w) {
        Value zero = g.scalar(0.0, GraphBuilder::elt(dy));
        return Grads{Value(),
                     g.sumTo(g.where(w.getCondition(), dy, zero),
                             GraphBuilder::shape(w.getX())),
                     g.sumTo(g.where(w.getCondition(), zero, dy),
                             GraphBuilder::shape(w.getY()))};
      })
      .Default([](Operation *) { return failure(); });
}

FailureOr<Grads> powGrads(GraphBuilder &g, PowOp pow, Value dy) {
  std::optional<double> c = constantSplat(pow.getExponent());
  if (!c)
    return failure();
  Value x = pow.getBase();
  Type t = GraphBuilder::elt(x);
  Value local = *c == 2.0 ? g.scale(x, 2.0)
                          : g.scale(PowOp::create(g.b, g.loc, x,
                                                  g.scalar(*c - 1.0, t)),
                                    *c);
  return Grads{g.mul(dy, local), Value()};
}

/// Where the backward ops of `op` point: "NODE.grad" at the node's file.
/// Not the node's own location, which carries its ONNX op type: precision
/// policies must classify backward ops by what they are (a MatMul's
/// gradient has Transposes), not by the forward op.
Location gradientLoc(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  std::string name = onnxNodeName(op);
  if (name.empty())
    name = op->getName().getStringRef().str();
  Location file = loc;
  if (auto named = dyn_cast<NameLoc>(loc))
    file = named.getChildLoc();
  return NameLoc::get(StringAttr::get(op->getContext(), name + ".grad"), file);
}

/// Operand gradients of `op`, or failure when it has no rule.
FailureOr<Grads> vjp(OpBuilder &b, Operation *op, ArrayRef<Value> dys) {
  GraphBuilder g(b, gradientLoc(op));
  Value dy = dys[0];
  if (llvm::any_of(dys.drop_front(), [](Value v) { return bool(v); }) &&
      !isa<LayerNormOp, RMSNormOp, AttentionOp>(op))
    return failure();
  if (isa<AddOp, SubOp, MulOp, DivOp>(op))
    return binaryGrads(g, op, dy);
  if (isa<MatMulOp, GemmOp>(op))
    return contractionGrads(g, op, dy);
  if (auto conv = dyn_cast<ConvOp>(op))
    return convGrads(g, conv, dy);
  if (auto conv = dyn_cast<ConvTransposeOp>(op))
    return convTransposeGrads(g, conv, dy);
  if (auto attention = dyn_cast<AttentionOp>(op))
    return attentionGrads(g, attention, dys);
  if (isa<ReduceSumOp, ReduceMeanOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp,
          RMSNormOp>(op))
    return normalizationGrads(g, op, dys);
  if (auto rotary = dyn_cast<RotaryEmbeddingOp>(op)) {
    // A rotation: its gradient rotates dy back (the same op with -sin).
    Value negSin = g.neg(rotary.getSinCache());
    Value dx = RotaryEmbeddingOp::create(
        g.b, g.loc, dy, rotary.getCosCache(), negSin, rotary.getPositionIds(),
        rotary.getInterleavedAttr(), rotary.getNumHeadsAttr(),
        rotary.getRotaryEmbeddingDimAttr());
    return Grads{dx, Value(), Value(), Value()};
  }
  if (auto pow = dyn_cast<PowOp>(op))
    return powGrads(g, pow, dy);
  FailureOr<Grads> moved = movementGrads(g, op, dy);
  if (succeeded(moved))
    return moved;
  if (op->getNumOperands() != 1)
    return failure();
  FailureOr<Value> d = unaryGrad(g, op, dy);
  if (failed(d))
    return failure();
  return Grads{*d};
}

} // namespace

bool hasGradientRule(Operation *op, unsigned index) {
  if (!isFloatTensor(op->getOperand(index)))
    return false;
  if (isa<PowOp>(op))
    return index == 0 && constantSplat(op->getOperand(1)).has_value();
  if (isa<MatMulOp>(op))
    return llvm::all_of(op->getOperands(), [](Value v) {
      return GraphBuilder::shape(v).size() >= 2;
    });
  if (isa<SliceOp>(op))
    return index == 0;
  if (auto conv = dyn_cast<ConvOp>(op))
    return GraphBuilder::shape(conv.getInput()).size() == 3 &&
           conv.getGroup() == 1;
  if (auto conv = dyn_cast<ConvTransposeOp>(op))
    return GraphBuilder::shape(conv.getInput()).size() == 3 &&
           conv.getGroup() == 1;
  if (isa<RotaryEmbeddingOp>(op))
    return index == 0;
  if (auto attention = dyn_cast<AttentionOp>(op))
    return index < 3 && attention.getSoftcap().convertToDouble() == 0 &&
           !attention.getNonpadKvSeqlen() && !attention.getPastLength();
  if (auto gather = dyn_cast<GatherOp>(op))
    return index == 0 && (int64_t)gather.getAxis() == 0;
  if (auto cast = dyn_cast<CastOp>(op))
    return isFloatTensor(cast.getResult());
  return isa<AddOp, SubOp, MulOp, DivOp, GemmOp, ReduceSumOp, ReduceMeanOp,
             SoftmaxOp, LogSoftmaxOp, LayerNormOp, RMSNormOp, ReshapeOp,
             FlattenOp, SqueezeOp, UnsqueezeOp, ExpandOp, TransposeOp,
             ConcatOp, WhereOp, GeluOp, NegOp, IdentityOp, ReluOp, LeakyReluOp,
             SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp, ReciprocalOp, AbsOp,
             ErfOp>(op);
}

llvm::SetVector<Operation *> activeOps(Value target, ValueRange wrt) {
  Block *block = target.getParentBlock();
  // Forward: ops whose float results vary with `wrt`.
  llvm::DenseSet<Value> varied(wrt.begin(), wrt.end());
  llvm::SetVector<Operation *> forward;
  for (Operation &op : *block) {
    SetVector<Value> used(op.getOperands().begin(), op.getOperands().end());
    getUsedValuesDefinedAbove(op.getRegions(), used);
    if (llvm::none_of(used, [&](Value v) { return varied.contains(v); }))
      continue;
    forward.insert(&op);
    for (Value r : op.getResults())
      if (isFloatTensor(r))
        varied.insert(r);
  }
  // Backward: of those, the ones `target` depends on.
  llvm::SetVector<Operation *> active;
  llvm::DenseSet<Value> needed = {target};
  for (Operation *op : llvm::reverse(forward)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return needed.contains(r); }))
      continue;
    active.insert(op);
    SetVector<Value> used(op->getOperands().begin(), op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value v : used)
      if (varied.contains(v))
        needed.insert(v);
  }
  // In program order.
  return llvm::SetVector<Operation *>(active.rbegin(), active.rend());
}

FailureOr<SmallVector<Value>> buildGradients(OpBuilder &b, Value target,
                                             Value seed, ValueRange wrt) {
  llvm::SetVector<Operation *> active = activeOps(target, wrt);
  llvm::DenseSet<Value> activeValues(wrt.begin(), wrt.end());
  for (Operation *op : active)
    for (Value r : op->getResults())
      activeValues.insert(r);

  llvm::DenseMap<Value, Value> adjoint;
  adjoint[target] = seed;
  for (Operation *op : llvm::reverse(active)) {
    SmallVector<Value> dys = llvm::map_to_vector(
        op->getResults(), [&](Value r) { return adjoint.lookup(r); });
    if (llvm::none_of(dys, [](Value v) { return bool(v); }))
      continue;
    auto noRule = [&]() {
      InFlightDiagnostic d =
          emitError(op->getLoc())
          << "no gradient rule for '" << op->getName() << "'";
      if (std::string node = onnxNodeName(op); !node.empty())
        d << " (ONNX node '" << node << "')";
      d << ", which lies between the trained weights and the loss";
      return failure();
    };
    if (op->getNumRegions() > 0)
      return noRule();
    auto isStatic = [](Type t) {
      auto shaped = dyn_cast<ShapedType>(t);
      return !shaped || shaped.hasStaticShape();
    };
    if (!llvm::all_of(op->getOperandTypes(), isStatic) ||
        !llvm::all_of(op->getResultTypes(), isStatic))
      return emitError(op->getLoc())
             << "'" << op->getName()
             << "' has dynamic shapes: a training step is built for static "
                "shapes (declare the graph inputs' shapes, and make the "
                "inputs that decide shapes initializers)";
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (activeValues.contains(operand) && !hasGradientRule(op, i))
        return noRule();
    FailureOr<Grads> grads = vjp(b, op, dys);
    if (failed(grads))
      return noRule();
    for (auto [operand, grad] : llvm::zip(op->getOperands(), *grads)) {
      if (!grad || !activeValues.contains(operand))
        continue;
      Value &acc = adjoint[operand];
      acc = acc ? AddOp::create(b, gradientLoc(op), acc, grad).getResult()
                : grad;
    }
  }
  GraphBuilder g(b, target.getLoc());
  return llvm::map_to_vector(wrt, [&](Value w) {
    Value d = adjoint.lookup(w);
    return d ? d : g.zerosLike(w);
  });
}

} // namespace mp
