//===- MemoryAccess.cpp - which buffer bytes a kernel touches -------------===//

#include "MemoryAccess.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using mp::Access;

namespace {

/// The box of a static unit-stride subview, if it is one.
std::optional<SmallVector<std::pair<int64_t, int64_t>>>
staticBox(memref::SubViewOp subview) {
  if (!subview.hasUnitStride() || !subview.getOffsets().empty() ||
      !subview.getSizes().empty())
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> box;
  for (auto [offset, size] :
       llvm::zip(subview.getStaticOffsets(), subview.getStaticSizes()))
    box.push_back({offset, size});
  return box;
}

} // namespace

Access mp::describeAccess(Value memref, bool write) {
  Access access{memref, 0, std::numeric_limits<int64_t>::max(), write, {}, {}};
  if (auto subview = memref.getDefiningOp<memref::SubViewOp>())
    if (auto box = staticBox(subview)) {
      access.sliced = subview.getSource();
      access.box = std::move(*box);
    }
  bool ranged = false;
  while (auto viewLike = access.root.getDefiningOp<ViewLikeOpInterface>()) {
    if (auto view = dyn_cast<memref::ViewOp>(viewLike.getOperation())) {
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      MemRefType type = view.getType();
      if (!ranged && shift && type.hasStaticShape() &&
          type.getElementType().isIntOrFloat()) {
        access.begin = *shift;
        access.end =
            *shift + type.getNumElements() * type.getElementTypeBitWidth() / 8;
      } else {
        access.begin = 0;
        access.end = std::numeric_limits<int64_t>::max();
      }
      ranged = true;
    }
    access.root = viewLike.getViewSource();
  }
  return access;
}

FailureOr<SmallVector<mp::Access>> mp::accessesOf(Operation *root) {
  SmallVector<Access> accesses;
  WalkResult result = root->walk([&](Operation *op) {
    if (op == root)
      return WalkResult::advance();
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    // Block-wide communication through shared memory, none in buffers.
    if (isa<gpu::AllReduceOp, gpu::BarrierOp>(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (MemoryEffects::EffectInstance &e : list) {
      Value v = e.getValue();
      if (!v || !isa<MemRefType>(v.getType())) {
        if (isa<MemoryEffects::Write>(e.getEffect()))
          return WalkResult::interrupt();
        continue;
      }
      if (isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()))
        accesses.push_back(
            describeAccess(v, isa<MemoryEffects::Write>(e.getEffect())));
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return accesses;
}

FailureOr<SmallVector<mp::Access>> mp::opAccesses(Operation *op) {
  FailureOr<SmallVector<Access>> accesses = accessesOf(op);
  if (failed(accesses))
    return failure();
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isa<gpu::LaunchOp>(op))
      return accesses;
    return failure();
  }
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (MemoryEffects::EffectInstance &e : list) {
    Value v = e.getValue();
    // Freeing or allocating a buffer orders like writing all of it.
    bool write = !isa<MemoryEffects::Read>(e.getEffect());
    if (!v || !isa<MemRefType>(v.getType())) {
      if (write)
        return failure();
      continue;
    }
    accesses->push_back(describeAccess(v, write));
  }
  return accesses;
}

bool mp::onlyEffectFreeBetween(Operation *a, Operation *b) {
  if (a->getBlock() != b->getBlock() || !a->isBeforeInBlock(b))
    return false;
  for (Operation *op = a->getNextNode(); op != b; op = op->getNextNode())
    if (!isMemoryEffectFree(op))
      return false;
  return true;
}

bool mp::conflict(ArrayRef<Access> a, ArrayRef<Access> b) {
  // Boxes of the same buffer apart along some dim share no element (the
  // halves of a rotary buffer, a cache's past and new positions).
  auto apart = [](const Access &x, const Access &y) {
    if (!x.sliced || x.sliced != y.sliced || x.box.size() != y.box.size())
      return false;
    for (auto [p, q] : llvm::zip(x.box, y.box))
      if (p.first + p.second <= q.first || q.first + q.second <= p.first)
        return true;
    return false;
  };
  for (const Access &x : a)
    for (const Access &y : b)
      if ((x.write || y.write) && x.root == y.root && x.begin < y.end &&
          y.begin < x.end && !apart(x, y))
        return true;
  return false;
}
