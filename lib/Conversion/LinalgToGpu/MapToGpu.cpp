//===- MapToGpu.cpp - bufferized linalg ops as GPU-mapped loops -----------===//
//
// One kernel per linalg op: parallel loops first, collapsed into one index
// over blocks x threads; reductions inside each thread. This is the
// correct-for-everything baseline the specialized kernels (Tensor Core
// matmuls, warp reductions, flash attention) replace op by op.
//
//===----------------------------------------------------------------------===//

#include "mp/Conversion/Passes.h"

#include "GenericBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mp {
#define GEN_PASS_DEF_MAPTOGPU
#include "mp/Conversion/Passes.h.inc"
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

/// `memref.reshape` to a static identity-layout type is a reinterpretation
/// of the same contiguous buffer; as such it needs no read of its shape
/// operand (which lives in device memory).
LogicalResult staticReshapesToCasts(func::FuncOp func, IRRewriter &rewriter) {
  WalkResult result = func.walk([&](memref::ReshapeOp reshape) {
    auto type = dyn_cast<MemRefType>(reshape.getResult().getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity()) {
      reshape.emitOpError("with a dynamic result shape cannot run on the "
                          "CUDA target yet (pin the input shapes)");
      return WalkResult::interrupt();
    }
    SmallVector<int64_t> strides(type.getRank(), 1);
    for (int64_t i = type.getRank() - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * type.getDimSize(i + 1);
    rewriter.setInsertionPoint(reshape);
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        reshape, type, reshape.getSource(), /*offset=*/0, type.getShape(),
        strides);
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
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

/// Replaces the outermost `loop` by blocks x threads over its flattened
/// iteration space: thread `g = block * blockSize + thread` runs iteration
/// `g` (delinearized, row-major) when `g` is in range.
LogicalResult mapToBlocksAndThreads(scf::ParallelOp loop, int64_t blockSize,
                                    IRRewriter &rewriter) {
  if (loop.getNumReductions() != 0)
    return loop.emitOpError("with reductions cannot be mapped to GPU threads");
  SmallVector<int64_t> lbs, steps, trips;
  for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return loop.emitOpError("has dynamic bounds; the CUDA target needs "
                              "static shapes (pin the input shapes)");
    lbs.push_back(*l);
    steps.push_back(*s);
    trips.push_back(std::max<int64_t>(0, (*u - *l + *s - 1) / *s));
  }
  int64_t total = 1;
  for (int64_t t : trips)
    total *= t;
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  if (total == 0) {
    rewriter.eraseOp(loop);
    return success();
  }
  int64_t threads = std::min(blockSize, total);
  int64_t blocks = (total + threads - 1) / threads;
  // Constants go before the loops, once each.
  Operation *constantPoint = loop;
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
  Value zero = c(0), one = c(1);
  auto grid = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{c(blocks)}, ValueRange{one});
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
                                        c(total));
  auto guard = scf::IfOp::create(rewriter, loc, inRange,
                                 /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(guard.thenBlock());
  IRMapping map;
  int64_t stride = total;
  for (auto [iv, lb, step, trip] :
       llvm::zip(loop.getInductionVars(), lbs, steps, trips)) {
    stride /= trip;
    Value idx = stride == 1 ? g
                            : arith::DivUIOp::create(rewriter, loc, g,
                                                     c(stride)).getResult();
    if (stride * trip != total)
      idx = arith::RemUIOp::create(rewriter, loc, idx, c(trip));
    if (step != 1)
      idx = arith::MulIOp::create(rewriter, loc, idx, c(step));
    if (lb != 0)
      idx = arith::AddIOp::create(rewriter, loc, idx, c(lb));
    map.map(iv, idx);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    rewriter.clone(op, map);
  rewriter.eraseOp(loop);

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
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(mapFunction(func, rewriter)))
        return signalPassFailure();
  }

  LogicalResult mapFunction(func::FuncOp func, IRRewriter &rewriter) {
    copiesToLinalg(func, rewriter);
    if (failed(staticReshapesToCasts(func, rewriter)))
      return failure();
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
    for (scf::ParallelOp loop : outermost)
      if (failed(mapToBlocksAndThreads(loop, blockSize, rewriter)))
        return failure();
    // What is left on the host may compute addresses, never read or write
    // a buffer, except the host-resident arguments the entry marks (a KV
    // cache's fill level, which places the cache writes).
    auto onHost = [&](Value memref) {
      auto arg = dyn_cast<BlockArgument>(memref);
      return arg && arg.getOwner()->isEntryBlock() &&
             arg.getOwner()->getParentOp() == func &&
             func.getArgAttr(arg.getArgNumber(), mp::kHostResidentAttr);
    };
    WalkResult result = func.walk([&](Operation *op) {
      if (inKernel(op))
        return WalkResult::advance();
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && onHost(load.getMemRef()))
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
