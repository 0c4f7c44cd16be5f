//===- ContractionToMma.cpp - f16 contractions on Tensor Cores ------------===//
//
// A bufferized linalg.generic that accumulates products of two f16 values
// into an f32 buffer (MatMul, Gemm, batched MatMul, attention's Q.K^T and
// P.V, with any elementwise prologue the fusion pass folded into either
// side) becomes one kernel of warp tiles: each warp owns 16 rows x 8*nSub
// columns of the result and walks the reduction 16 at a time with
// `nvgpu.mma.sync` (m16n8k16, f16 x f16 -> f32), i.e.
// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` in PTX.
//
// Fragments are gathered straight from global memory following the PTX
// fragment layout (lane = 4 * group + thread-in-group), so the prologue is
// evaluated on each element as it is loaded. Edges that do not fill a tile
// read zeros and skip their stores, so every shape is exact. A result
// buffer filled right before (the zeros of MatMul) starts the accumulators
// at the fill's value: the fill is no kernel of its own. The elementwise ops
// that read the result next (its f16 cast, a transpose of heads, a residual
// add) run on the accumulators before they are stored (Epilogue.h).
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "Epilogue.h"
#include "GenericBody.h"
#include "WeightLayout.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mp {
#define GEN_PASS_DEF_CONTRACTIONTOMMA
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16, kWarpSize = 32;

/// A generic recognized as `out += extf(lhs) * extf(rhs)` with loop dims
/// split into batch (both sides), m (lhs only), n (rhs only) and the
/// reduction dims k (several for a convolution: channels and taps, an
/// implicit GEMM). Rows, columns and the reduction index are row-major over
/// their group of dims.
struct Contraction {
  linalg::GenericOp op;
  linalg::FillOp fill; // initializes the result, or null: it is read
  SmallVector<EpilogueStage> epilogue;
  bool storeResult = true;
  BodySlice lhs, rhs;
  SmallVector<unsigned> batch, m, n, k;
  SmallVector<int64_t> sizes; // static loop ranges
  int64_t size(ArrayRef<unsigned> dims) const { return extentOf(dims, sizes); }
};

/// The f16 operand of an `arith.extf` to f32.
Value extendedHalf(Value v) {
  auto ext = v.getDefiningOp<arith::ExtFOp>();
  if (!ext || !ext.getIn().getType().isF16() || !ext.getType().isF32())
    return nullptr;
  return ext.getIn();
}

FailureOr<Contraction> matchContraction(linalg::GenericOp op) {
  FailureOr<SmallVector<int64_t>> sizes = staticSingleOutputRanges(op);
  if (failed(sizes))
    return failure();
  OpOperand *init = op.getDpsInitOperand(0);
  auto outType = dyn_cast<MemRefType>(init->get().getType());
  if (!outType || !outType.getElementType().isF32())
    return failure();
  Contraction c;
  c.op = op;
  c.sizes = std::move(*sizes);
  for (auto [d, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    if (kind == utils::IteratorType::reduction)
      c.k.push_back(d);
  if (c.k.empty())
    return failure();

  // yield (extf(a) * extf(b)) + out, with `out` used nowhere else.
  Block *body = op.getBody();
  BlockArgument out = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || !out.hasOneUse())
    return failure();
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (product == out || (add.getLhs() != out && add.getRhs() != out))
    return failure();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getBlock() != body)
    return failure();
  Value a = extendedHalf(mul.getLhs()), b = extendedHalf(mul.getRhs());
  if (!a || !b)
    return failure();
  FailureOr<BodySlice> lhs = sliceBody(op, a), rhs = sliceBody(op, b);
  if (failed(lhs) || failed(rhs))
    return failure();
  c.lhs = std::move(*lhs);
  c.rhs = std::move(*rhs);
  for (unsigned d : c.k)
    if (!c.lhs.dims.test(d) || !c.rhs.dims.test(d))
      return failure();

  // The result is indexed by every parallel dim, each once.
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() ||
      outMap.getNumResults() != op.getNumParallelLoops())
    return failure();
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    if (llvm::is_contained(c.k, d))
      continue;
    bool inLhs = c.lhs.dims.test(d), inRhs = c.rhs.dims.test(d);
    (inLhs && !inRhs ? c.m : !inLhs && inRhs ? c.n : c.batch).push_back(d);
  }
  return c;
}

/// Builds the kernel of one contraction. Loop-dim values are gathered in a
/// `point` (one index Value per loop dim) from which each operand's indices
/// follow through its indexing map.
class MmaKernelBuilder : public IndexBuilder {
public:
  MmaKernelBuilder(Contraction c, OpBuilder &b, int64_t warpsPerBlock,
                   int64_t maxNSub)
      : IndexBuilder(b, c.op.getLoc()), c(c), warpsPerBlock(warpsPerBlock) {
    M = c.size(c.m);
    N = c.size(c.n);
    K = c.size(c.k);
    nSub = std::clamp<int64_t>(llvm::divideCeil(N, kMmaN), 1, maxNSub);
    mTiles = llvm::divideCeil(M, kMmaM);
    nTiles = llvm::divideCeil(N, kMmaN * nSub);
    kTiles = llvm::divideCeil(K, kMmaK);
  }

  /// Lays out a constant weight read as the right-hand side in fragment
  /// order (WeightLayout.h) for the kernel to load from; returns the global
  /// it read, or null when it is not such a weight (then fragments are
  /// gathered as they are).
  memref::GlobalOp layOutWeight(SymbolTable &symbols) {
    auto arg = dyn_cast<BlockArgument>(c.rhs.value);
    if (!arg || !c.rhs.ops.empty())
      return {};
    OpOperand *operand = c.op.getDpsInputOperand(arg.getArgNumber());
    memref::GlobalOp source = constantHalfGlobal(operand->get());
    AffineMap map = c.op.getMatchingIndexingMap(operand);
    if (!source || !map.isProjectedPermutation() ||
        llvm::any_of(map.getResults(), [&](AffineExpr e) {
          unsigned d = cast<AffineDimExpr>(e).getPosition();
          return !llvm::is_contained(c.n, d) && !llvm::is_contained(c.k, d);
        }))
      return {};
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    if (!type || !type.getLayout().isIdentity())
      return {};
    // The map reads only column and reduction dims, so an element's offset
    // is a column's part plus a reduction index's part.
    SmallVector<int64_t> strides = type.getStridesAndOffset().first;
    auto offsets = [&](ArrayRef<unsigned> dims, int64_t extent) {
      SmallVector<int64_t> result(extent, 0);
      for (int64_t linear = 0; linear < extent; ++linear) {
        int64_t rest = linear;
        for (unsigned d : llvm::reverse(dims)) {
          int64_t index = rest % c.sizes[d];
          rest /= c.sizes[d];
          for (auto [e, stride] : llvm::zip(map.getResults(), strides))
            if (cast<AffineDimExpr>(e).getPosition() == d)
              result[linear] += index * stride;
        }
      }
      return result;
    };
    // A read as it is stored, in whole k-tiles, rows a multiple of 4: each
    // lane takes 4 adjacent reduction indices (one load per row, the 4
    // lanes of a row 32 contiguous bytes or more) and the weight is laid
    // out in that numbering.
    if (OpOperand *a = pairedInput(c.lhs))
      quadK = K % kMmaK == 0 &&
              cast<MemRefType>(a->get().getType()).getShape().back() % 4 == 0;
    memref::GlobalOp tiles =
        buildFragmentOrderedWeight(symbols, source, {nTiles * nSub, kTiles},
                                   offsets(c.n, N), offsets(c.k, K), quadK);
    rhsTiles = memref::GetGlobalOp::create(b, loc, tiles.getType(),
                                           tiles.getSymName());
    return source;
  }

  void build() {
    int64_t tiles = c.size(c.batch) * mTiles * nTiles;
    int64_t warps = std::min(warpsPerBlock, tiles);
    auto launch = gpu::LaunchOp::create(
        b, loc, idx(llvm::divideCeil(tiles, warps)), idx(1), idx(1),
        idx(warps * kWarpSize), idx(1), idx(1));
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&launch.getBody().front());

    Value tid = launch.getThreadIds().x, bid = launch.getBlockIds().x;
    Value tile = add(mul(bid, idx(warps)), div(tid, kWarpSize));
    lane = rem(tid, kWarpSize);
    group = div(lane, 4);
    inGroup = rem(lane, 4);
    // Whole warps drop out together, so mma.sync stays warp-uniform.
    auto inRange = scf::IfOp::create(b, loc, lt(tile, tiles), false);
    b.setInsertionPointToStart(inRange.thenBlock());

    Value nTile = rem(tile, nTiles), rest = div(tile, nTiles);
    Value mTile = rem(rest, mTiles);
    Value batchIndex = div(rest, mTiles);
    base = SmallVector<Value>(c.sizes.size(), idx(0));
    delinearize(c.batch, c.sizes, batchIndex, base);

    // Rows g and g + 8 of the 16-row tile; columns per 8-wide subtile.
    Value row0 = add(mul(mTile, idx(kMmaM)), group);
    rows = {row0, add(row0, idx(8))};
    Value nBase = mul(nTile, idx(kMmaN * nSub));
    SmallVector<Value> accs;
    for (int64_t j = 0; j < nSub; ++j) {
      Value col0 = add(add(nBase, idx(j * kMmaN)), mul(inGroup, idx(2)));
      cols.push_back({col0, add(col0, idx(1))});
      accs.push_back(loadAccumulator(j));
    }

    auto loop = scf::ForOp::create(b, loc, idx(0), idx(kTiles), idx(1), accs);
    b.setInsertionPointToStart(loop.getBody());
    Value kTile = mul(loop.getInductionVar(), idx(kMmaK));
    Value k0 = add(kTile, mul(inGroup, idx(2)));
    Value aFrag = quadK ? lhsQuadFragment(add(kTile, mul(inGroup, idx(4))))
                        : lhsFragment(k0);
    SmallVector<Value> next;
    for (int64_t j = 0; j < nSub; ++j) {
      Value frag =
          rhsTiles ? rhsTile(add(mul(nTile, idx(nSub)), idx(j)),
                             loop.getInductionVar())
                   : rhsFragment(k0, add(add(nBase, idx(j * kMmaN)), group));
      next.push_back(nvgpu::MmaSyncOp::create(
          b, loc, aFrag, frag, loop.getRegionIterArgs()[j],
          ArrayRef<int64_t>{kMmaM, kMmaN, kMmaK}));
    }
    scf::YieldOp::create(b, loc, next);
    b.setInsertionPointAfter(loop);
    for (int64_t j = 0; j < nSub; ++j)
      storeAccumulator(j, loop.getResult(j));
  }

private:
  Value both(Value x, Value y) {
    if (!x)
      return y;
    return y ? arith::AndIOp::create(b, loc, x, y).getResult() : x;
  }

  /// A guard for `value < bound` when the tiling can overshoot (`extent` is
  /// not a multiple of the tile); null when it cannot.
  Value guard(Value value, int64_t bound, int64_t tile) {
    return bound % tile == 0 ? Value() : lt(value, bound);
  }
  /// `value` where `ok` holds, 0 elsewhere (so reads stay in bounds).
  Value clamp(Value value, Value ok) {
    if (!value || !ok)
      return value;
    return arith::SelectOp::create(b, loc, ok, value, idx(0));
  }

  /// The f16 value of `factor` at `point`, or 0 where `ok` is false.
  Value evaluate(const BodySlice &factor, ArrayRef<Value> point, Value ok) {
    Value v = evaluateSlice(b, loc, c.op, factor, point);
    if (!ok)
      return v;
    Value zero = arith::ConstantOp::create(b, loc, b.getF16FloatAttr(0));
    return arith::SelectOp::create(b, loc, ok, v, zero);
  }

  SmallVector<Value> indices(OpOperand &operand, ArrayRef<Value> point) {
    return operandIndices(b, loc, c.op, operand, point);
  }

  /// A point at flattened row `m` / column `n` / reduction index `k`;
  /// out-of-range indices are clamped to 0 (their values are masked).
  SmallVector<Value> pointAt(Value m, Value n, Value k) {
    SmallVector<Value> point = base;
    if (m)
      delinearize(c.m, c.sizes, m, point);
    if (n)
      delinearize(c.n, c.sizes, n, point);
    if (k)
      delinearize(c.k, c.sizes, k, point);
    return point;
  }

  /// vector<2 x type> of two scalars.
  Value pair(Value x, Value y) {
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, x.getType()), ValueRange{x, y});
  }

  /// vector<rows x 2 x type> from rows of vector<2 x type>.
  Value pack(ArrayRef<Value> regs) {
    auto rowType = cast<VectorType>(regs.front().getType());
    auto type =
        VectorType::get({(int64_t)regs.size(), 2}, rowType.getElementType());
    Value frag = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    for (auto [i, row] : llvm::enumerate(regs))
      frag = vector::InsertOp::create(b, loc, row, frag, (int64_t)i);
    return frag;
  }

  /// The input `f` reads, when it reads only one whose two values at
  /// reduction indices k, k+1 (k even) are adjacent and aligned as a pair:
  /// an identity-layout buffer of 16- or 32-bit elements, even rows, whose
  /// innermost index is the innermost reduction dim, of even size. Null
  /// otherwise.
  OpOperand *pairedInput(const BodySlice &f) {
    if (f.inputs.size() != 1)
      return nullptr;
    OpOperand *operand = c.op.getDpsInputOperand(f.inputs.front());
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    AffineMap map = c.op.getMatchingIndexingMap(operand);
    auto inner = dyn_cast_or_null<AffineDimExpr>(
        map.getNumResults() ? map.getResults().back() : AffineExpr());
    bool paired =
        type && type.getLayout().isIdentity() && type.hasStaticShape() &&
        type.getElementType().isIntOrFloat() &&
        llvm::is_contained({16u, 32u}, type.getElementTypeBitWidth()) &&
        inner && inner.getPosition() == c.k.back() &&
        c.sizes[c.k.back()] % 2 == 0 && type.getShape().back() % 2 == 0;
    return paired ? operand : nullptr;
  }

  /// The values of `f` at reduction indices k, k+1 (k even) in row `m` or
  /// column `n`, as vector<2xf16>; zeros where `outerOk` (the row/column
  /// guard) or the reduction bound fails. K is even whenever pairs are
  /// loaded, so both indices are in range or neither is. An input read at
  /// both indices is loaded as one pair (8 bytes for f32: a warp's loads
  /// of 8 columns cover whole sectors), and the prologue runs on each.
  Value factorPair(const BodySlice &f, Value m, Value n, Value k,
                   Value outerOk) {
    if (OpOperand *operand = pairedInput(f)) {
      Value ok = both(outerOk, guard(k, K, kMmaK));
      Type element =
          cast<MemRefType>(operand->get().getType()).getElementType();
      auto pairType = VectorType::get({2}, element);
      Value loaded = vector::LoadOp::create(
          b, loc, pairType, operand->get(),
          indices(*operand, pointAt(clamp(m, ok), clamp(n, ok), clamp(k, ok))),
          /*nontemporal=*/false,
          /*alignment=*/llvm::MaybeAlign(element.getIntOrFloatBitWidth() / 4));
      Value v = loaded; // f16 read as is
      if (!f.ops.empty()) {
        std::array<Value, 2> values;
        for (int64_t e = 0; e < 2; ++e) {
          Value x =
              vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{e});
          values[e] = evaluateSlice(
              b, loc, c.op, f,
              pointAt(clamp(m, ok), clamp(n, ok), clamp(add(k, idx(e)), ok)),
              {{operand->getOperandNumber(), x}});
        }
        v = pair(values[0], values[1]);
      }
      if (!ok)
        return v;
      auto halves = VectorType::get({2}, b.getF16Type());
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(halves));
      return arith::SelectOp::create(b, loc, ok, v, zero);
    }
    std::array<Value, 2> values;
    for (int64_t e = 0; e < 2; ++e) {
      Value ke = add(k, idx(e));
      Value ok = both(outerOk, guard(ke, K, kMmaK));
      values[e] =
          evaluate(f, pointAt(clamp(m, ok), clamp(n, ok), clamp(ke, ok)), ok);
    }
    return pair(values[0], values[1]);
  }

  /// Whether rows g + 8 of every tile lie past M (one tile of at most 8
  /// rows: a decode step's): their A registers are zeros, not loads.
  bool upperRowsEmpty() const { return mTiles == 1 && M <= 8; }

  /// A: registers (g, k0..k0+1), (g+8, k0..), (g, k0+8..), (g+8, k0+8..).
  Value lhsFragment(Value k0) {
    SmallVector<Value> regs;
    for (int64_t kOff : {0, 8})
      for (auto [r, row] : llvm::enumerate(rows))
        regs.push_back(r == 1 && upperRowsEmpty()
                           ? zeroPair()
                           : factorPair(c.lhs, row, {}, add(k0, idx(kOff)),
                                        guard(row, M, kMmaM)));
    return pack(regs);
  }

  /// A in the quadK numbering: lane t's reduction indices k..k+3 (k = 16kt
  /// + 4t) of each row, one load, as the pairs of registers 0-1 (k, k+1)
  /// and 2-3 (k+2, k+3).
  Value lhsQuadFragment(Value k) {
    OpOperand &operand = *pairedInput(c.lhs);
    Type element = cast<MemRefType>(operand.get().getType()).getElementType();
    std::array<std::array<Value, 2>, 2> pairs; // [row][half]
    for (auto [r, row] : llvm::enumerate(rows)) {
      if (r == 1 && upperRowsEmpty()) {
        pairs[r] = {zeroPair(), zeroPair()};
        continue;
      }
      Value ok = guard(row, M, kMmaM);
      Value loaded = vector::LoadOp::create(
          b, loc, VectorType::get({4}, element), operand.get(),
          indices(operand, pointAt(clamp(row, ok), {}, k)),
          /*nontemporal=*/false,
          /*alignment=*/llvm::MaybeAlign(element.getIntOrFloatBitWidth() / 2));
      std::array<Value, 4> values;
      for (int64_t e = 0; e < 4; ++e) {
        Value x =
            vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{e});
        values[e] =
            c.lhs.ops.empty()
                ? x
                : evaluateSlice(b, loc, c.op, c.lhs,
                                pointAt(clamp(row, ok), {}, add(k, idx(e))),
                                {{operand.getOperandNumber(), x}});
      }
      for (int64_t h = 0; h < 2; ++h) {
        Value v = pair(values[2 * h], values[2 * h + 1]);
        pairs[r][h] =
            ok ? arith::SelectOp::create(b, loc, ok, v, zeroPair()).getResult()
               : v;
      }
    }
    return pack({pairs[0][0], pairs[1][0], pairs[0][1], pairs[1][1]});
  }

  Value zeroPair() {
    auto halves = VectorType::get({2}, b.getF16Type());
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(halves));
  }

  /// B (column n = group): registers (k0..k0+1, n), (k0+8..k0+9, n).
  Value rhsFragment(Value k0, Value n) {
    SmallVector<Value> regs;
    for (int64_t kOff : {0, 8})
      regs.push_back(factorPair(c.rhs, {}, n, add(k0, idx(kOff)),
                                guard(n, N, kMmaN * nSub)));
    return pack(regs);
  }

  /// B of 8-column tile `nt` at reduction tile `kt` from the fragment-
  /// ordered weight: each register one 4-byte load per lane, the warp's
  /// 128 contiguous bytes; no guards (zeros past the edges).
  Value rhsTile(Value nt, Value kt) {
    SmallVector<Value> regs;
    for (int64_t half = 0; half < 2; ++half)
      regs.push_back(vector::LoadOp::create(
          b, loc, VectorType::get({2}, b.getF16Type()), rhsTiles,
          ValueRange{nt, kt, idx(half), lane, idx(0)}, /*nontemporal=*/false,
          /*alignment=*/llvm::MaybeAlign(4)));
    return pack(regs);
  }
  /// Runs `body(row, col, rowIndex, colIndex)` for the 4 accumulator
  /// elements of subtile `j`: (g, 2t..2t+1) and (g+8, 2t..2t+1).
  template <typename Fn> void forEachAccumulator(int64_t j, Fn body) {
    for (auto [r, row] : llvm::enumerate(rows))
      for (auto [e, col] : llvm::enumerate(cols[j]))
        body(r, e, row, col);
  }

  Value loadAccumulator(int64_t j) {
    if (c.fill) {
      Value v = c.fill.getInputs()[0];
      return pack({pair(v, v), pair(v, v)});
    }
    OpOperand *init = c.op.getDpsInitOperand(0);
    std::array<std::array<Value, 2>, 2> values;
    forEachAccumulator(j, [&](size_t r, size_t e, Value row, Value col) {
      Value ok = both(guard(row, M, kMmaM), guard(col, N, kMmaN * nSub));
      values[r][e] = memref::LoadOp::create(
          b, loc, init->get(),
          indices(*init, pointAt(clamp(row, ok), clamp(col, ok), {})));
    });
    return pack(
        {pair(values[0][0], values[0][1]), pair(values[1][0], values[1][1])});
  }

  void storeAccumulator(int64_t j, Value acc) {
    OpOperand *init = c.op.getDpsInitOperand(0);
    forEachAccumulator(j, [&](size_t r, size_t e, Value row, Value col) {
      Value v = vector::ExtractOp::create(
          b, loc, acc, ArrayRef<int64_t>{(int64_t)r, (int64_t)e});
      OpBuilder::InsertionGuard insertion(b);
      if (Value ok = both(guard(row, M, kMmaM), guard(col, N, kMmaN * nSub))) {
        auto inside = scf::IfOp::create(b, loc, ok, false);
        b.setInsertionPointToStart(inside.thenBlock());
      }
      emitEpilogue(b, loc, init->get(), c.storeResult, c.epilogue, v,
                   indices(*init, pointAt(row, col, {})));
    });
  }

  Contraction c;
  int64_t warpsPerBlock;
  int64_t M, N, K, nSub, mTiles, nTiles, kTiles;
  Value lane, group, inGroup;
  Value rhsTiles; // the fragment-ordered weight, when laid out
  /// Whether lane t takes reduction indices 4t..4t+3 of each k-tile (A
  /// loaded 4 at a time), the laid-out weight numbered to match.
  bool quadK = false;
  SmallVector<Value> base, rows;
  SmallVector<std::array<Value, 2>> cols;
};

struct ContractionToMmaPass
    : public mp::impl::ContractionToMmaBase<ContractionToMmaPass> {
  using Base::Base;

  void runOnOperation() override {
    if (warpsPerBlock < 1 || warpsPerBlock > 32 || subtiles < 1) {
      getOperation().emitError("mp-contraction-to-mma: warps-per-block must "
                               "be in [1, 32] and subtiles at least 1");
      return signalPassFailure();
    }
    SmallVector<Contraction, 4> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (inKernel(op))
        return;
      if (FailureOr<Contraction> c = matchContraction(op); succeeded(c))
        found.push_back(*c);
    });
    llvm::SetVector<memref::GlobalOp> laidOut;
    SymbolTable symbols(getOperation()); // built once: weights are many
    for (Contraction &c : found) {
      c.fill = initializingFill(c.op);
      SmallVector<Operation *> fill;
      if (c.fill)
        fill.push_back(c.fill);
      c.epilogue =
          findEpilogueChain(c.op, c.op.getDpsInitOperand(0)->get(), fill);
      c.storeResult = c.epilogue.empty() || c.epilogue.front().storePrevious;
      if (!c.epilogue.empty()) {
        SmallVector<Operation *> stages;
        for (EpilogueStage &stage : c.epilogue)
          stages.push_back(stage.op);
        hoistBetween(c.op, stages.back(), stages);
      }
      OpBuilder b(c.op);
      MmaKernelBuilder kernel(c, b, warpsPerBlock, subtiles);
      if (memref::GlobalOp source = kernel.layOutWeight(symbols))
        laidOut.insert(source);
      kernel.build();
      c.op.erase();
      if (c.fill)
        c.fill.erase();
      for (EpilogueStage &stage : c.epilogue)
        stage.op.erase();
    }
    // Weights only the contractions read are dropped: the fragment-ordered
    // copies replace them, so the binary and the device hold each once.
    if (laidOut.empty())
      return;
    DenseMap<StringAttr, SmallVector<memref::GetGlobalOp>> gets;
    getOperation().walk([&](memref::GetGlobalOp get) {
      gets[get.getNameAttr().getAttr()].push_back(get);
    });
    for (memref::GlobalOp source : laidOut) {
      SmallVector<memref::GetGlobalOp> &reads = gets[source.getSymNameAttr()];
      if (llvm::any_of(reads,
                       [](memref::GetGlobalOp g) { return !g.use_empty(); }))
        continue;
      for (memref::GetGlobalOp get : reads)
        get.erase();
      symbols.erase(source);
    }
  }
};

} // namespace
