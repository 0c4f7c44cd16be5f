//===- FlashAttention.cpp - split-KV flash attention kernels --------------===//
//
// Built at the tensor level: the operands are taken as buffers
// (bufferization.to_buffer), the kernels are gpu.launch ops over memrefs,
// and the output buffer becomes a tensor again, so the rest of the CUDA
// pipeline (bufferization, arena, outlining) treats them like its own.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/FlashAttention.h"
#include "GenericBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;

namespace mp {

namespace {

constexpr int64_t kWarp = 32;
/// Keys per split at least; splits fill two blocks per SM of an H200.
constexpr int64_t kMinKeysPerSplit = 64;
constexpr int64_t kTargetBlocks = 2 * 132;
/// Query rows one warp carries, and per-lane f32 values it may keep for
/// them (q and the output accumulator).
constexpr int64_t kMaxRowsPerWarp = 8;
constexpr int64_t kMaxLaneValues = 32;

/// Index arithmetic (IndexBuilder) and the float helpers of the kernels.
struct Emit : public IndexBuilder {
  using IndexBuilder::IndexBuilder;
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value isNegInf(Value x) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                 f32(-INFINITY));
  }
  /// exp(x - m), 0 when x is -inf (nothing to weigh, and no NaN when m is
  /// -inf too).
  Value weight(Value x, Value m) {
    Value e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, m));
    return select(isNegInf(x), f32(0), e);
  }
  Value toF32(Value x) {
    return x.getType().isF32()
               ? x
               : Value(arith::ExtFOp::create(b, loc, b.getF32Type(), x));
  }
  /// Element `d` of a row of `buffer` at `prefix`, as f32; 0 past `size`.
  Value loadLane(Value buffer, SmallVector<Value> prefix, Value d,
                 int64_t size) {
    Value inside = slt(d, idx(size));
    prefix.push_back(select(inside, d, idx(0)));
    Value x = toF32(memref::LoadOp::create(b, loc, buffer, prefix));
    return select(inside, x, f32(0));
  }
  /// The sum over the warp's lanes, in every lane.
  Value warpSum(Value x) {
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
      auto shuffle = gpu::ShuffleOp::create(b, loc, x, offset, kWarp,
                                            gpu::ShuffleMode::XOR);
      x = add(x, shuffle.getShuffleResult());
    }
    return x;
  }
};

/// A gpu.launch with a `threads`-wide x dimension, its body built by `body`
/// from the block ids and the thread id.
void launch(OpBuilder &b, Location loc, Value gx, Value gy, Value gz,
            int64_t threads,
            function_ref<void(OpBuilder &, gpu::KernelDim3, Value)> body) {
  Emit e{b, loc};
  auto op = gpu::LaunchOp::create(b, loc, gx, gy, gz, e.idx(threads), e.idx(1),
                                  e.idx(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&op.getBody().front());
  body(b, op.getBlockIds(), op.getThreadIds().x);
}

} // namespace

Value buildFlashAttentionGpu(OpBuilder &b, Location loc, Value q, Value k,
                             Value v, double scale, const FlashMasks &masks,
                             Value keyLimit) {
  auto qt = cast<RankedTensorType>(q.getType());
  auto kt = cast<RankedTensorType>(k.getType());
  auto vt = cast<RankedTensorType>(v.getType());
  Type elt = qt.getElementType();
  if (!qt.hasStaticShape() || !kt.hasStaticShape() || !vt.hasStaticShape() ||
      kt.getElementType() != elt || vt.getElementType() != elt ||
      !isa<FloatType>(elt) || elt.getIntOrFloatBitWidth() > 32)
    return Value();
  int64_t B = qt.getDimSize(0), Hq = qt.getDimSize(1), S = qt.getDimSize(2),
          D = qt.getDimSize(3), Hkv = kt.getDimSize(1), T = kt.getDimSize(2),
          Dv = vt.getDimSize(3);
  if (Hkv == 0 || Hq % Hkv != 0 || T == 0 || D > 256 || Dv > 256)
    return Value();
  int64_t g = Hq / Hkv, rows = g * S;
  int64_t nd = llvm::divideCeil(D, kWarp), ndv = llvm::divideCeil(Dv, kWarp);
  int64_t rowTile = std::clamp<int64_t>(kMaxLaneValues / std::max(nd, ndv), 1,
                                        std::min(rows, kMaxRowsPerWarp));
  int64_t tiles = llvm::divideCeil(rows, rowTile);
  int64_t maxSplits =
      std::clamp<int64_t>(kTargetBlocks / (B * Hkv * tiles), 1,
                          llvm::divideCeil(T, kMinKeysPerSplit));

  Emit e{b, loc};
  Type f32 = b.getF32Type();
  auto buffer = [&](Value t) -> Value {
    auto type = cast<RankedTensorType>(t.getType());
    return bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), t,
        /*read_only=*/true);
  };
  Value qb = buffer(q), kb = buffer(k), vb = buffer(v);
  Value lengths = masks.kvLength ? buffer(masks.kvLength) : Value();
  Value stats = memref::AllocOp::create(
      b, loc, MemRefType::get({2, B * Hkv, maxSplits, rows}, f32));
  Value partial = memref::AllocOp::create(
      b, loc, MemRefType::get({B * Hkv, maxSplits, rows, Dv}, f32));
  Value out =
      memref::AllocOp::create(b, loc, MemRefType::get({B, Hq, S, Dv}, elt));

  // Splits of `chunk` keys each, chosen on the host from the valid keys.
  Value limit = keyLimit ? e.min(keyLimit, e.idx(T)) : e.idx(T);
  Value splits =
      e.max(e.idx(1), e.min(e.idx(maxSplits),
                            arith::CeilDivSIOp::create(
                                b, loc, limit, e.idx(kMinKeysPerSplit))));
  Value chunk = arith::CeilDivSIOp::create(b, loc, limit, splits);
  Value causalOffset = masks.causalOffsetValue ? masks.causalOffsetValue
                                               : e.idx(masks.causalOffset);

  // 1. Partials: one warp per (batch x KV head, split, row tile).
  launch(
      b, loc, e.idx(B * Hkv), splits, e.idx(tiles), kWarp,
      [&](OpBuilder &kb_, gpu::KernelDim3 block, Value lane) {
        Emit k_{kb_, loc};
        Value bh = block.x, split = block.y, tile = block.z;
        Value batch = k_.div(bh, k_.idx(Hkv)), kvHead = k_.rem(bh, k_.idx(Hkv));
        Value end = limit;
        if (lengths) {
          Value n =
              memref::LoadOp::create(kb_, loc, lengths, ValueRange{batch});
          end = k_.min(end,
                       k_.max(k_.idx(0), arith::IndexCastOp::create(
                                             kb_, loc, kb_.getIndexType(), n)));
        }
        Value t0 = k_.mul(split, chunk);
        Value t1 = k_.min(k_.add(t0, chunk), end);
        // Row r of the tile: query head kvHead * g + r / S at position r % S.
        struct Row {
          Value index, valid, head, pos;
          SmallVector<Value> q;
        };
        SmallVector<Row> tileRows;
        for (int64_t r = 0; r < rowTile; ++r) {
          Row row;
          Value index = k_.add(k_.mul(tile, k_.idx(rowTile)), k_.idx(r));
          row.valid = k_.slt(index, k_.idx(rows));
          row.index = k_.select(row.valid, index, k_.idx(rows - 1));
          row.head =
              k_.add(k_.mul(kvHead, k_.idx(g)), k_.div(row.index, k_.idx(S)));
          row.pos = k_.rem(row.index, k_.idx(S));
          for (int64_t j = 0; j < nd; ++j) {
            Value d = k_.add(lane, k_.idx(j * kWarp));
            row.q.push_back(
                k_.mul(k_.loadLane(qb, {batch, row.head, row.pos}, d, D),
                       k_.f32(scale)));
          }
          tileRows.push_back(std::move(row));
        }
        // Carried per row: max, sum, then the ndv accumulator lanes.
        SmallVector<Value> init;
        for (int64_t r = 0; r < rowTile; ++r) {
          init.push_back(k_.f32(-INFINITY));
          init.push_back(k_.f32(0));
          for (int64_t j = 0; j < ndv; ++j)
            init.push_back(k_.f32(0));
        }
        int64_t stride = 2 + ndv;
        auto keys = scf::ForOp::create(
            kb_, loc, t0, k_.max(t0, t1), k_.idx(1), init,
            [&](OpBuilder &lb, Location l, Value t, ValueRange carried) {
              Emit x{lb, l};
              SmallVector<Value> keyLanes, valueLanes;
              for (int64_t j = 0; j < nd; ++j)
                keyLanes.push_back(x.loadLane(
                    kb, {batch, kvHead, t}, x.add(lane, x.idx(j * kWarp)), D));
              for (int64_t j = 0; j < ndv; ++j)
                valueLanes.push_back(x.loadLane(
                    vb, {batch, kvHead, t}, x.add(lane, x.idx(j * kWarp)), Dv));
              SmallVector<Value> next;
              for (int64_t r = 0; r < rowTile; ++r) {
                const Row &row = tileRows[r];
                Value dot = x.f32(0);
                for (int64_t j = 0; j < nd; ++j)
                  dot = x.add(dot, x.mul(row.q[j], keyLanes[j]));
                Value score = x.warpSum(dot);
                if (masks.softcap > 0) {
                  Value c = x.f32(masks.softcap);
                  score = x.mul(
                      c, math::TanhOp::create(
                             lb, l, arith::DivFOp::create(lb, l, score, c)));
                }
                if (masks.causal) {
                  Value future = x.slt(x.add(row.pos, causalOffset), t);
                  score = x.select(future, x.f32(-INFINITY), score);
                }
                Value m = carried[r * stride], s = carried[r * stride + 1];
                Value mNew = arith::MaximumFOp::create(lb, l, m, score);
                Value alpha = x.weight(m, mNew), p = x.weight(score, mNew);
                next.push_back(mNew);
                next.push_back(x.add(x.mul(s, alpha), p));
                for (int64_t j = 0; j < ndv; ++j)
                  next.push_back(
                      x.add(x.mul(carried[r * stride + 2 + j], alpha),
                            x.mul(p, valueLanes[j])));
              }
              scf::YieldOp::create(lb, l, next);
            });
        Value first = arith::CmpIOp::create(kb_, loc, arith::CmpIPredicate::eq,
                                            lane, k_.idx(0));
        for (int64_t r = 0; r < rowTile; ++r) {
          const Row &row = tileRows[r];
          auto valid = scf::IfOp::create(kb_, loc, row.valid, false);
          OpBuilder::InsertionGuard guard(kb_);
          kb_.setInsertionPointToStart(valid.thenBlock());
          auto stat = scf::IfOp::create(kb_, loc, first, false);
          {
            OpBuilder::InsertionGuard inner(kb_);
            kb_.setInsertionPointToStart(stat.thenBlock());
            for (int64_t which = 0; which < 2; ++which)
              memref::StoreOp::create(
                  kb_, loc, keys.getResult(r * stride + which), stats,
                  ValueRange{k_.idx(which), bh, split, row.index});
          }
          for (int64_t j = 0; j < ndv; ++j) {
            Value d = k_.add(lane, k_.idx(j * kWarp));
            auto inside =
                scf::IfOp::create(kb_, loc, k_.slt(d, k_.idx(Dv)), false);
            OpBuilder::InsertionGuard inner(kb_);
            kb_.setInsertionPointToStart(inside.thenBlock());
            memref::StoreOp::create(kb_, loc,
                                    keys.getResult(r * stride + 2 + j), partial,
                                    ValueRange{bh, split, row.index, d});
          }
        }
      });

  // 2. Combine: one warp per (batch x KV head, row); the splits' weights
  // exp(m_s - M) rescale their sums and accumulators.
  launch(
      b, loc, e.idx(B * Hkv), e.idx(rows), e.idx(1), kWarp,
      [&](OpBuilder &cb, gpu::KernelDim3 block, Value lane) {
        Emit c{cb, loc};
        Value bh = block.x, row = block.y;
        Value batch = c.div(bh, c.idx(Hkv)), kvHead = c.rem(bh, c.idx(Hkv));
        Value head = c.add(c.mul(kvHead, c.idx(g)), c.div(row, c.idx(S)));
        Value pos = c.rem(row, c.idx(S));
        auto statAt = [&](OpBuilder &sb, int64_t which, Value sp) -> Value {
          return memref::LoadOp::create(
              sb, loc, stats,
              ValueRange{Emit{sb, loc}.idx(which), bh, sp, row});
        };
        auto maxLoop = scf::ForOp::create(
            cb, loc, c.idx(0), splits, c.idx(1), ValueRange{c.f32(-INFINITY)},
            [&](OpBuilder &lb, Location l, Value sp, ValueRange m) {
              scf::YieldOp::create(lb, l,
                                   ValueRange{arith::MaximumFOp::create(
                                       lb, l, m[0], statAt(lb, 0, sp))});
            });
        Value top = maxLoop.getResult(0);
        SmallVector<Value> init(ndv + 1, c.f32(0));
        auto sumLoop = scf::ForOp::create(
            cb, loc, c.idx(0), splits, c.idx(1), init,
            [&](OpBuilder &lb, Location l, Value sp, ValueRange acc) {
              Emit x{lb, l};
              Value w = x.weight(statAt(lb, 0, sp), top);
              SmallVector<Value> next = {
                  x.add(acc[0], x.mul(w, statAt(lb, 1, sp)))};
              for (int64_t j = 0; j < ndv; ++j)
                next.push_back(x.add(
                    acc[1 + j],
                    x.mul(w, x.loadLane(partial, {bh, sp, row},
                                        x.add(lane, x.idx(j * kWarp)), Dv))));
              scf::YieldOp::create(lb, l, next);
            });
        Value total = sumLoop.getResult(0);
        Value empty = arith::CmpFOp::create(cb, loc, arith::CmpFPredicate::OLE,
                                            total, c.f32(0));
        Value denominator = c.select(empty, c.f32(1), total);
        for (int64_t j = 0; j < ndv; ++j) {
          Value d = c.add(lane, c.idx(j * kWarp));
          auto inside = scf::IfOp::create(cb, loc, c.slt(d, c.idx(Dv)), false);
          OpBuilder::InsertionGuard guard(cb);
          cb.setInsertionPointToStart(inside.thenBlock());
          Value y = arith::DivFOp::create(cb, loc, sumLoop.getResult(1 + j),
                                          denominator);
          if (elt != f32)
            y = arith::TruncFOp::create(cb, loc, elt, y);
          memref::StoreOp::create(cb, loc, y, out,
                                  ValueRange{batch, head, pos, d});
        }
      });

  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get({B, Hq, S, Dv}, elt), out,
      /*restrict=*/true, /*writable=*/true);
}

} // namespace mp
