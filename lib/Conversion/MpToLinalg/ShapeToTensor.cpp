//===- ShapeToTensor.cpp - constants and data movement to tensor/linalg ---===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

bool isStatic(Type t) { return cast<RankedTensorType>(t).hasStaticShape(); }

struct ConstantLowering : public OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

/// The product of dims [from, to) of `v`, as an `index`.
Value dimProduct(OpBuilder &b, Location loc, Value v, int64_t from,
                 int64_t to) {
  Value p = indexConst(b, loc, 1);
  for (int64_t d = from; d < to; ++d)
    p = arith::MulIOp::create(b, loc, p, dimValue(b, loc, v, d));
  return p;
}

/// a / b, or 0 when b is 0 (an empty tensor reshaped with a -1 entry).
Value safeDiv(OpBuilder &b, Location loc, Value num, Value den) {
  Type t = num.getType();
  Value zero = t.isIndex() ? indexConst(b, loc, 0)
                           : Value(arith::ConstantIntOp::create(b, loc, t, 0));
  Value one = t.isIndex() ? indexConst(b, loc, 1)
                          : Value(arith::ConstantIntOp::create(b, loc, t, 1));
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, den, zero);
  Value q = arith::DivUIOp::create(
      b, loc, num, arith::SelectOp::create(b, loc, isZero, one, den));
  return arith::SelectOp::create(b, loc, isZero, zero, q);
}

/// The run-time sizes of the dynamic dims of Reshape's result: entry i of
/// the shape tensor, where 0 copies input dim i (unless allowzero) and -1
/// takes the elements left over. Folds to constants and input dims when
/// the shape tensor is a constant.
SmallVector<Value> reshapeSizes(OpBuilder &b, Location loc, ReshapeOp op) {
  auto type = op.getType();
  Value in = op.getInput();
  int64_t inRank = typeOf(in).getRank();
  if (std::optional<SmallVector<int64_t>> shape = getConstantInts(op.getShape())) {
    // Known entries: only the copied and the inferred dims are run-time.
    int64_t known = 1;
    for (auto [i, e] : llvm::enumerate(*shape))
      if (e > 0 || (e == 0 && op.getAllowzero()))
        known *= e;
    SmallVector<Value> sizes;
    for (auto [i, e] : llvm::enumerate(*shape)) {
      if (!type.isDynamicDim(i))
        continue;
      if (e == 0 && (int64_t)i < inRank)
        sizes.push_back(dimValue(b, loc, in, i));
      else if (e == -1) {
        Value others = indexConst(b, loc, known);
        for (auto [j, f] : llvm::enumerate(*shape))
          if (f == 0 && !op.getAllowzero() && (int64_t)j < inRank)
            others = arith::MulIOp::create(b, loc, others,
                                           dimValue(b, loc, in, j));
        Value total = dimProduct(b, loc, in, 0, inRank);
        Value size = safeDiv(b, loc, total, others);
        checkAtRunTime(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                  arith::MulIOp::create(b, loc, size, others),
                                  total),
            runTimeCheckMessage(op, "the input's number of elements is not "
                                    "a multiple of the other dims of the "
                                    "shape, so dim " +
                                        std::to_string(i) +
                                        " (-1) cannot be inferred"));
        sizes.push_back(size);
      } else {
        sizes.push_back(indexConst(b, loc, e));
      }
    }
    // Without a -1 nothing above compared the element counts: a run-time
    // input that does not fill the shape exactly would be read short or
    // out of bounds.
    if (!llvm::is_contained(*shape, -1) && !typeOf(in).hasStaticShape()) {
      Value count = indexConst(b, loc, 1);
      size_t next = 0;
      for (int64_t i = 0; i < type.getRank(); ++i)
        count = arith::MulIOp::create(
            b, loc, count,
            type.isDynamicDim(i) ? sizes[next++]
                                 : indexConst(b, loc, type.getDimSize(i)));
      checkAtRunTime(b, loc,
                     arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           count,
                                           dimProduct(b, loc, in, 0, inRank)),
                     runTimeCheckMessage(op, "the shape does not hold the "
                                             "input's number of elements"));
    }
    return sizes;
  }
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value minusOne = arith::ConstantIntOp::create(b, loc, -1, 64);
  SmallVector<Value> entries;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    Value e = tensor::ExtractOp::create(b, loc, op.getShape(),
                                        ValueRange{indexConst(b, loc, i)});
    if (!op.getAllowzero() && i < inRank) {
      Value copy = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                              dimValue(b, loc, in, i));
      Value isZero =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, zero);
      e = arith::SelectOp::create(b, loc, isZero, copy, e);
    }
    entries.push_back(e);
  }
  // -1: the input's elements over the product of the other entries.
  Value known = arith::ConstantIntOp::create(b, loc, 1, 64);
  for (Value e : entries) {
    Value isInferred =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, minusOne);
    known = arith::MulIOp::create(
        b, loc, known,
        arith::SelectOp::create(
            b, loc, isInferred, arith::ConstantIntOp::create(b, loc, 1, 64),
            e));
  }
  Value total = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), dimProduct(b, loc, in, 0, inRank));
  Value rest = safeDiv(b, loc, total, known);
  // A shape that does not hold the input's elements (a negative entry other
  // than -1, or a product that differs) would read out of bounds.
  SmallVector<Value> sizes;
  Value count = arith::ConstantIntOp::create(b, loc, 1, 64);
  for (auto [i, e] : llvm::enumerate(entries)) {
    Value isInferred =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, minusOne);
    Value size = arith::SelectOp::create(b, loc, isInferred, rest, e);
    count = arith::MulIOp::create(b, loc, count, size);
    if (type.isDynamicDim(i))
      sizes.push_back(checkedSize(
          b, loc, op, size, "entry " + std::to_string(i) + " of the shape"));
  }
  checkAtRunTime(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, count, total),
      runTimeCheckMessage(op, "the shape computed at run time does not hold "
                              "the input's number of elements"));
  return sizes;
}

/// The run-time sizes of the dynamic dims of a Flatten, Squeeze or
/// Unsqueeze result, from the input's dims.
SmallVector<Value> reshapeLikeSizes(OpBuilder &b, Location loc,
                                    Operation *op) {
  Value in = op->getOperand(0);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t inRank = typeOf(in).getRank(), rank = type.getRank();
  SmallVector<Value> all;
  if (auto flatten = dyn_cast<FlattenOp>(op)) {
    int64_t axis = flatten.getAxis() < 0 ? flatten.getAxis() + inRank
                                         : flatten.getAxis();
    all = {dimProduct(b, loc, in, 0, axis),
           dimProduct(b, loc, in, axis, inRank)};
  } else {
    // Squeeze drops its axes (of the input), Unsqueeze inserts unit dims
    // at its axes (of the output); the other dims correspond in order.
    bool squeeze = isa<SqueezeOp>(op);
    auto axesAttr = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    int64_t axesRank = squeeze ? inRank : rank;
    SmallVector<int64_t> axes;
    for (int64_t a : axesAttr.asArrayRef())
      axes.push_back(a < 0 ? a + axesRank : a);
    int64_t next = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (!squeeze && llvm::is_contained(axes, d)) {
        all.push_back(indexConst(b, loc, 1));
        continue;
      }
      while (squeeze && llvm::is_contained(axes, next))
        ++next;
      all.push_back(dimValue(b, loc, in, next++));
    }
  }
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(all[d]);
  return sizes;
}

/// Reshape, Flatten, Squeeze, Unsqueeze: the data keeps its order.
struct ReshapeLikeLowering : public RewritePattern {
  ReshapeLikeLowering(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op))
      return failure();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Location loc = op->getLoc();
    SmallVector<Value> sizes;
    if (!type.hasStaticShape() || !isStatic(op->getOperand(0).getType())) {
      if (auto squeeze = dyn_cast<SqueezeOp>(op);
          squeeze && squeeze.getAxes().empty())
        return rewriter.notifyMatchFailure(op, "dynamic squeeze of all 1s");
      sizes = isa<ReshapeOp>(op)
                  ? reshapeSizes(rewriter, loc, cast<ReshapeOp>(op))
                  : reshapeLikeSizes(rewriter, loc, op);
      // A Reshape that merges dims of an input with two or more dynamic
      // ones: the types do not say which merge (?x?x64 to ?x? may be
      // [d0, d1 * 64] or [d0 * d1, 64]), only the sizes computed at run time
      // do, and a collapse_shape would ignore them. (Flatten and Squeeze say
      // it by their axes; expand_shape takes the sizes.)
      auto in = typeOf(op->getOperand(0));
      if (isa<ReshapeOp>(op) && in.getNumDynamicDims() > 1 &&
          type.getRank() <= in.getRank()) {
        rewriter.replaceOp(
            op, reshapeToSizes(rewriter, loc, op->getOperand(0), type, sizes));
        return success();
      }
    }
    rewriter.replaceOp(
        op, reshapeTo(rewriter, loc, op->getOperand(0), type, sizes));
    return success();
  }
};

/// Shape and Size of a tensor with dynamic dims: read at run time (static
/// ones fold in the dialect).
struct ShapeLowering : public OpRewritePattern<ShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = op.getInput();
    int64_t rank = typeOf(in).getRank();
    auto clamp = [&](int64_t i) {
      return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
    };
    int64_t start = clamp(op.getStart());
    int64_t end = op.getEnd() ? clamp(*op.getEnd()) : rank;
    SmallVector<Value> dims;
    for (int64_t d = start; d < end; ++d)
      dims.push_back(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getI64Type(), dimValue(rewriter, loc, in, d)));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(), dims);
    return success();
  }
};

struct SizeLowering : public OpRewritePattern<SizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = op.getInput();
    Value n = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI64Type(),
        dimProduct(rewriter, loc, in, 0, typeOf(in).getRank()));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(), n);
    return success();
  }
};

struct TransposeLowering : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    SmallVector<Value> sizes;
    for (auto [d, p] : llvm::enumerate(op.getPerm()))
      if (type.isDynamicDim(d))
        sizes.push_back(dimValue(rewriter, op.getLoc(), op.getInput(), p));
    Value init = emptyTensor(rewriter, op.getLoc(), type, sizes);
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       op.getInput(), init,
                                                       op.getPerm())
                               .getResult());
    return success();
  }
};

struct ConcatLowering : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    int64_t axis = (int64_t)op.getAxis();
    if (axis < 0)
      axis += type.getRank();
    rewriter.replaceOpWithNewOp<tensor::ConcatOp>(op, type, axis,
                                                  op.getInputs());
    return success();
  }
};

/// Expand: a broadcast copy.
struct ExpandLowering : public OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Expand to a shape known at run time, or of an input with dynamic
  /// dims: dim d is the input's where the shape says 1, else the shape's
  /// (numpy rules; an input dim that is 1 at run time is expanded).
  static LogicalResult dynamicExpand(ExpandOp op, PatternRewriter &rewriter) {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    auto type = op.getType();
    Value x = op.getInput();
    auto xt = typeOf(x);
    int64_t rank = type.getRank(), inRank = xt.getRank();
    int64_t shapeLen = typeOf(op.getShape()).getDimSize(0);
    if (ShapedType::isDynamic(shapeLen))
      return rewriter.notifyMatchFailure(op, "shape of unknown length");
    SmallVector<Value> sizes;
    Value one = indexConst(b, loc, 1);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t p = d - (rank - inRank), s = d - (rank - shapeLen);
      Value size;
      if (!type.isDynamicDim(d)) {
        size = indexConst(b, loc, type.getDimSize(d));
      } else {
        Value in = p >= 0 ? dimValue(b, loc, op.getInput(), p) : one;
        size = in;
        if (s >= 0) {
          Value e = arith::IndexCastOp::create(
              b, loc, b.getIndexType(),
              tensor::ExtractOp::create(b, loc, op.getShape(),
                                        ValueRange{indexConst(b, loc, s)}));
          Value keep =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, one);
          size = arith::SelectOp::create(b, loc, keep, in, e);
          // numpy broadcasting: e is 1, or the input's dim is 1 or e.
          Value fits = arith::OrIOp::create(
              b, loc, keep,
              arith::OrIOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, in,
                                        one),
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, in,
                                        e)));
          checkAtRunTime(
              b, loc,
              arith::AndIOp::create(
                  b, loc, fits,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, e,
                                        indexConst(b, loc, 0))),
              runTimeCheckMessage(
                  op, "entry " + std::to_string(s) +
                          " of the shape is negative or does not broadcast "
                          "with the input"));
        }
        sizes.push_back(size);
      }
      if (p >= 0 && xt.isDynamicDim(p))
        x = expandUnitDim(b, loc, x, p, size);
    }
    AffineMap map = broadcastMap(b.getContext(), xt.getShape(), type.getShape());
    rewriter.replaceOp(op, parallelGeneric(
                               b, loc, type, x, map,
                               [](OpBuilder &, Location, ValueRange a) {
                                 return a[0];
                               },
                               sizes));
    return success();
  }

  LogicalResult matchAndRewrite(ExpandOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (!type.hasStaticShape() || !isStatic(op.getInput().getType()))
      return dynamicExpand(op, rewriter);
    rewriter.replaceOp(op, elementwise(rewriter, op.getLoc(), type,
                                       op.getInput(),
                                       [](OpBuilder &, Location, ValueRange a) {
                                         return a[0];
                                       }));
    return success();
  }
};

/// Slice with constant starts/ends/axes/steps and positive steps.
struct SliceLowering : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Slice of a tensor with dynamic dims, or with starts and ends computed
  /// at run time (a count from NonZero): offsets and sizes clamped at run
  /// time like ONNX clamps them. Axes and steps must be constants.
  static LogicalResult dynamicSlice(SliceOp op, PatternRewriter &rewriter) {
    auto in = typeOf(op.getInput());
    auto type = op.getType();
    auto starts = getConstantInts(op.getStarts());
    auto ends = getConstantInts(op.getEnds());
    std::optional<SmallVector<int64_t>> axes, steps;
    if (op.getAxes())
      axes = getConstantInts(op.getAxes());
    if (op.getSteps())
      steps = getConstantInts(op.getSteps());
    int64_t count = typeOf(op.getStarts()).getDimSize(0);
    if ((op.getAxes() && !axes) || (op.getSteps() && !steps) ||
        ShapedType::isDynamic(count) ||
        count != typeOf(op.getEnds()).getDimSize(0))
      return rewriter.notifyMatchFailure(
          op, "run-time axes or steps, or bounds of run-time length");
    int64_t rank = in.getRank();
    if (!axes)
      axes = llvm::to_vector(llvm::seq<int64_t>(0, count));
    if (!steps)
      steps = SmallVector<int64_t>(count, 1);
    if (llvm::is_contained(*steps, 0))
      return rewriter.notifyMatchFailure(op, "a step of 0");
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(in.isDynamicDim(d)
                          ? OpFoldResult(dimValue(b, loc, op.getInput(), d))
                          : OpFoldResult(b.getIndexAttr(in.getDimSize(d))));
    Value zero = indexConst(b, loc, 0);
    auto clamp = [&](Value x, Value lo, Value hi) -> Value {
      return arith::MaxSIOp::create(b, loc, lo,
                                    arith::MinSIOp::create(b, loc, x, hi));
    };
    // ONNX: negative bounds count from the end.
    auto fromEnd = [&](int64_t v, Value dim) -> Value {
      constexpr int64_t kFar = int64_t(1) << 62;
      return v < 0 ? Value(arith::AddIOp::create(
                         b, loc, dim, indexConst(b, loc, std::max(v, -kFar))))
                   : indexConst(b, loc, std::min(v, kFar));
    };
    // Bound i of `starts` or `ends`: folded, or read at run time (then
    // dim + v for negative v; clamping follows).
    auto bound = [&](const std::optional<SmallVector<int64_t>> &known,
                     Value bounds, int64_t i, Value dim) -> Value {
      if (known)
        return fromEnd((*known)[i], dim);
      Value v = tensor::ExtractOp::create(b, loc, bounds,
                                          ValueRange{indexConst(b, loc, i)});
      v = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
      Value negative =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero);
      return arith::SelectOp::create(b, loc, negative,
                                     arith::AddIOp::create(b, loc, dim, v), v);
    };
    // Reversed axes: their first index and step, read element by element
    // after the forward slice.
    SmallVector<std::pair<int64_t, Value>> reversed;
    SmallVector<int64_t> reversedSteps;
    for (auto [i, a] : llvm::enumerate(*axes)) {
      int64_t axis = a < 0 ? a + rank : a, step = (*steps)[i];
      Value dim = dimValue(b, loc, op.getInput(), axis);
      Value s = bound(starts, op.getStarts(), i, dim),
            e = bound(ends, op.getEnds(), i, dim);
      if (step > 0) {
        // Both bounds clamp to [0, dim]; ceil((e - s) / step), at least 0.
        s = clamp(s, zero, dim);
        e = clamp(e, zero, dim);
        Value span = arith::MaxSIOp::create(
            b, loc, zero, arith::SubIOp::create(b, loc, e, s));
        offsets[axis] = s;
        sizes[axis] = Value(arith::CeilDivSIOp::create(
            b, loc, span, indexConst(b, loc, step)));
        strides[axis] = b.getIndexAttr(step);
        continue;
      }
      // The start clamps to [0, dim - 1], the end to [-1, dim - 1];
      // ceil((s - e) / -step) elements, at least 0.
      Value last = arith::SubIOp::create(b, loc, dim, indexConst(b, loc, 1));
      s = clamp(s, zero, last);
      e = clamp(e, indexConst(b, loc, -1), last);
      Value span = arith::MaxSIOp::create(
          b, loc, zero, arith::SubIOp::create(b, loc, s, e));
      sizes[axis] = Value(arith::CeilDivSIOp::create(
          b, loc, span, indexConst(b, loc, -step)));
      reversed.push_back({axis, s});
      reversedSteps.push_back(step);
    }
    Value r = op.getInput();
    if (reversed.empty()) {
      r = tensor::ExtractSliceOp::create(b, loc, r, offsets, sizes, strides);
    } else {
      // Forward axes sliced first (reversed ones whole), then each output
      // element reads its source along the reversed axes.
      SmallVector<OpFoldResult> forwardSizes(sizes);
      for (auto [axis, start] : reversed)
        forwardSizes[axis] = getAsOpFoldResult(dimValue(b, loc, r, axis));
      r = tensor::ExtractSliceOp::create(b, loc, r, offsets, forwardSizes,
                                         strides);
      SmallVector<int64_t> shape;
      SmallVector<Value> dynSizes;
      for (OpFoldResult size : sizes) {
        std::optional<int64_t> c = getConstantIntValue(size);
        shape.push_back(c ? *c : ShapedType::kDynamic);
        if (!c)
          dynSizes.push_back(cast<Value>(size));
      }
      Value source = r;
      r = parallelGeneric(
          b, loc, RankedTensorType::get(shape, in.getElementType()), {}, {},
          [&](OpBuilder &nb, Location l, ValueRange) -> Value {
            SmallVector<Value> at;
            for (int64_t d = 0; d < rank; ++d)
              at.push_back(linalg::IndexOp::create(nb, l, d));
            for (auto [k, rev] : llvm::enumerate(reversed)) {
              auto [axis, start] = rev;
              at[axis] = arith::AddIOp::create(
                  nb, l, start,
                  arith::MulIOp::create(nb, l, at[axis],
                                        indexConst(nb, l, reversedSteps[k])));
            }
            return tensor::ExtractOp::create(nb, l, source, at);
          },
          dynSizes);
    }
    if (r.getType() != type)
      r = tensor::CastOp::create(b, loc, type, r);
    rewriter.replaceOp(op, r);
    return success();
  }

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto type = op.getType();
    if (!type.hasStaticShape() || !in.hasStaticShape())
      return dynamicSlice(op, rewriter);
    auto starts = getConstantInts(op.getStarts());
    auto ends = getConstantInts(op.getEnds());
    std::optional<SmallVector<int64_t>> axes =
        op.getAxes() ? getConstantInts(op.getAxes())
                     : std::optional<SmallVector<int64_t>>(SmallVector<int64_t>());
    std::optional<SmallVector<int64_t>> steps =
        op.getSteps() ? getConstantInts(op.getSteps())
                      : std::optional<SmallVector<int64_t>>(
                            SmallVector<int64_t>(starts ? starts->size() : 0, 1));
    if (!starts || !ends || !axes || !steps)
      return rewriter.notifyMatchFailure(op, "non-constant slice parameters");
    if (axes->empty())
      for (size_t i = 0; i < starts->size(); ++i)
        axes->push_back(i);
    int64_t rank = in.getRank();
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    bool reversed = false;
    for (auto [i, a] : llvm::enumerate(*axes)) {
      int64_t axis = a < 0 ? a + rank : a, dim = in.getDimSize(axis);
      int64_t step = (*steps)[i];
      if (step == 0)
        return rewriter.notifyMatchFailure(op, "zero slice step");
      int64_t s = (*starts)[i];
      s = s < 0 ? s + dim : s;
      // ONNX clamps starts to [0, dim] going forward, [0, dim - 1] backward.
      offsets[axis] = std::min(std::max<int64_t>(s, 0), step > 0 ? dim : dim - 1);
      strides[axis] = step;
      reversed |= step < 0;
    }
    // An empty result reads nothing: any in-bounds offset will do.
    for (int64_t d = 0; d < rank; ++d)
      if (type.getDimSize(d) == 0)
        offsets[d] = 0;
    if (!reversed) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, type, op.getInput(), ValueRange{}, ValueRange{}, ValueRange{},
          offsets, type.getShape(), strides);
      return success();
    }
    // Negative steps: out[i..] = in[offset + i * step ..] element by element.
    Value r = parallelGeneric(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            Value scaled = arith::MulIOp::create(
                b, l, i, arith::ConstantIndexOp::create(b, l, strides[d]));
            coords.push_back(arith::AddIOp::create(
                b, l, scaled, arith::ConstantIndexOp::create(b, l, offsets[d])));
          }
          return tensor::ExtractOp::create(b, l, op.getInput(), coords);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct SplitLowering : public OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Split of a tensor with dynamic dims: pieces of static size along the
  /// axis where the result types say so; pieces whose size there is
  /// dynamic split what is left equally (the last one smaller, as ONNX's
  /// num_outputs does).
  static LogicalResult dynamicSplit(SplitOp op, PatternRewriter &rewriter) {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Value x = op.getInput();
    auto in = typeOf(x);
    int64_t rank = in.getRank(), axis = (int64_t)op.getAxis();
    if (axis < 0)
      axis += rank;
    Value dim = dimValue(b, loc, x, axis);
    // What the static pieces leave to the dynamic ones.
    int64_t fixed = 0, numDynamic = 0;
    for (Value r : op.getResults()) {
      int64_t size = typeOf(r).getDimSize(axis);
      if (ShapedType::isDynamic(size))
        ++numDynamic;
      else
        fixed += size;
    }
    Value rest = arith::SubIOp::create(b, loc, dim, indexConst(b, loc, fixed));
    Value each = numDynamic ? Value(arith::CeilDivSIOp::create(
                                  b, loc, rest, indexConst(b, loc, numDynamic)))
                            : Value();
    Value offset = indexConst(b, loc, 0);
    int64_t seen = 0;
    SmallVector<Value> parts;
    for (Value r : op.getResults()) {
      auto type = typeOf(r);
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
          strides(rank, b.getIndexAttr(1));
      Value size;
      if (!type.isDynamicDim(axis)) {
        size = indexConst(b, loc, type.getDimSize(axis));
      } else {
        // The last dynamic piece takes what is left.
        ++seen;
        size = seen == numDynamic
                   ? Value(arith::SubIOp::create(
                         b, loc, dim, offset))
                   : each;
        size = arith::MaxSIOp::create(b, loc, indexConst(b, loc, 0),
                                      arith::MinSIOp::create(
                                          b, loc, size,
                                          arith::SubIOp::create(b, loc, dim,
                                                                offset)));
      }
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(d == axis ? OpFoldResult(size)
                                  : OpFoldResult(dimValue(b, loc, x, d)));
      offsets[axis] = offset;
      Value part =
          tensor::ExtractSliceOp::create(b, loc, x, offsets, sizes, strides);
      if (part.getType() != type)
        part = tensor::CastOp::create(b, loc, type, part);
      parts.push_back(part);
      offset = arith::AddIOp::create(b, loc, offset, size);
    }
    rewriter.replaceOp(op, parts);
    return success();
  }

  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    if (!in.hasStaticShape() ||
        !llvm::all_of(op.getResultTypes(), [](Type t) { return isStatic(t); }))
      return dynamicSplit(op, rewriter);
    int64_t axis = (int64_t)op.getAxis();
    SmallVector<Value> parts;
    int64_t offset = 0;
    for (Value r : op.getResults()) {
      auto type = cast<RankedTensorType>(r.getType());
      SmallVector<int64_t> offsets(in.getRank(), 0), strides(in.getRank(), 1);
      offsets[axis] = offset;
      offset += type.getDimSize(axis);
      parts.push_back(tensor::ExtractSliceOp::create(
          rewriter, op.getLoc(), type, op.getInput(), ValueRange{},
          ValueRange{}, ValueRange{}, offsets, type.getShape(), strides));
    }
    rewriter.replaceOp(op, parts);
    return success();
  }
};

/// Gather along `axis`: out[pre.., idx.., post..] = data[pre.., i, post..].
/// With `indexChecks` the indices are checked to lie in [-d, d) first (one
/// pass over them; off for the GPU, whose kernels keep them on the device).
struct GatherLowering : public OpRewritePattern<GatherOp> {
  GatherLowering(MLIRContext *ctx, bool indexChecks)
      : OpRewritePattern(ctx), indexChecks(indexChecks) {}
  bool indexChecks;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    auto data = cast<RankedTensorType>(op.getData().getType());
    auto idx = cast<RankedTensorType>(op.getIndices().getType());
    auto type = op.getType();
    MLIRContext *ctx = op.getContext();
    int64_t axis = (int64_t)op.getAxis();
    if (axis < 0)
      axis += data.getRank();
    int64_t q = idx.getRank(), rank = type.getRank();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i < q; ++i)
      idxExprs.push_back(getAffineDimExpr(axis + i, ctx));
    AffineMap idxMap = AffineMap::get(rank, 0, idxExprs, ctx);
    Location loc = op.getLoc();
    // Negative indices count from the gathered dim's end.
    Value axisSize = dimValue(rewriter, loc, op.getData(), axis);
    if (indexChecks)
      checkIndicesInRange(rewriter, loc, op.getIndices(), axisSize,
                          indexRangeMessage(op, axis, data.getDimSize(axis)));
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(
            d < axis       ? dimValue(rewriter, loc, op.getData(), d)
            : d < axis + q ? dimValue(rewriter, loc, op.getIndices(), d - axis)
                           : dimValue(rewriter, loc, op.getData(), d - q + 1));
    Value r = parallelGeneric(
        rewriter, loc, type, op.getIndices(), idxMap,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value i = normalizedIndex(b, l, a[0], axisSize);
          SmallVector<Value> coords;
          for (int64_t d = 0; d < data.getRank(); ++d) {
            if (d < axis)
              coords.push_back(linalg::IndexOp::create(b, l, d));
            else if (d == axis)
              coords.push_back(i);
            else
              coords.push_back(linalg::IndexOp::create(b, l, d - 1 + q));
          }
          return tensor::ExtractOp::create(b, l, op.getData(), coords);
        },
        sizes);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Tile: output index i reads input index i mod size. Dynamic dims take
/// their sizes at run time: the input's times `repeats`.
struct TileLowering : public OpRewritePattern<TileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TileOp op,
                                PatternRewriter &rewriter) const override {
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto type = op.getType();
    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    if (type.hasStaticShape() && in.hasStaticShape()) {
      SmallVector<AffineExpr> exprs;
      for (auto [i, d] : llvm::enumerate(in.getShape()))
        exprs.push_back(getAffineDimExpr(i, ctx) % d);
      rewriter.replaceOp(
          op, parallelGeneric(rewriter, loc, type, op.getInput(),
                              AffineMap::get(in.getRank(), 0, exprs, ctx),
                              [](OpBuilder &, Location, ValueRange a) {
                                return a[0];
                              }));
      return success();
    }
    int64_t rank = in.getRank();
    SmallVector<Value> inSizes, outSizes;
    for (int64_t d = 0; d < rank; ++d) {
      inSizes.push_back(dimValue(rewriter, loc, op.getInput(), d));
      if (!type.isDynamicDim(d))
        continue;
      Value r = tensor::ExtractOp::create(rewriter, loc, op.getRepeats(),
                                          ValueRange{indexConst(rewriter, loc, d)});
      r = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), r);
      outSizes.push_back(arith::MulIOp::create(rewriter, loc, inSizes[d], r));
    }
    rewriter.replaceOp(
        op, parallelGeneric(
                rewriter, loc, type, {}, {},
                [&](OpBuilder &b, Location l, ValueRange) -> Value {
                  SmallVector<Value> at;
                  for (int64_t d = 0; d < rank; ++d)
                    at.push_back(arith::RemUIOp::create(
                        b, l, linalg::IndexOp::create(b, l, d), inSizes[d]));
                  return tensor::ExtractOp::create(b, l, op.getInput(), at);
                },
                outSizes));
    return success();
  }
};

/// Trilu: keep [.., i, j] when j - i >= k (upper) or j - i <= k (lower).
struct TriluLowering : public OpRewritePattern<TriluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TriluOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (type.getRank() < 2)
      return rewriter.notifyMatchFailure(op, "rank below 2");
    Value kTensor = op.getK();
    bool upper = op.getUpper();
    int64_t rank = type.getRank();
    rewriter.replaceOp(
        op, parallelGeneric(
                rewriter, op.getLoc(), type, op.getInput(),
                {rewriter.getMultiDimIdentityMap(rank)},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value i = linalg::IndexOp::create(b, l, rank - 2);
                  Value j = linalg::IndexOp::create(b, l, rank - 1);
                  Value diff = arith::SubIOp::create(
                      b, l, arith::IndexCastOp::create(b, l, b.getI64Type(), j),
                      arith::IndexCastOp::create(b, l, b.getI64Type(), i));
                  // k is a scalar tensor read at run time (0 if absent).
                  Value kv =
                      kTensor
                          ? Value(tensor::ExtractOp::create(
                                b, l, kTensor,
                                SmallVector<Value>(
                                    cast<RankedTensorType>(kTensor.getType())
                                        .getRank(),
                                    arith::ConstantIndexOp::create(b, l, 0))))
                          : scalarConst(b, l, b.getI64Type(), 0);
                  Value keep = arith::CmpIOp::create(
                      b, l,
                      upper ? arith::CmpIPredicate::sge
                            : arith::CmpIPredicate::sle,
                      diff, kv);
                  return arith::SelectOp::create(
                      b, l, keep, a[0],
                      scalarConst(b, l, a[0].getType(), 0));
                }));
    return success();
  }
};

/// Range with a static length: start + i * delta.
struct RangeLowering : public OpRewritePattern<RangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RangeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    Location loc = op.getLoc();
    Type elt = type.getElementType();
    auto scalar = [&](OpBuilder &b, Location l, Value t) -> Value {
      SmallVector<Value> zeros(cast<RankedTensorType>(t.getType()).getRank(),
                               arith::ConstantIndexOp::create(b, l, 0));
      return tensor::ExtractOp::create(b, l, t, zeros);
    };
    // Bounds known only at run time: max(ceil((limit - start) / delta), 0)
    // elements.
    SmallVector<Value> sizes;
    if (type.isDynamicDim(0)) {
      OpBuilder &b = rewriter;
      Value start = scalar(b, loc, op.getStart());
      Value limit = scalar(b, loc, op.getLimit());
      Value delta = scalar(b, loc, op.getDelta());
      Value nonZero =
          isa<FloatType>(elt)
              ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE,
                                            delta, scalarConst(b, loc, elt, 0)))
              : Value(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            delta,
                                            scalarConst(b, loc, elt, 0)));
      checkAtRunTime(b, loc, nonZero,
                     runTimeCheckMessage(op, "delta is zero (or NaN)"));
      Value n;
      if (isa<FloatType>(elt)) {
        Value q = arith::DivFOp::create(
            b, loc, arith::SubFOp::create(b, loc, limit, start), delta);
        n = arith::FPToSIOp::create(b, loc, b.getI64Type(),
                                    math::CeilOp::create(b, loc, q));
      } else {
        Value span = castScalar(b, loc,
                                arith::SubIOp::create(b, loc, limit, start),
                                b.getI64Type());
        n = arith::CeilDivSIOp::create(b, loc, span,
                                       castScalar(b, loc, delta, b.getI64Type()));
      }
      n = arith::MaxSIOp::create(b, loc, n,
                                 arith::ConstantIntOp::create(b, loc, 0, 64));
      sizes.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(), n));
    }
    rewriter.replaceOp(
        op, parallelGeneric(
                rewriter, loc, type, ValueRange{}, ArrayRef<AffineMap>{},
                [&](OpBuilder &b, Location l, ValueRange) -> Value {
                  Value i = castScalar(
                      b, l,
                      arith::IndexCastOp::create(b, l, b.getI64Type(),
                                                 linalg::IndexOp::create(b, l, 0)),
                      elt);
                  Value start = scalar(b, l, op.getStart());
                  Value delta = scalar(b, l, op.getDelta());
                  if (isa<FloatType>(elt))
                    return arith::AddFOp::create(
                        b, l, start, arith::MulFOp::create(b, l, i, delta));
                  return arith::AddIOp::create(
                      b, l, start, arith::MulIOp::create(b, l, i, delta));
                },
                sizes));
    return success();
  }
};

/// ConstantOfShape of a shape known only at run time (static ones fold).
struct ConstantOfShapeLowering : public OpRewritePattern<ConstantOfShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOfShapeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    auto value = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!value || !value.isSplat())
      return rewriter.notifyMatchFailure(op, "value is not one constant");
    Location loc = op.getLoc();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(checkedSize(
            rewriter, loc, op,
            tensor::ExtractOp::create(rewriter, loc, op.getShape(),
                                      ValueRange{indexConst(rewriter, loc, d)}),
            "entry " + std::to_string(d) + " of the shape"));
    Value fill = arith::ConstantOp::create(
        rewriter, loc, value.getSplatValue<TypedAttr>());
    rewriter.replaceOp(op, linalg::FillOp::create(
                               rewriter, loc, fill,
                               emptyTensor(rewriter, loc, type, sizes))
                               .getResult(0));
    return success();
  }
};

} // namespace

void populateShapeToTensorPatterns(RewritePatternSet &patterns,
                                   bool indexChecks) {
  patterns.add<ConstantLowering, ReshapeLikeLowering, ShapeLowering,
               SizeLowering, TransposeLowering, ConcatLowering, ExpandLowering,
               SliceLowering, SplitLowering, TileLowering, TriluLowering,
               RangeLowering, ConstantOfShapeLowering>(patterns.getContext());
  patterns.add<GatherLowering>(patterns.getContext(), indexChecks);
}

} // namespace mp
