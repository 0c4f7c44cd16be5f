//===- DataDependentToLinalg.cpp - ops whose result sizes are values ------===//
//
// NonZero: the number of results is counted at run time, then the result is
// allocated at that size and filled. Both passes are sequential loops over
// the input in row-major order, which is also the order of the result's
// columns.
//
// TopK and OneHot: their result sizes are the values of an operand (k,
// depth), static when it is a constant and allocated at run time otherwise.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// The coordinates of row-major position `flat` in a tensor of `dims`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                               ArrayRef<Value> dims) {
  SmallVector<Value> coords(dims.size());
  Value rest = flat;
  for (int64_t d = (int64_t)dims.size() - 1; d >= 0; --d) {
    coords[d] = arith::RemUIOp::create(b, loc, rest, dims[d]);
    rest = arith::DivUIOp::create(b, loc, rest, dims[d]);
  }
  return coords;
}

/// x != 0 (true for NaN, as numpy's nonzero).
Value isNonZero(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  if (auto f = dyn_cast<FloatType>(t))
    return arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::UNE, x,
        arith::ConstantOp::create(b, loc, b.getFloatAttr(f, 0.0)));
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, x,
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, 0)));
}

struct NonZeroLowering : public OpRewritePattern<NonZeroOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NonZeroOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    int64_t rank = typeOf(input).getRank();
    SmallVector<Value> dims;
    Value total = indexConst(rewriter, loc, 1);
    for (int64_t d = 0; d < rank; ++d) {
      dims.push_back(dimValue(rewriter, loc, input, d));
      total = arith::MulIOp::create(rewriter, loc, total, dims.back());
    }
    Value zero = indexConst(rewriter, loc, 0),
          one = indexConst(rewriter, loc, 1);
    auto nonZeroAt = [&](OpBuilder &b, Location l, Value flat) {
      SmallVector<Value> coords = delinearize(b, l, flat, dims);
      Value x = tensor::ExtractOp::create(b, l, input, coords);
      return std::make_pair(isNonZero(b, l, x), coords);
    };
    // Pass 1: how many.
    auto counting = scf::ForOp::create(
        rewriter, loc, zero, total, one, ValueRange{zero},
        [&](OpBuilder &b, Location l, Value i, ValueRange iter) {
          Value hit = nonZeroAt(b, l, i).first;
          Value next = arith::AddIOp::create(
              b, l, iter[0],
              arith::SelectOp::create(b, l, hit, indexConst(b, l, 1),
                                      indexConst(b, l, 0)));
          scf::YieldOp::create(b, l, next);
        });
    Value count = counting.getResult(0);
    // Pass 2: one column per hit.
    auto i64 = rewriter.getI64Type();
    auto resultType = RankedTensorType::get({rank, ShapedType::kDynamic}, i64);
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                          i64, ValueRange{count});
    auto filling = scf::ForOp::create(
        rewriter, loc, zero, total, one, ValueRange{zero, empty},
        [&](OpBuilder &b, Location l, Value i, ValueRange iter) {
          auto [hit, coords] = nonZeroAt(b, l, i);
          auto branch = scf::IfOp::create(
              b, l, hit,
              [&](OpBuilder &tb, Location tl) {
                Value out = iter[1];
                for (int64_t d = 0; d < rank; ++d) {
                  Value c = arith::IndexCastOp::create(tb, tl, i64, coords[d]);
                  out = tensor::InsertOp::create(
                      tb, tl, c, out,
                      ValueRange{indexConst(tb, tl, d), iter[0]});
                }
                Value next = arith::AddIOp::create(tb, tl, iter[0],
                                                   indexConst(tb, tl, 1));
                scf::YieldOp::create(tb, tl, ValueRange{next, out});
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, iter);
              });
          scf::YieldOp::create(b, l, branch.getResults());
        });
    Value result = filling.getResult(1);
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// "mp: Op (node 'n'): what", the message of a run-time check.
std::string checkMessage(Operation *op, StringRef opType, StringRef what) {
  std::string node = onnxNodeName(op);
  return ("mp: " + opType + (node.empty() ? "" : " (node '" + node + "')") +
          ": " + what)
      .str();
}

/// The single element of a scalar or 1-element tensor.
Value extractSingle(OpBuilder &b, Location loc, Value tensor) {
  SmallVector<Value> at(typeOf(tensor).getRank(), indexConst(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, tensor, at);
}

/// An integer or float scalar as i64 (floats truncated, as ONNX casts).
/// 64-bit integers of either signedness keep their bits: the lowering makes
/// all integers signless at its end.
Value toI64(OpBuilder &b, Location loc, Value v) {
  if (auto i = dyn_cast<IntegerType>(v.getType()); i && i.getWidth() == 64)
    return v;
  return castScalar(b, loc, v, b.getI64Type());
}

//===----------------------------------------------------------------------===//
// TopK
//===----------------------------------------------------------------------===//

/// TopK as a stable bottom-up merge sort of each row's positions along the
/// axis (O(n log n) per row of n), of which the first k are written out.
/// Two scratch vectors of n positions serve every row; each round of the
/// width loop merges runs from the first into the second and back, so the
/// sorted positions always end in the first. The order puts NaN above every
/// number and, merging stably, equal values in increasing position: the
/// order of onnxruntime and the ONNX reference. `sorted = false` gets the
/// same order. k outside [0, d] stops the run (cf.assert naming the node).
struct TopKLowering : public OpRewritePattern<TopKOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TopKOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    RankedTensorType inType = typeOf(x);
    int64_t rank = inType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    Type elt = inType.getElementType();
    bool largest = op.getLargest();
    Type indexType = rewriter.getIndexType(), i64 = rewriter.getI64Type();
    Value zero = indexConst(rewriter, loc, 0),
          one = indexConst(rewriter, loc, 1);

    SmallVector<Value> dims;
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(dimValue(rewriter, loc, x, d));
    Value n = dims[axis];
    Value k = arith::IndexCastOp::create(
        rewriter, loc, indexType, extractSingle(rewriter, loc, op.getK()));
    Value kInRange = arith::AndIOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, k,
                              zero),
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle, k, n));
    cf::AssertOp::create(
        rewriter, loc, kInRange,
        checkMessage(op, "TopK",
                     "k is out of range [0, d] for the input's size d along "
                     "axis " +
                         std::to_string(axis)));

    // The results: the input's dims with k along the axis.
    auto resultInit = [&](Value result) {
      auto type = typeOf(result);
      SmallVector<Value> dynSizes;
      for (int64_t d = 0; d < rank; ++d)
        if (type.isDynamicDim(d))
          dynSizes.push_back(d == axis ? k : dims[d]);
      return emptyTensor(rewriter, loc, type, dynSizes);
    };
    Value values = resultInit(op.getValues());
    Value indices = resultInit(op.getIndices());
    auto scratchType =
        RankedTensorType::get({inType.getDimSize(axis)}, indexType);
    SmallVector<Value> scratchSizes;
    if (inType.isDynamicDim(axis))
      scratchSizes.push_back(n);
    Value scratchA = emptyTensor(rewriter, loc, scratchType, scratchSizes);
    Value scratchB = emptyTensor(rewriter, loc, scratchType, scratchSizes);

    // Rows: every position of the dims other than the axis.
    SmallVector<Value> rowDims;
    Value rows = one;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis) {
        rowDims.push_back(dims[d]);
        rows = arith::MulIOp::create(rewriter, loc, rows, dims[d]);
      }

    // Whether value `a` comes strictly before value `b` in the result.
    auto before = [&](OpBuilder &b, Location l, Value va, Value vb) -> Value {
      if (isa<FloatType>(elt)) {
        using P = arith::CmpFPredicate;
        Value aNaN = arith::CmpFOp::create(b, l, P::UNO, va, va);
        Value bNaN = arith::CmpFOp::create(b, l, P::UNO, vb, vb);
        // NaN is above every number, for largest and smallest alike.
        Value nanOrder =
            largest ? Value(arith::AndIOp::create(
                          b, l, aNaN,
                          arith::XOrIOp::create(
                              b, l, bNaN,
                              arith::ConstantIntOp::create(b, l, 1, 1))))
                    : Value(arith::AndIOp::create(
                          b, l, bNaN,
                          arith::XOrIOp::create(
                              b, l, aNaN,
                              arith::ConstantIntOp::create(b, l, 1, 1))));
        Value ordered =
            arith::CmpFOp::create(b, l, largest ? P::OGT : P::OLT, va, vb);
        return arith::OrIOp::create(b, l, ordered, nanOrder);
      }
      using P = arith::CmpIPredicate;
      bool isUnsigned = elt.isUnsignedInteger() || elt.isInteger(1);
      P pred = largest ? (isUnsigned ? P::ugt : P::sgt)
                       : (isUnsigned ? P::ult : P::slt);
      return arith::CmpIOp::create(b, l, pred, va, vb);
    };

    auto rowLoop = scf::ForOp::create(
        rewriter, loc, zero, rows, one,
        ValueRange{values, indices, scratchA, scratchB},
        [&](OpBuilder &b, Location l, Value row, ValueRange iter) {
          // The row's coordinates, with `pos` along the axis.
          SmallVector<Value> rowCoords(rowDims.size());
          Value rest = row;
          for (int64_t d = (int64_t)rowDims.size() - 1; d >= 0; --d) {
            rowCoords[d] = arith::RemUIOp::create(b, l, rest, rowDims[d]);
            rest = arith::DivUIOp::create(b, l, rest, rowDims[d]);
          }
          auto at = [&](Value pos) {
            SmallVector<Value> coords(rowCoords);
            coords.insert(coords.begin() + axis, pos);
            return coords;
          };
          auto read = [&](OpBuilder &rb, Location rl, Value pos) -> Value {
            return tensor::ExtractOp::create(rb, rl, x, at(pos));
          };

          // Positions 0..n-1 in order.
          Value identity =
              scf::ForOp::create(
                  b, l, zero, n, one, ValueRange{iter[2]},
                  [&](OpBuilder &ib, Location il, Value j, ValueRange it) {
                    scf::YieldOp::create(ib, il,
                                         ValueRange{tensor::InsertOp::create(
                                             ib, il, j, it[0], ValueRange{j})});
                  })
                  .getResult(0);

          // One merge pass: the runs of `width` in `src` merged in pairs
          // into `dst`. Left runs hold lower positions, so on equal values
          // taking the left one first keeps positions increasing.
          auto mergePass = [&](OpBuilder &pb, Location pl, Value src, Value dst,
                               Value width) -> Value {
            Value span = arith::AddIOp::create(pb, pl, width, width);
            return scf::ForOp::create(
                       pb, pl, zero, n, span, ValueRange{dst},
                       [&](OpBuilder &mb, Location ml, Value lo,
                           ValueRange it) {
                         Value mid = arith::MinUIOp::create(
                             mb, ml, arith::AddIOp::create(mb, ml, lo, width),
                             n);
                         Value hi = arith::MinUIOp::create(
                             mb, ml, arith::AddIOp::create(mb, ml, lo, span),
                             n);
                         Value lastLeft =
                             arith::SubIOp::create(mb, ml, mid, one);
                         Value lastRight =
                             arith::SubIOp::create(mb, ml, hi, one);
                         auto merge = scf::ForOp::create(
                             mb, ml, lo, hi, one, ValueRange{lo, mid, it[0]},
                             [&](OpBuilder &eb, Location el, Value p,
                                 ValueRange m) {
                               Value i = m[0], j = m[1];
                               // Reads clamped into the runs; an exhausted
                               // run is never taken.
                               Value left = tensor::ExtractOp::create(
                                   eb, el, src,
                                   ValueRange{arith::MinUIOp::create(
                                       eb, el, i, lastLeft)});
                               Value right = tensor::ExtractOp::create(
                                   eb, el, src,
                                   ValueRange{arith::MinUIOp::create(
                                       eb, el, j, lastRight)});
                               Value rightFirst =
                                   before(eb, el, read(eb, el, right),
                                          read(eb, el, left));
                               Value leftLeft = arith::CmpIOp::create(
                                   eb, el, arith::CmpIPredicate::ult, i, mid);
                               Value rightLeft = arith::CmpIOp::create(
                                   eb, el, arith::CmpIPredicate::ult, j, hi);
                               Value takeRight = arith::AndIOp::create(
                                   eb, el, rightLeft,
                                   arith::OrIOp::create(
                                       eb, el, rightFirst,
                                       arith::XOrIOp::create(
                                           eb, el, leftLeft,
                                           arith::ConstantIntOp::create(
                                               eb, el, 1, 1))));
                               Value picked = arith::SelectOp::create(
                                   eb, el, takeRight, right, left);
                               Value next = tensor::InsertOp::create(
                                   eb, el, picked, m[2], ValueRange{p});
                               Value stepRight = arith::SelectOp::create(
                                   eb, el, takeRight, one, zero);
                               Value stepLeft = arith::SubIOp::create(
                                   eb, el, one, stepRight);
                               scf::YieldOp::create(
                                   eb, el,
                                   ValueRange{arith::AddIOp::create(eb, el, i,
                                                                    stepLeft),
                                              arith::AddIOp::create(eb, el, j,
                                                                    stepRight),
                                              next});
                             });
                         scf::YieldOp::create(mb, ml, merge.getResult(2));
                       })
                .getResult(0);
          };

          // Widths 1, 4, 16, ...: A -> B at w, B -> A at 2w.
          auto sorting = scf::WhileOp::create(
              b, l, TypeRange{indexType, scratchType, scratchType},
              ValueRange{one, identity, iter[3]},
              [&](OpBuilder &cb, Location cl, ValueRange args) {
                Value more = arith::CmpIOp::create(
                    cb, cl, arith::CmpIPredicate::ult, args[0], n);
                scf::ConditionOp::create(cb, cl, more, args);
              },
              [&](OpBuilder &wb, Location wl, ValueRange args) {
                Value width = args[0];
                Value twice = arith::AddIOp::create(wb, wl, width, width);
                Value inB = mergePass(wb, wl, args[1], args[2], width);
                Value inA = mergePass(wb, wl, inB, args[1], twice);
                scf::YieldOp::create(
                    wb, wl,
                    ValueRange{arith::AddIOp::create(wb, wl, twice, twice), inA,
                               inB});
              });
          Value sorted = sorting.getResult(1);

          // The first k positions and their values.
          auto writing = scf::ForOp::create(
              b, l, zero, k, one, ValueRange{iter[0], iter[1]},
              [&](OpBuilder &tb, Location tl, Value t, ValueRange it) {
                Value pos =
                    tensor::ExtractOp::create(tb, tl, sorted, ValueRange{t});
                Value v = read(tb, tl, pos);
                Value index = arith::IndexCastOp::create(tb, tl, i64, pos);
                scf::YieldOp::create(
                    tb, tl,
                    ValueRange{
                        tensor::InsertOp::create(tb, tl, v, it[0], at(t)),
                        tensor::InsertOp::create(tb, tl, index, it[1], at(t))});
              });
          scf::YieldOp::create(b, l,
                               ValueRange{writing.getResult(0),
                                          writing.getResult(1), sorted,
                                          sorting.getResult(2)});
        });
    rewriter.replaceOp(op, {rowLoop.getResult(0), rowLoop.getResult(1)});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// OneHot
//===----------------------------------------------------------------------===//

/// OneHot as one parallel generic over the result: on where the (truncated,
/// wrapped if negative) index equals the position along the new axis, off
/// elsewhere, so indices outside [-depth, depth) give all-off rows. A depth
/// below 1 stops the run (cf.assert naming the node).
struct OneHotLowering : public OpRewritePattern<OneHotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OneHotOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value indices = op.getIndices();
    RankedTensorType outType = op.getType();
    int64_t rank = outType.getRank(), axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    Value depth =
        toI64(rewriter, loc, extractSingle(rewriter, loc, op.getDepth()));
    cf::AssertOp::create(
        rewriter, loc,
        arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::sgt, depth,
            arith::ConstantIntOp::create(rewriter, loc, depth.getType(), 0)),
        checkMessage(op, "OneHot", "depth must be positive"));
    Value off =
        tensor::ExtractOp::create(rewriter, loc, op.getValues(),
                                  ValueRange{indexConst(rewriter, loc, 0)});
    Value on =
        tensor::ExtractOp::create(rewriter, loc, op.getValues(),
                                  ValueRange{indexConst(rewriter, loc, 1)});
    SmallVector<Value> dynSizes;
    for (int64_t d = 0; d < rank; ++d)
      if (outType.isDynamicDim(d))
        dynSizes.push_back(
            d == axis ? Value(arith::IndexCastOp::create(
                            rewriter, loc, rewriter.getIndexType(), depth))
                      : dimValue(rewriter, loc, indices, d < axis ? d : d - 1));
    Value result = parallelGeneric(
        rewriter, loc, outType, {indices},
        {droppedAxesMap(op.getContext(), rank, {axis})},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value index = toI64(b, l, args[0]);
          Value negative = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::slt, index,
              arith::ConstantIntOp::create(b, l, index.getType(), 0));
          Value wrapped = arith::SelectOp::create(
              b, l, negative, arith::AddIOp::create(b, l, index, depth), index);
          Value here = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            wrapped, here);
          return arith::SelectOp::create(b, l, hit, on, off);
        },
        dynSizes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateDataDependentToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<NonZeroLowering, TopKLowering, OneHotLowering>(
      patterns.getContext());
}

} // namespace mp
