//===- IndexingToLinalg.cpp - index-driven ops to linalg/tensor/scf -------===//
//
// GatherElements, GatherND, ScatterND, ScatterElements, TensorScatter,
// CumSum and ArgMax/ArgMin: ops whose reads or writes are steered by data
// (indices, positions, comparisons).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// A pattern that checks the indices it reads from data when `indexChecks`
/// (off for the GPU, whose kernels keep the indices in device memory).
template <typename OpTy>
struct CheckedIndexPattern : public OpRewritePattern<OpTy> {
  CheckedIndexPattern(MLIRContext *ctx, bool indexChecks)
      : OpRewritePattern<OpTy>(ctx), indexChecks(indexChecks) {}
  bool indexChecks;
};

/// out[i..] = data[i.. with i_axis replaced by indices[i..]]. The indices
/// are checked to lie in [-d, d) first (one pass over them).
struct GatherElementsLowering : public CheckedIndexPattern<GatherElementsOp> {
  using CheckedIndexPattern::CheckedIndexPattern;
  LogicalResult matchAndRewrite(GatherElementsOp op,
                                PatternRewriter &rewriter) const override {
    auto data = typeOf(op.getData());
    int64_t rank = data.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    // The output has the indices' (run-time) sizes; negative indices count
    // from the data's run-time axis size.
    Value axisSize = dimValue(rewriter, op.getLoc(), op.getData(), axis);
    if (indexChecks)
      checkIndicesInRange(rewriter, op.getLoc(), op.getIndices(), axisSize,
                          indexRangeMessage(op, axis, data.getDimSize(axis)));
    Value r = parallelGeneric(
        rewriter, op.getLoc(), op.getType(), op.getIndices(),
        rewriter.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location l, ValueRange a) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d)
            coords.push_back(d == axis ? normalizedIndex(b, l, a[0], axisSize)
                                       : linalg::IndexOp::create(b, l, d));
          return tensor::ExtractOp::create(b, l, op.getData(), coords);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// out[b.., i.., s..] = data[b.., indices[b.., i.., 0..k-1], s..] with
/// `batch_dims` leading batch dims shared by data and indices. Each index
/// tuple is checked first to address the data (entry j in [-d_j, d_j)).
struct GatherNDLowering : public CheckedIndexPattern<GatherNDOp> {
  using CheckedIndexPattern::CheckedIndexPattern;
  LogicalResult matchAndRewrite(GatherNDOp op,
                                PatternRewriter &rewriter) const override {
    auto data = typeOf(op.getData());
    auto indices = typeOf(op.getIndices());
    int64_t q = indices.getRank(), k = indices.getDimSize(q - 1);
    if (ShapedType::isDynamic(k))
      return rewriter.notifyMatchFailure(op, "index tuples of run-time length");
    int64_t batch = op.getBatchDims();
    Location loc = op.getLoc();
    // Run-time sizes: the output is indices[:-1] then data[batch + k:]; the
    // indexed data dims normalize negative indices.
    SmallVector<Value> outSizes, indexedDims;
    for (int64_t d = 0; d < op.getType().getRank(); ++d)
      if (op.getType().isDynamicDim(d))
        outSizes.push_back(d < q - 1 ? dimValue(rewriter, loc, op.getIndices(), d)
                                     : dimValue(rewriter, loc, op.getData(),
                                                batch + k + d - (q - 1)));
    for (int64_t j = 0; j < k; ++j)
      indexedDims.push_back(dimValue(rewriter, loc, op.getData(), batch + j));
    if (indexChecks && k > 0)
      checkIndicesInRange(
          rewriter, loc, op.getIndices(), indexedDims,
          indexRangeMessage(op, batch, data.getShape().slice(batch, k)));
    Value r = parallelGeneric(
        rewriter, loc, op.getType(), {}, {},
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> outer;
          for (int64_t d = 0; d < q - 1; ++d)
            outer.push_back(linalg::IndexOp::create(b, l, d));
          SmallVector<Value> coords(outer.begin(), outer.begin() + batch);
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> at = outer;
            at.push_back(indexConst(b, l, j));
            Value i = tensor::ExtractOp::create(b, l, op.getIndices(), at);
            coords.push_back(normalizedIndex(b, l, i, indexedDims[j]));
          }
          for (int64_t d = batch + k; d < data.getRank(); ++d)
            coords.push_back(linalg::IndexOp::create(b, l, q - 1 + d - batch - k));
          return tensor::ExtractOp::create(b, l, op.getData(), coords);
        },
        outSizes);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// A loop over the updates in order (later updates win, as the spec's
/// reference implementation): each writes a slice data[idx.., :] combined
/// with the reduction if any. The index tuples are checked first to address
/// the data (entry j in [-d_j, d_j)).
struct ScatterNDLowering : public CheckedIndexPattern<ScatterNDOp> {
  using CheckedIndexPattern::CheckedIndexPattern;
  LogicalResult matchAndRewrite(ScatterNDOp op,
                                PatternRewriter &rewriter) const override {
    StringRef reduction = op.getReduction();
    if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
      return rewriter.notifyMatchFailure(op, "unknown reduction");
    Location loc = op.getLoc();
    auto data = typeOf(op.getData());
    auto indices = typeOf(op.getIndices());
    int64_t r = data.getRank(), q = indices.getRank();
    int64_t k = indices.getDimSize(q - 1);
    if (ShapedType::isDynamic(k))
      return rewriter.notifyMatchFailure(op, "index tuples of run-time length");
    // Sizes at run time: the updates' leading dims (indices[:-1]) and their
    // number, and the data's dims.
    SmallVector<Value> updShape, dataDims;
    Value count = indexConst(rewriter, loc, 1);
    for (int64_t d = 0; d < q - 1; ++d) {
      updShape.push_back(dimValue(rewriter, loc, op.getIndices(), d));
      count = arith::MulIOp::create(rewriter, loc, count, updShape.back());
    }
    for (int64_t d = 0; d < r; ++d)
      dataDims.push_back(dimValue(rewriter, loc, op.getData(), d));
    if (indexChecks && k > 0)
      checkIndicesInRange(
          rewriter, loc, op.getIndices(), ArrayRef(dataDims).take_front(k),
          indexRangeMessage(op, 0, data.getShape().take_front(k)));
    auto sliceType =
        RankedTensorType::get(data.getShape().drop_front(k), data.getElementType());

    auto loop = scf::ForOp::create(
        rewriter, loc, indexConst(rewriter, loc, 0), count,
        indexConst(rewriter, loc, 1), ValueRange{op.getData()},
        [&](OpBuilder &b, Location l, Value u, ValueRange iter) {
          // u -> its position in the updates' leading dims (row-major).
          SmallVector<Value> pos(updShape.size());
          Value rest = u;
          for (int64_t d = updShape.size() - 1; d >= 0; --d) {
            pos[d] = arith::RemUIOp::create(b, l, rest, updShape[d]);
            rest = arith::DivUIOp::create(b, l, rest, updShape[d]);
          }
          SmallVector<OpFoldResult> dataOffsets, sizes, strides;
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> at = pos;
            at.push_back(indexConst(b, l, j));
            Value i = tensor::ExtractOp::create(b, l, op.getIndices(), at);
            dataOffsets.push_back(normalizedIndex(b, l, i, dataDims[j]));
          }
          for (int64_t d = 0; d < r; ++d) {
            if (d >= k)
              dataOffsets.push_back(b.getIndexAttr(0));
            sizes.push_back(d < k ? OpFoldResult(b.getIndexAttr(1))
                                  : getAsOpFoldResult(dataDims[d]));
            strides.push_back(b.getIndexAttr(1));
          }
          SmallVector<OpFoldResult> updOffsets(pos.begin(), pos.end()),
              updSizes(pos.size(), b.getIndexAttr(1)),
              updStrides(typeOf(op.getUpdates()).getRank(), b.getIndexAttr(1));
          for (int64_t d = k; d < r; ++d) {
            updOffsets.push_back(b.getIndexAttr(0));
            updSizes.push_back(getAsOpFoldResult(dataDims[d]));
          }
          Value slice = tensor::ExtractSliceOp::create(
              b, l, sliceType, op.getUpdates(), updOffsets, updSizes,
              updStrides);
          if (reduction != "none") {
            Value old = tensor::ExtractSliceOp::create(
                b, l, sliceType, iter[0], dataOffsets, sizes, strides);
            // Same shapes: no run-time broadcasting to decide.
            AffineMap id = b.getMultiDimIdentityMap(sliceType.getRank());
            slice = parallelGeneric(
                b, l, sliceType, {old, slice}, {id, id},
                [&](OpBuilder &nb, Location nl, ValueRange a) {
                  return combine(nb, nl, reduction, a[0], a[1]);
                });
          }
          Value next = tensor::InsertSliceOp::create(
              b, l, slice, iter[0], dataOffsets, sizes, strides);
          scf::YieldOp::create(b, l, next);
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }

  static Value combine(OpBuilder &b, Location l, StringRef reduction, Value x,
                       Value y) {
    bool isFloat = isa<FloatType>(x.getType());
    bool isUnsigned = x.getType().isUnsignedInteger() || x.getType().isInteger(1);
    if (reduction == "add")
      return isFloat ? Value(arith::AddFOp::create(b, l, x, y))
                     : Value(arith::AddIOp::create(b, l, x, y));
    if (reduction == "mul")
      return isFloat ? Value(arith::MulFOp::create(b, l, x, y))
                     : Value(arith::MulIOp::create(b, l, x, y));
    if (reduction == "max")
      return isFloat      ? Value(arith::MaximumFOp::create(b, l, x, y))
             : isUnsigned ? Value(arith::MaxUIOp::create(b, l, x, y))
                          : Value(arith::MaxSIOp::create(b, l, x, y));
    return isFloat      ? Value(arith::MinimumFOp::create(b, l, x, y))
           : isUnsigned ? Value(arith::MinUIOp::create(b, l, x, y))
                        : Value(arith::MinSIOp::create(b, l, x, y));
  }
};

/// out[.., i, ..] = sum of x[.., j, ..] over j <= i (j < i if exclusive;
/// j >= i / j > i if reverse), as a generic with an extra reduction loop
/// over j. Quadratic in the axis length, which is short where exporters use
/// CumSum (position ids, masks).
struct CumSumLowering : public OpRewritePattern<CumSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumSumOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto type = op.getType();
    int64_t rank = type.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    Type elt = type.getElementType(), acc = accumulatorType(elt);
    bool isFloat = isa<FloatType>(elt);
    bool exclusive = op.getExclusive(), reverse = op.getReverse();

    SmallVector<AffineExpr> inExprs, outExprs;
    for (int64_t d = 0; d < rank; ++d) {
      inExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
      outExprs.push_back(getAffineDimExpr(d, ctx));
    }
    SmallVector<AffineMap> maps = {AffineMap::get(rank + 1, 0, inExprs, ctx),
                                   AffineMap::get(rank + 1, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto accType = RankedTensorType::get(type.getShape(), acc);
    Value init = linalg::FillOp::create(
                     rewriter, loc, scalarConst(rewriter, loc, acc, 0.0),
                     ValueRange{emptyTensor(
                         rewriter, loc, accType,
                         dynamicSizes(rewriter, loc, op.getInput()))})
                     .getResult(0);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, accType, op.getInput(), init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value i = linalg::IndexOp::create(b, l, axis);
          Value j = linalg::IndexOp::create(b, l, rank);
          using P = arith::CmpIPredicate;
          P pred = reverse ? (exclusive ? P::ugt : P::uge)
                           : (exclusive ? P::ult : P::ule);
          Value take = arith::CmpIOp::create(b, l, pred, j, i);
          Value x = castScalar(b, l, a[0], acc);
          Value sum = isFloat ? Value(arith::AddFOp::create(b, l, a[1], x))
                              : Value(arith::AddIOp::create(b, l, a[1], x));
          linalg::YieldOp::create(
              b, l, Value(arith::SelectOp::create(b, l, take, sum, a[1])));
        });
    rewriter.replaceOp(op, castElements(rewriter, loc, generic.getResult(0), elt));
    return success();
  }
};

/// ArgMax/ArgMin: one generic with two results (best value, its index)
/// reducing over the axis. Ties keep the first index, or the last with
/// select_last_index.
template <typename OpTy, bool IsMax>
struct ArgReduceLowering : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto in = typeOf(op.getData());
    int64_t rank = in.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    Type elt = in.getElementType();
    bool isFloat = isa<FloatType>(elt);
    bool isUnsigned = elt.isUnsignedInteger() || elt.isInteger(1);
    bool last = op.getSelectLastIndex();

    // The result's dims: the data's without the axis (run-time sizes where
    // dynamic).
    SmallVector<int64_t> shape;
    SmallVector<Value> dynSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      shape.push_back(in.getDimSize(d));
      if (in.isDynamicDim(d))
        dynSizes.push_back(dimValue(rewriter, loc, op.getData(), d));
    }
    Type i64 = rewriter.getI64Type();
    // The first element along the axis seeds the search.
    Value firstValue;
    {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
          sizes, strides(rank, rewriter.getIndexAttr(1));
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(d == axis ? rewriter.getIndexAttr(1)
                                  : getAsOpFoldResult(dimValue(
                                        rewriter, loc, op.getData(), d)));
      firstValue = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get(shape, elt), op.getData(),
          offsets, sizes, strides);
    }
    Value zeros = linalg::FillOp::create(
                      rewriter, loc, scalarConst(rewriter, loc, i64, 0.0),
                      ValueRange{emptyTensor(rewriter, loc,
                                             RankedTensorType::get(shape, i64),
                                             dynSizes)})
                      .getResult(0);
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   droppedAxesMap(ctx, rank, {axis}),
                                   droppedAxesMap(ctx, rank, {axis})};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators[axis] = utils::IteratorType::reduction;
    auto generic = linalg::GenericOp::create(
        rewriter, loc,
        TypeRange{RankedTensorType::get(shape, elt),
                  RankedTensorType::get(shape, i64)},
        op.getData(), ValueRange{firstValue, zeros}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value x = a[0], best = a[1], bestIndex = a[2];
          Value better;
          if (isFloat) {
            // NaN is both the maximum and the minimum (numpy, which the
            // ONNX reference uses): the first NaN wins, or the last one.
            using P = arith::CmpFPredicate;
            P strict = IsMax ? P::OGT : P::OLT, loose = IsMax ? P::OGE : P::OLE;
            Value cmp =
                arith::CmpFOp::create(b, l, last ? loose : strict, x, best);
            Value xNaN = arith::CmpFOp::create(b, l, P::UNO, x, x);
            Value bestNaN = arith::CmpFOp::create(b, l, P::UNO, best, best);
            Value overNumber = arith::OrIOp::create(b, l, xNaN, cmp);
            Value overNaN = last ? xNaN
                                 : Value(arith::ConstantIntOp::create(
                                       b, l, b.getI1Type(), 0));
            better = arith::SelectOp::create(b, l, bestNaN, overNaN, overNumber);
          } else {
            using P = arith::CmpIPredicate;
            P strict = IsMax ? (isUnsigned ? P::ugt : P::sgt)
                             : (isUnsigned ? P::ult : P::slt);
            P loose = IsMax ? (isUnsigned ? P::uge : P::sge)
                            : (isUnsigned ? P::ule : P::sle);
            better = arith::CmpIOp::create(b, l, last ? loose : strict, x, best);
          }
          Value j = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, better, x, best),
                         arith::SelectOp::create(b, l, better, j, bestIndex)});
        });
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, generic.getResult(1),
                                     op.getType()));
    return success();
  }
};

/// Stops the run unless TensorScatter's write indices are in range: linear
/// mode writes the update's s positions from write_indices[b] and needs
/// them in [0, n - s] (n the cache's length along `axis`); circular mode
/// wraps any non-negative index.
void checkWriteIndices(PatternRewriter &rewriter, TensorScatterOp op,
                       int64_t axis, bool circular) {
  Location loc = op.getLoc();
  int64_t n = typeOf(op.getPastCache()).getDimSize(axis);
  int64_t s = typeOf(op.getUpdate()).getDimSize(axis);
  bool dynamic = ShapedType::isDynamic(n) || ShapedType::isDynamic(s);
  std::string cache = sizeOrSymbol(n, "n");
  std::string where = " positions along axis " + std::to_string(axis);
  Value zero = indexConst(rewriter, loc, 0);
  if (circular) {
    checkValuesInRange(
        rewriter, loc, op.getWriteIndices(), zero, Value(),
        runTimeCheckMessage(op, "a write index is out of range [0, inf): "
                                "circular mode wraps it around the cache's " +
                                    cache + where));
    return;
  }
  Value room = arith::AddIOp::create(
      rewriter, loc,
      arith::SubIOp::create(rewriter, loc,
                            dimValue(rewriter, loc, op.getPastCache(), axis),
                            dimValue(rewriter, loc, op.getUpdate(), axis)),
      indexConst(rewriter, loc, 1));
  std::string hi =
      dynamic ? std::string("n - s + 1") : std::to_string(n - s + 1);
  checkValuesInRange(
      rewriter, loc, op.getWriteIndices(), zero, room,
      runTimeCheckMessage(op, "a write index is out of range [0, " + hi +
                                  "): the update's " + sizeOrSymbol(s, "s") +
                                  where + " must fit in the cache's " + cache));
}

/// TensorScatter-24 in "linear" mode as one insert_slice per batch at
/// write_indices[b] (clamped into the cache where no check stopped the run:
/// the spec leaves out-of-range writes undefined): only the update's
/// elements are written, into the cache's buffer when bufferization can
/// (mp-kv-cache-in-place's form of a cache updated in place).
Value writeSlicesPerBatch(PatternRewriter &rewriter, TensorScatterOp op,
                          int64_t axis) {
  Location loc = op.getLoc();
  auto cache = typeOf(op.getPastCache());
  auto update = typeOf(op.getUpdate());
  int64_t rank = cache.getRank(), batches = cache.getDimSize(0);
  int64_t room = cache.getDimSize(axis) - update.getDimSize(axis);
  Value result = op.getPastCache();
  for (int64_t b = 0; b < batches; ++b) {
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
    for (int64_t d : update.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    offsets[0] = rewriter.getIndexAttr(b);
    sizes[0] = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> from = offsets;
    if (Value starts = op.getWriteIndices()) {
      Value raw = tensor::ExtractOp::create(rewriter, loc, starts,
                                            ValueRange{indexConst(rewriter, loc, b)});
      Value at = arith::IndexCastOp::create(rewriter, loc,
                                            rewriter.getIndexType(), raw);
      offsets[axis] = Value(arith::MaxSIOp::create(
          rewriter, loc, indexConst(rewriter, loc, 0),
          arith::MinSIOp::create(rewriter, loc, at,
                                 indexConst(rewriter, loc, room))));
    }
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, op.getUpdate(),
                                                 from, sizes, strides);
    result = tensor::InsertSliceOp::create(rewriter, loc, slice, result,
                                           offsets, sizes, strides);
  }
  return result;
}

/// TensorScatter-24: out = past_cache with update[b] written along `axis`
/// from write_indices[b] (0 without them); "circular" wraps around the
/// cache. Linear mode writes slices (above); circular mode is one generic
/// over the cache: each element takes the update's value where the window
/// covers it, the cache's elsewhere.
///
/// With `indexChecks` the write indices are checked first, as onnxruntime
/// does: in [0, n - s] in linear mode (the s updated positions fit in the
/// cache's n), non-negative in circular mode (which wraps them modulo n).
struct TensorScatterLowering : public CheckedIndexPattern<TensorScatterOp> {
  using CheckedIndexPattern::CheckedIndexPattern;
  LogicalResult matchAndRewrite(TensorScatterOp op,
                                PatternRewriter &rewriter) const override {
    auto cache = typeOf(op.getPastCache());
    int64_t rank = cache.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    bool circular = op.getMode() == "circular";
    if (indexChecks && op.getWriteIndices())
      checkWriteIndices(rewriter, op, axis, circular);
    // Slices per batch need the batch count; with run-time sizes every
    // element picks the cache's or the update's value instead.
    bool isStatic = allStatic(op);
    if (isStatic && op.writesSlices()) {
      rewriter.replaceOp(op, writeSlicesPerBatch(rewriter, op, axis));
      return success();
    }
    Location loc = op.getLoc();
    Value maxSeq = dimValue(rewriter, loc, op.getPastCache(), axis);
    Value seq = dimValue(rewriter, loc, op.getUpdate(), axis);
    // An update of run-time length may be empty: read only inside it.
    bool mayBeEmpty = typeOf(op.getUpdate()).isDynamicDim(axis);
    Value starts = op.getWriteIndices();
    SmallVector<Value> ins = {op.getPastCache()};
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    if (starts) {
      ins.push_back(starts);
      maps.push_back(AffineMap::get(rank, 0, {getAffineDimExpr(0, getContext())},
                                    getContext()));
    }
    Value r = parallelGeneric(
        rewriter, loc, op.getType(), ins, maps,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          SmallVector<Value> idx;
          for (int64_t d = 0; d < rank; ++d)
            idx.push_back(linalg::IndexOp::create(b, l, d));
          Value start = starts ? Value(arith::IndexCastOp::create(
                                     b, l, b.getIndexType(), a[1]))
                               : indexConst(b, l, 0);
          // Offset of this cache row within the written window; circular
          // mode takes it modulo the cache's length (in [0, n) whatever
          // the start).
          Value i = arith::SubIOp::create(b, l, idx[axis], start);
          if (circular) {
            i = arith::RemSIOp::create(b, l, i, maxSeq);
            i = arith::SelectOp::create(
                b, l,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                      indexConst(b, l, 0)),
                arith::AddIOp::create(b, l, i, maxSeq), i);
          }
          Value inWindow = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i,
                                    indexConst(b, l, 0)),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, seq));
          SmallVector<Value> at = idx;
          at[axis] = arith::SelectOp::create(b, l, inWindow, i,
                                             indexConst(b, l, 0));
          auto read = [&](OpBuilder &rb, Location rl) -> Value {
            return tensor::ExtractOp::create(rb, rl, op.getUpdate(), at);
          };
          if (!mayBeEmpty)
            return arith::SelectOp::create(b, l, inWindow, read(b, l), a[0]);
          return readWhere(b, l, inWindow, read, a[0]);
        },
        dynamicSizes(rewriter, loc, op.getPastCache()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// ScatterElements
//===----------------------------------------------------------------------===//

/// The message of the run-time check of ScatterElements' indices.
std::string scatterElementsRangeMessage(ScatterElementsOp op, int64_t axis) {
  return runTimeCheckMessage(
      op, "an index is out of range [-d, d) for the data's size d along axis " +
              std::to_string(axis));
}

/// A loop over the updates in row-major order (later updates win, as the
/// spec's reference implementation): update p goes to the data at p with
/// its `axis` coordinate replaced by indices[p], combined with the
/// reduction if any. Each index is checked first: one outside [-d, d)
/// stops the run (cf.assert, whose message names the node) instead of
/// writing out of bounds.
struct ScatterElementsLowering : public OpRewritePattern<ScatterElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterElementsOp op,
                                PatternRewriter &rewriter) const override {
    StringRef reduction = op.getReduction();
    if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
      return rewriter.notifyMatchFailure(op, "unknown reduction");
    Location loc = op.getLoc();
    int64_t rank = typeOf(op.getData()).getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    // Run-time sizes: the updates' (= the indices') dims and their number,
    // and the data's size along the axis.
    SmallVector<Value> updShape;
    Value count = indexConst(rewriter, loc, 1);
    for (int64_t d = 0; d < rank; ++d) {
      updShape.push_back(dimValue(rewriter, loc, op.getIndices(), d));
      count = arith::MulIOp::create(rewriter, loc, count, updShape.back());
    }
    Value axisSize = dimValue(rewriter, loc, op.getData(), axis);
    Value negSize = arith::SubIOp::create(
        rewriter, loc, indexConst(rewriter, loc, 0), axisSize);
    std::string message = scatterElementsRangeMessage(op, axis);

    auto loop = scf::ForOp::create(
        rewriter, loc, indexConst(rewriter, loc, 0), count,
        indexConst(rewriter, loc, 1), ValueRange{op.getData()},
        [&](OpBuilder &b, Location l, Value u, ValueRange iter) {
          // u -> its position in the updates (row-major; u < count, so
          // what is left for dim 0 is in range).
          SmallVector<Value> pos(rank);
          Value rest = u;
          for (int64_t d = rank - 1; d > 0; --d) {
            pos[d] = arith::RemUIOp::create(b, l, rest, updShape[d]);
            rest = arith::DivUIOp::create(b, l, rest, updShape[d]);
          }
          pos[0] = rest;
          Value raw = arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              tensor::ExtractOp::create(b, l, op.getIndices(), pos));
          Value inRange = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, raw,
                                    negSize),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, raw,
                                    axisSize));
          checkAtRunTime(b, l, inRange, message);
          SmallVector<Value> at = pos;
          at[axis] = normalizedIndex(b, l, raw, axisSize);
          Value v = tensor::ExtractOp::create(b, l, op.getUpdates(), pos);
          if (reduction != "none")
            v = ScatterNDLowering::combine(
                b, l, reduction, tensor::ExtractOp::create(b, l, iter[0], at),
                v);
          scf::YieldOp::create(
              b, l, ValueRange{tensor::InsertOp::create(b, l, v, iter[0], at)});
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// The first constant index of `indices` outside [-d, d), d = `bounds[j]`
/// for entry j along the last dim of `indices` (one bound: for all of
/// them), and its position; nothing when all are in range, the indices are
/// not constant or a bound is dynamic.
std::optional<std::pair<int64_t, int64_t>>
constantIndexOutOfRange(Value indices, ArrayRef<int64_t> bounds) {
  DenseIntElementsAttr constant;
  if (llvm::any_of(bounds, ShapedType::isDynamic) ||
      !matchPattern(indices, m_Constant(&constant)))
    return std::nullopt;
  auto type = constant.getType();
  int64_t last = type.getRank() ? type.getShape().back() : 1, flat = 0;
  for (const APInt &v : constant.getValues<APInt>()) {
    int64_t i = v.getSExtValue();
    int64_t d = bounds[bounds.size() == 1 ? 0 : flat % last];
    if (i < -d || i >= d)
      return std::make_pair(i, flat);
    ++flat;
  }
  return std::nullopt;
}

/// The indices, the data's sizes that bound them and the first data axis
/// they index, of an op whose indices address its data.
std::optional<std::tuple<Value, SmallVector<int64_t>, int64_t>>
indexOperand(Operation *op) {
  auto axisOf = [](int64_t axis, int64_t rank) {
    return axis < 0 ? axis + rank : axis;
  };
  auto single =
      [&](Value indices, Value data,
          int64_t axis) -> std::tuple<Value, SmallVector<int64_t>, int64_t> {
    auto type = typeOf(data);
    axis = axisOf(axis, type.getRank());
    return {indices, {type.getDimSize(axis)}, axis};
  };
  auto tuples = [&](Value indices, Value data, int64_t batch)
      -> std::optional<std::tuple<Value, SmallVector<int64_t>, int64_t>> {
    auto it = typeOf(indices);
    int64_t k = it.getRank() ? it.getShape().back() : 0;
    if (ShapedType::isDynamic(k) || k <= 0 ||
        batch + k > typeOf(data).getRank())
      return std::nullopt;
    return std::make_tuple(
        indices, llvm::to_vector(typeOf(data).getShape().slice(batch, k)),
        batch);
  };
  if (auto g = dyn_cast<GatherOp>(op))
    return single(g.getIndices(), g.getData(), g.getAxis());
  if (auto g = dyn_cast<GatherElementsOp>(op))
    return single(g.getIndices(), g.getData(), g.getAxis());
  if (auto s = dyn_cast<ScatterElementsOp>(op))
    return single(s.getIndices(), s.getData(), s.getAxis());
  if (auto g = dyn_cast<GatherNDOp>(op))
    return tuples(g.getIndices(), g.getData(), g.getBatchDims());
  if (auto s = dyn_cast<ScatterNDOp>(op))
    return tuples(s.getIndices(), s.getData(), 0);
  return std::nullopt;
}

} // namespace

LogicalResult checkConstantIndices(Operation *root) {
  bool failed = false;
  root->walk([&](Operation *op) {
    auto operand = indexOperand(op);
    if (!operand)
      return;
    auto [indices, bounds, firstAxis] = *operand;
    auto bad = constantIndexOutOfRange(indices, bounds);
    if (!bad)
      return;
    std::string what = lowering::indexRangeMessage(op, firstAxis, bounds);
    // "mp: Op (node 'n'): ..." without its "mp: " (the diagnostic's own).
    StringRef text = StringRef(what).drop_front(4);
    op->emitError() << text << " (constant index " << bad->first
                    << " at flat position " << bad->second << ")";
    failed = true;
  });
  return failure(failed);
}

void populateIndexingToLinalgPatterns(RewritePatternSet &patterns,
                                      bool indexChecks) {
  patterns.add<GatherElementsLowering, GatherNDLowering, ScatterNDLowering,
               TensorScatterLowering>(patterns.getContext(), indexChecks);
  patterns.add<CumSumLowering, ArgReduceLowering<ArgMaxOp, true>,
               ArgReduceLowering<ArgMinOp, false>>(patterns.getContext());
  patterns.add<ScatterElementsLowering>(patterns.getContext());
}

} // namespace mp
