//===- MergeLaunches.cpp - independent kernels in one launch --------------===//
//
// Every launch costs a few microseconds of GPU time however little it does,
// and a decode step's projections are small. Launches that touch disjoint
// memory run as one: blocks [start_k, start_k + blocks_k) of the merged
// grid run launch k's body. A launch joins the earliest group it can move
// up to: past at most one group it shares no written byte with, and no op
// that may touch memory otherwise.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "GenericBody.h"
#include "MemoryAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mp {
#define GEN_PASS_DEF_MERGELAUNCHES
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

constexpr int64_t kWarpSize = 32;

/// A launch that can join others: static one-dimensional grid and block,
/// one body block, no geometry read but through the region's arguments.
struct Member {
  gpu::LaunchOp op;
  int64_t blocks, threads;
  bool warpLevel; // mma.sync or shuffles: it must run in whole warps
  /// Barriers or block-wide reductions: every thread of its blocks must
  /// reach them, so it runs only at its own block width.
  bool blockWide;
  SmallVector<mp::Access> accesses;
};

std::optional<Member> asMember(gpu::LaunchOp op) {
  if (op.getAsyncToken() || !op.getAsyncDependencies().empty() ||
      op.getDynamicSharedMemorySize() || op.hasClusterSize() ||
      op.getNumWorkgroupAttributions() || op.getNumPrivateAttributions() ||
      !op.getBody().hasOneBlock())
    return std::nullopt;
  auto constant = [](Value v) { return getConstantIntValue(v); };
  std::optional<int64_t> gx = constant(op.getGridSizeX()),
                         gy = constant(op.getGridSizeY()),
                         gz = constant(op.getGridSizeZ()),
                         bx = constant(op.getBlockSizeX()),
                         by = constant(op.getBlockSizeY()),
                         bz = constant(op.getBlockSizeZ());
  if (!gx || !bx || gy != 1 || gz != 1 || by != 1 || bz != 1)
    return std::nullopt;
  Member m{op, *gx, *bx, false, false, {}};
  WalkResult result = op.getBody().walk([&](Operation *inner) {
    // Geometry read other than through the region arguments would see the
    // merged launch's.
    if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::GridDimOp, gpu::BlockDimOp,
            gpu::LaunchOp>(inner))
      return WalkResult::interrupt();
    // The merged body picks a member per block: a whole block reaches the
    // same barriers.
    if (isa<gpu::BarrierOp, gpu::AllReduceOp>(inner))
      m.blockWide = true;
    if (isa<nvgpu::MmaSyncOp, gpu::ShuffleOp, gpu::SubgroupReduceOp>(inner))
      m.warpLevel = true;
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return std::nullopt;
  FailureOr<SmallVector<mp::Access>> accesses = mp::accessesOf(op);
  if (failed(accesses))
    return std::nullopt;
  m.accesses = std::move(*accesses);
  return m;
}

/// Whether `next` touches nothing a member of `group` writes and writes
/// nothing they touch: it may then run before, after or beside them.
bool independent(ArrayRef<Member> group, const Member &next) {
  return llvm::none_of(group, [&](const Member &m) {
    return mp::conflict(m.accesses, next.accesses);
  });
}

/// Whether `next`, independent of `group`, can run at the group's block
/// width.
bool fitsWidth(ArrayRef<Member> group, const Member &next) {
  int64_t width = next.threads;
  for (const Member &m : group)
    width = std::max(width, m.threads);
  // Narrower members run on the first threads of each block: in whole
  // warps when warp-level ops need every lane.
  auto fits = [&](const Member &m) {
    return m.threads == width ||
           (!m.blockWide && (!m.warpLevel || m.threads % kWarpSize == 0));
  };
  return fits(next) && llvm::all_of(group, fits);
}

void merge(ArrayRef<Member> group, IRRewriter &rewriter) {
  gpu::LaunchOp first = group.front().op;
  // What lies between the members (constants, views) goes above the first;
  // other groups' launches there stay, to run after this one.
  SmallVector<Operation *> launches;
  for (Operation *op = first; op != group.back().op; op = op->getNextNode())
    if (isa<gpu::LaunchOp>(op))
      launches.push_back(op);
  launches.push_back(group.back().op);
  mp::hoistBetween(first, group.back().op, launches);
  Location loc = first.getLoc();
  rewriter.setInsertionPoint(first);
  auto c = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  int64_t blocks = 0, threads = 0;
  for (const Member &m : group) {
    blocks += m.blocks;
    threads = std::max(threads, m.threads);
  }
  auto launch = gpu::LaunchOp::create(rewriter, loc, c(blocks), c(1), c(1),
                                      c(threads), c(1), c(1));
  rewriter.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(rewriter, loc);
  Block *body = &launch.getBody().front();
  Value bid = launch.getBlockIds().x, tid = launch.getThreadIds().x;
  int64_t start = 0;
  for (const Member &m : group) {
    rewriter.setInsertionPoint(body->getTerminator());
    auto cmp = [&](arith::CmpIPredicate p, Value x, int64_t v) {
      return arith::CmpIOp::create(rewriter, loc, p, x, c(v)).getResult();
    };
    Value inShare = cmp(arith::CmpIPredicate::ult, bid, start + m.blocks);
    if (start != 0)
      inShare = arith::AndIOp::create(
          rewriter, loc, inShare, cmp(arith::CmpIPredicate::uge, bid, start));
    if (m.threads != threads)
      inShare =
          arith::AndIOp::create(rewriter, loc, inShare,
                                cmp(arith::CmpIPredicate::ult, tid, m.threads));
    auto share = scf::IfOp::create(rewriter, loc, inShare,
                                   /*withElseRegion=*/false);
    rewriter.setInsertionPointToStart(share.thenBlock());
    IRMapping map;
    gpu::LaunchOp old = m.op;
    map.map(
        old.getBlockIds().x,
        start ? arith::SubIOp::create(rewriter, loc, bid, c(start)).getResult()
              : bid);
    map.map(old.getBlockIds().y, launch.getBlockIds().y);
    map.map(old.getBlockIds().z, launch.getBlockIds().z);
    map.map(old.getThreadIds().x, tid);
    map.map(old.getThreadIds().y, launch.getThreadIds().y);
    map.map(old.getThreadIds().z, launch.getThreadIds().z);
    map.map(old.getGridSize().x, c(m.blocks));
    map.map(old.getGridSize().y, launch.getGridSize().y);
    map.map(old.getGridSize().z, launch.getGridSize().z);
    map.map(old.getBlockSize().x, c(m.threads));
    map.map(old.getBlockSize().y, launch.getBlockSize().y);
    map.map(old.getBlockSize().z, launch.getBlockSize().z);
    for (Operation &op : old.getBody().front().without_terminator())
      rewriter.clone(op, map);
    start += m.blocks;
  }
  for (const Member &m : group)
    rewriter.eraseOp(m.op);
}

struct MergeLaunchesPass
    : public mp::impl::MergeLaunchesBase<MergeLaunchesPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](gpu::LaunchOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>() &&
          !llvm::is_contained(blocks, op->getBlock()))
        blocks.push_back(op->getBlock());
    });
    IRRewriter rewriter(&getContext());
    for (Block *block : blocks)
      for (SmallVector<Member> &group : groupLaunches(*block))
        if (group.size() > 1)
          merge(group, rewriter);
  }

  /// The launches of `block` in groups, each to run as one launch at its
  /// first member's place, the groups in order.
  static SmallVector<SmallVector<Member>> groupLaunches(Block &block) {
    SmallVector<SmallVector<Member>> groups;
    size_t open = 0; // groups from here on may still take launches
    for (Operation &op : block) {
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (!launch) {
        // Nothing moves past an op that may touch memory.
        if (!isMemoryEffectFree(&op))
          open = groups.size();
        continue;
      }
      std::optional<Member> m = asMember(launch);
      if (!m) {
        open = groups.size();
        continue;
      }
      // The earliest group it can join, moving up past at most one later
      // group: a launch moved further up would hold its buffers live
      // longer (a vocoder's activation arena grew by half).
      std::optional<size_t> join;
      size_t earliest =
          std::max(open, groups.size() >= 2 ? groups.size() - 2 : size_t(0));
      for (size_t g = groups.size(); g-- > earliest;) {
        if (!independent(groups[g], *m))
          break;
        if (fitsWidth(groups[g], *m))
          join = g;
      }
      if (join) {
        groups[*join].push_back(std::move(*m));
        continue;
      }
      groups.emplace_back();
      groups.back().push_back(std::move(*m));
    }
    return groups;
  }
};

} // namespace
