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
  /// `x` as float type `to`: extended or rounded to nearest.
  Value convert(Value x, Type to) {
    Type from = x.getType();
    if (from == to)
      return x;
    unsigned fromBits = from.getIntOrFloatBitWidth(),
             toBits = to.getIntOrFloatBitWidth();
    if (fromBits == toBits) // f16 <-> bf16, through f32
      return convert(convert(x, b.getF32Type()), to);
    if (fromBits < toBits)
      return arith::ExtFOp::create(b, loc, to, x);
    return arith::TruncFOp::create(b, loc, to, x);
  }
  Value toF32(Value x) { return convert(x, b.getF32Type()); }
  Value i32(int32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  /// Element `d` of a row of `buffer` at `prefix`, as f32; 0 past `size`.
  Value loadLane(Value buffer, SmallVector<Value> prefix, Value d,
                 int64_t size) {
    Value inside = slt(d, idx(size));
    prefix.push_back(select(inside, d, idx(0)));
    Value x = toF32(memref::LoadOp::create(b, loc, buffer, prefix));
    return select(inside, x, f32(0));
  }
  /// Element (batch, head, pos, t) of the scores' mask `buffer`, which
  /// broadcasts to them (sizes 1 read index 0; lower ranks align right).
  Value maskAt(Value buffer, Value batch, Value head, Value pos, Value t) {
    auto type = cast<MemRefType>(buffer.getType());
    Value full[] = {batch, head, pos, t};
    int64_t lead = 4 - type.getRank();
    SmallVector<Value> at;
    for (auto [i, size] : llvm::enumerate(type.getShape()))
      at.push_back(size == 1 ? idx(0) : full[lead + i]);
    return memref::LoadOp::create(b, loc, buffer, at);
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

/// True when `mask` (may be null) broadcasts to `scores` [B, Hq, S, T]:
/// static, rank at most 4, each size 1 or the scores', aligned right.
bool broadcastsTo(Value mask, ArrayRef<int64_t> scores) {
  if (!mask)
    return true;
  auto type = cast<RankedTensorType>(mask.getType());
  if (!type.hasStaticShape() || type.getRank() > 4)
    return false;
  int64_t lead = 4 - type.getRank();
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (size != 1 && size != scores[lead + i])
      return false;
  return true;
}

/// What both kernels share: the sizes, the buffers and the host's split
/// of the keys.
struct FlashPlan {
  Type elt;
  int64_t B, Hq, S, D, Hkv, T, Dv;
  /// Whether a past is joined with k and v, and its keys (the first P).
  bool past = false;
  int64_t P = 0;
  /// g query heads per KV head; rows = g * S query rows per KV head, in
  /// tiles of rowTile per warp; nd, ndv lane values per K and V row.
  int64_t g, rows, nd, ndv, rowTile, tiles, maxSplits;
  double scale, softcap;
  bool causal;
  Value qb, kb, vb, pastK, pastV, presentK, presentV, additive, keep, lengths;
  /// Per (which, batch x KV head, split, row): max and sum; per row the
  /// split's f32 output; the result.
  Value stats, partial, out;
  /// The keys to read, the splits and the keys per split (host values).
  Value limit, splits, chunk, causalOffset;
};

/// The partial kernel of one warp: (batch x KV head, split, row tile) from
/// the block ids.
class PartialKernel : public Emit {
public:
  PartialKernel(OpBuilder &b, Location loc, const FlashPlan &p,
                gpu::KernelDim3 block, Value lane)
      : Emit(b, loc), p(p), bh(block.x), split(block.y), tile(block.z),
        lane(lane) {}

  void build() {
    batch = div(bh, idx(p.Hkv)), kvHead = rem(bh, idx(p.Hkv));
    Value end = p.limit;
    if (p.lengths) {
      Value n = memref::LoadOp::create(b, loc, p.lengths, ValueRange{batch});
      end = min(end, max(idx(0), arith::IndexCastOp::create(
                                     b, loc, b.getIndexType(), n)));
    }
    t0 = mul(split, p.chunk);
    tEnd = max(t0, min(add(t0, p.chunk), end));
    for (int64_t r = 0; r < p.rowTile; ++r)
      tileRows.push_back(rowOfTile(r));
    for (int64_t j = 0; j < p.nd; ++j)
      keyD.push_back(add(lane, idx(j * kWarp)));
    for (int64_t j = 0; j < p.ndv; ++j)
      valueD.push_back(add(lane, idx(j * kWarp)));
    // One warp per key block copies the past's rows to the joined caches as
    // it reads them.
    writer =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tile, idx(0));
    // Carried per row: max, sum, then the ndv accumulator lanes.
    SmallVector<Value> init;
    for (int64_t r = 0; r < p.rowTile; ++r) {
      init.push_back(f32(-INFINITY));
      init.push_back(f32(0));
      for (int64_t j = 0; j < p.ndv; ++j)
        init.push_back(f32(0));
    }
    storePartials(p.additive || p.keep ? maskedKeyLoop(init) : keyLoop(init));
  }

private:
  /// Row r of the tile: query head kvHead * g + r / S at position r % S,
  /// and the lane's scaled q values.
  struct Row {
    Value index, valid, head, pos;
    SmallVector<Value> q;
  };
  /// A key's mask values for each row of the tile, as f32 (additive, and
  /// keep as 1 or 0).
  struct KeyMasks {
    SmallVector<Value> additive, keep;
  };
  int64_t stride() const { return 2 + p.ndv; }

  Row rowOfTile(int64_t r) {
    Row row;
    Value index = add(mul(tile, idx(p.rowTile)), idx(r));
    row.valid = slt(index, idx(p.rows));
    row.index = select(row.valid, index, idx(p.rows - 1));
    row.head = add(mul(kvHead, idx(p.g)), div(row.index, idx(p.S)));
    row.pos = rem(row.index, idx(p.S));
    for (int64_t j = 0; j < p.nd; ++j)
      row.q.push_back(mul(loadLane(p.qb, {batch, row.head, row.pos},
                                   add(lane, idx(j * kWarp)), p.D),
                          f32(p.scale)));
    return row;
  }

  /// Key t's K and V elements of this lane as q's type (the first nd are
  /// K's), read from the past or from k and v; with a past, the writer
  /// warp stores them into the joined caches.
  SmallVector<Value> keyRow(OpBuilder &lb, Location l, Value t) {
    Emit x{lb, l};
    auto clamped = [&](Value d, int64_t size) {
      return x.select(x.slt(d, x.idx(size)), d, x.idx(0));
    };
    auto rowAt = [&](OpBuilder &rb, Value keyBuf, Value valueBuf, Value pos) {
      Emit r{rb, l};
      SmallVector<Value> raw;
      for (auto [buf, lanes, size] : {std::tuple(keyBuf, &keyD, p.D),
                                      std::tuple(valueBuf, &valueD, p.Dv)})
        for (Value d : *lanes)
          raw.push_back(r.convert(
              memref::LoadOp::create(
                  rb, l, buf, ValueRange{batch, kvHead, pos, clamped(d, size)}),
              p.elt));
      return raw;
    };
    if (!p.past)
      return rowAt(lb, p.kb, p.vb, t);
    SmallVector<Type> types(p.nd + p.ndv, p.elt);
    auto source = scf::IfOp::create(lb, l, types, x.slt(t, x.idx(p.P)),
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(lb);
      lb.setInsertionPointToStart(source.thenBlock());
      scf::YieldOp::create(lb, l, rowAt(lb, p.pastK, p.pastV, t));
      lb.setInsertionPointToStart(source.elseBlock());
      scf::YieldOp::create(lb, l, rowAt(lb, p.kb, p.vb, x.add(t, x.idx(-p.P))));
    }
    SmallVector<Value> raw(source.getResults());
    auto write = scf::IfOp::create(lb, l, writer, false);
    OpBuilder::InsertionGuard guard(lb);
    lb.setInsertionPointToStart(write.thenBlock());
    auto store = [&](Value value, Value buf, Value d, int64_t size) {
      auto inside = scf::IfOp::create(lb, l, x.slt(d, x.idx(size)), false);
      OpBuilder::InsertionGuard inner(lb);
      lb.setInsertionPointToStart(inside.thenBlock());
      Type stored = cast<MemRefType>(buf.getType()).getElementType();
      memref::StoreOp::create(lb, l, x.convert(value, stored), buf,
                              ValueRange{batch, kvHead, t, d});
    };
    for (int64_t j = 0; j < p.nd; ++j)
      store(raw[j], p.presentK, keyD[j], p.D);
    for (int64_t j = 0; j < p.ndv; ++j)
      store(raw[p.nd + j], p.presentV, valueD[j], p.Dv);
    return raw;
  }

  /// One key: its rows read, each row's score (scaled q by k, soft cap,
  /// masks, causal rule) and the online softmax updated.
  SmallVector<Value> keyStep(OpBuilder &lb, Location l, Value t,
                             ValueRange carried, const KeyMasks &keyMasks) {
    Emit x{lb, l};
    SmallVector<Value> raw = keyRow(lb, l, t);
    SmallVector<Value> keyLanes, valueLanes;
    for (int64_t j = 0; j < p.nd; ++j)
      keyLanes.push_back(
          x.select(x.slt(keyD[j], x.idx(p.D)), x.toF32(raw[j]), x.f32(0)));
    for (int64_t j = 0; j < p.ndv; ++j)
      valueLanes.push_back(x.select(x.slt(valueD[j], x.idx(p.Dv)),
                                    x.toF32(raw[p.nd + j]), x.f32(0)));
    SmallVector<Value> next;
    for (int64_t r = 0; r < p.rowTile; ++r) {
      const Row &row = tileRows[r];
      Value dot = x.f32(0);
      for (int64_t j = 0; j < p.nd; ++j)
        dot = x.add(dot, x.mul(row.q[j], keyLanes[j]));
      Value score = x.warpSum(dot);
      if (p.softcap > 0) {
        Value c = x.f32(p.softcap);
        score = x.mul(c, math::TanhOp::create(
                             lb, l, arith::DivFOp::create(lb, l, score, c)));
      }
      if (p.additive)
        score = x.add(score, keyMasks.additive[r]);
      if (p.keep)
        score = x.select(arith::CmpFOp::create(lb, l, arith::CmpFPredicate::ONE,
                                               keyMasks.keep[r], x.f32(0)),
                         score, x.f32(-INFINITY));
      if (p.causal) {
        Value future = x.slt(x.add(row.pos, p.causalOffset), t);
        score = x.select(future, x.f32(-INFINITY), score);
      }
      Value m = carried[r * stride()], s = carried[r * stride() + 1];
      Value mNew = arith::MaximumFOp::create(lb, l, m, score);
      Value alpha = x.weight(m, mNew), weight = x.weight(score, mNew);
      next.push_back(mNew);
      next.push_back(x.add(x.mul(s, alpha), weight));
      for (int64_t j = 0; j < p.ndv; ++j)
        next.push_back(x.add(x.mul(carried[r * stride() + 2 + j], alpha),
                             x.mul(weight, valueLanes[j])));
    }
    return next;
  }

  /// The keys [t0, tEnd) one at a time.
  scf::ForOp keyLoop(ValueRange init) {
    return scf::ForOp::create(
        b, loc, t0, tEnd, idx(1), init,
        [&](OpBuilder &lb, Location l, Value t, ValueRange carried) {
          scf::YieldOp::create(lb, l, keyStep(lb, l, t, carried, {}));
        });
  }

  /// Lane i's mask value of key `key` for each row (f32; keep as 1 or 0).
  /// Rows that differ only in dims the mask broadcasts over share one.
  SmallVector<Value> laneMasks(Emit &x, Value buffer, bool isBool, Value key) {
    SmallVector<Value> values;
    if (!buffer)
      return values;
    ArrayRef<int64_t> shape = cast<MemRefType>(buffer.getType()).getShape();
    int64_t lead = 4 - shape.size();
    auto broadcast = [&](int64_t dim) {
      return dim < lead || shape[dim - lead] == 1;
    };
    bool shared = broadcast(1) && broadcast(2); // over heads and positions
    for (const Row &row : tileRows) {
      if (shared && !values.empty()) {
        values.push_back(values.front());
        continue;
      }
      Value m = x.maskAt(buffer, batch, row.head, row.pos, key);
      values.push_back(isBool ? x.select(m, x.f32(1), x.f32(0)) : x.toF32(m));
    }
    return values;
  }

  /// The keys in blocks of 32: the masks are read a key per lane
  /// (coalesced where the keys are the mask's last dim) and handed to each
  /// key by a shuffle.
  scf::ForOp maskedKeyLoop(ValueRange init) {
    return scf::ForOp::create(
        b, loc, t0, tEnd, idx(kWarp), init,
        [&](OpBuilder &bb, Location l, Value tb, ValueRange outer) {
          Emit x{bb, l};
          Value laneKey = x.add(tb, lane);
          Value key = x.select(x.slt(laneKey, tEnd), laneKey, tb);
          KeyMasks lanes{laneMasks(x, p.additive, false, key),
                         laneMasks(x, p.keep, true, key)};
          Value count =
              x.min(x.idx(kWarp), arith::SubIOp::create(bb, l, tEnd, tb));
          auto inner = scf::ForOp::create(
              bb, l, x.idx(0), count, x.idx(1), outer,
              [&](OpBuilder &lb, Location il, Value j, ValueRange carried) {
                Emit y{lb, il};
                Value src =
                    arith::IndexCastOp::create(lb, il, lb.getI32Type(), j);
                auto shuffled = [&](ArrayRef<Value> values) {
                  SmallVector<Value> out;
                  for (auto [r, v] : llvm::enumerate(values))
                    out.push_back(r > 0 && v == values[r - 1]
                                      ? out.back()
                                      : gpu::ShuffleOp::create(
                                            lb, il, v, src, y.i32(kWarp),
                                            gpu::ShuffleMode::IDX)
                                            .getShuffleResult());
                  return out;
                };
                KeyMasks keyMasks{shuffled(lanes.additive),
                                  shuffled(lanes.keep)};
                scf::YieldOp::create(
                    lb, il, keyStep(lb, il, y.add(tb, j), carried, keyMasks));
              });
          scf::YieldOp::create(bb, l, inner.getResults());
        });
  }

  /// Each valid row's max and sum (lane 0) and output lanes.
  void storePartials(scf::ForOp keys) {
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0));
    for (auto [r, row] : llvm::enumerate(tileRows)) {
      auto valid = scf::IfOp::create(b, loc, row.valid, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(valid.thenBlock());
      auto stat = scf::IfOp::create(b, loc, first, false);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(stat.thenBlock());
        for (int64_t which = 0; which < 2; ++which)
          memref::StoreOp::create(b, loc, keys.getResult(r * stride() + which),
                                  p.stats,
                                  ValueRange{idx(which), bh, split, row.index});
      }
      for (int64_t j = 0; j < p.ndv; ++j) {
        Value d = valueD[j];
        auto inside = scf::IfOp::create(b, loc, slt(d, idx(p.Dv)), false);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(inside.thenBlock());
        memref::StoreOp::create(b, loc, keys.getResult(r * stride() + 2 + j),
                                p.partial, ValueRange{bh, split, row.index, d});
      }
    }
  }

  const FlashPlan &p;
  Value bh, split, tile, lane;
  Value batch, kvHead, t0, tEnd, writer;
  SmallVector<Row> tileRows;
  /// The d of each of the lane's K and V values: lane + 32 j.
  SmallVector<Value> keyD, valueD;
};

/// The combine kernel of one warp: (batch x KV head, row) from the block
/// ids; the splits' weights exp(m_s - M) rescale their sums and outputs.
void buildCombine(OpBuilder &cb, Location loc, const FlashPlan &p,
                  gpu::KernelDim3 block, Value lane) {
  Emit c{cb, loc};
  Value bh = block.x, row = block.y;
  Value batch = c.div(bh, c.idx(p.Hkv)), kvHead = c.rem(bh, c.idx(p.Hkv));
  Value head = c.add(c.mul(kvHead, c.idx(p.g)), c.div(row, c.idx(p.S)));
  Value pos = c.rem(row, c.idx(p.S));
  auto statAt = [&](OpBuilder &sb, int64_t which, Value sp) -> Value {
    return memref::LoadOp::create(
        sb, loc, p.stats, ValueRange{Emit{sb, loc}.idx(which), bh, sp, row});
  };
  auto maxLoop = scf::ForOp::create(
      cb, loc, c.idx(0), p.splits, c.idx(1), ValueRange{c.f32(-INFINITY)},
      [&](OpBuilder &lb, Location l, Value sp, ValueRange m) {
        scf::YieldOp::create(lb, l,
                             ValueRange{arith::MaximumFOp::create(
                                 lb, l, m[0], statAt(lb, 0, sp))});
      });
  Value top = maxLoop.getResult(0);
  SmallVector<Value> init(p.ndv + 1, c.f32(0));
  auto sumLoop = scf::ForOp::create(
      cb, loc, c.idx(0), p.splits, c.idx(1), init,
      [&](OpBuilder &lb, Location l, Value sp, ValueRange acc) {
        Emit x{lb, l};
        Value w = x.weight(statAt(lb, 0, sp), top);
        SmallVector<Value> next = {x.add(acc[0], x.mul(w, statAt(lb, 1, sp)))};
        for (int64_t j = 0; j < p.ndv; ++j)
          next.push_back(
              x.add(acc[1 + j],
                    x.mul(w, x.loadLane(p.partial, {bh, sp, row},
                                        x.add(lane, x.idx(j * kWarp)), p.Dv))));
        scf::YieldOp::create(lb, l, next);
      });
  Value total = sumLoop.getResult(0);
  Value empty = arith::CmpFOp::create(cb, loc, arith::CmpFPredicate::OLE, total,
                                      c.f32(0));
  Value denominator = c.select(empty, c.f32(1), total);
  for (int64_t j = 0; j < p.ndv; ++j) {
    Value d = c.add(lane, c.idx(j * kWarp));
    auto inside = scf::IfOp::create(cb, loc, c.slt(d, c.idx(p.Dv)), false);
    OpBuilder::InsertionGuard guard(cb);
    cb.setInsertionPointToStart(inside.thenBlock());
    Value y =
        arith::DivFOp::create(cb, loc, sumLoop.getResult(1 + j), denominator);
    memref::StoreOp::create(cb, loc, c.convert(y, p.elt), p.out,
                            ValueRange{batch, head, pos, d});
  }
}

/// The sizes of attention on `ops`, or nothing when the kernels do not
/// take it.
std::optional<FlashPlan> planFor(const FlashOperands &ops) {
  auto qt = cast<RankedTensorType>(ops.q.getType());
  auto kt = cast<RankedTensorType>(ops.k.getType());
  auto vt = cast<RankedTensorType>(ops.v.getType());
  FlashPlan p;
  p.elt = qt.getElementType();
  if (!qt.hasStaticShape() || !kt.hasStaticShape() || !vt.hasStaticShape() ||
      kt.getElementType() != p.elt || vt.getElementType() != p.elt ||
      !isa<FloatType>(p.elt) || p.elt.getIntOrFloatBitWidth() > 32)
    return std::nullopt;
  p.B = qt.getDimSize(0), p.Hq = qt.getDimSize(1), p.S = qt.getDimSize(2);
  p.D = qt.getDimSize(3), p.Hkv = kt.getDimSize(1), p.T = kt.getDimSize(2);
  p.Dv = vt.getDimSize(3);
  const FlashMasks &masks = ops.masks;
  if (ops.pastKey || ops.pastValue) {
    // The past's rows are copied into the joined caches as they are read:
    // every key must be read, so no bound on the keys.
    if (!ops.pastKey || !ops.pastValue || ops.keyLimit || masks.kvLength)
      return std::nullopt;
    auto pkt = cast<RankedTensorType>(ops.pastKey.getType());
    auto pvt = cast<RankedTensorType>(ops.pastValue.getType());
    p.past = true;
    p.P = pkt.getDimSize(2);
    auto isFloat = [](Type t) {
      return isa<FloatType>(t) && t.getIntOrFloatBitWidth() <= 32;
    };
    if (!pkt.hasStaticShape() ||
        pkt.getShape() != ArrayRef<int64_t>{p.B, p.Hkv, p.P, p.D} ||
        pvt.getShape() != ArrayRef<int64_t>{p.B, p.Hkv, p.P, p.Dv} ||
        !isFloat(pkt.getElementType()) || !isFloat(pvt.getElementType()) ||
        (ops.presentKeyType && !isFloat(ops.presentKeyType)) ||
        (ops.presentValueType && !isFloat(ops.presentValueType)))
      return std::nullopt;
    p.T += p.P;
  }
  if (p.Hkv == 0 || p.Hq % p.Hkv != 0 || p.T == 0 || p.D > 256 || p.Dv > 256 ||
      !broadcastsTo(masks.additive, {p.B, p.Hq, p.S, p.T}) ||
      !broadcastsTo(masks.keep, {p.B, p.Hq, p.S, p.T}))
    return std::nullopt;
  p.g = p.Hq / p.Hkv, p.rows = p.g * p.S;
  p.nd = llvm::divideCeil(p.D, kWarp), p.ndv = llvm::divideCeil(p.Dv, kWarp);
  p.rowTile = std::clamp<int64_t>(kMaxLaneValues / std::max(p.nd, p.ndv), 1,
                                  std::min(p.rows, kMaxRowsPerWarp));
  p.tiles = llvm::divideCeil(p.rows, p.rowTile);
  p.maxSplits = std::clamp<int64_t>(kTargetBlocks / (p.B * p.Hkv * p.tiles), 1,
                                    llvm::divideCeil(p.T, kMinKeysPerSplit));
  p.scale = ops.scale;
  p.softcap = masks.softcap;
  p.causal = masks.causal;
  return p;
}

} // namespace

FlashResult buildFlashAttentionGpu(OpBuilder &b, Location loc,
                                   const FlashOperands &ops) {
  std::optional<FlashPlan> plan = planFor(ops);
  if (!plan)
    return {};
  FlashPlan &p = *plan;
  Emit e{b, loc};
  auto buffer = [&](Value t) -> Value {
    if (!t)
      return Value();
    auto type = cast<RankedTensorType>(t.getType());
    return bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), t,
        /*read_only=*/true);
  };
  auto alloc = [&](ArrayRef<int64_t> shape, Type type) -> Value {
    return memref::AllocOp::create(b, loc, MemRefType::get(shape, type));
  };
  const FlashMasks &masks = ops.masks;
  p.qb = buffer(ops.q), p.kb = buffer(ops.k), p.vb = buffer(ops.v);
  p.lengths = buffer(masks.kvLength);
  p.additive = buffer(masks.additive), p.keep = buffer(masks.keep);
  if (p.past) {
    p.pastK = buffer(ops.pastKey), p.pastV = buffer(ops.pastValue);
    p.presentK = alloc({p.B, p.Hkv, p.T, p.D},
                       ops.presentKeyType ? ops.presentKeyType : p.elt);
    p.presentV = alloc({p.B, p.Hkv, p.T, p.Dv},
                       ops.presentValueType ? ops.presentValueType : p.elt);
  }
  Type f32 = b.getF32Type();
  p.stats = alloc({2, p.B * p.Hkv, p.maxSplits, p.rows}, f32);
  p.partial = alloc({p.B * p.Hkv, p.maxSplits, p.rows, p.Dv}, f32);
  p.out = alloc({p.B, p.Hq, p.S, p.Dv}, p.elt);

  // Splits of `chunk` keys each, chosen on the host from the valid keys.
  p.limit = ops.keyLimit ? e.min(ops.keyLimit, e.idx(p.T)) : e.idx(p.T);
  p.splits =
      e.max(e.idx(1), e.min(e.idx(p.maxSplits),
                            arith::CeilDivSIOp::create(
                                b, loc, p.limit, e.idx(kMinKeysPerSplit))));
  p.chunk = arith::CeilDivSIOp::create(b, loc, p.limit, p.splits);
  p.causalOffset = masks.causalOffsetValue ? masks.causalOffsetValue
                                           : e.idx(masks.causalOffset);

  // 1. Partials: one warp per (batch x KV head, split, row tile).
  launch(b, loc, e.idx(p.B * p.Hkv), p.splits, e.idx(p.tiles), kWarp,
         [&](OpBuilder &kb, gpu::KernelDim3 block, Value lane) {
           PartialKernel(kb, loc, p, block, lane).build();
         });
  // 2. Combine: one warp per (batch x KV head, row).
  launch(b, loc, e.idx(p.B * p.Hkv), e.idx(p.rows), e.idx(1), kWarp,
         [&](OpBuilder &cb, gpu::KernelDim3 block, Value lane) {
           buildCombine(cb, loc, p, block, lane);
         });

  auto tensorOf = [&](Value buf) -> Value {
    if (!buf)
      return Value();
    auto type = cast<MemRefType>(buf.getType());
    return bufferization::ToTensorOp::create(
        b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
        buf, /*restrict=*/true, /*writable=*/true);
  };
  return {tensorOf(p.out), tensorOf(p.presentK), tensorOf(p.presentV)};
}

} // namespace mp
