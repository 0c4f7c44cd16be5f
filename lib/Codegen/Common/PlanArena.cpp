//===- PlanArena.cpp - temporary buffers packed into one arena ------------===//
//
// Static memory planning over the live ranges the deallocation pipeline
// leaves in straight-line code: one allocation per call instead of one per
// temporary, and reuse of memory between buffers that are never live at the
// same time. On the CUDA target that is one device allocation per run, at
// the same offsets every run.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

namespace mp {
#define GEN_PASS_DEF_PLANARENA
#include "mp/Codegen/Common/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// A buffer live over [start, end] (positions in the block of its first and
/// last use), `bytes` long.
struct LiveBuffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  int64_t start, end, bytes;
  int64_t offset = -1;
};

/// Byte size of a static identity-layout buffer, if it is one.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return std::nullopt; // i1 is stored as bytes: not plain bit math
  return type.getNumElements() * (bits / 8);
}

/// Greedy by size: the largest buffer first, each at the lowest aligned
/// offset clear of every placed buffer whose live range meets its own.
/// Returns the arena size.
int64_t packBuffers(MutableArrayRef<LiveBuffer> buffers, int64_t alignment) {
  SmallVector<LiveBuffer *> order;
  for (LiveBuffer &b : buffers)
    order.push_back(&b);
  // Ties in program order, so the plan is deterministic.
  llvm::sort(order, [](LiveBuffer *x, LiveBuffer *y) {
    return std::make_pair(-x->bytes, x->start) <
           std::make_pair(-y->bytes, y->start);
  });
  int64_t arena = 0;
  SmallVector<LiveBuffer *> placed;
  for (LiveBuffer *b : order) {
    // Address ranges taken during b's lifetime, by increasing offset.
    SmallVector<std::pair<int64_t, int64_t>> taken;
    for (LiveBuffer *p : placed)
      if (p->start <= b->end && b->start <= p->end)
        taken.push_back({p->offset, p->offset + p->bytes});
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (offset + b->bytes <= lo)
        break;
      offset = std::max<int64_t>(offset, llvm::alignTo(hi, alignment));
    }
    b->offset = offset;
    arena = std::max(arena, offset + b->bytes);
    placed.push_back(b);
  }
  return static_cast<int64_t>(llvm::alignTo(arena, alignment));
}

/// The most bytes live at once.
int64_t peakBytes(ArrayRef<LiveBuffer> buffers) {
  SmallVector<std::pair<int64_t, int64_t>> events; // (position, +/-bytes)
  for (const LiveBuffer &b : buffers) {
    events.push_back({b.start, b.bytes});
    events.push_back({b.end + 1, -b.bytes});
  }
  llvm::sort(events);
  int64_t live = 0, peak = 0;
  for (auto [position, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

/// Positions (in `body`) of the first and the last op that use `alloc` or a
/// view of it, with its one unconditional dealloc in `body` returned in
/// `dealloc`. Before its first use a buffer holds nothing (allocations are
/// often hoisted to the top), after its last use nothing reads it. None
/// when the buffer may outlive the block or its uses cannot be followed:
/// freed twice, conditionally or elsewhere, passed to a terminator, or
/// turned into a memref by an op that is not a view. (The deallocation
/// pipeline frees buffers at the end of their block, so the dealloc itself
/// says little about when a buffer is dead.)
std::optional<std::pair<int64_t, int64_t>>
liveRangeOf(memref::AllocOp alloc, Block &body,
            const DenseMap<Operation *, int64_t> &position,
            memref::DeallocOp &dealloc) {
  int64_t first = std::numeric_limits<int64_t>::max(), last = -1;
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto d = dyn_cast<memref::DeallocOp>(user)) {
        if (dealloc || d->getBlock() != &body || v != alloc.getResult())
          return std::nullopt;
        dealloc = d;
        continue;
      }
      if (user->hasTrait<OpTrait::IsTerminator>())
        return std::nullopt;
      bool makesMemref = llvm::any_of(user->getResultTypes(), [](Type t) {
        return isa<BaseMemRefType>(t);
      });
      if (makesMemref) {
        if (!isa<ViewLikeOpInterface>(user))
          return std::nullopt;
        // A view only computes an address: its uses are the buffer's.
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return std::nullopt;
      first = std::min(first, position.at(top));
      last = std::max(last, position.at(top));
    }
  }
  if (!dealloc)
    return std::nullopt;
  if (last < 0) // never used
    first = last = position.at(alloc);
  return std::make_pair(first, last);
}

struct PlanArenaPass : public mp::impl::PlanArenaBase<PlanArenaPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (alignment < 1 || !llvm::isPowerOf2_64(alignment)) {
      func.emitError("mp-plan-arena: alignment must be a power of 2, not ")
          << alignment.getValue();
      return signalPassFailure();
    }
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;

    SmallVector<LiveBuffer> buffers;
    for (auto alloc : body.getOps<memref::AllocOp>()) {
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      if (!bytes || *bytes == 0)
        continue;
      memref::DeallocOp dealloc;
      std::optional<std::pair<int64_t, int64_t>> live =
          liveRangeOf(alloc, body, position, dealloc);
      if (!live)
        continue;
      buffers.push_back({alloc, dealloc, live->first, live->second, *bytes});
    }
    if (buffers.empty())
      return;

    int64_t arenaBytes = packBuffers(buffers, alignment);
    int64_t bufferBytes = 0;
    for (const LiveBuffer &b : buffers)
      bufferBytes += b.bytes;
    OpBuilder builder(&body, body.begin());
    Location loc = func.getLoc();
    auto arenaType = MemRefType::get({arenaBytes}, builder.getI8Type());
    auto arena = memref::AllocOp::create(builder, loc, arenaType,
                                         builder.getI64IntegerAttr(alignment));
    for (LiveBuffer &b : buffers) {
      builder.setInsertionPoint(b.alloc);
      Value offset = arith::ConstantIndexOp::create(builder, b.alloc.getLoc(),
                                                    b.offset);
      auto view = memref::ViewOp::create(builder, b.alloc.getLoc(),
                                         b.alloc.getType(), arena, offset,
                                         ValueRange{});
      b.dealloc.erase();
      b.alloc.replaceAllUsesWith(view.getResult());
      b.alloc.erase();
    }
    builder.setInsertionPoint(body.getTerminator());
    memref::DeallocOp::create(builder, loc, arena);

    func->setAttr("mp.arena",
                  builder.getDictionaryAttr({
                      builder.getNamedAttr(
                          "bytes", builder.getI64IntegerAttr(arenaBytes)),
                      builder.getNamedAttr("buffers",
                                           builder.getI64IntegerAttr(
                                               (int64_t)buffers.size())),
                      builder.getNamedAttr(
                          "buffer_bytes",
                          builder.getI64IntegerAttr(bufferBytes)),
                      builder.getNamedAttr(
                          "peak_bytes",
                          builder.getI64IntegerAttr(peakBytes(buffers))),
                  }));
  }
};

} // namespace
