//===- MpTrainingOps.cpp - loss scaling and optimizer updates -------------===//

#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallString.h"

using namespace mlir;
using namespace mp;

/// `v` as a user writes it ("0.5", "8", "1e-08").
static std::string fmt(float v) {
  SmallString<16> text;
  APFloat(v).toString(text);
  return text.str().str();
}

//===----------------------------------------------------------------------===//
// UnscaleAndCheckOp
//===----------------------------------------------------------------------===//

void UnscaleAndCheckOp::build(OpBuilder &b, OperationState &state, Value scale,
                              ValueRange grads) {
  SmallVector<Type> types;
  for (Value g : grads)
    types.push_back(RankedTensorType::get(shapeOf(g), b.getF32Type()));
  build(b, state, types, RankedTensorType::get({}, b.getI1Type()), scale,
        grads);
}

LogicalResult UnscaleAndCheckOp::verify() {
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  if (getUnscaled().size() != getGrads().size())
    return emitOpError() << "has " << getGrads().size()
                         << " gradient(s) but " << getUnscaled().size()
                         << " unscaled result(s)";
  for (auto [i, g, r] : llvm::enumerate(getGrads(), getUnscaled()))
    if (shapeOf(g) != shapeOf(r))
      return emitOpError() << "unscaled result #" << i << " " << r.getType()
                           << " must have the shape of gradient #" << i << " "
                           << g.getType();
  return success();
}

namespace {
/// `unscale(cast<f32>(g16))` reads `g16` directly: the op widens anyway, and
/// the fp32 copy of the gradient is never stored.
struct AbsorbWideningCasts : OpRewritePattern<UnscaleAndCheckOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UnscaleAndCheckOp op,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    SmallVector<Value> grads;
    for (Value g : op.getGrads()) {
      auto widen = g.getDefiningOp<CastOp>();
      auto from = widen ? dyn_cast<FloatType>(
                              getElementTypeOrSelf(widen.getInput().getType()))
                        : FloatType();
      if (from && from.getWidth() <
                      cast<FloatType>(getElementTypeOrSelf(g.getType()))
                          .getWidth()) {
        grads.push_back(widen.getInput());
        changed = true;
        continue;
      }
      grads.push_back(g);
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getGradsMutable().assign(grads); });
    return success();
  }
};
} // namespace

void UnscaleAndCheckOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                    MLIRContext *context) {
  results.add<AbsorbWideningCasts>(context);
}

//===----------------------------------------------------------------------===//
// UpdateLossScaleOp
//===----------------------------------------------------------------------===//

LogicalResult UpdateLossScaleOp::verify() {
  float growth = getGrowthFactor().convertToFloat();
  float backoff = getBackoffFactor().convertToFloat();
  float lo = getMinScale().convertToFloat(), hi = getMaxScale().convertToFloat();
  if (!(growth >= 1.0f))
    return emitOpError() << "growth_factor must be >= 1, got " << fmt(growth);
  if (!(backoff > 0.0f && backoff < 1.0f))
    return emitOpError() << "backoff_factor must be in (0, 1), got "
                         << fmt(backoff);
  if (getGrowthInterval() < 1)
    return emitOpError() << "growth_interval must be >= 1, got "
                         << getGrowthInterval();
  if (!(lo > 0.0f && lo <= hi))
    return emitOpError() << "needs 0 < min_scale <= max_scale, got ["
                         << fmt(lo) << ", " << fmt(hi) << "]";
  return success();
}

/// The scalar of a splat constant operand, if it is one.
template <typename T>
static std::optional<T> scalarOf(Attribute attr) {
  auto elements = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!elements || !elements.isSplat())
    return std::nullopt;
  return elements.getSplatValue<T>();
}

LogicalResult UpdateLossScaleOp::fold(FoldAdaptor adaptor,
                                      SmallVectorImpl<OpFoldResult> &results) {
  std::optional<APFloat> scale = scalarOf<APFloat>(adaptor.getScale());
  std::optional<APInt> good = scalarOf<APInt>(adaptor.getGoodSteps());
  std::optional<bool> inf = scalarOf<bool>(adaptor.getFoundInf());
  if (!scale || !good || !inf)
    return failure();
  float s = scale->convertToFloat();
  int64_t n = good->getSExtValue();
  if (*inf) {
    s = std::max(s * getBackoffFactor().convertToFloat(),
                 getMinScale().convertToFloat());
    n = 0;
  } else if (++n >= (int64_t)getGrowthInterval()) {
    s = std::min(s * getGrowthFactor().convertToFloat(),
                 getMaxScale().convertToFloat());
    n = 0;
  }
  results.push_back(DenseElementsAttr::get(
      cast<ShapedType>(getNewScale().getType()), APFloat(s)));
  results.push_back(DenseElementsAttr::get(
      cast<ShapedType>(getNewGoodSteps().getType()), APInt(64, n)));
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

static LogicalResult verifyHyperparameter(Operation *op, StringRef name,
                                          APFloat value, float lo, float hi,
                                          bool hiOpen) {
  float v = value.convertToFloat();
  if (!(v >= lo && (hiOpen ? v < hi : v <= hi)))
    return op->emitOpError() << name << " must be in [" << fmt(lo) << ", "
                             << fmt(hi) << (hiOpen ? ")" : "]") << ", got "
                             << fmt(v);
  return success();
}

LogicalResult SgdUpdateOp::verify() {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (failed(verifyHyperparameter(*this, "lr", getLr(), 0, inf, true)) ||
      failed(verifyHyperparameter(*this, "momentum", getMomentum(), 0, 1,
                                  false)) ||
      failed(verifyHyperparameter(*this, "weight_decay", getWeightDecay(), 0,
                                  inf, true)))
    return failure();
  return success();
}

LogicalResult AdamWUpdateOp::verify() {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (failed(verifyHyperparameter(*this, "lr", getLr(), 0, inf, true)) ||
      failed(verifyHyperparameter(*this, "beta1", getBeta1(), 0, 1, true)) ||
      failed(verifyHyperparameter(*this, "beta2", getBeta2(), 0, 1, true)) ||
      failed(verifyHyperparameter(*this, "weight_decay", getWeightDecay(), 0,
                                  inf, true)))
    return failure();
  if (!(getEps().convertToFloat() > 0))
    return emitOpError() << "eps must be > 0, got "
                         << fmt(getEps().convertToFloat());
  return success();
}
