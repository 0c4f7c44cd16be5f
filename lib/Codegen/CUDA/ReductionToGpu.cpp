//===- ReductionToGpu.cpp - block-wide reductions along rows --------------===//
//
// A bufferized linalg.generic that folds one value per iteration into its
// accumulator with an associative combiner (the sums, maxima and means of
// Softmax, LayerNorm, RMSNorm and Reduce*) becomes one thread block per
// output: the threads stride over the reduced elements, each folding its
// share in registers, and `gpu.all_reduce` combines the partials (warp
// shuffles, then shared memory across warps). Chosen when the innermost
// reduction dim is the innermost index of every input it reads, so that
// consecutive threads read consecutive addresses; otherwise one thread per
// output (mp-map-to-gpu) is the coalesced mapping and is kept. An output
// filled right before (a sum's zeros, a max's -inf) is folded with the
// fill's value instead of being read: the fill is no kernel of its own.
// Rows that fit a warp take a warp each, several to a block, combined by
// butterfly shuffles without a barrier.
//
// A normalization is one kernel: the elementwise ops on the reduced values
// (RMSNorm's mean, a reciprocal) run in every thread of the block on the
// total, and the op that reads the row again with its reduced value
// broadcast (the scaling of RMSNorm, Softmax's exp(x - max)) runs in the
// same block over the same row. Reduced values are stored only when
// something else reads them.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "Epilogue.h"
#include "GenericBody.h"
#include "MemoryAccess.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mp {
#define GEN_PASS_DEF_REDUCTIONTOGPU
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

constexpr int64_t kWarpSize = 32;

/// `out = combiner(out, element)` over the reduction dims of `op`.
struct Reduction {
  linalg::GenericOp op;
  linalg::FillOp fill; // initializes the output, or null: it is read
  /// Elementwise ops on the reduced values, then the op reading the rows
  /// with them (`rowInput` its operand that reads the last reduced value).
  SmallVector<EpilogueStage> chain;
  linalg::GenericOp rowConsumer;
  unsigned rowInput = 0;
  /// For each loop of `rowConsumer`, the loop of `op` it runs with, or -1
  /// for a unit loop (reshapes may add or drop unit dims between them).
  SmallVector<int64_t> consumerLoops;
  bool storeLast = true; // the last reduced value (output or chain's)
  /// A reduction over the same rows that reads this one's last reduced
  /// value (LayerNorm's variance after its mean), run by the same block
  /// after this one instead of its row consumer.
  Reduction *next = nullptr;
  bool fusedIntoPrevious = false;
  /// When fused into the previous reduction: the operands of `op` and of
  /// `rowConsumer` that read its last reduced value, which they take from
  /// registers (only thread 0 stores it).
  SmallVector<unsigned> opReadsPrevious, consumerReadsPrevious;
  /// For each loop of `next`, the loop of this reduction it runs with, or -1
  /// (as consumerLoops).
  SmallVector<int64_t> nextLoops;
  /// Views of the buffers this reduction and those fused before it write.
  SmallVector<Value> written;
  BodySlice element;
  Operation *combiner;
  gpu::AllReduceOperation kind;
  SmallVector<unsigned> parallel, reduction;
  SmallVector<int64_t> sizes;
  int64_t size(ArrayRef<unsigned> dims) const { return extentOf(dims, sizes); }
};

/// The all-reduce kind of a combiner op, if it is one.
std::optional<gpu::AllReduceOperation> reductionKind(Operation *op) {
  using K = gpu::AllReduceOperation;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(op)
      .Case([](arith::AddFOp) { return K::ADD; })
      .Case([](arith::AddIOp) { return K::ADD; })
      .Case([](arith::MulFOp) { return K::MUL; })
      .Case([](arith::MulIOp) { return K::MUL; })
      .Case([](arith::MaximumFOp) { return K::MAXIMUMF; })
      .Case([](arith::MinimumFOp) { return K::MINIMUMF; })
      .Case([](arith::MaxNumFOp) { return K::MAXNUMF; })
      .Case([](arith::MinNumFOp) { return K::MINNUMF; })
      .Case([](arith::MaxSIOp) { return K::MAXSI; })
      .Case([](arith::MinSIOp) { return K::MINSI; })
      .Case([](arith::MaxUIOp) { return K::MAXUI; })
      .Case([](arith::MinUIOp) { return K::MINUI; })
      .Case([](arith::AndIOp) { return K::AND; })
      .Case([](arith::OrIOp) { return K::OR; })
      .Case([](arith::XOrIOp) { return K::XOR; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The value that leaves any other unchanged under `kind`.
TypedAttr identity(OpBuilder &b, gpu::AllReduceOperation kind, Type type) {
  using K = gpu::AllReduceOperation;
  if (auto f = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &sem = f.getFloatSemantics();
    switch (kind) {
    case K::MUL:
      return b.getFloatAttr(f, 1.0);
    case K::MAXIMUMF:
    case K::MAXNUMF:
      return b.getFloatAttr(f, APFloat::getInf(sem, /*Negative=*/true));
    case K::MINIMUMF:
    case K::MINNUMF:
      return b.getFloatAttr(f, APFloat::getInf(sem, /*Negative=*/false));
    default:
      return b.getFloatAttr(f, 0.0);
    }
  }
  unsigned width = type.getIntOrFloatBitWidth();
  switch (kind) {
  case K::MUL:
    return b.getIntegerAttr(type, 1);
  case K::MAXSI:
    return b.getIntegerAttr(type, APInt::getSignedMinValue(width));
  case K::MINSI:
    return b.getIntegerAttr(type, APInt::getSignedMaxValue(width));
  case K::MINUI:
  case K::AND:
    return b.getIntegerAttr(type, APInt::getAllOnes(width));
  default:
    return b.getIntegerAttr(type, 0);
  }
}

/// Whether consecutive reduction indices read consecutive addresses of
/// every input the element reads (or the same address, for inputs that do
/// not depend on the reduction).
bool readsAlongRows(Reduction &r) {
  unsigned inner = r.reduction.back();
  for (unsigned input : r.element.inputs) {
    OpOperand *operand = r.op.getDpsInputOperand(input);
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    AffineMap map = r.op.getMatchingIndexingMap(operand);
    bool dependsOnReduction = llvm::any_of(
        r.reduction, [&](unsigned d) { return map.isFunctionOfDim(d); });
    if (!dependsOnReduction)
      continue;
    int64_t offset;
    SmallVector<int64_t> strides;
    if (!type || map.getNumResults() == 0 ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1)
      return false;
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!last || last.getPosition() != inner)
      return false;
  }
  return true;
}

FailureOr<Reduction> matchReduction(linalg::GenericOp op,
                                    int64_t minReduction) {
  FailureOr<SmallVector<int64_t>> sizes = staticSingleOutputRanges(op);
  if (failed(sizes))
    return failure();
  Reduction r;
  r.op = op;
  r.sizes = std::move(*sizes);
  for (auto [d, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    (kind == utils::IteratorType::reduction ? r.reduction : r.parallel)
        .push_back(d);
  if (r.reduction.empty() || r.size(r.reduction) < minReduction)
    return failure();
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() ||
      outMap.getNumResults() != r.parallel.size())
    return failure();

  // yield combiner(out, element), `out` used nowhere else; f32 or i32 (the
  // types warp shuffles carry).
  BlockArgument out = op.getMatchingBlockArgument(init);
  Type type = out.getType();
  if (!type.isF32() && !type.isInteger(32))
    return failure();
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || combiner->getBlock() != op.getBody() ||
      combiner->getNumOperands() != 2 || !out.hasOneUse() ||
      out.getUses().begin()->getOwner() != combiner)
    return failure();
  std::optional<gpu::AllReduceOperation> kind = reductionKind(combiner);
  if (!kind)
    return failure();
  Value element = combiner->getOperand(0) == out ? combiner->getOperand(1)
                                                 : combiner->getOperand(0);
  FailureOr<BodySlice> slice = sliceBody(op, element);
  if (failed(slice))
    return failure();
  r.element = std::move(*slice);
  r.combiner = combiner;
  r.kind = *kind;
  if (!readsAlongRows(r))
    return failure();
  return r;
}

/// Keeps the prefix of `r.chain` that works on the reduced values in place:
/// identity maps over the shape of the reduction's output, so every
/// thread of a row's block computes them for its row.
void keepRowwiseStages(Reduction &r) {
  Value previous = r.op.getDpsInitOperand(0)->get();
  auto shape = cast<MemRefType>(previous.getType()).getShape();
  size_t kept = 0;
  for (EpilogueStage &stage : r.chain) {
    linalg::GenericOp op = stage.op;
    if (op->getOperand(stage.input) != previous ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        cast<MemRefType>(op.getDpsInitOperand(0)->get().getType()).getShape() !=
            shape)
      break;
    previous = op.getDpsInitOperand(0)->get();
    ++kept;
  }
  r.chain.resize(kept);
}

/// Non-unit dims of `type` with the loop dims `map` reads them at, if each
/// is a plain loop dim; given `loops` (see Reduction::consumerLoops), the
/// reduction's loops they run with.
std::optional<SmallVector<std::pair<int64_t, unsigned>>>
nonUnitDims(MemRefType type, AffineMap map, ArrayRef<int64_t> loops = {}) {
  SmallVector<std::pair<int64_t, unsigned>> dims;
  for (auto [e, size] : llvm::zip(map.getResults(), type.getShape())) {
    if (size == 1)
      continue;
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return std::nullopt;
    unsigned loop = d.getPosition();
    if (!loops.empty()) {
      if (loops[loop] < 0)
        return std::nullopt;
      loop = loops[loop];
    }
    dims.push_back({size, loop});
  }
  return dims;
}

/// For each loop of sizes `other`, the loop of sizes `sizes` it pairs with,
/// or -1 for a unit loop: the non-unit loops pair up in order. None unless
/// their sizes agree.
std::optional<SmallVector<int64_t>> alignLoops(ArrayRef<int64_t> sizes,
                                               ArrayRef<int64_t> other) {
  SmallVector<int64_t> loops;
  size_t next = 0;
  auto skipUnits = [&] {
    while (next < sizes.size() && sizes[next] == 1)
      ++next;
  };
  for (int64_t size : other) {
    if (size == 1) {
      loops.push_back(-1);
      continue;
    }
    skipUnits();
    if (next == sizes.size() || sizes[next] != size)
      return std::nullopt;
    loops.push_back(next++);
  }
  skipUnits();
  if (next != sizes.size())
    return std::nullopt;
  return loops;
}

/// The buffer holding `r`'s last reduced value: its output or its chain's.
Value lastValueBuffer(Reduction &r) {
  return r.chain.empty() ? r.op.getDpsInitOperand(0)->get()
                         : r.chain.back().op.getDpsInitOperand(0)->get();
}

/// The operands of `op` that read `r`'s last reduced value at the row's
/// position (its non-unit dims at the loops `r` keeps them at; `loops` pairs
/// `op`'s loops with `r`'s, as Reduction::consumerLoops, none when they are the
/// same); fails when `op` reads any other buffer in `written` or writes one, or
/// reads any of them at all with `none` (its loops do not pair with `r`'s).
FailureOr<SmallVector<unsigned>>
rowValueReads(Reduction &r, linalg::GenericOp op, ArrayRef<Value> written,
              ArrayRef<int64_t> loops = {}, bool none = false) {
  Value value = lastValueBuffer(r);
  SmallVector<Value> valueViews = viewsOf(rootOf(value));
  auto reduced =
      nonUnitDims(cast<MemRefType>(value.getType()),
                  r.op.getMatchingIndexingMap(r.op.getDpsInitOperand(0)));
  SmallVector<unsigned> reads;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!llvm::is_contained(written, operand.get()))
      continue;
    if (none || op.isDpsInit(&operand) ||
        !llvm::is_contained(valueViews, operand.get()))
      return failure();
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape())
      return failure();
    auto read = nonUnitDims(type, op.getMatchingIndexingMap(&operand), loops);
    if (!read || !reduced || *read != *reduced)
      return failure();
    reads.push_back(operand.getOperandNumber());
  }
  return reads;
}

/// Whether `op` can be `r`'s row consumer (see findRowConsumer), moved up
/// past ops touching `passed`; records it.
bool takeRowConsumer(Reduction &r, linalg::GenericOp op,
                     ArrayRef<Access> passed) {
  if (op.getNumParallelLoops() != op.getNumLoops())
    return false;
  FailureOr<SmallVector<int64_t>> sizes = staticSingleOutputRanges(op);
  if (failed(sizes))
    return false;
  std::optional<SmallVector<int64_t>> loops = alignLoops(r.sizes, *sizes);
  if (!loops)
    return false;
  FailureOr<SmallVector<unsigned>> reads =
      rowValueReads(r, op, r.written, *loops);
  if (failed(reads) || reads->size() != 1)
    return false;
  unsigned input = reads->front();
  // Each block writes its rows while the others read theirs: the output
  // must not share a byte with what the reduction or the consumer reads.
  Value out = op.getDpsInitOperand(0)->get();
  SmallVector<Access> accesses;
  for (Value in : r.op.getDpsInputs())
    accesses.push_back(describeAccess(in, /*write=*/false));
  for (OpOperand *in : op.getDpsInputOperands())
    if (in->getOperandNumber() != input)
      accesses.push_back(describeAccess(in->get(), /*write=*/false));
  if (conflict(describeAccess(out, /*write=*/true), accesses))
    return false;
  if (!passed.empty()) {
    FailureOr<SmallVector<Access>> own = opAccesses(op);
    if (failed(own) || conflict(*own, passed))
      return false;
  }
  r.rowConsumer = op;
  r.rowInput = input;
  r.consumerLoops = std::move(*loops);
  return true;
}

/// The op after the reduction and its chain that reads each of its rows
/// again with the last reduced value broadcast along it (RMSNorm's
/// scaling, Softmax's exp(x - max)): all-parallel over the reduction's own
/// loop ranges, reading that value at the reduction output's position of
/// its point (through reshapes that only add or drop unit dims), and no
/// other buffer the fused kernel writes. A few ops independent of both may
/// lie between (the value projection between a per-head key norm's
/// statistic and its scaling): they move above the fused kernel.
void findRowConsumer(Reduction &r) {
  constexpr int kMaxPassed = 4;
  Operation *last =
      r.chain.empty() ? r.op.getOperation() : r.chain.back().op.getOperation();
  SmallVector<Access> reduction, passed;
  SmallVector<Operation *> fused{r.op};
  for (EpilogueStage &stage : r.chain)
    fused.push_back(stage.op);
  for (Operation *op : fused) {
    FailureOr<SmallVector<Access>> accesses = opAccesses(op);
    if (failed(accesses))
      return;
    llvm::append_range(reduction, *accesses);
  }
  Operation *next = nextWithEffects(last);
  for (int i = 0; next && i <= kMaxPassed; ++i) {
    auto op = dyn_cast<linalg::GenericOp>(next);
    if (op && takeRowConsumer(r, op, passed))
      return;
    FailureOr<SmallVector<Access>> accesses = opAccesses(next);
    if (failed(accesses) || conflict(*accesses, reduction))
      return;
    llvm::append_range(passed, *accesses);
    next = nextWithEffects(next);
  }
}

/// Whether each iteration of `op` writes its own element: its output map
/// is a projected permutation that drops only unit loops.
bool writesOwnElement(linalg::GenericOp op, ArrayRef<int64_t> sizes) {
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!map.isProjectedPermutation())
    return false;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (size != 1 && !map.isFunctionOfDim(d))
      return false;
  return true;
}

/// Whether `loops` (as Reduction::consumerLoops) pairs every loop of an
/// op with the same loop of `r`: none given, or the identity.
bool sameLoopsAs(Reduction &r, ArrayRef<int64_t> loops) {
  return loops.empty() ||
         llvm::equal(loops, llvm::seq<int64_t>(0, r.sizes.size()));
}

/// How `op` reads the rows `r`'s consumer writes (views in `rows`): true if
/// it does, false if not, failure unless every read is an input read of the
/// element the same iteration of the row loop wrote, so in the fused kernel
/// the thread that wrote it. Either the same buffer with the same map over
/// the same loops (`sameLoops`: `op`'s are `r`'s), one element per
/// iteration; or both at the row-major position of their loops in
/// contiguous views of one buffer, where the caller pairs iterations by
/// that position.
FailureOr<bool> readsRowsInPlace(linalg::GenericOp op, bool sameLoops,
                                 Reduction &r, ArrayRef<Value> rows) {
  linalg::GenericOp consumer = r.rowConsumer;
  if (!consumer)
    return false;
  OpOperand *written = consumer.getDpsInitOperand(0);
  AffineMap writeMap = consumer.getMatchingIndexingMap(written);
  auto rowMajor = [](AffineMap map, Value buffer) {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    return map.isIdentity() && type && type.getLayout().isIdentity();
  };
  bool reads = false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!llvm::is_contained(rows, operand.get()))
      continue;
    if (op.isDpsInit(&operand))
      return failure();
    AffineMap readMap = op.getMatchingIndexingMap(&operand);
    bool same = sameLoops && sameLoopsAs(r, r.consumerLoops) &&
                writesOwnElement(consumer, r.sizes) &&
                operand.get() == written->get() && readMap == writeMap;
    bool linear = rowMajor(readMap, operand.get()) &&
                  rowMajor(writeMap, written->get()) &&
                  rootOf(operand.get()) == rootOf(written->get());
    if (!same && !linear)
      return failure();
    reads = true;
  }
  return reads;
}

/// Whether `r`'s parallel loops all come before its reduced ones, so that
/// its row-major iteration order is row by row.
bool rowsFirst(Reduction &r) {
  return r.parallel.empty() || r.parallel.back() < r.reduction.front();
}

/// Fuses `next` into `r`'s kernel when it reduces the same rows right after
/// `r`'s chain and row consumer and reads `r`'s last reduced value or the
/// consumer's output: the block computes the first total (and the row
/// consumer), then the second with the first in registers. LayerNorm's mean
/// and variance are one kernel; so are Softmax's max, exp(x - max) and
/// their sum. A row consumer's output is read only where the same thread
/// wrote it (the loops over the row stride alike). Nothing `next`'s kernel
/// part writes may overlap what `r`'s part reads.
void fuseRowReduction(Reduction &r, Reduction &next) {
  if (!r.fill || !next.fill || next.size(next.reduction) != r.size(r.reduction))
    return;
  // Loops pair up by extent (reshapes may add or drop unit dims), parallel
  // with parallel and reduced with reduced. Or, when a reshape split a
  // parallel dim (grouped-query heads), rows pair up by their row-major
  // index: then only reads of rows in place may cross.
  std::optional<SmallVector<int64_t>> loops = alignLoops(r.sizes, next.sizes);
  if (loops)
    for (auto [d, l] : llvm::enumerate(*loops))
      if (l >= 0 && llvm::is_contained(r.reduction, l) !=
                        llvm::is_contained(next.reduction, d))
        loops.reset();
  if (!loops && !(rowsFirst(r) && rowsFirst(next) &&
                  next.size(next.parallel) == r.size(r.parallel)))
    return;
  SmallVector<int64_t> consumerLoops; // next's row consumer's, in r's loops
  if (loops)
    for (int64_t l : next.consumerLoops)
      consumerLoops.push_back(l < 0 ? -1 : (*loops)[l]);
  linalg::GenericOp consumer = r.rowConsumer;
  Operation *last = consumer          ? consumer.getOperation()
                    : r.chain.empty() ? r.op.getOperation()
                                      : r.chain.back().op.getOperation();
  if (nextWithEffects(last) != next.fill.getOperation() ||
      nextWithEffects(next.fill) != next.op.getOperation())
    return;
  SmallVector<Value> rows;
  if (consumer)
    rows = viewsOf(rootOf(consumer.getDpsInitOperand(0)->get()));
  FailureOr<SmallVector<unsigned>> opReads =
      loops ? rowValueReads(r, next.op, r.written, *loops)
            : rowValueReads(r, next.op, r.written, {}, /*none=*/true);
  FailureOr<bool> opReadsRows =
      readsRowsInPlace(next.op, loops && sameLoopsAs(r, *loops), r, rows);
  if (failed(opReads) || failed(opReadsRows) ||
      (opReads->empty() && !*opReadsRows))
    return;
  for (EpilogueStage &stage : next.chain) {
    FailureOr<SmallVector<unsigned>> reads =
        rowValueReads(r, stage.op, r.written);
    FailureOr<bool> readsRows =
        readsRowsInPlace(stage.op, /*sameLoops=*/false, r, rows);
    if (failed(reads) || !reads->empty() || failed(readsRows) || *readsRows)
      return;
  }
  SmallVector<unsigned> consumerReads;
  if (next.rowConsumer) {
    FailureOr<SmallVector<unsigned>> reads =
        loops ? rowValueReads(r, next.rowConsumer, r.written, consumerLoops)
              : rowValueReads(r, next.rowConsumer, r.written, {},
                              /*none=*/true);
    if (failed(reads) ||
        failed(readsRowsInPlace(
            next.rowConsumer, loops && sameLoopsAs(r, consumerLoops), r, rows)))
      return;
    consumerReads = std::move(*reads);
  }
  SmallVector<Access> reads;
  for (Value in : r.op.getDpsInputs())
    reads.push_back(describeAccess(in, /*write=*/false));
  if (consumer)
    for (OpOperand &in : consumer->getOpOperands())
      if (in.getOperandNumber() != r.rowInput)
        reads.push_back(describeAccess(in.get(), /*write=*/false));
  SmallVector<Value> outputs{next.op.getDpsInitOperand(0)->get()};
  for (EpilogueStage &stage : next.chain)
    outputs.push_back(stage.op.getDpsInitOperand(0)->get());
  if (next.rowConsumer)
    outputs.push_back(next.rowConsumer.getDpsInitOperand(0)->get());
  for (Value out : outputs)
    if (conflict(describeAccess(out, /*write=*/true), reads))
      return;

  r.next = &next;
  if (loops)
    r.nextLoops = std::move(*loops);
  next.fusedIntoPrevious = true;
  next.opReadsPrevious = std::move(*opReads);
  next.consumerReadsPrevious = std::move(consumerReads);
  next.written.insert(next.written.begin(), r.written.begin(), r.written.end());
  llvm::append_range(next.written, rows);
  SmallVector<Operation *> readers{next.op};
  readers.push_back(r.chain.empty() ? r.op.getOperation()
                                    : r.chain.back().op.getOperation());
  if (r.chain.empty())
    readers.push_back(r.fill);
  if (consumer)
    readers.push_back(consumer);
  if (next.rowConsumer)
    readers.push_back(next.rowConsumer);
  r.storeLast = usedElsewhere(lastValueBuffer(r), readers);
}

/// Threads stride over `r`'s row, each folding its share, and all-reduce
/// (within the warp when `warp`, by butterfly shuffles): the row's total
/// (without the output's initial value) in every thread.
Value emitBlockFold(Reduction &r, OpBuilder &b, IndexBuilder &ib, Value tid,
                    ArrayRef<Value> point, int64_t threads,
                    ArrayRef<std::pair<unsigned, Value>> known, bool warp) {
  Location loc = r.op.getLoc();
  Type type = r.combiner->getResult(0).getType();
  Value start = arith::ConstantOp::create(b, loc, identity(b, r.kind, type));
  auto loop = scf::ForOp::create(b, loc, tid, ib.idx(r.size(r.reduction)),
                                 ib.idx(threads), ValueRange{start});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> at(point);
    ib.delinearize(r.reduction, r.sizes, loop.getInductionVar(), at);
    IRMapping map;
    map.map(r.element.value, evaluateSlice(b, loc, r.op, r.element, at, known));
    map.map(r.op.getMatchingBlockArgument(r.op.getDpsInitOperand(0)),
            loop.getRegionIterArgs()[0]);
    scf::YieldOp::create(b, loc, b.clone(*r.combiner, map)->getResults());
  }
  if (!warp)
    return gpu::AllReduceOp::create(
        b, loc, loop.getResult(0),
        gpu::AllReduceOperationAttr::get(b.getContext(), r.kind),
        /*uniform=*/true);
  Value partial = loop.getResult(0);
  Value width = arith::ConstantIntOp::create(b, loc, kWarpSize, 32);
  for (int64_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
    Value lane = arith::ConstantIntOp::create(b, loc, offset, 32);
    auto other = gpu::ShuffleOp::create(b, loc, partial, lane, width,
                                        gpu::ShuffleMode::XOR);
    IRMapping map;
    map.map(r.element.value, other.getShuffleResult());
    map.map(r.op.getMatchingBlockArgument(r.op.getDpsInitOperand(0)), partial);
    partial = b.clone(*r.combiner, map)->getResult(0);
  }
  return partial;
}

/// The fused part of a normalization: every thread of the row's block folds
/// the total with the fill's value and runs the chain on it (thread 0
/// stores what must be stored), then the threads stride over the row
/// running the row consumer with that value.
/// `block` is the row's linear index; with `r` fused after another
/// reduction, `previous` is that one's last reduced value.
void emitRowEpilogue(Reduction &r, OpBuilder &b, IndexBuilder &ib, Value tid,
                     Value block, ArrayRef<Value> point, Value total,
                     int64_t threads, bool warp, Value previous = {}) {
  Location loc = r.op.getLoc();
  IRMapping map;
  OpOperand *init = r.op.getDpsInitOperand(0);
  map.map(r.op.getMatchingBlockArgument(init), r.fill.getInputs()[0]);
  map.map(r.element.value, total);
  Value value = b.clone(*r.combiner, map)->getResult(0);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, ib.idx(0));
  auto storeOnce = [&](Value v, Value buffer, ArrayRef<Value> at) {
    OpBuilder::InsertionGuard guard(b);
    auto once = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPointToStart(once.thenBlock());
    memref::StoreOp::create(b, loc, v, buffer, at);
  };
  Value buffer = init->get();
  SmallVector<Value> at = operandIndices(b, loc, r.op, *init, point);
  if (r.chain.empty() ? r.storeLast : r.chain.front().storePrevious)
    storeOnce(value, buffer, at);
  for (auto [i, stage] : llvm::enumerate(r.chain)) {
    std::tie(value, at) = evaluateStage(b, loc, stage, buffer, value, at);
    linalg::GenericOp op = stage.op;
    buffer = op.getDpsInitOperand(0)->get();
    if (i + 1 == r.chain.size() ? r.storeLast : r.chain[i + 1].storePrevious)
      storeOnce(value, buffer, at);
  }
  if (linalg::GenericOp consumer = r.rowConsumer) {
    OpBuilder::InsertionGuard guard(b);
    auto loop = scf::ForOp::create(b, loc, tid, ib.idx(r.size(r.reduction)),
                                   ib.idx(threads));
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> rowPoint(point);
    ib.delinearize(r.reduction, r.sizes, loop.getInductionVar(), rowPoint);
    SmallVector<Value> consumerPoint;
    for (int64_t l : r.consumerLoops)
      consumerPoint.push_back(l < 0 ? ib.idx(0) : rowPoint[l]);
    SmallVector<std::pair<unsigned, Value>> known{{r.rowInput, value}};
    for (unsigned operand : r.consumerReadsPrevious)
      known.push_back({operand, previous});
    Value y = evaluateBodyAt(b, loc, consumer, consumerPoint, known);
    OpOperand *out = consumer.getDpsInitOperand(0);
    memref::StoreOp::create(
        b, loc, y, out->get(),
        operandIndices(b, loc, consumer, *out, consumerPoint));
  }
  if (Reduction *next = r.next) {
    // Its reduced loops start at 0: their row-major order pairs each
    // iteration with the same thread as this row loop's.
    SmallVector<Value> nextPoint(next->sizes.size(), ib.idx(0));
    if (r.nextLoops.empty())
      ib.delinearize(next->parallel, next->sizes, block, nextPoint);
    for (auto [d, l] : llvm::enumerate(r.nextLoops))
      if (l >= 0 && !llvm::is_contained(r.reduction, l))
        nextPoint[d] = point[l];
    SmallVector<std::pair<unsigned, Value>> known;
    for (unsigned operand : next->opReadsPrevious)
      known.push_back({operand, value});
    Value nextTotal =
        emitBlockFold(*next, b, ib, tid, nextPoint, threads, known, warp);
    emitRowEpilogue(*next, b, ib, tid, block, nextPoint, nextTotal, threads,
                    warp, value);
  }
}

/// One block per output, or with rows that fit a warp, one warp per output
/// and several in a block (a per-head norm's rows of 16: no barrier, so the
/// kernel can share a launch of any width). Threads stride over the
/// reduction, fold their share, all-reduce, and thread 0 folds the total
/// into the output.
void buildBlockReduction(Reduction &r, int64_t maxThreads) {
  OpBuilder b(r.op);
  Location loc = r.op.getLoc();
  IndexBuilder ib(b, loc);
  int64_t total = r.size(r.reduction), rows = r.size(r.parallel);
  bool warp = total <= kWarpSize;
  int64_t warps = warp ? std::min(rows, maxThreads / kWarpSize) : 1;
  int64_t threads =
      warp ? warps * kWarpSize
           : std::min<int64_t>(maxThreads, llvm::alignTo(total, kWarpSize));
  auto launch = gpu::LaunchOp::create(
      b, loc, ib.idx(llvm::divideCeil(rows, warps)), ib.idx(1), ib.idx(1),
      ib.idx(threads), ib.idx(1), ib.idx(1));
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value tid = launch.getThreadIds().x, row = launch.getBlockIds().x;
  if (warp) {
    row = ib.add(ib.mul(row, ib.idx(warps)), ib.div(tid, kWarpSize));
    tid = ib.rem(tid, kWarpSize);
    threads = kWarpSize;
    if (rows % warps != 0) {
      // Whole warps past the last row skip it all.
      auto inside =
          scf::IfOp::create(b, loc, ib.lt(row, rows), /*withElseRegion=*/false);
      b.setInsertionPointToStart(inside.thenBlock());
    }
  }
  SmallVector<Value> point(r.sizes.size(), ib.idx(0));
  ib.delinearize(r.parallel, r.sizes, row, point);

  Value sum = emitBlockFold(r, b, ib, tid, point, threads, /*known=*/{}, warp);
  if (!r.chain.empty() || r.rowConsumer || r.next) {
    emitRowEpilogue(r, b, ib, tid, row, point, sum, threads, warp);
    return;
  }

  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, ib.idx(0)),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(first.thenBlock());
  OpOperand *init = r.op.getDpsInitOperand(0);
  SmallVector<Value> indices = operandIndices(b, loc, r.op, *init, point);
  IRMapping map;
  map.map(r.op.getMatchingBlockArgument(init),
          r.fill ? r.fill.getInputs()[0]
                 : memref::LoadOp::create(b, loc, init->get(), indices));
  map.map(r.element.value, sum);
  memref::StoreOp::create(b, loc, b.clone(*r.combiner, map)->getResult(0),
                          init->get(), indices);
}

struct ReductionToGpuPass
    : public mp::impl::ReductionToGpuBase<ReductionToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < kWarpSize || blockSize > 1024 ||
        blockSize % kWarpSize != 0) {
      getOperation().emitError("mp-reduction-to-gpu: block-size must be a "
                               "multiple of 32 in [32, 1024], not ")
          << blockSize.getValue();
      return signalPassFailure();
    }
    SmallVector<Reduction, 4> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (inKernel(op))
        return;
      if (FailureOr<Reduction> r = matchReduction(
              op, std::min<int64_t>(minReduction, minNormalization));
          succeeded(r))
        found.push_back(std::move(*r));
    });
    for (Reduction &r : found) {
      r.fill = initializingFill(r.op);
      // Fused ops need the total in every thread: with a fill, no thread
      // reads the output that thread 0 writes.
      if (!r.fill)
        continue;
      OpOperand *init = r.op.getDpsInitOperand(0);
      r.chain = findEpilogueChain(r.op, init->get(), {r.fill});
      keepRowwiseStages(r);
      r.written = viewsOf(rootOf(init->get()));
      for (EpilogueStage &stage : r.chain)
        llvm::append_range(
            r.written, viewsOf(rootOf(stage.op.getDpsInitOperand(0)->get())));
      findRowConsumer(r);
      Value last = lastValueBuffer(r);
      SmallVector<Operation *> readers;
      if (r.rowConsumer)
        readers.push_back(r.rowConsumer);
      readers.push_back(r.chain.empty() ? r.op.getOperation()
                                        : r.chain.back().op.getOperation());
      if (r.chain.empty())
        readers.push_back(r.fill);
      r.storeLast = !r.rowConsumer || usedElsewhere(last, readers);
    }
    // Short rows take a block only with the op that reads them again: a
    // statistic alone is cheaper one thread per output.
    llvm::erase_if(found, [&](Reduction &r) {
      return r.size(r.reduction) < minReduction && !r.rowConsumer;
    });
    // In program order, so a group of several forms front to back.
    for (size_t i = 0; i + 1 < found.size(); ++i)
      fuseRowReduction(found[i], found[i + 1]);

    for (Reduction &r : found) {
      if (r.fusedIntoPrevious)
        continue; // built with the first of its group
      SmallVector<Operation *> fused;
      for (Reduction *m = &r; m; m = m->next) {
        if (m != &r)
          fused.append({m->fill, m->op});
        for (EpilogueStage &stage : m->chain)
          fused.push_back(stage.op);
        if (m->rowConsumer)
          fused.push_back(m->rowConsumer);
      }
      if (!fused.empty())
        hoistBetween(r.op, fused.back(), fused);
      buildBlockReduction(r, blockSize);
      r.op.erase();
      if (r.fill)
        r.fill.erase();
      for (Operation *op : fused)
        op->erase();
    }
  }
};

} // namespace
