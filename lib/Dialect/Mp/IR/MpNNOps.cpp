//===- MpNNOps.cpp - contractions, convolutions, pooling, RNN -------------===//

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Dialect/Mp/IR/MpRecurrent.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mp;

static bool isDyn(int64_t d) { return ShapedType::isDynamic(d); }

/// a == b where both are static; dynamic dims are assumed to match.
static bool dimsMatch(int64_t a, int64_t b) {
  return isDyn(a) || isDyn(b) || a == b;
}

//===----------------------------------------------------------------------===//
// MatMul, Gemm, Einsum
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> a = llvm::to_vector(shapeOf(adaptor.getLhs()));
  SmallVector<int64_t> b = llvm::to_vector(shapeOf(adaptor.getRhs()));
  if (a.empty() || b.empty())
    return emitOptionalError(loc, "operands must have rank >= 1");
  bool vecA = a.size() == 1, vecB = b.size() == 1;
  if (vecA)
    a.insert(a.begin(), 1);
  if (vecB)
    b.push_back(1);
  int64_t k1 = a.back(), k2 = b[b.size() - 2];
  if (!dimsMatch(k1, k2))
    return emitOptionalError(loc, "contraction dims differ: ", k1, " vs ", k2,
                             " (", adaptor.getLhs().getType(), " x ",
                             adaptor.getRhs().getType(), ")");
  SmallVector<SmallVector<int64_t>> batch = {
      SmallVector<int64_t>(a.begin(), a.end() - 2),
      SmallVector<int64_t>(b.begin(), b.end() - 2)};
  FailureOr<SmallVector<int64_t>> out = broadcastShapes(batch);
  if (failed(out))
    return emitOptionalError(loc, "batch dims do not broadcast: ",
                             adaptor.getLhs().getType(), " x ",
                             adaptor.getRhs().getType());
  if (!vecA)
    out->push_back(a[a.size() - 2]);
  if (!vecB)
    out->push_back(b.back());
  types.push_back(
      RankedTensorType::get(*out, elementTypeOf(adaptor.getLhs())));
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> a = shapeOf(adaptor.getA()), b = shapeOf(adaptor.getB());
  if (a.size() != 2 || b.size() != 2)
    return emitOptionalError(loc, "A and B must be 2-D, got ",
                             adaptor.getA().getType(), " and ",
                             adaptor.getB().getType());
  int64_t m = adaptor.getTransA() ? a[1] : a[0];
  int64_t ka = adaptor.getTransA() ? a[0] : a[1];
  int64_t kb = adaptor.getTransB() ? b[1] : b[0];
  int64_t n = adaptor.getTransB() ? b[0] : b[1];
  if (!dimsMatch(ka, kb))
    return emitOptionalError(loc, "contraction dims differ: ", ka, " vs ", kb);
  types.push_back(RankedTensorType::get({m, n}, elementTypeOf(adaptor.getA())));
  return success();
}

LogicalResult GemmOp::verify() {
  Type elt = elementTypeOf(getA());
  if (elementTypeOf(getB()) != elt || (getC() && elementTypeOf(getC()) != elt))
    return emitOpError("A, B and C must have the same element type");
  if (Value c = getC()) {
    SmallVector<SmallVector<int64_t>> shapes = {
        llvm::to_vector(shapeOf(c)), llvm::to_vector(shapeOf(getOutput()))};
    FailureOr<SmallVector<int64_t>> b = broadcastShapes(shapes);
    if (shapeOf(c).size() > 2 || failed(b) ||
        failed(verifyCompatibleShape(*b, shapeOf(getOutput()))))
      return emitOpError("C of type ") << c.getType()
                                       << " does not broadcast to [M, N] = "
                                       << getOutput().getType();
  }
  return success();
}

namespace {
/// A parsed einsum equation: one term per input and the output term. Each
/// term is a string of labels where '.' stands for the ellipsis dims.
struct EinsumSpec {
  SmallVector<std::string> inputs;
  std::string output;
};
} // namespace

static FailureOr<EinsumSpec> parseEinsum(StringRef equation) {
  std::string eq;
  for (char c : equation)
    if (!llvm::isSpace(c))
      eq.push_back(c);
  // Rewrite "..." to a single '.'.
  std::string compact;
  for (size_t i = 0; i < eq.size(); ++i) {
    if (eq.compare(i, 3, "...") == 0) {
      compact.push_back('.');
      i += 2;
    } else if (eq[i] == '.') {
      return failure();
    } else {
      compact.push_back(eq[i]);
    }
  }
  EinsumSpec spec;
  StringRef rest = compact;
  auto [lhs, rhs] = rest.split("->");
  bool explicitOut = rest.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  for (StringRef t : terms) {
    for (char c : t)
      if (!llvm::isAlpha(c) && c != '.')
        return failure();
    spec.inputs.push_back(t.str());
  }
  if (explicitOut) {
    spec.output = rhs.str();
  } else {
    // Implicit output: ellipsis first, then labels seen once, sorted.
    std::map<char, int> counts;
    bool ellipsis = false;
    for (StringRef t : terms)
      for (char c : t)
        c == '.' ? (void)(ellipsis = true) : (void)counts[c]++;
    if (ellipsis)
      spec.output.push_back('.');
    for (auto [c, n] : counts)
      if (n == 1)
        spec.output.push_back(c);
  }
  return spec;
}

LogicalResult EinsumOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  FailureOr<EinsumSpec> spec = parseEinsum(adaptor.getEquation());
  if (failed(spec))
    return emitOptionalError(loc, "cannot parse einsum equation '",
                             adaptor.getEquation(), "'");
  if (spec->inputs.size() != adaptor.getInputs().size())
    return emitOptionalError(loc, "equation '", adaptor.getEquation(), "' has ",
                             spec->inputs.size(), " input terms for ",
                             adaptor.getInputs().size(), " operands");
  std::map<char, int64_t> sizes;
  SmallVector<SmallVector<int64_t>> ellipsisShapes;
  for (auto [term, value] : llvm::zip(spec->inputs, adaptor.getInputs())) {
    ArrayRef<int64_t> shape = shapeOf(value);
    int64_t labels = llvm::count_if(term, [](char c) { return c != '.'; });
    bool hasEllipsis = term.find('.') != std::string::npos;
    int64_t ellipsisRank = shape.size() - labels;
    if (ellipsisRank < 0 || (!hasEllipsis && ellipsisRank != 0))
      return emitOptionalError(loc, "term '", term, "' does not match ",
                               value.getType());
    size_t dim = 0;
    for (char c : term) {
      if (c == '.') {
        ellipsisShapes.emplace_back(shape.begin() + dim,
                                    shape.begin() + dim + ellipsisRank);
        dim += ellipsisRank;
        continue;
      }
      int64_t d = shape[dim++];
      auto [it, inserted] = sizes.try_emplace(c, d);
      if (!inserted) {
        if (!dimsMatch(it->second, d) && it->second != 1 && d != 1)
          return emitOptionalError(loc, "label '", std::string(1, c),
                                   "' has sizes ", it->second, " and ", d);
        if (isDyn(it->second) || it->second == 1)
          it->second = d;
      }
    }
  }
  FailureOr<SmallVector<int64_t>> ellipsis = broadcastShapes(ellipsisShapes);
  if (failed(ellipsis))
    return emitOptionalError(loc, "ellipsis dims do not broadcast");
  SmallVector<int64_t> out;
  for (char c : spec->output) {
    if (c == '.') {
      out.append(*ellipsis);
      continue;
    }
    auto it = sizes.find(c);
    if (it == sizes.end())
      return emitOptionalError(loc, "output label '", std::string(1, c),
                               "' does not appear in any input");
    out.push_back(it->second);
  }
  types.push_back(
      RankedTensorType::get(out, elementTypeOf(adaptor.getInputs().front())));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Checks the per-spatial-axis attribute sizes of a conv/pool op.
static LogicalResult verifyWindowAttrs(Operation *op, int64_t spatial,
                                       StringRef autoPad,
                                       ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> dilations,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> pads) {
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return op->emitOpError("auto_pad must be NOTSET, VALID, SAME_UPPER or "
                           "SAME_LOWER, got ")
           << autoPad;
  if ((int64_t)kernel.size() != spatial || (int64_t)dilations.size() != spatial ||
      (int64_t)strides.size() != spatial || (int64_t)pads.size() != 2 * spatial)
    return op->emitOpError("kernel_shape, dilations and strides need ")
           << spatial << " entries and pads " << 2 * spatial
           << " for a rank-" << spatial + 2 << " input";
  for (int64_t v : llvm::concat<const int64_t>(kernel, dilations, strides))
    if (v <= 0)
      return op->emitOpError("kernel_shape, dilations and strides must be "
                             "positive");
  return success();
}

/// Kernel sizes, dilations and strides must be positive before any output
/// size is computed (a zero stride would divide by zero).
static LogicalResult checkPositiveWindow(std::optional<Location> loc,
                                         ArrayRef<int64_t> kernel,
                                         ArrayRef<int64_t> dilations,
                                         ArrayRef<int64_t> strides) {
  for (int64_t v : llvm::concat<const int64_t>(kernel, dilations, strides))
    if (v <= 0)
      return emitOptionalError(loc, "kernel_shape, dilations and strides "
                                    "must be positive");
  return success();
}

/// Output size of a sliding window along one axis.
static int64_t windowOutput(int64_t in, int64_t k, int64_t d, int64_t s,
                            int64_t padBegin, int64_t padEnd,
                            StringRef autoPad, bool ceilMode) {
  if (isDyn(in))
    return ShapedType::kDynamic;
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    return ceilDiv(in, s);
  int64_t effective = (k - 1) * d + 1;
  int64_t padded = in + (autoPad == "VALID" ? 0 : padBegin + padEnd);
  if (padded < effective)
    return 0;
  int64_t out = ceilMode ? ceilDiv(padded - effective, s) + 1
                         : (padded - effective) / s + 1;
  // The last window must start inside the input or the begin padding.
  if (ceilMode && (out - 1) * s >= in + padBegin)
    --out;
  return out;
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> w = shapeOf(adaptor.getWeight());
  if (x.size() < 3 || w.size() != x.size())
    return emitOptionalError(loc, "input must be [N, C, D...] and weight "
                                  "[M, C/group, k...] of the same rank");
  int64_t spatial = x.size() - 2;
  if ((int64_t)adaptor.getKernelShape().size() != spatial ||
      (int64_t)adaptor.getPads().size() != 2 * spatial ||
      (int64_t)adaptor.getStrides().size() != spatial ||
      (int64_t)adaptor.getDilations().size() != spatial)
    return emitOptionalError(loc, "window attributes do not match rank");
  if (failed(checkPositiveWindow(loc, adaptor.getKernelShape(),
                                 adaptor.getDilations(), adaptor.getStrides())))
    return failure();
  SmallVector<int64_t> out = {x[0], w[0]};
  for (int64_t i = 0; i < spatial; ++i)
    out.push_back(windowOutput(x[2 + i], adaptor.getKernelShape()[i],
                               adaptor.getDilations()[i],
                               adaptor.getStrides()[i], adaptor.getPads()[i],
                               adaptor.getPads()[spatial + i],
                               adaptor.getAutoPad(), false));
  types.push_back(RankedTensorType::get(out, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult ConvOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput()), w = shapeOf(getWeight());
  if (failed(verifyWindowAttrs(*this, x.size() - 2, getAutoPad(),
                               getKernelShape(), getDilations(), getStrides(),
                               getPads())))
    return failure();
  int64_t group = getGroup();
  if (group <= 0)
    return emitOpError("group must be positive, got ") << group;
  if (!isDyn(x[1]) && !isDyn(w[1]) && x[1] != w[1] * group)
    return emitOpError("input channels (")
           << x[1] << ") must equal weight channels (" << w[1]
           << ") times group (" << group << ")";
  if (!isDyn(w[0]) && w[0] % group != 0)
    return emitOpError("output channels (") << w[0]
                                            << ") must be divisible by group";
  for (size_t i = 2; i < w.size(); ++i)
    if (!dimsMatch(w[i], getKernelShape()[i - 2]))
      return emitOpError("kernel_shape does not match the weight shape ")
             << getWeight().getType();
  if (Value b = getBias())
    if (shapeOf(b).size() != 1 || !dimsMatch(shapeOf(b)[0], w[0]))
      return emitOpError("bias must be 1-D of size M = ") << w[0];
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> w = shapeOf(adaptor.getWeight());
  if (x.size() < 3 || w.size() != x.size())
    return emitOptionalError(loc, "input must be [N, C, D...] and weight "
                                  "[C, M/group, k...] of the same rank");
  int64_t spatial = x.size() - 2;
  if ((int64_t)adaptor.getKernelShape().size() != spatial ||
      (int64_t)adaptor.getPads().size() != 2 * spatial ||
      (int64_t)adaptor.getStrides().size() != spatial ||
      (int64_t)adaptor.getDilations().size() != spatial ||
      (int64_t)adaptor.getOutputPadding().size() != spatial)
    return emitOptionalError(loc, "window attributes do not match rank");
  if (failed(checkPositiveWindow(loc, adaptor.getKernelShape(),
                                 adaptor.getDilations(), adaptor.getStrides())))
    return failure();
  int64_t m = isDyn(w[1]) ? w[1] : w[1] * adaptor.getGroup();
  SmallVector<int64_t> out = {x[0], m};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = x[2 + i], s = adaptor.getStrides()[i];
    if (isDyn(in)) {
      out.push_back(ShapedType::kDynamic);
    } else if (adaptor.getAutoPad() == "SAME_UPPER" ||
               adaptor.getAutoPad() == "SAME_LOWER") {
      out.push_back(in * s);
    } else {
      int64_t k = adaptor.getKernelShape()[i], d = adaptor.getDilations()[i];
      int64_t pads = adaptor.getAutoPad() == "VALID"
                         ? 0
                         : adaptor.getPads()[i] + adaptor.getPads()[spatial + i];
      out.push_back(s * (in - 1) + adaptor.getOutputPadding()[i] +
                    (k - 1) * d + 1 - pads);
    }
  }
  types.push_back(RankedTensorType::get(out, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult ConvTransposeOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput()), w = shapeOf(getWeight());
  if (failed(verifyWindowAttrs(*this, x.size() - 2, getAutoPad(),
                               getKernelShape(), getDilations(), getStrides(),
                               getPads())))
    return failure();
  if ((int64_t)getGroup() <= 0)
    return emitOpError("group must be positive, got ") << (int64_t)getGroup();
  if (!dimsMatch(x[1], w[0]))
    return emitOpError("input channels (")
           << x[1] << ") must equal the weight's first dim (" << w[0] << ")";
  for (auto [p, s, d] : llvm::zip(getOutputPadding(), getStrides(), getDilations()))
    if (p < 0)
      return emitOpError("output_padding must be >= 0");
  if (Value b = getBias())
    if (shapeOf(b).size() != 1 || !dimsMatch(shapeOf(b)[0], shapeOf(getOutput())[1]))
      return emitOpError("bias must be 1-D with one entry per output channel");
  return success();
}

template <typename AdaptorT>
static LogicalResult inferPool(std::optional<Location> loc, AdaptorT adaptor,
                               SmallVectorImpl<int64_t> &out) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getInput());
  if (x.size() < 3)
    return emitOptionalError(loc, "input must be [N, C, D...]");
  int64_t spatial = x.size() - 2;
  if ((int64_t)adaptor.getKernelShape().size() != spatial ||
      (int64_t)adaptor.getPads().size() != 2 * spatial ||
      (int64_t)adaptor.getStrides().size() != spatial ||
      (int64_t)adaptor.getDilations().size() != spatial)
    return emitOptionalError(loc, "window attributes do not match rank");
  if (failed(checkPositiveWindow(loc, adaptor.getKernelShape(),
                                 adaptor.getDilations(), adaptor.getStrides())))
    return failure();
  out.assign({x[0], x[1]});
  for (int64_t i = 0; i < spatial; ++i)
    out.push_back(windowOutput(
        x[2 + i], adaptor.getKernelShape()[i], adaptor.getDilations()[i],
        adaptor.getStrides()[i], adaptor.getPads()[i],
        adaptor.getPads()[spatial + i], adaptor.getAutoPad(),
        adaptor.getCeilMode()));
  return success();
}

LogicalResult AveragePoolOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> out;
  if (failed(inferPool(loc, adaptor, out)))
    return failure();
  types.push_back(RankedTensorType::get(out, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> out;
  if (failed(inferPool(loc, adaptor, out)))
    return failure();
  types.push_back(RankedTensorType::get(out, elementTypeOf(adaptor.getInput())));
  types.push_back(RankedTensorType::get(out, IntegerType::get(context, 64)));
  return success();
}

template <typename OpTy> static LogicalResult verifyPool(OpTy op) {
  return verifyWindowAttrs(op, shapeOf(op.getInput()).size() - 2,
                           op.getAutoPad(), op.getKernelShape(),
                           op.getDilations(), op.getStrides(), op.getPads());
}

LogicalResult AveragePoolOp::verify() { return verifyPool(*this); }
LogicalResult MaxPoolOp::verify() { return verifyPool(*this); }

LogicalResult GlobalAveragePoolOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getInput());
  if (x.size() < 2)
    return emitOptionalError(loc, "input must be [N, C, D...]");
  SmallVector<int64_t> out(x.begin(), x.begin() + 2);
  out.append(x.size() - 2, 1);
  types.push_back(RankedTensorType::get(out, elementTypeOf(adaptor.getInput())));
  return success();
}

//===----------------------------------------------------------------------===//
// LSTM, GRU, RNN
//===----------------------------------------------------------------------===//

static constexpr RecurrentActivation kRecurrentActivations[] = {
    {"sigmoid", false, false, 0, 0},
    {"tanh", false, false, 0, 0},
    {"relu", false, false, 0, 0},
    {"hardsigmoid", true, true, 0.2, 0.5},
    {"leakyrelu", true, false, 0.01, 0},
    {"thresholdedrelu", true, false, 1.0, 0},
    {"scaledtanh", true, true, 1.0, 1.0},
    {"affine", true, true, 1.0, 0},
    {"elu", true, false, 1.0, 0},
    {"softsign", false, false, 0, 0},
    {"softplus", false, false, 0, 0},
};

const RecurrentActivation *mp::lookupRecurrentActivation(StringRef name) {
  for (const RecurrentActivation &a : kRecurrentActivations)
    if (name.equals_insensitive(a.name))
      return &a;
  return nullptr;
}

/// Y [T, D, B, H] and Y_h (and Y_c, `numStates` 2) [D, B, H], or
/// batch-first [B, T, D, H] and [B, D, H] for layout 1.
template <typename AdaptorT>
static LogicalResult inferRecurrent(std::optional<Location> loc,
                                    AdaptorT adaptor, int64_t numStates,
                                    SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> x = shapeOf(adaptor.getX());
  if (x.size() != 3)
    return emitOptionalError(loc, "X must be 3-D");
  int64_t dirs = adaptor.getDirection() == "bidirectional" ? 2 : 1;
  int64_t hidden = adaptor.getHiddenSize();
  bool batchFirst = adaptor.getLayout() == 1;
  int64_t seq = batchFirst ? x[1] : x[0], batch = batchFirst ? x[0] : x[1];
  Type elt = elementTypeOf(adaptor.getX());
  SmallVector<int64_t> y = batchFirst
                               ? SmallVector<int64_t>{batch, seq, dirs, hidden}
                               : SmallVector<int64_t>{seq, dirs, batch, hidden};
  SmallVector<int64_t> h = batchFirst ? SmallVector<int64_t>{batch, dirs, hidden}
                                      : SmallVector<int64_t>{dirs, batch, hidden};
  types.push_back(RankedTensorType::get(y, elt));
  for (int64_t i = 0; i < numStates; ++i)
    types.push_back(RankedTensorType::get(h, elt));
  return success();
}

/// What the recurrent ops check alike: direction, layout, W, R and B
/// against `gates` gates of hidden_size, the initial states and
/// sequence_lens against X's batch, and `actsPerDirection` known
/// activations per direction (or none, for the defaults).
template <typename OpTy>
static LogicalResult verifyRecurrent(OpTy op, int64_t gates,
                                     int64_t actsPerDirection,
                                     ValueRange initialStates) {
  StringRef dir = op.getDirection();
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return op.emitOpError(
        "direction must be forward, reverse or bidirectional");
  if (op.getLayout() != 0 && op.getLayout() != 1)
    return op.emitOpError("layout must be 0 or 1");
  int64_t dirs = dir == "bidirectional" ? 2 : 1, hidden = op.getHiddenSize();
  if (hidden <= 0)
    return op.emitOpError("hidden_size must be positive, got ") << hidden;
  std::string rows =
      gates == 1 ? "hidden_size" : std::to_string(gates) + "*hidden_size";
  auto sizes = [&](InFlightDiagnostic &&d) -> LogicalResult {
    return d << " (hidden_size " << hidden << ", " << dirs << " direction"
             << (dirs == 2 ? "s)" : ")");
  };
  ArrayRef<int64_t> w = shapeOf(op.getW()), r = shapeOf(op.getR());
  if (w.size() != 3 || !dimsMatch(w[0], dirs) ||
      !dimsMatch(w[1], gates * hidden))
    return sizes(op.emitOpError("W must be [num_directions, ")
                 << rows << ", input_size], got " << op.getW().getType());
  if (r.size() != 3 || !dimsMatch(r[0], dirs) ||
      !dimsMatch(r[1], gates * hidden) || !dimsMatch(r[2], hidden))
    return sizes(op.emitOpError("R must be [num_directions, ")
                 << rows << ", hidden_size], got " << op.getR().getType());
  if (Value b = op.getB()) {
    ArrayRef<int64_t> bs = shapeOf(b);
    if (bs.size() != 2 || !dimsMatch(bs[0], dirs) ||
        !dimsMatch(bs[1], 2 * gates * hidden))
      return sizes(op.emitOpError("B must be [num_directions, ")
                   << 2 * gates << "*hidden_size], got " << b.getType());
  }
  ArrayRef<int64_t> x = shapeOf(op.getX());
  bool batchFirst = op.getLayout() == 1;
  int64_t batch = x.size() == 3 ? x[batchFirst ? 0 : 1] : ShapedType::kDynamic;
  if (x.size() == 3 && !dimsMatch(w[2], x[2]))
    return op.emitOpError("W's input_size ")
           << w[2] << " differs from X's " << x[2];
  for (Value s : initialStates) {
    if (!s)
      continue;
    ArrayRef<int64_t> ss = shapeOf(s);
    int64_t dirDim = batchFirst ? 1 : 0;
    if (ss.size() != 3 || !dimsMatch(ss[dirDim], dirs) ||
        !dimsMatch(ss[1 - dirDim], batch) || !dimsMatch(ss[2], hidden))
      return sizes(op.emitOpError("initial states must be ")
                   << (batchFirst ? "[batch_size, num_directions, hidden_size]"
                                  : "[num_directions, batch_size, hidden_size]")
                   << ", got " << s.getType());
  }
  if (Value lens = op.getSequenceLens()) {
    ArrayRef<int64_t> ls = shapeOf(lens);
    if (ls.size() != 1 || !dimsMatch(ls[0], batch))
      return op.emitOpError("sequence_lens must be [batch_size], got ")
             << lens.getType();
  }
  ArrayAttr acts = op.getActivations();
  if (!acts.empty() && (int64_t)acts.size() != actsPerDirection * dirs)
    return op.emitOpError("expects ")
           << actsPerDirection * dirs << " activations (" << actsPerDirection
           << " per direction), got " << acts.size();
  for (Attribute a : acts)
    if (!lookupRecurrentActivation(cast<StringAttr>(a).getValue()))
      return op.emitOpError("unsupported activation '")
             << cast<StringAttr>(a).getValue() << "'";
  return success();
}

LogicalResult LSTMOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  return inferRecurrent(loc, adaptor, 2, types);
}

LogicalResult LSTMOp::verify() {
  if (failed(verifyRecurrent(*this, 4, 3, {getInitialH(), getInitialC()})))
    return failure();
  if (Value p = getP()) {
    ArrayRef<int64_t> ps = shapeOf(p);
    int64_t dirs = getDirection() == "bidirectional" ? 2 : 1;
    if (ps.size() != 2 || !dimsMatch(ps[0], dirs) ||
        !dimsMatch(ps[1], 3 * getHiddenSize()))
      return emitOpError("P must be [num_directions, 3*hidden_size], got ")
             << p.getType();
  }
  return success();
}

LogicalResult GRUOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferRecurrent(loc, adaptor, 1, types);
}

LogicalResult GRUOp::verify() {
  return verifyRecurrent(*this, 3, 2, {getInitialH()});
}

LogicalResult RNNOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferRecurrent(loc, adaptor, 1, types);
}

LogicalResult RNNOp::verify() {
  return verifyRecurrent(*this, 1, 1, {getInitialH()});
}
