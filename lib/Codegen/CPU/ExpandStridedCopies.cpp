//===- ExpandStridedCopies.cpp - strided memref.copy as linalg.copy -------===//

#include "mp/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mp {
#define GEN_PASS_DEF_EXPANDSTRIDEDCOPIES
#include "mp/Codegen/CPU/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// Whether the LLVM lowering copies `type` with one memcpy.
bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref::isStaticShapeAndContiguousRowMajor(memref);
}

struct ExpandStridedCopiesPass
    : public mp::impl::ExpandStridedCopiesBase<ExpandStridedCopiesPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](memref::CopyOp copy) {
      if (isContiguous(copy.getSource().getType()) &&
          isContiguous(copy.getTarget().getType()))
        return;
      // Unranked buffers have no loop nest; memrefCopy handles them.
      if (!isa<MemRefType>(copy.getSource().getType()) ||
          !isa<MemRefType>(copy.getTarget().getType()))
        return;
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    });
  }
};

} // namespace
