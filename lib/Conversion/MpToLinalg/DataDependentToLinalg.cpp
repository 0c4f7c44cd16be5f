//===- DataDependentToLinalg.cpp - ops whose result sizes are values ------===//
//
// NonZero: the number of results is counted at run time, then the result is
// allocated at that size and filled. Both passes are sequential loops over
// the input in row-major order, which is also the order of the result's
// columns.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

} // namespace

void populateDataDependentToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<NonZeroLowering>(patterns.getContext());
}

} // namespace mp
