//===- TileAndVectorize.cpp - register tiles for contractions -------------===//
//
// A MatMul-like linalg.generic (loops b.., m, k, n after the lowering's
// loop order) becomes, per tile-m x tile-n output block, a loop over k whose
// body is vector code: broadcast a column of the first input, load a row of
// the second, multiply-add into an accumulator that loop-invariant subset
// hoisting keeps in registers across k.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mp {
#define GEN_PASS_DEF_TILEANDVECTORIZE
#include "mp/Codegen/CPU/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// Tile sizes and loop order for one contraction.
struct ContractionTiling {
  SmallVector<int64_t> sizes;
  SmallVector<int64_t> interchange;
  /// n has a run-time size: its loop is peeled into full tiles, which are
  /// vectorized, and one partial tile, which keeps scalar loops.
  bool peelN = false;
};

/// The largest of `preferred`, `preferred / 2`, ... down to `minimum` that
/// divides `size`; 0 when none does.
int64_t dividingTile(int64_t size, int64_t preferred, int64_t minimum) {
  for (int64_t t = preferred; t >= minimum && t > 0; t /= 2)
    if (size % t == 0)
      return t;
  return 0;
}

/// Whether `map` reads loop `loop` as its innermost (contiguous) dimension.
bool innermostIs(AffineMap map, unsigned loop) {
  return map.getNumResults() > 0 &&
         map.getResults().back() == getAffineDimExpr(loop, map.getContext());
}

/// Recognizes a two-input, one-reduction contraction whose last parallel
/// loop n is the innermost dimension of the output and of the second input
/// (and not read by the first); returns how to tile it, or nothing.
std::optional<ContractionTiling> planContraction(linalg::GenericOp op,
                                                 int64_t tileM,
                                                 int64_t tileN) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || !op.hasPureTensorSemantics())
    return std::nullopt;
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) {
        return m.isProjectedPermutation();
      }))
    return std::nullopt;
  // Loops of run-time size take tiles of 1 (batch dims; m and k when
  // dynamic); a run-time n takes full tiles and a scalar remainder.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // The body must multiply and accumulate; anything else (a max-reduce, a
  // gather) keeps its scalar loops.
  bool multiplies = false;
  for (Operation &inner : op.getBody()->without_terminator())
    multiplies |= isa<arith::MulFOp, arith::MulIOp>(inner);
  if (!multiplies)
    return std::nullopt;

  unsigned numLoops = op.getNumLoops();
  auto iterators = op.getIteratorTypesArray();
  // n: the last parallel loop (a convolution by taps puts its reduction
  // after it; a MatMul before it).
  unsigned n = numLoops - 1;
  while (n > 0 && iterators[n] != utils::IteratorType::parallel)
    --n;
  if (iterators[n] != utils::IteratorType::parallel)
    return std::nullopt;
  AffineMap lhsMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap rhsMap = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!innermostIs(outMap, n) || !innermostIs(rhsMap, n) ||
      lhsMap.isFunctionOfDim(n))
    return std::nullopt;
  bool dynamicN = ShapedType::isDynamic(ranges[n]);
  int64_t nTile = dynamicN ? tileN : dividingTile(ranges[n], tileN, 4);
  if (nTile == 0)
    return std::nullopt;

  ContractionTiling tiling;
  tiling.sizes.assign(numLoops, 1);
  tiling.sizes[n] = nTile;
  tiling.peelN = dynamicN;
  unsigned k = 0;
  std::optional<unsigned> m;
  for (unsigned i = 0; i < numLoops; ++i) {
    if (i == n)
      continue;
    if (iterators[i] == utils::IteratorType::reduction) {
      k = i;
      continue;
    }
    // m: a row of the first input and of the output, not of the second.
    if (lhsMap.isFunctionOfDim(i) && !rhsMap.isFunctionOfDim(i))
      m = i;
  }
  if (m && !ShapedType::isDynamic(ranges[*m])) {
    int64_t mTile = dividingTile(ranges[*m], tileM, 1);
    // MLIR 22's canonicalizer folds shape_cast(broadcast(v: mxk1 -> nxmx1))
    // into broadcast(v -> nxm) when m == n, which transposes the first
    // input's column: keep the block non-square.
    if (mTile > 1 && mTile == nTile)
      mTile /= 2;
    tiling.sizes[*m] = mTile;
  }
  // Loop order: everything else, then m, n, and k innermost so that the
  // accumulator block is loop-invariant in the k loop.
  for (unsigned i = 0; i < numLoops; ++i)
    if (i != k && i != n && (!m || i != *m))
      tiling.interchange.push_back(i);
  if (m)
    tiling.interchange.push_back(*m);
  tiling.interchange.push_back(n);
  tiling.interchange.push_back(k);
  return tiling;
}

/// Tiles and vectorizes `op`; leaves it untouched on failure.
void tileAndVectorize(RewriterBase &rewriter, linalg::GenericOp op,
                      const ContractionTiling &tiling) {
  scf::SCFTilingOptions options;
  options.setTileSizes(
      getAsIndexOpFoldResult(rewriter.getContext(), tiling.sizes));
  options.setInterchange(tiling.interchange);
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return;
  rewriter.replaceOp(op, tiled->replacements);
  if (tiling.peelN) {
    // The n loop is the second innermost (k is innermost). Peeling leaves
    // the tiled op in the loop of full tiles, whose sizes are then exactly
    // the tile sizes.
    auto nLoop = dyn_cast<scf::ForOp>(
        tiled->loops[tiled->loops.size() - 2].getOperation());
    scf::ForOp partial;
    if (!nLoop ||
        failed(scf::peelForLoopAndSimplifyBounds(rewriter, nLoop, partial)))
      return;
  }
  for (Operation *tile : tiled->tiledOps) {
    rewriter.setInsertionPoint(tile);
    SmallVector<int64_t> vectorSizes;
    if (tiling.peelN)
      vectorSizes = tiling.sizes;
    SmallVector<bool> scalable(vectorSizes.size(), false);
    FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
        rewriter, tile, vectorSizes, scalable,
        /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
        /*assumeDynamicDimsMatchVecSizes=*/tiling.peelN);
    if (succeeded(vectorized))
      rewriter.replaceOp(tile, vectorized->replacements);
  }
}

struct TileAndVectorizePass
    : public mp::impl::TileAndVectorizeBase<TileAndVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<std::pair<linalg::GenericOp, ContractionTiling>> work;
    module.walk([&](linalg::GenericOp op) {
      if (auto tiling = planContraction(op, tileM, tileN))
        work.emplace_back(op, std::move(*tiling));
    });
    if (work.empty())
      return;
    IRRewriter rewriter(ctx);
    for (auto &[op, tiling] : work)
      tileAndVectorize(rewriter, op, tiling);

    // Broadcast reads become a plain read and a vector.broadcast; unit dims
    // of the tile go away, so the k loop carries a 2-D accumulator.
    RewritePatternSet patterns(ctx);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateDropUnitDimWithShapeCastPatterns(patterns);
    for (Dialect *dialect : ctx->getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName name : ctx->getRegisteredOperations())
      name.getCanonicalizationPatterns(patterns, ctx);
    FrozenRewritePatternSet frozen(std::move(patterns));
    if (failed(applyPatternsGreedily(module, frozen)))
      return signalPassFailure();

    // The accumulator's read and write move out of the k loop (inner loops
    // first); the loop arguments this leaves unused fold away.
    module.walk([&](scf::ForOp loop) {
      hoistLoopInvariantSubsets(rewriter, cast<LoopLikeOpInterface>(*loop));
    });
    if (failed(applyPatternsGreedily(module, frozen)))
      return signalPassFailure();
  }
};

} // namespace
