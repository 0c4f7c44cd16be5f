//===- ConcatToLinalg.cpp - concats of a tensor's own slices --------------===//
//
// Rotary embeddings as exporters write them rotate each head by half:
// concat(-x[..., h:], x[..., :h]). Lowered piece by piece, that is a slice
// copy, a negation and two inserts, and a buffer the rotary kernel reads
// back. Seen whole, it is one elementwise op reading x at (d + h) mod 2h
// and negating the first half: a generic that fuses into its consumer.
//
// GLM's interleaved rotary stacks its pieces on a new last axis and merges
// it into the one before: reshape(concat(unsqueeze(-x[..., 1::2]),
// unsqueeze(x[..., 0::2]), -1)). That is an interleave: element j of the
// result is piece j mod n at j / n, one generic over the merged shape.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

/// One operand of the concat: a static unit-stride slice of `source`,
/// taken as is or through `op` (one input, elementwise, used only here).
struct Piece {
  tensor::ExtractSliceOp slice;
  linalg::GenericOp op;
};

/// `value` as a piece, if it is one.
std::optional<Piece> pieceOf(Value value) {
  Piece piece;
  if (auto generic = value.getDefiningOp<linalg::GenericOp>()) {
    if (!generic->hasOneUse() || generic.getNumDpsInputs() != 1 ||
        generic.getNumDpsInits() != 1 ||
        generic.getNumParallelLoops() != generic.getNumLoops() ||
        !llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        !generic.getMatchingBlockArgument(generic.getDpsInitOperand(0))
             .use_empty() ||
        llvm::any_of(generic.getBody()->without_terminator(),
                     [](Operation &op) {
                       return isa<linalg::IndexOp>(op) || !isPure(&op);
                     }))
      return std::nullopt;
    piece.op = generic;
    value = generic.getDpsInputs()[0];
  }
  piece.slice = value.getDefiningOp<tensor::ExtractSliceOp>();
  if (!piece.slice || !piece.slice.hasUnitStride() ||
      !piece.slice.getOffsets().empty() || !piece.slice.getSizes().empty())
    return std::nullopt;
  return piece;
}

struct FoldRotationConcat : public OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(concat.getType());
    if (!type || !type.hasStaticShape())
      return failure();
    int64_t dim = concat.getDim(), size = type.getDimSize(dim);
    Value source;
    std::optional<int64_t> shift;
    SmallVector<Piece> pieces;
    SmallVector<int64_t> starts; // output position of each piece
    int64_t at = 0;
    for (Value input : concat.getInputs()) {
      std::optional<Piece> piece = pieceOf(input);
      if (!piece)
        return failure();
      tensor::ExtractSliceOp slice = piece->slice;
      auto sourceType = dyn_cast<RankedTensorType>(slice.getSourceType());
      if (!source)
        source = slice.getSource();
      // Whole along every other dim, and the source as long as the output
      // along this one: only a rotation of the same tensor.
      if (slice.getSource() != source || !sourceType ||
          sourceType.getShape() != type.getShape() ||
          sourceType.getElementType() !=
              (piece->op
                   ? cast<ShapedType>(piece->op.getDpsInputs()[0].getType())
                         .getElementType()
                   : type.getElementType()))
        return failure();
      ArrayRef<int64_t> offsets = slice.getStaticOffsets();
      ArrayRef<int64_t> sizes = slice.getStaticSizes();
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (d != dim && (offsets[d] != 0 || sizes[d] != type.getDimSize(d)))
          return failure();
      int64_t pieceShift = ((offsets[dim] - at) % size + size) % size;
      if (shift && *shift != pieceShift)
        return failure();
      // A piece must not wrap around the source's end.
      if (offsets[dim] + sizes[dim] > size)
        return failure();
      shift = pieceShift;
      if (piece->op &&
          cast<ShapedType>(piece->op.getResult(0).getType()).getElementType() !=
              type.getElementType())
        return failure();
      pieces.push_back(*piece);
      starts.push_back(at);
      at += sizes[dim];
    }
    if (pieces.size() < 2 || at != size)
      return failure();

    Location loc = concat.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank();
    SmallVector<AffineExpr> reads;
    for (int64_t d = 0; d < rank; ++d)
      reads.push_back(d == dim ? (getAffineDimExpr(d, ctx) + *shift) % size
                               : getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, reads, ctx),
                                rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{source}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value position = linalg::IndexOp::create(b, l, dim);
          Value result;
          for (auto [piece, start] : llvm::reverse(llvm::zip(pieces, starts))) {
            Value value = args[0];
            if (piece.op) {
              Block *body = piece.op.getBody();
              IRMapping map;
              map.map(body->getArgument(0), args[0]);
              for (Operation &op : body->without_terminator())
                b.clone(op, map);
              value = map.lookupOrDefault(body->getTerminator()->getOperand(0));
            }
            if (!result) { // the last piece: everything past the others
              result = value;
              continue;
            }
            Value end = arith::ConstantIndexOp::create(
                b, l,
                start + cast<RankedTensorType>(piece.slice.getType())
                            .getDimSize(dim));
            Value inside = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, position, end);
            result = arith::SelectOp::create(b, l, inside, value, result);
          }
          linalg::YieldOp::create(b, l, result);
        });
    rewriter.replaceOp(concat, generic.getResult(0));
    return success();
  }
};

/// Whether `groups` (a reshape's reassociation) pairs dims dim - 1 and dim
/// of the larger shape and leaves every other dim alone.
bool mergesOnly(ArrayRef<ReassociationIndices> groups, int64_t dim) {
  for (auto [i, group] : llvm::enumerate(groups)) {
    bool merged = group.size() == 2 && group[0] == dim - 1 && group[1] == dim;
    if ((group.size() != 1 && !merged) || merged != ((int64_t)i == dim - 1))
      return false;
  }
  return true;
}

/// The source of `value` if it is a reshape adding unit dim `dim` after
/// dim - 1.
Value unsqueezedAt(Value value, int64_t dim) {
  auto expand = value.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || dim == 0 || expand.getResultType().getDimSize(dim) != 1 ||
      !mergesOnly(expand.getReassociationIndices(), dim))
    return {};
  return expand.getSrc();
}

/// reshape(concat(unsqueeze(p_0), ..., unsqueeze(p_n-1), axis = d)) merging
/// d into d - 1: the interleave of the pieces along d - 1, computed as one
/// generic over the merged shape (piece j mod n read at j / n) instead of
/// inserts into a tensor that the reshape then reads.
struct FoldInterleaveConcat : public OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(concat.getType());
    int64_t dim = concat.getDim();
    if (!type || !type.hasStaticShape() || dim == 0 || !concat->hasOneUse())
      return failure();
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(*concat->user_begin());
    if (!collapse || !mergesOnly(collapse.getReassociationIndices(), dim))
      return failure();
    SmallVector<Value> pieces;
    for (Value input : concat.getInputs()) {
      Value piece = unsqueezedAt(input, dim);
      if (!piece)
        return failure();
      pieces.push_back(piece);
    }
    int64_t n = pieces.size();
    if (n < 2 || type.getDimSize(dim) != n)
      return failure();

    RankedTensorType result = collapse.getResultType();
    int64_t rank = result.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> reads;
    for (int64_t d = 0; d < rank; ++d)
      reads.push_back(d == dim - 1 ? getAffineDimExpr(d, ctx).floorDiv(n)
                                   : getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps(n, AffineMap::get(rank, 0, reads, ctx));
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Location loc = concat.getLoc();
    Value init = tensor::EmptyOp::create(rewriter, loc, result.getShape(),
                                         result.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, pieces, ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value slot = arith::RemUIOp::create(
              b, l, linalg::IndexOp::create(b, l, dim - 1),
              arith::ConstantIndexOp::create(b, l, n));
          Value value = args[n - 1];
          for (int64_t k = n - 2; k >= 0; --k) {
            Value here =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, slot,
                                      arith::ConstantIndexOp::create(b, l, k));
            value = arith::SelectOp::create(b, l, here, args[k], value);
          }
          linalg::YieldOp::create(b, l, value);
        });
    rewriter.replaceOp(collapse, generic.getResult(0));
    rewriter.eraseOp(concat);
    return success();
  }
};

} // namespace

void mp::populateConcatToLinalgPatterns(RewritePatternSet &patterns) {
  // Tried before the concat is split into inserts.
  patterns.add<FoldRotationConcat, FoldInterleaveConcat>(patterns.getContext(),
                                                         /*benefit=*/2);
  tensor::populateDecomposeTensorConcatPatterns(patterns);
}
