//===- GenericBody.cpp - evaluate a linalg.generic body per point ---------===//

#include "GenericBody.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

FailureOr<mp::BodySlice> mp::sliceBody(linalg::GenericOp op, Value value) {
  Block *body = op.getBody();
  BodySlice slice;
  slice.value = value;
  slice.dims = llvm::SmallBitVector(op.getNumLoops());
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != body)
        continue; // defined above the generic
      if (arg.getArgNumber() >= op.getNumDpsInputs())
        return failure(); // the accumulator
      if (!llvm::is_contained(slice.inputs, arg.getArgNumber()))
        slice.inputs.push_back(arg.getArgNumber());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != body || ops.contains(def))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(def)) {
      slice.dims.set(index.getDim()); // evaluated as the point's index
      ops.insert(def);
      continue;
    }
    if (!isPure(def) || def->getNumRegions())
      return failure();
    ops.insert(def);
    llvm::append_range(worklist, def->getOperands());
  }
  // Body order is a valid order to clone in.
  for (Operation &inBody : body->without_terminator())
    if (ops.contains(&inBody))
      slice.ops.push_back(&inBody);
  for (unsigned input : slice.inputs)
    for (AffineExpr e : op.getIndexingMapsArray()[input].getResults())
      e.walk([&](AffineExpr sub) {
        if (auto d = dyn_cast<AffineDimExpr>(sub))
          slice.dims.set(d.getPosition());
      });
  return slice;
}

bool mp::inKernel(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

linalg::FillOp mp::initializingFill(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return {};
  // The op must write every element the fill wrote: each output dim is
  // indexed by a loop dim of its own.
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap map = op.getMatchingIndexingMap(init);
  if (!map.isProjectedPermutation() ||
      map.getNumResults() != cast<ShapedType>(init->get().getType()).getRank())
    return {};
  Value out = init->get();
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (!fill) {
      if (!isMemoryEffectFree(prev))
        return {};
      continue;
    }
    Value value = fill.getInputs()[0];
    if (fill.getOutputs()[0] != out ||
        value.getType() != getElementTypeOrSelf(out.getType()))
      return {};
    return fill;
  }
  return {};
}

void mp::hoistBetween(Operation *first, Operation *last,
                      ArrayRef<Operation *> keep) {
  if (first == last || first->getBlock() != last->getBlock() ||
      !first->isBeforeInBlock(last))
    return;
  SmallVector<Operation *> between;
  for (Operation *op = first->getNextNode(); op && op != last;
       op = op->getNextNode())
    if (!llvm::is_contained(keep, op))
      between.push_back(op);
  for (Operation *op : between)
    op->moveBefore(first);
}

int64_t mp::extentOf(ArrayRef<unsigned> dims, ArrayRef<int64_t> sizes) {
  int64_t product = 1;
  for (unsigned d : dims)
    product *= sizes[d];
  return product;
}

FailureOr<SmallVector<int64_t>>
mp::staticSingleOutputRanges(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumResults() != 0)
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  return sizes;
}

Value mp::IndexBuilder::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value mp::IndexBuilder::add(Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}
Value mp::IndexBuilder::mul(Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}
Value mp::IndexBuilder::div(Value x, int64_t y) {
  return y == 1 ? x : arith::DivUIOp::create(b, loc, x, idx(y)).getResult();
}
Value mp::IndexBuilder::rem(Value x, int64_t y) {
  return y == 1 ? idx(0)
                : arith::RemUIOp::create(b, loc, x, idx(y)).getResult();
}
Value mp::IndexBuilder::div(Value x, Value y) {
  return arith::DivUIOp::create(b, loc, x, y);
}
Value mp::IndexBuilder::rem(Value x, Value y) {
  return arith::RemUIOp::create(b, loc, x, y);
}
Value mp::IndexBuilder::slt(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
}
Value mp::IndexBuilder::min(Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}
Value mp::IndexBuilder::max(Value x, Value y) {
  return arith::MaxSIOp::create(b, loc, x, y);
}
Value mp::IndexBuilder::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, loc, cond, x, y);
}
Value mp::IndexBuilder::lt(Value x, int64_t bound) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                               idx(bound));
}

void mp::IndexBuilder::delinearize(ArrayRef<unsigned> dims,
                                   ArrayRef<int64_t> sizes, Value linear,
                                   SmallVectorImpl<Value> &point) {
  int64_t stride = extentOf(dims, sizes);
  for (auto [i, d] : llvm::enumerate(dims)) {
    stride /= sizes[d];
    Value index = div(linear, stride);
    // The outermost index is below its size already.
    point[d] = i == 0 ? index : rem(index, sizes[d]);
  }
}

SmallVector<Value> mp::operandIndices(OpBuilder &b, Location loc,
                                      linalg::GenericOp op, OpOperand &operand,
                                      ArrayRef<Value> point) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> result;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      result.push_back(point[d.getPosition()]);
    else
      result.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, e), point));
  }
  return result;
}

/// `operand`'s element at `point`: given in `known`, or loaded.
static Value operandAt(OpBuilder &b, Location loc, linalg::GenericOp op,
                       OpOperand &operand, ArrayRef<Value> point,
                       ArrayRef<std::pair<unsigned, Value>> known) {
  const auto *given = llvm::find_if(
      known, [&](auto &k) { return k.first == operand.getOperandNumber(); });
  if (given != known.end())
    return given->second;
  return memref::LoadOp::create(b, loc, operand.get(),
                                mp::operandIndices(b, loc, op, operand, point));
}

Value mp::evaluateBodyAt(OpBuilder &b, Location loc, linalg::GenericOp op,
                         ArrayRef<Value> point,
                         ArrayRef<std::pair<unsigned, Value>> known) {
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (!arg.use_empty())
      mapping.map(arg, operandAt(b, loc, op, operand, point, known));
  }
  Block *body = op.getBody();
  for (Operation &inBody : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inBody))
      mapping.map(index.getResult(), point[index.getDim()]);
    else
      b.clone(inBody, mapping);
  }
  return mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
}

Value mp::evaluateSlice(OpBuilder &b, Location loc, linalg::GenericOp op,
                        const BodySlice &slice, ArrayRef<Value> point,
                        ArrayRef<std::pair<unsigned, Value>> known) {
  IRMapping map;
  Block *body = op.getBody();
  for (unsigned input : slice.inputs)
    map.map(body->getArgument(input),
            operandAt(b, loc, op, *op.getDpsInputOperand(input), point, known));
  for (Operation *inBody : slice.ops) {
    if (auto index = dyn_cast<linalg::IndexOp>(inBody))
      map.map(index.getResult(), point[index.getDim()]);
    else
      b.clone(*inBody, map);
  }
  return map.lookupOrDefault(slice.value);
}
