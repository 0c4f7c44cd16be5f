//===- MapToGpu.cpp - bufferized linalg ops as GPU-mapped loops -----------===//
//
// One kernel per linalg op: parallel loops first, collapsed into one index
// over blocks x threads; reductions inside each thread. This is the
// correct-for-everything baseline the specialized kernels (Tensor Core
// matmuls, warp reductions, flash attention) replace op by op. A fill of an
// op's output right before it joins the op's kernel.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "GenericBody.h"
#include "MemoryAccess.h"
#include "SerialToKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mp {
#define GEN_PASS_DEF_MAPTOGPU
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;
using mp::inKernel;

namespace {

/// Host copies become kernels: the host never touches device memory.
void copiesToLinalg(func::FuncOp func, IRRewriter &rewriter) {
  SmallVector<memref::CopyOp> copies;
  func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    rewriter.eraseOp(copy);
  }
}

/// `memref.reshape` to an identity-layout type is a reinterpretation of the
/// same contiguous buffer. Static sizes need no read of the shape operand
/// (which lives in device memory); run-time ones are loaded from it, and
/// those loads run on one thread and come back to the host
/// (moveSerialCodeToKernels).
LogicalResult reshapesToCasts(func::FuncOp func, IRRewriter &rewriter) {
  WalkResult result = func.walk([&](memref::ReshapeOp reshape) {
    auto type = dyn_cast<MemRefType>(reshape.getResult().getType());
    if (!type || !type.getLayout().isIdentity()) {
      reshape.emitOpError("to a non-identity layout cannot run on the CUDA "
                          "target");
      return WalkResult::interrupt();
    }
    Location loc = reshape.getLoc();
    rewriter.setInsertionPoint(reshape);
    SmallVector<OpFoldResult> sizes(type.getRank()), strides(type.getRank());
    // The loads first, next to each other: one kernel and one copy for all.
    SmallVector<Value> indices;
    for (int64_t d = 0; d < type.getRank(); ++d)
      indices.push_back(arith::ConstantIndexOp::create(rewriter, loc, d));
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes[d] =
          type.isDynamicDim(d)
              ? OpFoldResult(memref::LoadOp::create(
                    rewriter, loc, reshape.getShape(), ValueRange{indices[d]}))
              : OpFoldResult(rewriter.getIndexAttr(type.getDimSize(d)));
    OpFoldResult stride = rewriter.getIndexAttr(1);
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      strides[d] = stride;
      if (auto entry = dyn_cast<Value>(sizes[d]);
          entry && !entry.getType().isIndex())
        sizes[d] = arith::IndexCastOp::create(rewriter, loc,
                                              rewriter.getIndexType(), entry)
                       .getResult();
      std::optional<int64_t> a = getConstantIntValue(stride),
                             b = getConstantIntValue(sizes[d]);
      stride =
          a && b
              ? OpFoldResult(rewriter.getIndexAttr(*a * *b))
              : OpFoldResult(arith::MulIOp::create(
                    rewriter, loc,
                    getValueOrCreateConstantIndexOp(rewriter, loc, stride),
                    getValueOrCreateConstantIndexOp(rewriter, loc, sizes[d])));
    }
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        reshape, type, reshape.getSource(), rewriter.getIndexAttr(0), sizes,
        strides);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// The lowering of `bufferization.dealloc` over several buffers (dynamic
/// shapes: a result that may alias a temporary) keeps the buffers'
/// addresses and ownership flags in small static index and i1 buffers that
/// only host code reads, partly in a helper function. Those belong on the
/// host stack, not in device memory: they become allocas in the entry
/// block. Returns the host buffers (with their casts, and the helper's
/// arguments that only ever receive them).
llvm::DenseSet<Value> keepDeallocListsOnHost(ModuleOp module,
                                             IRRewriter &rewriter) {
  llvm::DenseSet<Value> host;
  // Host code only: no user in a kernel or a loop that becomes one, and
  // handed to a function (the helper) through a cast.
  auto onHost = [](Operation *op) {
    return !inKernel(op) && !op->getParentOfType<scf::ParallelOp>();
  };
  auto isList = [&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !onHost(alloc) ||
        !(type.getElementType().isIndex() ||
          type.getElementType().isInteger(1)))
      return false;
    bool passed = false;
    bool hostOnly = llvm::all_of(alloc->getUsers(), [&](Operation *user) {
      if (!onHost(user))
        return false;
      if (auto cast = dyn_cast<memref::CastOp>(user)) {
        passed = true;
        return llvm::all_of(cast->getUsers(), [&](Operation *call) {
          return isa<func::CallOp>(call) && onHost(call);
        });
      }
      if (auto store = dyn_cast<memref::StoreOp>(user))
        return store.getMemRef() == alloc.getResult();
      return isa<memref::LoadOp, memref::DeallocOp>(user);
    });
    return hostOnly && passed;
  };
  SmallVector<memref::AllocOp> lists;
  module.walk([&](memref::AllocOp alloc) {
    if (isList(alloc))
      lists.push_back(alloc);
  });
  for (memref::AllocOp alloc : lists) {
    auto func = alloc->getParentOfType<func::FuncOp>();
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.setInsertionPointToStart(&func.getBody().front());
    auto alloca = memref::AllocaOp::create(rewriter, alloc.getLoc(),
                                           alloc.getType());
    rewriter.replaceOp(alloc, alloca);
    host.insert(alloca);
    for (Operation *user : alloca->getUsers())
      if (isa<memref::CastOp>(user))
        host.insert(user->getResult(0));
  }
  // A private function whose memref arguments are host lists at every call
  // (the deallocation helper).
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPrivate() || func.isExternal())
      continue;
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(func, module);
    if (!uses || uses->empty())
      continue;
    bool onlyLists = llvm::all_of(*uses, [&](const SymbolTable::SymbolUse &use) {
      return isa<func::CallOp>(use.getUser()) &&
             llvm::all_of(use.getUser()->getOperands(), [&](Value v) {
               return !isa<MemRefType>(v.getType()) || host.contains(v);
             });
    });
    if (onlyLists)
      for (BlockArgument arg : func.getArguments())
        if (isa<MemRefType>(arg.getType()))
          host.insert(arg);
  }
  return host;
}

/// Folds the fill that initializes a generic's output right before it into
/// the generic: the accumulator is the fill's value at the first point of
/// the reduction loops (at every point without any), the buffer elsewhere.
/// One kernel then does both, and the buffer is not written twice.
void foldInitializingFills(func::FuncOp func, IRRewriter &rewriter) {
  SmallVector<std::pair<linalg::GenericOp, linalg::FillOp>> folds;
  func.walk([&](linalg::GenericOp op) {
    if (!inKernel(op))
      if (linalg::FillOp fill = mp::initializingFill(op))
        folds.push_back({op, fill});
  });
  for (auto [op, fill] : folds) {
    BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
    Location loc = op.getLoc();
    rewriter.setInsertionPointToStart(op.getBody());
    Value first;
    for (auto [d, kind] : llvm::enumerate(op.getIteratorTypesArray())) {
      if (kind != utils::IteratorType::reduction)
        continue;
      Value at = linalg::IndexOp::create(rewriter, loc, d);
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value isZero = arith::CmpIOp::create(rewriter, loc,
                                           arith::CmpIPredicate::eq, at, zero);
      first =
          first
              ? arith::AndIOp::create(rewriter, loc, first, isZero).getResult()
              : isZero;
    }
    Value start = fill.getInputs()[0];
    if (first)
      start = arith::SelectOp::create(rewriter, loc, first, start, acc);
    rewriter.replaceAllUsesExcept(acc, start, start.getDefiningOp());
    rewriter.eraseOp(fill);
  }
}

/// Generalizes `op`, moves its reduction loops after the parallel ones and
/// lowers it to an scf.parallel nest. Ops without parallel loops are
/// wrapped in a one-iteration scf.parallel first, so that every op's work
/// ends up in exactly one outermost scf.parallel.
LogicalResult lowerToParallelLoops(linalg::LinalgOp op,
                                   IRRewriter &rewriter) {
  rewriter.setInsertionPoint(op);
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op->emitOpError("has no generic form to map to GPU threads");
    generic = *generalized;
  }
  SmallVector<unsigned> order;
  for (auto [i, kind] : llvm::enumerate(generic.getIteratorTypesArray()))
    if (kind == utils::IteratorType::parallel)
      order.push_back(i);
  size_t numParallel = order.size();
  for (auto [i, kind] : llvm::enumerate(generic.getIteratorTypesArray()))
    if (kind != utils::IteratorType::parallel)
      order.push_back(i);
  if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
    FailureOr<linalg::GenericOp> permuted =
        linalg::interchangeGenericOp(rewriter, generic, order);
    if (failed(permuted))
      return generic.emitOpError("cannot move its reduction loops inside");
    generic = *permuted;
  }
  if (numParallel == 0) {
    // One thread does it all: a full reduction or a rank-0 op.
    Location loc = generic.getLoc();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto single = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
    rewriter.moveOpBefore(generic, single.getBody()->getTerminator());
    rewriter.setInsertionPoint(generic);
  }
  if (failed(linalg::linalgOpToParallelLoops(rewriter, generic)))
    return generic.emitOpError("cannot be lowered to parallel loops");
  rewriter.eraseOp(generic);
  return success();
}

/// Replaces the outermost `loops` by blocks x threads over their flattened
/// iteration spaces laid end to end: thread `g = block * blockSize +
/// thread` runs iteration `g - start` (delinearized, row-major) of the loop
/// whose range [start, start + total) holds `g`. One loop is the common
/// case; several (independent, static: groupIndependentLoops) share one
/// launch. Bounds known only at run time (dynamic shapes, one loop) give a
/// grid sized on the host at run time, of at least one block (a launch of
/// none is invalid).
LogicalResult mapToBlocksAndThreads(ArrayRef<scf::ParallelOp> loops,
                                    int64_t blockSize, IRRewriter &rewriter) {
  scf::ParallelOp first = loops.front();
  for (scf::ParallelOp loop : loops)
    if (loop.getNumReductions() != 0)
      return loop.emitOpError(
          "with reductions cannot be mapped to GPU threads");
  Location loc = first.getLoc();
  rewriter.setInsertionPoint(first);
  // Constants and run-time sizes go before the loops, once each.
  Operation *constantPoint = first;
  llvm::SmallDenseMap<int64_t, Value> constants;
  auto c = [&](int64_t v) {
    Value &value = constants[v];
    if (!value) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(constantPoint);
      value = arith::ConstantIndexOp::create(rewriter, loc, v);
    }
    return value;
  };
  auto value = [&](OpFoldResult v) {
    if (auto attr = dyn_cast<Attribute>(v))
      return c(cast<IntegerAttr>(attr).getInt());
    return cast<Value>(v);
  };
  // Products fold where both factors are known.
  auto mul = [&](OpFoldResult x, OpFoldResult y) -> OpFoldResult {
    std::optional<int64_t> a = getConstantIntValue(x),
                           b = getConstantIntValue(y);
    if (a && b)
      return rewriter.getIndexAttr(*a * *b);
    if (a == 1 || b == 1)
      return a == 1 ? y : x;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(constantPoint);
    return arith::MulIOp::create(rewriter, loc, value(x), value(y))
        .getResult();
  };
  /// One loop's iteration space, flattened row-major.
  struct Space {
    SmallVector<OpFoldResult> lbs, steps, trips, strides;
    OpFoldResult total;
  };
  SmallVector<Space, 2> spaces;
  for (scf::ParallelOp loop : loops) {
    Space space;
    for (auto [lb, ub, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> l = getConstantIntValue(lb),
                             u = getConstantIntValue(ub),
                             s = getConstantIntValue(step);
      if (s && *s <= 0)
        return loop.emitOpError("has a step of ") << *s
                                                  << "; GPU threads "
                                                     "need a positive step";
      space.lbs.push_back(l ? OpFoldResult(rewriter.getIndexAttr(*l))
                            : OpFoldResult(lb));
      space.steps.push_back(s ? OpFoldResult(rewriter.getIndexAttr(*s))
                              : OpFoldResult(step));
      if (l && u && s) {
        space.trips.push_back(rewriter.getIndexAttr(
            std::max<int64_t>(0, (*u - *l + *s - 1) / *s)));
        continue;
      }
      // max(ub - lb, 0) ceildiv step, at run time.
      Value extent = arith::MaxSIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, ub, lb), c(0));
      space.trips.push_back(
          arith::CeilDivSIOp::create(rewriter, loc, extent, step).getResult());
    }
    space.total = rewriter.getIndexAttr(1);
    for (OpFoldResult t : space.trips)
      space.total = mul(space.total, t);
    // The strides of the row-major delinearization, innermost first.
    space.strides.resize(space.trips.size());
    OpFoldResult stride = rewriter.getIndexAttr(1);
    for (int64_t i = space.trips.size() - 1; i >= 0; --i) {
      space.strides[i] = stride;
      if (i > 0)
        stride = mul(stride, space.trips[i]);
    }
    spaces.push_back(std::move(space));
  }
  OpFoldResult total = spaces.front().total;
  if (loops.size() > 1) {
    int64_t sum = 0;
    for (Space &space : spaces)
      sum += *getConstantIntValue(space.total);
    total = rewriter.getIndexAttr(sum);
  }
  std::optional<int64_t> staticTotal = getConstantIntValue(total);
  if (staticTotal == 0) {
    for (scf::ParallelOp loop : loops)
      rewriter.eraseOp(loop);
    return success();
  }
  int64_t threads =
      staticTotal ? std::min(blockSize, *staticTotal) : blockSize;
  Value zero = c(0), one = c(1);
  Value blocks =
      staticTotal
          ? c((*staticTotal + threads - 1) / threads)
          : arith::MaxSIOp::create(rewriter, loc,
                                   arith::CeilDivSIOp::create(
                                       rewriter, loc, value(total), c(threads)),
                                   c(1))
                .getResult();
  auto grid = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{blocks}, ValueRange{one});
  constantPoint = grid;
  rewriter.setInsertionPointToStart(grid.getBody());
  auto block = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                       ValueRange{c(threads)},
                                       ValueRange{one});
  rewriter.setInsertionPointToStart(block.getBody());
  Value g = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, grid.getInductionVars()[0],
                            c(threads)),
      block.getInductionVars()[0]);
  Value inRange = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::ult, g,
                                        value(total));
  auto guard = scf::IfOp::create(rewriter, loc, inRange,
                                 /*withElseRegion=*/false);
  int64_t start = 0;
  for (auto [i, member, space] : llvm::enumerate(loops, spaces)) {
    scf::ParallelOp loop = member;
    rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
    Value local = g;
    std::optional<int64_t> loopTotal = getConstantIntValue(space.total);
    if (loops.size() > 1) {
      // This loop's share of the grid: [start, start + total); the guard
      // above bounds the last one.
      auto compare = [&](arith::CmpIPredicate p, int64_t v) {
        return arith::CmpIOp::create(rewriter, loc, p, g, c(v)).getResult();
      };
      Value inShare =
          i == 0 ? compare(arith::CmpIPredicate::ult, *loopTotal)
          : i + 1 == loops.size()
              ? compare(arith::CmpIPredicate::uge, start)
              : arith::AndIOp::create(
                    rewriter, loc, compare(arith::CmpIPredicate::uge, start),
                    compare(arith::CmpIPredicate::ult, start + *loopTotal))
                    .getResult();
      auto share = scf::IfOp::create(rewriter, loc, inShare,
                                     /*withElseRegion=*/false);
      rewriter.setInsertionPointToStart(share.thenBlock());
      if (start != 0)
        local = arith::SubIOp::create(rewriter, loc, g, c(start));
      start += *loopTotal;
    }
    IRMapping map;
    for (auto [i, iv] : llvm::enumerate(loop.getInductionVars())) {
      Value idx = isConstantIntValue(space.strides[i], 1)
                      ? local
                      : arith::DivUIOp::create(rewriter, loc, local,
                                               value(space.strides[i]))
                            .getResult();
      // The outermost index is in range without a remainder; so is one
      // whose stride times trip count is the whole space.
      std::optional<int64_t> stride = getConstantIntValue(space.strides[i]),
                             trip = getConstantIntValue(space.trips[i]);
      bool covered =
          stride && trip && loopTotal && *stride * *trip == *loopTotal;
      if (i != 0 && !covered)
        idx = arith::RemUIOp::create(rewriter, loc, idx, value(space.trips[i]));
      if (!isConstantIntValue(space.steps[i], 1))
        idx = arith::MulIOp::create(rewriter, loc, idx, value(space.steps[i]));
      if (!isConstantIntValue(space.lbs[i], 0))
        idx = arith::AddIOp::create(rewriter, loc, idx, value(space.lbs[i]));
      map.map(iv, idx);
    }
    for (Operation &op : loop.getBody()->without_terminator())
      rewriter.clone(op, map);
    rewriter.eraseOp(loop);
  }

  MLIRContext *ctx = rewriter.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  auto mapping = [&](gpu::Processor p) {
    return gpu::ParallelLoopDimMappingAttr::get(ctx, p, id, id);
  };
  if (failed(gpu::setMappingAttr(grid, {mapping(gpu::Processor::BlockX)})) ||
      failed(gpu::setMappingAttr(block, {mapping(gpu::Processor::ThreadX)})))
    return grid.emitOpError("cannot be mapped to GPU blocks and threads");
  return success();
}

/// Splits the function's outermost loops, in order, into groups that can
/// share one launch: consecutive loops of one block, with nothing that may
/// touch memory between them, static iteration spaces, and no buffer one
/// of them writes that another reads or writes. A decode step's copies
/// into the halves of a rotary buffer or into a KV cache then take one
/// launch where they took one each.
SmallVector<SmallVector<scf::ParallelOp>>
groupIndependentLoops(ArrayRef<scf::ParallelOp> loops) {
  struct Group {
    SmallVector<scf::ParallelOp> loops;
    SmallVector<mp::Access> accesses; // of all its loops
    bool open;                        // static, with known effects
  };
  SmallVector<Group> groups;
  auto isStatic = [](scf::ParallelOp loop) {
    auto known = [](Value v) { return getConstantIntValue(v).has_value(); };
    return llvm::all_of(loop.getLowerBound(), known) &&
           llvm::all_of(loop.getUpperBound(), known) &&
           llvm::all_of(loop.getStep(), known);
  };
  for (scf::ParallelOp loop : loops) {
    FailureOr<SmallVector<mp::Access>> accesses = mp::accessesOf(loop);
    bool open = succeeded(accesses) && isStatic(loop);
    if (open && !groups.empty() && groups.back().open &&
        mp::onlyEffectFreeBetween(groups.back().loops.back(), loop) &&
        !mp::conflict(groups.back().accesses, *accesses)) {
      groups.back().loops.push_back(loop);
      llvm::append_range(groups.back().accesses, *accesses);
      continue;
    }
    // A loop whose effects are unknown, or dynamic, stays on its own.
    groups.push_back({{loop},
                      open ? std::move(*accesses) : SmallVector<mp::Access>(),
                      open});
  }
  return llvm::map_to_vector(groups, [](Group &g) { return g.loops; });
}

struct MapToGpuPass : public mp::impl::MapToGpuBase<MapToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("mp-map-to-gpu: block-size must be in "
                               "[1, 1024], not ")
          << blockSize.getValue();
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    hostLists = keepDeallocListsOnHost(getOperation(), rewriter);
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(mapFunction(func, rewriter)))
        return signalPassFailure();
  }

  /// Buffers only host code uses (keepDeallocListsOnHost, and the copies
  /// moveSerialCodeToKernels makes).
  llvm::DenseSet<Value> hostLists;

  LogicalResult mapFunction(func::FuncOp func, IRRewriter &rewriter) {
    // Host code may compute addresses, never read or write a buffer, except
    // the host-resident arguments the entry marks (a KV cache's fill level,
    // which places the cache writes) and the host buffers made here.
    auto onHost = [&](Value memref) {
      if (hostLists.contains(memref))
        return true;
      auto arg = dyn_cast<BlockArgument>(memref);
      return arg && arg.getOwner()->isEntryBlock() &&
             arg.getOwner()->getParentOp() == func &&
             func.getArgAttr(arg.getArgNumber(), mp::kHostResidentAttr);
    };
    copiesToLinalg(func, rewriter);
    if (failed(reshapesToCasts(func, rewriter)))
      return failure();
    mp::moveSerialCodeToKernels(func, onHost, hostLists, memory, rewriter);
    foldInitializingFills(func, rewriter);
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (!inKernel(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops)
      if (failed(lowerToParallelLoops(op, rewriter)))
        return failure();
    SmallVector<scf::ParallelOp> outermost;
    func.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        outermost.push_back(loop);
    });
    for (SmallVector<scf::ParallelOp> &group :
         groupIndependentLoops(outermost)) {
      SmallVector<Operation *> members(group.begin(), group.end());
      mp::hoistBetween(group.front(), group.back(), members);
      if (failed(mapToBlocksAndThreads(group, blockSize, rewriter)))
        return failure();
    }
    // What is left on the host must not touch a device buffer.
    WalkResult result = func.walk([&](Operation *op) {
      if (inKernel(op))
        return WalkResult::advance();
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && onHost(load.getMemRef()))
        return WalkResult::advance();
      if (auto store = dyn_cast<memref::StoreOp>(op);
          store && hostLists.contains(store.getMemRef()))
        return WalkResult::advance();
      if (auto alloca = dyn_cast<memref::AllocaOp>(op);
          alloca && hostLists.contains(alloca))
        return WalkResult::advance();
      if (isa<memref::LoadOp, memref::StoreOp, memref::AllocaOp,
              memref::CopyOp>(op) ||
          isa_and_nonnull<vector::VectorDialect>(op->getDialect())) {
        op->emitOpError("would access device memory from the host; the "
                        "CUDA target cannot run it yet");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.removeArgAttr(i, mp::kHostResidentAttr);
    return failure(result.wasInterrupted());
  }
};

} // namespace
