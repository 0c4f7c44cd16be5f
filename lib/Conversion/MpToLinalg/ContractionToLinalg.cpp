//===- ContractionToLinalg.cpp - MatMul, Gemm and Einsum to linalg --------===//
//
// One linalg.generic contraction per op, broadcasting batch dims, with an
// accumulator of the type the precision plan asks for (f32 for f16 data).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/Materialize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

/// Accumulator type of `op` producing `elt`: f32 when the decision says so
/// or the data is half precision.
Type accumulatorFor(Operation *op, Type elt) {
  if (auto d = op->getAttrOfType<PrecisionAttr>(kPrecisionAttrName))
    if (d.getAccumulate())
      return d.getAccumulate();
  return accumulatorType(elt);
}

/// Map of a [batch.., r, c] operand in the (b.., m, n, k) space: `rowDim`
/// and `colDim` name the iteration dims of its last two axes.
AffineMap operandMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                     ArrayRef<int64_t> outBatch, int64_t rowDim,
                     int64_t colDim) {
  int64_t batch = outBatch.size(), rank = batch + 3;
  int64_t offset = batch - (shape.size() - 2);
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i + 2 < (int64_t)shape.size(); ++i) {
    int64_t d = offset + i;
    exprs.push_back(shape[i] == 1 && outBatch[d] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(d, ctx));
  }
  exprs.push_back(getAffineDimExpr(rowDim, ctx));
  exprs.push_back(getAffineDimExpr(colDim, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

struct MatMulLowering : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto outType = op.getType();
    auto lt = op.getLhs().getType(), rt = op.getRhs().getType();
    if (lt.getRank() < 2 || rt.getRank() < 2) {
      // numpy matmul: a 1-D lhs is a row [1, K], a 1-D rhs a column [K, 1];
      // the added dim is dropped from the result.
      SmallVector<int64_t> shape(outType.getShape());
      Value l = op.getLhs(), r = op.getRhs();
      Location loc = op.getLoc();
      if (rt.getRank() == 1) {
        shape.push_back(1);
        r = reshapeTo(rewriter, loc, r,
                      RankedTensorType::get({rt.getDimSize(0), 1},
                                            rt.getElementType()));
      }
      if (lt.getRank() == 1) {
        shape.insert(shape.end() - 1, 1);
        l = reshapeTo(rewriter, loc, l,
                      RankedTensorType::get({1, lt.getDimSize(0)},
                                            lt.getElementType()));
      }
      auto matrix = MatMulOp::create(
          rewriter, loc, RankedTensorType::get(shape, outType.getElementType()),
          l, r);
      matrix->setAttrs(op->getAttrs());
      rewriter.replaceOp(op, reshapeTo(rewriter, loc, matrix, outType));
      return success();
    }
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    ArrayRef<int64_t> batch = outType.getShape().drop_back(2);
    int64_t m = batch.size(), n = m + 1, k = m + 2;
    Type acc = accumulatorFor(op, outType.getElementType());
    // Batch dims known only at run time may broadcast there.
    Broadcast bc = broadcastDynamic(rewriter, loc, outType.getShape(),
                                    {op.getLhs(), op.getRhs()},
                                    /*trailing=*/2);
    Value r = contract(rewriter, loc, outType, bc.operands[0],
                       operandMap(ctx, lt.getShape(), batch, m, k),
                       bc.operands[1], operandMap(ctx, rt.getShape(), batch, k, n),
                       acc);
    rewriter.replaceOp(op, castElements(rewriter, loc, r, outType.getElementType()));
    return success();
  }
};

struct GemmLowering : public OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    auto outType = op.getType();
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    // Iteration space (m, n, k).
    auto map = [&](int64_t r, int64_t c) {
      return AffineMap::get(3, 0,
                            {getAffineDimExpr(r, ctx), getAffineDimExpr(c, ctx)},
                            ctx);
    };
    AffineMap aMap = op.getTransA() ? map(2, 0) : map(0, 2);
    AffineMap bMap = op.getTransB() ? map(1, 2) : map(2, 1);
    Type elt = outType.getElementType();
    Type acc = accumulatorFor(op, elt);
    Value ab = contract(rewriter, loc, outType, op.getA(), aMap, op.getB(),
                        bMap, acc);
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    SmallVector<Value> operands = {ab};
    if (op.getC())
      operands.push_back(op.getC());
    Value r = elementwise(
        rewriter, loc, outType, operands,
        [&](OpBuilder &b, Location l, ValueRange a) {
          bool f = isa<FloatType>(acc);
          auto mul = [&](Value x, double c) -> Value {
            if (c == 1.0)
              return x;
            Value cv = scalarConst(b, l, acc, c);
            return f ? Value(arith::MulFOp::create(b, l, x, cv))
                     : Value(arith::MulIOp::create(b, l, x, cv));
          };
          Value v = mul(a[0], alpha);
          if (a.size() > 1) {
            Value cterm = mul(castScalar(b, l, a[1], acc), beta);
            v = f ? Value(arith::AddFOp::create(b, l, v, cterm))
                  : Value(arith::AddIOp::create(b, l, v, cterm));
          }
          return castScalar(b, l, v, elt);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Einsum as one generic: a loop per distinct letter (and per dim an
/// ellipsis covers, right-aligned and broadcast like numpy), reduction over
/// the letters missing from the output, products summed in the accumulator.
struct EinsumLowering : public OpRewritePattern<EinsumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EinsumOp op,
                                PatternRewriter &rewriter) const override {
    std::string eq;
    for (char ch : op.getEquation())
      if (ch != ' ')
        eq += ch;
    StringRef equation = eq;
    auto [lhs, out] = equation.split("->");
    bool explicitOut = equation.contains("->");
    SmallVector<StringRef> terms;
    lhs.split(terms, ',');
    if (terms.size() != op.getInputs().size())
      return rewriter.notifyMatchFailure(op, "operand count");

    // Each operand as a list of symbols: a letter, or '0'+k for the k-th
    // ellipsis dim counted from the right.
    int64_t ellipsisDims = 0;
    SmallVector<SmallVector<char>> symbols;
    for (auto [term, v] : llvm::zip(terms, op.getInputs())) {
      int64_t rank = typeOf(v).getRank();
      int64_t letters = llvm::count_if(term, llvm::isAlpha);
      int64_t e = term.contains("...") ? rank - letters : 0;
      if (e < 0 || (!term.contains("...") && letters != rank))
        return rewriter.notifyMatchFailure(op, "rank mismatch");
      ellipsisDims = std::max(ellipsisDims, e);
      SmallVector<char> syms;
      for (size_t i = 0; i < term.size(); ++i) {
        if (term.substr(i).starts_with("...")) {
          for (int64_t k = e - 1; k >= 0; --k)
            syms.push_back('0' + k);
          i += 2;
        } else {
          syms.push_back(term[i]);
        }
      }
      symbols.push_back(syms);
    }
    SmallVector<char> outSyms;
    if (explicitOut) {
      for (size_t i = 0; i < out.size(); ++i) {
        if (out.substr(i).starts_with("...")) {
          for (int64_t k = ellipsisDims - 1; k >= 0; --k)
            outSyms.push_back('0' + k);
          i += 2;
        } else {
          outSyms.push_back(out[i]);
        }
      }
    } else {
      // Implicit: the ellipsis dims, then letters used once, sorted.
      for (int64_t k = ellipsisDims - 1; k >= 0; --k)
        outSyms.push_back('0' + k);
      std::map<char, int> uses;
      for (auto &syms : symbols)
        for (char ch : syms)
          if (llvm::isAlpha(ch))
            ++uses[ch];
      for (auto [ch, n] : uses)
        if (n == 1)
          outSyms.push_back(ch);
    }

    // Loops: output symbols first (parallel), then the rest (reduction).
    SmallVector<char> loops(outSyms.begin(), outSyms.end());
    for (auto &syms : symbols)
      for (char ch : syms)
        if (!llvm::is_contained(loops, ch))
          loops.push_back(ch);
    SmallVector<int64_t> sizes(loops.size(), 1);
    for (auto [syms, v] : llvm::zip(symbols, op.getInputs()))
      for (auto [ch, d] : llvm::zip(syms, typeOf(v).getShape()))
        if (d != 1)
          sizes[llvm::find(loops, ch) - loops.begin()] = d;

    MLIRContext *ctx = op.getContext();
    Location loc = op.getLoc();
    int64_t numLoops = loops.size();
    // Dynamic dims: a loop's run-time size is the largest of the dims that
    // read it (numpy broadcasting of the ellipsis dims); an ellipsis dim
    // that is 1 at run time where the loop is not is expanded first.
    SmallVector<Value> inputs(op.getInputs());
    SmallVector<Value> loopSizes(numLoops);
    for (auto [syms, v] : llvm::zip(symbols, inputs))
      for (auto [i, ch] : llvm::enumerate(syms)) {
        int64_t loop = llvm::find(loops, ch) - loops.begin();
        if (typeOf(v).getDimSize(i) == 1)
          continue;
        Value d = dimValue(rewriter, loc, v, i);
        loopSizes[loop] = loopSizes[loop] ? Value(arith::MaxUIOp::create(
                                                rewriter, loc, loopSizes[loop], d))
                                          : d;
      }
    for (auto [syms, v] : llvm::zip(symbols, inputs))
      for (auto [i, ch] : llvm::enumerate(syms))
        if (!llvm::isAlpha(ch) && typeOf(v).isDynamicDim(i))
          v = expandUnitDim(rewriter, loc, v, i,
                            loopSizes[llvm::find(loops, ch) - loops.begin()]);
    SmallVector<AffineMap> maps;
    for (auto [syms, v] : llvm::zip(symbols, inputs)) {
      SmallVector<AffineExpr> exprs;
      for (auto [ch, d] : llvm::zip(syms, typeOf(v).getShape())) {
        int64_t loop = llvm::find(loops, ch) - loops.begin();
        exprs.push_back(d == 1 && sizes[loop] != 1
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(loop, ctx));
      }
      maps.push_back(AffineMap::get(numLoops, 0, exprs, ctx));
    }
    SmallVector<AffineExpr> outExprs;
    for (size_t i = 0; i < outSyms.size(); ++i)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    maps.push_back(AffineMap::get(numLoops, 0, outExprs, ctx));
    SmallVector<utils::IteratorType> iterators;
    for (int64_t i = 0; i < numLoops; ++i)
      iterators.push_back(i < (int64_t)outSyms.size()
                              ? utils::IteratorType::parallel
                              : utils::IteratorType::reduction);

    RankedTensorType outType = op.getType();
    Type elt = outType.getElementType();
    Type acc = accumulatorFor(op, elt);
    bool isFloat = isa<FloatType>(acc);
    auto accType = RankedTensorType::get(outType.getShape(), acc);
    SmallVector<Value> outSizes;
    for (int64_t i = 0; i < outType.getRank(); ++i)
      if (outType.isDynamicDim(i)) // only dims of 1 read a loop without a size
        outSizes.push_back(loopSizes[i] ? loopSizes[i]
                                        : indexConst(rewriter, loc, 1));
    Value init = linalg::FillOp::create(
                     rewriter, loc, scalarConst(rewriter, loc, acc, 0),
                     ValueRange{emptyTensor(rewriter, loc, accType, outSizes)})
                     .getResult(0);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, accType, inputs, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value p = castScalar(b, l, a[0], acc);
          for (Value x : a.drop_front().drop_back()) {
            x = castScalar(b, l, x, acc);
            p = isFloat ? Value(arith::MulFOp::create(b, l, p, x))
                        : Value(arith::MulIOp::create(b, l, p, x));
          }
          Value sum = isFloat ? Value(arith::AddFOp::create(b, l, a.back(), p))
                              : Value(arith::AddIOp::create(b, l, a.back(), p));
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, castElements(rewriter, loc, generic.getResult(0), elt));
    return success();
  }
};

} // namespace

void populateContractionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MatMulLowering, GemmLowering, EinsumLowering>(
      patterns.getContext());
}

} // namespace mp
