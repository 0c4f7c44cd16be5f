//===- StaticBounds.cpp - provable magnitude bounds without data ----------===//
//
// One forward pass in program order. Bounds start at constants,
// normalizations, softmax and saturating activations and follow ops whose
// effect on |x| is known closely enough to stay useful; anything looser is
// dropped rather than recorded, since a recorded bound above 65504 keeps an
// op in fp32. Bounds hold in exact arithmetic: the rounding of the
// computation itself is not counted.
//
//===----------------------------------------------------------------------===//

#include "mp/Precision/StaticBounds.h"
#include "FloatData.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/Analysis.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace mp {

static bool isFloatTensor(Type t) {
  auto shaped = dyn_cast<ShapedType>(t);
  return shaped && isa<FloatType>(shaped.getElementType());
}

/// "LayerNormalization 'ln1'", "constant 'Wk'", or the op type alone.
static std::string describe(Operation *op) {
  std::string kind = isa<ConstantOp>(op) ? "constant" : onnxOpType(op);
  std::string name = onnxNodeName(op);
  return name.empty() ? kind : kind + " '" + name + "'";
}

static std::string describe(Value v) {
  Operation *op = v.getDefiningOp();
  return op ? describe(op) : "an argument";
}

/// "Add 'a' of MatMul 'q' and constant 'bq'": the op and its first sources.
static std::string from(Operation *op, mlir::ValueRange sources) {
  std::string text = describe(op) + " of ";
  for (auto [i, v] : llvm::enumerate(sources.take_front(2)))
    text += (i ? " and " : "") + describe(v);
  return sources.size() > 2 ? text + ", ..." : text;
}

/// The float data of the mp.constant defining `v`; null when `v` is not a
/// constant or its data is not loaded.
static ElementsAttr constantData(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c || !isFloatTensor(c.getType()))
    return {};
  ElementsAttr data = c.getValue();
  if (data.getNumElements() != 0 && rawElementData(data).first.empty())
    return {};
  return data;
}

/// The product of `dims`, if all are static.
static std::optional<int64_t> product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      return std::nullopt;
    n *= d;
  }
  return n;
}

/// The product of the dims [from, rank) of `v`'s type, if all are static.
static std::optional<int64_t> staticCount(Value v, int64_t from) {
  ArrayRef<int64_t> shape = cast<ShapedType>(v.getType()).getShape();
  if (from < 0 || from > int64_t(shape.size()))
    return std::nullopt;
  return product(shape.drop_front(from));
}

/// How many input elements a reduction combines into each output element.
template <typename ReduceOp>
static std::optional<int64_t> reducedCount(ReduceOp op) {
  ArrayRef<int64_t> shape = op.getData().getType().getShape(),
                    axes = op.getAxes();
  if (axes.empty())
    return op.getNoopWithEmptyAxes() ? 1 : product(shape);
  SmallVector<int64_t> dims;
  for (int64_t a : axes)
    dims.push_back(shape[a < 0 ? a + shape.size() : a]);
  return product(dims);
}

namespace {
/// The largest L1 and L2 norms among some vectors of a constant.
struct Norms {
  double l1 = 0;
  double l2 = 0;
};
} // namespace

/// The largest norms of the vectors of `data` seen as [outer, k, inner]
/// (dims [0, kBegin), [kBegin, kEnd), [kEnd, rank)): one vector of k
/// elements per (outer, inner) pair. nullopt when the data is unreadable.
static std::optional<Norms> maxNorms(ElementsAttr data, int64_t kBegin,
                                     int64_t kEnd) {
  auto type = cast<ShapedType>(data.getType());
  Type elt = type.getElementType();
  if (!(elt.isF16() || elt.isBF16() || elt.isF32() || elt.isF64()) ||
      !type.hasStaticShape() || kBegin < 0 || kEnd > type.getRank())
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t outer = *product(shape.take_front(kBegin)),
          k = *product(shape.slice(kBegin, kEnd - kBegin)),
          inner = *product(shape.drop_front(kEnd));
  if (outer * k * inner == 0)
    return Norms();
  auto [bytes, splat] = rawElementData(data);
  if (splat) {
    double v = std::fabs(readFloatElement(bytes.data(), elt, 0));
    return Norms{k * v, std::sqrt(double(k)) * v};
  }
  if (int64_t(bytes.size()) !=
      outer * k * inner * (elt.getIntOrFloatBitWidth() / 8))
    return std::nullopt;
  // Row-major order: accumulate the `inner` vectors of one outer index at
  // once.
  Norms result;
  SmallVector<double> l1(inner), l2(inner);
  for (int64_t o = 0; o < outer; ++o) {
    std::fill(l1.begin(), l1.end(), 0.0);
    std::fill(l2.begin(), l2.end(), 0.0);
    for (int64_t j = 0, base = o * k * inner; j < k; ++j, base += inner)
      for (int64_t i = 0; i < inner; ++i) {
        double v = std::fabs(readFloatElement(bytes.data(), elt, base + i));
        l1[i] += v;
        l2[i] += v * v;
      }
    for (int64_t i = 0; i < inner; ++i) {
      result.l1 = std::max(result.l1, l1[i]);
      result.l2 = std::max(result.l2, std::sqrt(l2[i]));
    }
  }
  return result;
}

/// True when every vector along the last axis of each result of `op` is a
/// copy of one of its first operand's, or a part of one.
static bool keepsRows(Operation *op) {
  auto lastDim = [](Value v) {
    auto type = cast<ShapedType>(v.getType());
    return type.getRank() ? type.getShape().back() : ShapedType::kDynamic;
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<IdentityOp, CastOp, SliceOp, SplitOp>(
          [](Operation *) { return true; })
      .Case([](TransposeOp t) {
        ArrayRef<int64_t> perm = t.getPerm();
        return !perm.empty() && perm.back() == int64_t(perm.size()) - 1;
      })
      .Case([](GatherOp g) {
        int64_t rank = g.getData().getType().getRank();
        int64_t axis = static_cast<int64_t>(g.getAxis());
        return (axis < 0 ? axis + rank : axis) != rank - 1;
      })
      // Row-major order: equal last dims keep the same rows.
      .Case<ReshapeOp, SqueezeOp, UnsqueezeOp, FlattenOp, ExpandOp>(
          [&](Operation *op) {
            int64_t d = lastDim(op->getOperand(0));
            return !ShapedType::isDynamic(d) && d == lastDim(op->getResult(0));
          })
      .Default(false);
}

namespace {
/// A contraction's bound and which rule gave it (" (row L2 norms)", ...).
struct ContractionBound {
  double absMax;
  const char *how;
};

class BoundAnalysis {
public:
  DenseMap<Value, StaticBound> run(Operation *root) {
    root->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op != root)
        visit(op);
    });
    return std::move(bounds);
  }

private:
  std::optional<double> get(Value v);
  /// Records `bound` for `v`; `why` is asked only for a bound beyond fp16
  /// (the only ones a plan shows): most values never build their text.
  void set(Value v, double bound, llvm::function_ref<std::string()> why);
  void setAll(Operation *op, double bound,
              llvm::function_ref<std::string()> why) {
    for (Value result : op->getResults())
      set(result, bound, why);
  }
  /// Every float result of `op` gets f(bound of `input`).
  void derive(Operation *op, Value input,
              llvm::function_ref<double(double)> f) {
    if (std::optional<double> b = get(input))
      setAll(op, f(*b), [&] { return from(op, input); });
  }
  std::optional<double> combine(mlir::ValueRange values, bool sum);
  void visit(Operation *op);
  std::optional<ContractionBound>
  contraction(Operation *op, Value lhs, Value rhs, bool transA, bool transB);
  void normalization(Operation *op, std::optional<int64_t> n, bool meanRemoved,
                     Value scale, Value bias, bool rowsInBlock,
                     bool biasAlongRows);
  void attention(Operation *op, Value v, Value past, double bias,
                 ArrayRef<Value> outs);
  /// maxNorms, once per weight and axes: layers often share a weight.
  std::optional<Norms> norms(ElementsAttr data, int64_t kBegin, int64_t kEnd) {
    auto key = std::make_tuple(data.getAsOpaquePointer(), kBegin, kEnd);
    auto [it, inserted] = normsOf.try_emplace(key);
    if (inserted)
      it->second = maxNorms(data, kBegin, kEnd);
    return it->second;
  }

  DenseMap<std::tuple<const void *, int64_t, int64_t>, std::optional<Norms>>
      normsOf;
  DenseMap<Value, StaticBound> bounds;
  /// Bounds of the L2 norm of every vector along the last axis.
  DenseMap<Value, double> rowL2;
  /// Values whose vectors along the last axis are nonnegative and sum to at
  /// most 1 (softmax probabilities).
  DenseSet<Value> probRows;
};
} // namespace

std::optional<double> BoundAnalysis::get(Value v) {
  auto it = bounds.find(v);
  if (it != bounds.end())
    return it->second.absMax;
  // Constants are scanned only when a bound is asked for: the weights of a
  // MatMul are read for their norms instead.
  Operation *def = v.getDefiningOp();
  ElementsAttr data;
  if (auto c = dyn_cast_if_present<ConstantOp>(def))
    data = c.getValue();
  else if (auto c = dyn_cast_if_present<ConstantOfShapeOp>(def))
    data = c.getValue();
  if (!data || !isFloatTensor(v.getType()))
    return std::nullopt;
  ConstantStats s = computeConstantStats(data);
  if (s.count == 0 && data.getNumElements() != 0)
    return std::nullopt;
  // Mask sentinels (-1e4 and below) and values beyond fp16 have rules of
  // their own (rewritten, or their readers kept fp32): bounding through them
  // would only repeat those rules on the mask path.
  if (s.overflow || s.minValue <= kSentinelThreshold)
    return std::nullopt;
  set(v, s.maxAbs, [&] { return describe(def); });
  it = bounds.find(v);
  return it == bounds.end() ? std::nullopt : std::optional(it->second.absMax);
}

void BoundAnalysis::set(Value v, double bound,
                        llvm::function_ref<std::string()> why) {
  // An infinite bound says no more than none; NaN comes from NaN data.
  if (std::isfinite(bound) && isFloatTensor(v.getType()))
    bounds[v] = {bound, bound > kFp16Max ? why() : std::string()};
}

/// The sum (or the max) of the bounds of `values`, if all have one.
std::optional<double> BoundAnalysis::combine(mlir::ValueRange values,
                                             bool sum) {
  double result = 0;
  for (Value v : values) {
    std::optional<double> b = get(v);
    if (!b)
      return std::nullopt;
    result = sum ? result + *b : std::max(result, *b);
  }
  return result;
}

/// Bounds op(lhs) x op(rhs) (MatMul semantics, transposed 2-D operands for
/// Gemm) by the tightest of: the other side's bound times a constant side's
/// largest column (row) L1 norm; Cauchy-Schwarz with the row L2 norms of a
/// normalized lhs and the column L2 norms of a constant rhs; bound(V) for
/// probabilities P in P x V.
std::optional<ContractionBound> BoundAnalysis::contraction(Operation *op,
                                                           Value lhs, Value rhs,
                                                           bool transA,
                                                           bool transB) {
  // A constant side's own bound is read only where it is used.
  ElementsAttr lhsData = constantData(lhs), rhsData = constantData(rhs);
  bool probabilities = !transA && probRows.contains(lhs);
  std::optional<double> a = rhsData ? get(lhs) : std::nullopt;
  std::optional<double> b = lhsData || probabilities ? get(rhs) : std::nullopt;
  ContractionBound best{INFINITY, ""};
  auto consider = [&](double bound, const char *how) {
    if (bound < best.absMax)
      best = {bound, how};
  };
  if (rhsData && a) {
    int64_t r = cast<ShapedType>(rhsData.getType()).getRank();
    // Columns run over the contraction dim: the second-to-last (a 1-D rhs
    // is one column), the last with transB.
    std::optional<Norms> n =
        transB ? norms(rhsData, r - 1, r)
               : norms(rhsData, std::max<int64_t>(r - 2, 0),
                       std::max<int64_t>(r - 1, 1));
    auto l2 = rowL2.find(lhs);
    if (n && !transA && l2 != rowL2.end())
      consider(l2->second * n->l2, " (row L2 norms)");
    if (n)
      consider(*a * n->l1, "");
  }
  if (lhsData && b) {
    // Rows of op(lhs) run over its last dim, the first with transA.
    int64_t r = cast<ShapedType>(lhsData.getType()).getRank();
    if (std::optional<Norms> n = transA ? norms(lhsData, r - 2, r - 1)
                                        : norms(lhsData, r - 1, r))
      consider(n->l1 * *b, "");
  }
  if (probabilities && b)
    consider(*b, " (probabilities)");
  if (!std::isfinite(best.absMax))
    return std::nullopt;
  return best;
}

/// What contraction() bounded, in words (built only for a plan's rule).
static std::string contractionWhy(Operation *op, Value lhs, Value rhs,
                                  const char *how) {
  return describe(op) + " of " + describe(lhs) + " x " + describe(rhs) + how;
}

/// Bounds a normalization's main output. The normalized x̂ has L2 norm at
/// most sqrt(n) over each block of n elements, so |x̂_i| <= sqrt(n), or
/// sqrt(n - 1) once the mean is removed (sum x̂ = 0); then scale and bias
/// add max|scale| and max|bias|. When every vector along the last axis lies
/// in one block (`rowsInBlock`), also records its L2 bound for a following
/// MatMul; `biasAlongRows`: the bias broadcasts numpy-style, so its own
/// last-axis vectors are the output's.
void BoundAnalysis::normalization(Operation *op, std::optional<int64_t> n,
                                  bool meanRemoved, Value scale, Value bias,
                                  bool rowsInBlock, bool biasAlongRows) {
  std::optional<double> g = get(scale);
  std::optional<double> beta = bias ? get(bias) : std::optional(0.0);
  if (!n || *n <= 0 || !g || !beta)
    return;
  double size = *n;
  Value out = op->getResult(0);
  set(out, std::sqrt(meanRemoved ? size - 1 : size) * *g + *beta, [&] {
    return describe(op) + " output (N = " + std::to_string(*n) + ")";
  });
  auto type = cast<ShapedType>(out.getType());
  if (!rowsInBlock || type.getRank() == 0 ||
      type.isDynamicDim(type.getRank() - 1))
    return;
  int64_t last = type.getShape().back();
  double biasRows = std::sqrt(double(last)) * *beta;
  if (ElementsAttr c = bias && biasAlongRows ? constantData(bias) : nullptr) {
    int64_t r = cast<ShapedType>(c.getType()).getRank();
    if (r > 0 && cast<ShapedType>(c.getType()).getShape().back() == last)
      if (std::optional<Norms> norms = maxNorms(c, r - 1, r))
        biasRows = std::min(biasRows, norms->l2);
  }
  rowL2[out] = std::sqrt(size) * *g + biasRows;
}

/// Attention outputs are convex combinations of the values (softmax rows
/// sum to at most 1): |out| <= max|V| over the new values (plus their
/// bias) and the cached ones; caches written with V are bounded alike.
void BoundAnalysis::attention(Operation *op, Value v, Value past, double bias,
                              ArrayRef<Value> outs) {
  std::optional<double> b = get(v);
  std::optional<double> p = past ? get(past) : std::optional(0.0);
  if (b && p)
    for (Value out : outs)
      set(out, std::max(*b + bias, *p), [&] { return from(op, v); });
}

void BoundAnalysis::visit(Operation *op) {
  auto same = [](double b) { return b; };
  auto normAxis = [](Value v, int64_t axis) {
    return axis < 0 ? axis + cast<ShapedType>(v.getType()).getRank() : axis;
  };
  llvm::TypeSwitch<Operation *>(op)
      // Sources (constants are read lazily, in get).
      .Case([&](SoftmaxOp o) {
        set(o.getOutput(), 1, [&] { return describe(op) + " output"; });
        int64_t last = o.getInput().getType().getRank() - 1;
        if (llvm::any_of(o.getAxes(), [&](int64_t a) {
              return normAxis(o.getInput(), a) == last;
            }))
          probRows.insert(o.getOutput());
      })
      .Case<SigmoidOp, HardSigmoidOp, TanhOp, ErfOp, SinOp, CosOp, SignOp>(
          [&](Operation *) {
            setAll(op, 1, [&] { return describe(op) + " output"; });
          })
      .Case<LayerNormOp, RMSNormOp>([&](auto o) {
        // LayerNormalization removes the mean; its bias is optional.
        int64_t axis = normAxis(o.getInput(), int64_t(o.getAxis()));
        Value bias = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
        normalization(op, staticCount(o.getInput(), axis), isa<LayerNormOp>(op),
                      o.getScale(), bias, true, true);
      })
      .Case([&](SkipLayerNormOp o) {
        int64_t last = o.getInput().getType().getRank() - 1;
        normalization(op, staticCount(o.getInput(), last), !o.getSimplified(),
                      o.getGamma(), o.getBeta(), true, true);
        SmallVector<Value> parts{o.getInput(), o.getSkip()};
        if (Value bias = o.getBias())
          parts.push_back(bias);
        if (std::optional<double> b = combine(parts, true))
          set(o.getInputSkipBiasSum(), *b, [&] { return from(op, parts); });
      })
      .Case([&](EmbedLayerNormOp o) {
        int64_t last = o.getOutput().getType().getRank() - 1;
        normalization(op, staticCount(o.getOutput(), last), true, o.getGamma(),
                      o.getBeta(), true, true);
        SmallVector<Value> parts{o.getWordEmbedding(),
                                 o.getPositionEmbedding()};
        if (Value segment = o.getSegmentEmbedding())
          parts.push_back(segment);
        if (std::optional<double> b = combine(parts, true))
          set(o.getEmbeddingSum(), *b, [&] { return from(op, parts); });
      })
      // Blocks of C / groups channels (one for InstanceNormalization) x
      // the spatial dims; scale and bias are per channel, not along rows.
      .Case<GroupNormOp, InstanceNormOp>([&](auto o) {
        auto type = o.getInput().getType();
        std::optional<int64_t> spatial = staticCount(o.getInput(), 2);
        int64_t groups = type.getRank() < 2 ? 0 : type.getDimSize(1);
        if (auto g = dyn_cast<GroupNormOp>(op))
          groups = int64_t(g.getNumGroups());
        if (!spatial || groups <= 0 || type.isDynamicDim(1))
          return;
        normalization(op, type.getDimSize(1) / groups * *spatial, true,
                      o.getScale(), o.getBias(), type.getRank() >= 3, false);
      })
      // Data movement, and elementwise maps with |f(x)| <= |x|.
      .Case<IdentityOp, CastOp, ReshapeOp, TransposeOp, SqueezeOp, UnsqueezeOp,
            FlattenOp, ExpandOp, TileOp, SliceOp, GatherOp, GatherElementsOp,
            GatherNDOp, SplitOp, TriluOp, TopKOp, ReluOp, AbsOp, NegOp, GeluOp,
            QuickGeluOp, MaxPoolOp, AveragePoolOp, GlobalAveragePoolOp,
            ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(
          [&](Operation *) { derive(op, op->getOperand(0), same); })
      .Case([&](LeakyReluOp o) {
        double alpha = std::fabs(o.getAlphaAttr().getValueAsDouble());
        derive(op, o.getInput(),
               [&](double b) { return b * std::max(1.0, alpha); });
      })
      .Case([&](PadOp o) {
        std::optional<double> fill = 0.0;
        if (o.getMode() == "constant" && o.getConstantValue())
          fill = get(o.getConstantValue());
        if (fill)
          derive(op, o.getInput(),
                 [&](double b) { return std::max(b, *fill); });
      })
      .Case([&](ClipOp o) {
        auto range = [&](Value v, double none) -> std::pair<double, double> {
          if (!v)
            return {none, none};
          if (ElementsAttr c = constantData(v)) {
            ConstantStats s = computeConstantStats(c);
            if (s.count)
              return {s.minValue, s.maxValue};
          }
          if (std::optional<double> b = get(v))
            return {-*b, *b};
          return {-INFINITY, INFINITY};
        };
        auto [loMin, loMax] = range(o.getMin(), -INFINITY);
        auto [hiMin, hiMax] = range(o.getMax(), INFINITY);
        double x = get(o.getInput()).value_or(INFINITY);
        // Clip is monotone in x, min and max: its extremes lie at the ends.
        double lower = std::min(std::max(-x, loMin), hiMin);
        double upper = std::min(std::max(x, loMax), hiMax);
        set(o.getOutput(), std::max(std::fabs(lower), std::fabs(upper)),
            [&] { return from(op, op->getOperands()); });
      })
      .Case<AddOp, SubOp, SumOp, BiasGeluOp, FastGeluOp>([&](Operation *) {
        if (std::optional<double> b = combine(op->getOperands(), true))
          setAll(op, *b, [&] { return from(op, op->getOperands()); });
      })
      .Case<MaxOp, MinOp, MeanOp, ConcatOp>([&](Operation *) {
        if (std::optional<double> b = combine(op->getOperands(), false))
          setAll(op, *b, [&] { return from(op, op->getOperands()); });
      })
      .Case([&](WhereOp o) {
        if (std::optional<double> b = combine({o.getX(), o.getY()}, false))
          set(o.getOutput(), *b, [&] {
            return from(op, {o.getX(), o.getY()});
          });
        // where(isnan(P), 0, P), as torch exports attention, keeps
        // probability rows: P is selected or zeroed, never broadcast.
        auto zeroes = [&](Value p, Value other) {
          std::optional<double> b = get(other);
          auto type = cast<ShapedType>(other.getType());
          auto isNaN = o.getCondition().getDefiningOp<IsNaNOp>();
          return probRows.contains(p) && b && *b == 0 && isNaN &&
                 isNaN.getInput() == p && type.hasStaticShape() &&
                 type.getNumElements() == 1;
        };
        if (zeroes(o.getX(), o.getY()) || zeroes(o.getY(), o.getX()))
          probRows.insert(o.getOutput());
      })
      .Case([&](MulOp o) {
        // Products of two large bounds are too loose to use.
        std::optional<double> a = get(o.getLhs()), b = get(o.getRhs());
        auto small = [](Value v, double bound) {
          return bound <= 1 || isa_and_present<ConstantOp, ConstantOfShapeOp>(
                                   v.getDefiningOp());
        };
        if (a && b && (small(o.getLhs(), *a) || small(o.getRhs(), *b)))
          set(o.getOutput(), *a * *b,
              [&] { return from(op, op->getOperands()); });
      })
      .Case([&](DivOp o) {
        ElementsAttr c = constantData(o.getRhs());
        if (!c)
          return;
        ConstantStats s = computeConstantStats(c);
        double minAbs = s.minValue > 0   ? s.minValue
                        : s.maxValue < 0 ? -s.maxValue
                                         : 0;
        if (s.count && minAbs > 0)
          derive(op, o.getLhs(), [&](double b) { return b / minAbs; });
      })
      .Case([&](ReduceSumOp o) {
        if (std::optional<int64_t> k = reducedCount(o))
          derive(op, o.getData(), [&](double b) { return *k * b; });
      })
      // Contractions.
      .Case([&](MatMulOp o) {
        if (std::optional<ContractionBound> b =
                contraction(op, o.getLhs(), o.getRhs(), false, false))
          set(o.getOutput(), b->absMax, [&] {
            return contractionWhy(op, o.getLhs(), o.getRhs(), b->how);
          });
      })
      .Case([&](GemmOp o) {
        std::optional<ContractionBound> b =
            contraction(op, o.getA(), o.getB(), o.getTransA(), o.getTransB());
        std::optional<double> c = o.getC() ? get(o.getC()) : std::optional(0.0);
        if (b && c)
          set(o.getOutput(),
              std::fabs(o.getAlphaAttr().getValueAsDouble()) * b->absMax +
                  std::fabs(o.getBetaAttr().getValueAsDouble()) * *c,
              [&] { return contractionWhy(op, o.getA(), o.getB(), b->how); });
      })
      .Case([&](ConvOp o) {
        // Each output channel sums its kernel [C/group, k...] over the input.
        std::optional<double> x = get(o.getInput());
        ElementsAttr w = constantData(o.getWeight());
        std::optional<double> bias =
            o.getBias() ? get(o.getBias()) : std::optional(0.0);
        if (!x || !w || !bias)
          return;
        if (std::optional<Norms> n =
                maxNorms(w, 1, cast<ShapedType>(w.getType()).getRank()))
          set(o.getOutput(), *x * n->l1 + *bias, [&] {
            return from(op, {o.getInput(), o.getWeight()});
          });
      })
      // Attention.
      .Case([&](AttentionOp o) {
        attention(op, o.getV(), o.getPastValue(), 0,
                  {o.getOutput(), o.getPresentValue()});
        attention(op, o.getK(), o.getPastKey(), 0, {o.getPresentKey()});
        if (o.getQkMatmulOutputMode() == 3)
          set(o.getQkMatmulOutput(), 1,
              [&] { return describe(op) + " softmax output"; });
      })
      .Case([&](MsAttentionOp o) {
        // One projection packs Q, K and V: bound them all alike.
        std::optional<ContractionBound> qkv =
            contraction(op, o.getInput(), o.getWeights(), false, false);
        std::optional<double> bias =
            o.getBias() ? get(o.getBias()) : std::optional(0.0);
        std::optional<double> past =
            o.getPast() ? get(o.getPast()) : std::optional(0.0);
        if (qkv && bias && past)
          setAll(op, std::max(qkv->absMax + *bias, *past), [&] {
            return contractionWhy(op, o.getInput(), o.getWeights(), qkv->how);
          });
      })
      .Case([&](MultiHeadAttentionOp o) {
        // Without value (key), V (K) is packed into key or query.
        Value key = o.getKey() ? o.getKey() : o.getQuery();
        Value value = o.getValue() ? o.getValue() : key;
        std::optional<double> bias =
            o.getBias() ? get(o.getBias()) : std::optional(0.0);
        if (!bias)
          return;
        attention(op, value, o.getPastValue(), *bias,
                  {o.getOutput(), o.getPresentValue()});
        attention(op, key, o.getPastKey(), *bias, {o.getPresentKey()});
      })
      .Case([&](GroupQueryAttentionOp o) {
        // Rotary embeddings change K, not V.
        Value value = o.getValue() ? o.getValue() : o.getQuery();
        attention(op, value, o.getPastValue(), 0,
                  {o.getOutput(), o.getPresentValue()});
      });

  // Row facts follow data movement that keeps last-axis vectors.
  if (op->getNumOperands() == 0 || !keepsRows(op))
    return;
  Value input = op->getOperand(0);
  auto l2 = rowL2.find(input);
  std::optional<double> inputL2;
  if (l2 != rowL2.end())
    inputL2 = l2->second;
  bool prob = probRows.contains(input);
  for (Value result : op->getResults()) {
    if (!isFloatTensor(result.getType()))
      continue;
    if (inputL2)
      rowL2[result] = *inputL2;
    if (prob)
      probRows.insert(result);
  }
}

llvm::DenseMap<Value, StaticBound> computeStaticBounds(Operation *root) {
  return BoundAnalysis().run(root);
}

} // namespace mp
