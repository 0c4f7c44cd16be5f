//===- HoistBuffers.cpp - static buffers allocated at a function's start --===//
//
// Bufferization allocates each temporary just before the op that writes it
// and frees it at the end of the block, so allocations stand between the
// kernels that the GPU target would fuse. Moving them out of the way keeps
// kernels adjacent; mp-plan-arena derives lifetimes from uses, not from
// where the alloc and dealloc stand.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mp {
#define GEN_PASS_DEF_HOISTBUFFERS
#include "mp/Codegen/Common/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

struct HoistBuffersPass : public mp::impl::HoistBuffersBase<HoistBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    Operation *terminator = body.getTerminator();
    // Collected first: moving ops while walking the block would revisit them.
    SmallVector<memref::AllocOp> allocs;
    for (memref::AllocOp alloc : body.getOps<memref::AllocOp>())
      if (alloc->getNumOperands() == 0) // else sizes computed in the body
        allocs.push_back(alloc);
    // Both in program order.
    for (memref::AllocOp alloc : llvm::reverse(allocs))
      alloc->moveBefore(&body, body.begin());
    for (memref::AllocOp alloc : allocs)
      for (Operation *user : alloc->getUsers())
        if (isa<memref::DeallocOp>(user) && user->getBlock() == &body)
          user->moveBefore(terminator);
  }
};

} // namespace
