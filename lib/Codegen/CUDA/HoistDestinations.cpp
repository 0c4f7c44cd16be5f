//===- HoistDestinations.cpp - larger tensors before their slices ---------===//
//
// Empty-tensor elimination rewrites `insert_slice(op(empty), dest)` so that
// `op` writes into `dest`'s slice, provided `dest` dominates `op`. A KV
// cache's present tensor is assembled where the export's Concat stands,
// after the new key row; when that row is a Concat itself, its pieces miss
// the cache and are copied. Defining the empty tensors first, with the
// past rows inserted right after, lets the elimination reach every piece.
// A tensor assembled by inserts into an empty one and then inserted whole
// is assembled in place instead (the elimination handles one level).
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mp {
#define GEN_PASS_DEF_HOISTDESTINATIONS
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// Whether `value` is defined before any op of `block` runs: an argument of
/// the block or an op already moved to its start.
bool availableAtStart(Value value, Block &block,
                      const llvm::SmallPtrSetImpl<Operation *> &moved) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &block;
  return moved.contains(value.getDefiningOp());
}

bool staticUnitStride(tensor::InsertSliceOp insert) {
  return insert.getOffsets().empty() && insert.getSizes().empty() &&
         insert.getStrides().empty() && insert.hasUnitStride();
}

/// insert(insert(p_k into ... insert(p_0 into empty)) into dest at o):
/// the pieces inserted into dest at o + their offsets, in order (the empty
/// tensor's other elements are undefined either way). Adds the inserts it
/// erases to `erased`.
void flattenInsertedAssembly(tensor::InsertSliceOp outer,
                             llvm::SmallPtrSetImpl<Operation *> &erased) {
  if (!staticUnitStride(outer))
    return;
  SmallVector<tensor::InsertSliceOp> chain;
  Value assembled = outer.getSource();
  while (auto inner = assembled.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!inner->hasOneUse() || !staticUnitStride(inner))
      return;
    chain.push_back(inner);
    assembled = inner.getDest();
  }
  if (chain.empty() || !assembled.getDefiningOp<tensor::EmptyOp>() ||
      !assembled.hasOneUse())
    return;
  // Ranks match when each level only places a slice (no rank change).
  int64_t rank = outer.getDestType().getRank();
  if (outer.getSourceType().getRank() != rank)
    return;
  for (tensor::InsertSliceOp inner : chain)
    if (inner.getSourceType().getRank() != rank)
      return;
  OpBuilder b(outer);
  Value dest = outer.getDest();
  for (tensor::InsertSliceOp inner : llvm::reverse(chain)) {
    SmallVector<int64_t> offsets;
    for (auto [o, i] :
         llvm::zip(outer.getStaticOffsets(), inner.getStaticOffsets()))
      offsets.push_back(o + i);
    dest = tensor::InsertSliceOp::create(
        b, inner.getLoc(), inner.getSource(), dest, ArrayRef<Value>{},
        ArrayRef<Value>{}, ArrayRef<Value>{}, b.getDenseI64ArrayAttr(offsets),
        inner.getStaticSizesAttr(), inner.getStaticStridesAttr());
  }
  outer.getResult().replaceAllUsesWith(dest);
  erased.insert(outer);
  outer.erase();
  for (tensor::InsertSliceOp inner : chain) {
    erased.insert(inner);
    inner.erase();
  }
}

struct HoistDestinationsPass
    : public mp::impl::HoistDestinationsBase<HoistDestinationsPass> {
  void runOnOperation() override {
    SmallVector<tensor::InsertSliceOp> inserts;
    getOperation().walk(
        [&](tensor::InsertSliceOp insert) { inserts.push_back(insert); });
    // Outermost first: an assembly's own inserts are erased with it.
    llvm::SmallPtrSet<Operation *, 8> erased;
    for (tensor::InsertSliceOp insert : llvm::reverse(inserts))
      if (!erased.contains(insert))
        flattenInsertedAssembly(insert, erased);
    getOperation().walk([](func::FuncOp func) {
      if (func.isExternal())
        return;
      Block &entry = func.getBody().front();
      llvm::SmallPtrSet<Operation *, 16> moved;
      Operation *last = nullptr; // the last op moved, in order
      auto moveUp = [&](Operation *op) {
        if (last)
          op->moveAfter(last);
        else
          op->moveBefore(&entry, entry.begin());
        last = op;
        moved.insert(op);
      };
      for (Operation &op : llvm::make_early_inc_range(entry)) {
        if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
          if (empty.getDynamicSizes().empty())
            moveUp(empty);
          continue;
        }
        auto insert = dyn_cast<tensor::InsertSliceOp>(op);
        if (insert && insert.getOffsets().empty() &&
            insert.getSizes().empty() && insert.getStrides().empty() &&
            availableAtStart(insert.getSource(), entry, moved) &&
            availableAtStart(insert.getDest(), entry, moved))
          moveUp(insert);
      }
    });
  }
};

} // namespace
