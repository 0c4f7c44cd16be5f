//===- Epilogue.cpp - elementwise consumers run where a result is made ----===//

#include "Epilogue.h"

#include "GenericBody.h"
#include "MemoryAccess.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

bool isReshape(Operation *op) {
  return isa<memref::ReshapeOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(
      op);
}

bool isContiguousStatic(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

/// Row-major linear index of `indices` in `shape`, and back.
Value linearize(mp::IndexBuilder &ib, ArrayRef<Value> indices,
                ArrayRef<int64_t> shape) {
  Value linear = ib.idx(0);
  for (auto [index, size] : llvm::zip(indices, shape))
    linear = ib.add(ib.mul(linear, ib.idx(size)), index);
  return linear;
}

SmallVector<Value> delinearize(mp::IndexBuilder &ib, Value linear,
                               ArrayRef<int64_t> shape) {
  SmallVector<unsigned> dims =
      llvm::to_vector(llvm::seq<unsigned>(0, shape.size()));
  SmallVector<Value> indices(shape.size());
  ib.delinearize(dims, shape, linear, indices);
  return indices;
}

} // namespace

SmallVector<Value> mp::viewsOf(Value base) {
  SmallVector<Value> views{base};
  for (unsigned i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers())
      if (isReshape(user) && user->getOperand(0) == views[i])
        views.push_back(user->getResult(0));
  return views;
}

Value mp::rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isReshape(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

Operation *mp::nextWithEffects(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!isMemoryEffectFree(next) && !isReshape(next))
      return next;
  return nullptr;
}

bool mp::usedElsewhere(Value buffer, ArrayRef<Operation *> known) {
  Value root = rootOf(buffer);
  if (!root.getDefiningOp<memref::ViewOp>() &&
      !root.getDefiningOp<memref::AllocOp>())
    return true;
  SmallVector<Value> views = viewsOf(root);
  for (Value view : views)
    for (Operation *user : view.getUsers())
      if (!llvm::is_contained(known, user) && !isa<memref::DeallocOp>(user) &&
          !(isReshape(user) && llvm::is_contained(views, user->getResult(0))))
        return true;
  return false;
}

SmallVector<mp::EpilogueStage>
mp::findEpilogueChain(Operation *producer, Value result,
                      ArrayRef<Operation *> alsoWriting, unsigned maxStages) {
  SmallVector<EpilogueStage> chain;
  // Every buffer of the chain, through its reshapes: only the designated
  // input of a stage may touch one (another thread may not have written
  // the element it would read yet).
  SmallVector<Value> chainViews = viewsOf(rootOf(result));
  // What the fused kernel reads besides the chain: the producer's inputs,
  // then each stage's other inputs. A stage must not write those bytes:
  // in one kernel another thread may still read them. (The arena may give
  // a dead input's bytes to a temporary born after it; fusing the stage
  // into the producer would overwrite them while they are read.)
  SmallVector<Access> reads;
  auto readsOperand = [&](Value v) {
    if (isa<MemRefType>(v.getType()))
      reads.push_back(describeAccess(v, /*write=*/false));
  };
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(producer))
    for (OpOperand *in : dps.getDpsInputOperands())
      readsOperand(in->get());
  Operation *previous = producer;
  Value previousResult = result;
  while (chain.size() < maxStages && isContiguousStatic(previousResult)) {
    auto op = dyn_cast_or_null<linalg::GenericOp>(nextWithEffects(previous));
    if (!op || op.getNumParallelLoops() != op.getNumLoops() ||
        failed(staticSingleOutputRanges(op)))
      break;
    SmallVector<Value> views = viewsOf(rootOf(previousResult));
    std::optional<unsigned> input;
    bool clean = true;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!llvm::is_contained(chainViews, operand.get()))
        continue;
      if (op.isDpsInit(&operand) || input ||
          !llvm::is_contained(views, operand.get())) {
        clean = false;
        break;
      }
      input = operand.getOperandNumber();
    }
    if (!clean || !input)
      break;
    Value read = op->getOperand(*input);
    AffineMap map = op.getMatchingIndexingMap(&op->getOpOperand(*input));
    if (!isContiguousStatic(read) || !map.isPermutation() ||
        cast<MemRefType>(read.getType()).getNumElements() !=
            cast<MemRefType>(previousResult.getType()).getNumElements())
      break;
    Value output = op.getDpsInitOperand(0)->get();
    if (llvm::is_contained(chainViews, output))
      break;
    for (OpOperand *in : op.getDpsInputOperands())
      if (in->getOperandNumber() != *input)
        readsOperand(in->get());
    if (conflict(describeAccess(output, /*write=*/true), reads))
      break;
    chain.push_back({op, *input, /*storePrevious=*/true});
    llvm::append_range(chainViews, viewsOf(rootOf(output)));
    previous = op;
    previousResult = output;
  }
  // A result need not be stored when it is a temporary that only its
  // writers and the next stage use.
  SmallVector<Operation *> writers{producer};
  llvm::append_range(writers, alsoWriting);
  Value stored = result;
  for (EpilogueStage &stage : chain) {
    SmallVector<Operation *> known = writers;
    known.push_back(stage.op);
    stage.storePrevious = usedElsewhere(stored, known);
    writers = {stage.op.getOperation()};
    stored = stage.op.getDpsInitOperand(0)->get();
  }
  return chain;
}

std::pair<Value, SmallVector<Value>>
mp::evaluateStage(OpBuilder &b, Location loc, EpilogueStage stage,
                  Value previous, Value value, ArrayRef<Value> at) {
  IndexBuilder ib(b, loc);
  linalg::GenericOp op = stage.op;
  OpOperand &input = op->getOpOperand(stage.input);
  auto from = cast<MemRefType>(previous.getType());
  auto to = cast<MemRefType>(input.get().getType());
  // The same element through the reshape the stage reads (both
  // contiguous), then the loop point its permutation map reads it at.
  SmallVector<Value> read =
      from.getShape() == to.getShape()
          ? SmallVector<Value>(at)
          : delinearize(ib, linearize(ib, at, from.getShape()), to.getShape());
  AffineMap map = op.getMatchingIndexingMap(&input);
  SmallVector<Value> point(op.getNumLoops());
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    point[map.getDimPosition(r)] = read[r];
  Value result = evaluateBodyAt(b, loc, op, point, {{stage.input, value}});
  return {result, operandIndices(b, loc, op, *op.getDpsInitOperand(0), point)};
}

void mp::emitEpilogue(OpBuilder &b, Location loc, Value result,
                      bool storeResult, ArrayRef<EpilogueStage> chain,
                      Value value, ArrayRef<Value> indices) {
  if (storeResult)
    memref::StoreOp::create(b, loc, value, result, indices);
  Value previous = result;
  SmallVector<Value> at(indices);
  for (auto [i, stage] : llvm::enumerate(chain)) {
    std::tie(value, at) = evaluateStage(b, loc, stage, previous, value, at);
    linalg::GenericOp op = stage.op;
    previous = op.getDpsInitOperand(0)->get();
    if (i + 1 == chain.size() || chain[i + 1].storePrevious)
      memref::StoreOp::create(b, loc, value, previous, at);
  }
}
