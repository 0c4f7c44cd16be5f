//===- SerialToKernels.cpp - host code on device memory into kernels ------===//

#include "SerialToKernels.h"

#include "GenericBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mp {
namespace {

/// Whether `op` or an op inside it loads or stores a device buffer.
bool touchesDevice(Operation *op, function_ref<bool(Value)> onHost) {
  WalkResult r = op->walk([&](Operation *inner) {
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(inner))
      memref = store.getMemRef();
    return memref && !onHost(memref) ? WalkResult::interrupt()
                                     : WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// Whether `op` can run on one GPU thread as it is: scalar code over
/// buffers, giving the host at most scalars.
bool runsOnOneThread(Operation *op) {
  auto scalar = [](Type t) { return t.isIntOrIndexOrFloat(); };
  if (!llvm::all_of(op->getResultTypes(), scalar))
    return false;
  WalkResult r = op->walk([&](Operation *inner) {
    bool hostOnly =
        isa<linalg::LinalgOp, scf::ParallelOp, gpu::LaunchOp, memref::AllocOp,
            memref::AllocaOp, memref::DeallocOp, memref::CopyOp,
            CallOpInterface>(inner) ||
        inner->getName().getDialectNamespace() == "cf";
    return hostOnly ? WalkResult::interrupt() : WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// The host ops to move, in order, grouped into runs of adjacent ops.
void collect(Block &block, function_ref<bool(Value)> onHost,
             SmallVectorImpl<SmallVector<Operation *>> &groups) {
  Operation *last = nullptr;
  for (Operation &op : block) {
    if (isa<linalg::LinalgOp, scf::ParallelOp, gpu::LaunchOp>(op) ||
        inKernel(&op) || !touchesDevice(&op, onHost))
      continue;
    if (runsOnOneThread(&op)) {
      if (!last || last->getNextNode() != &op)
        groups.emplace_back();
      groups.back().push_back(&op);
      last = &op;
      continue;
    }
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        collect(inner, onHost, groups);
  }
}

/// `declare void copy(ptr dst, ptr src, i64 bytes)` in the module.
func::FuncOp copyFunction(func::FuncOp func, StringRef name,
                          RewriterBase &rewriter) {
  auto module = func->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  MLIRContext *ctx = rewriter.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  auto decl = func::FuncOp::create(
      rewriter, func.getLoc(), name,
      FunctionType::get(ctx, {ptr, ptr, IntegerType::get(ctx, 64)}, {}));
  decl.setPrivate();
  return decl;
}

Value pointerTo(RewriterBase &b, Location loc, Value memref) {
  Value index =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), i64);
}

/// Moves `group` into a one-iteration loop; the results used after it come
/// back to the host through device buffers.
void moveToKernel(ArrayRef<Operation *> group, func::FuncOp copy,
                  llvm::DenseSet<Value> &hostBuffers, RewriterBase &rewriter) {
  Location loc = group.front()->getLoc();
  llvm::SmallPtrSet<Operation *, 8> inGroup(group.begin(), group.end());
  SmallVector<Value> escaping;
  for (Operation *op : group)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *user) {
            return !inGroup.contains(op->getBlock()->findAncestorOpInBlock(
                *user));
          }))
        escaping.push_back(r);
  rewriter.setInsertionPoint(group.front());
  SmallVector<Value> buffers;
  for (Value r : escaping)
    buffers.push_back(memref::AllocOp::create(
        rewriter, loc, MemRefType::get({}, r.getType())));
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  Operation *terminator = loop.getBody()->getTerminator();
  for (Operation *op : group)
    rewriter.moveOpBefore(op, terminator);
  rewriter.setInsertionPoint(terminator);
  for (auto [r, buffer] : llvm::zip(escaping, buffers))
    memref::StoreOp::create(rewriter, loc, r, buffer);

  // Host copies at the function's entry (one stack slot each, also when
  // the group sits in a host loop).
  auto func = loop->getParentOfType<func::FuncOp>();
  rewriter.setInsertionPointAfter(loop);
  for (auto [r, buffer] : llvm::zip(escaping, buffers)) {
    auto type = cast<MemRefType>(buffer.getType());
    Value host;
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&func.getBody().front());
      host = memref::AllocaOp::create(rewriter, loc, type);
    }
    hostBuffers.insert(host);
    Type elt = type.getElementType();
    int64_t bytes =
        elt.isIndex() ? 8 : std::max<int64_t>(1, elt.getIntOrFloatBitWidth() / 8);
    Value size = arith::ConstantIntOp::create(rewriter, loc, bytes, 64);
    func::CallOp::create(rewriter, loc, copy,
                         ValueRange{pointerTo(rewriter, loc, host),
                                    pointerTo(rewriter, loc, buffer), size});
    Value value = memref::LoadOp::create(rewriter, loc, host);
    memref::DeallocOp::create(rewriter, loc, buffer);
    rewriter.replaceUsesWithIf(r, value, [&](OpOperand &use) {
      return !loop->isProperAncestor(use.getOwner());
    });
  }
}

} // namespace

void moveSerialCodeToKernels(func::FuncOp func,
                             function_ref<bool(Value)> onHost,
                             llvm::DenseSet<Value> &hostBuffers,
                             BufferMemory memory, RewriterBase &rewriter) {
  if (func.isExternal())
    return;
  SmallVector<SmallVector<Operation *>> groups;
  collect(func.getBody().front(), onHost, groups);
  if (groups.empty())
    return;
  func::FuncOp copy = copyFunction(
      func, memory == BufferMemory::Device ? "mp_cuda_copy_to_host" : "memcpy",
      rewriter);
  for (ArrayRef<Operation *> group : groups)
    moveToKernel(group, copy, hostBuffers, rewriter);
}

} // namespace mp
