//===- SequenceImporters.cpp - ONNX sequences as lists of tensors ---------===//
//
// ONNX sequences exist only while importing. A sequence is the result of an
// `unrealized_conversion_cast` of its elements to a tuple type: the sequence
// ops read and build such lists, Loop and Scan unroll (LoopImporters.cpp), so
// every element is an ordinary tensor, and the casts are erased once the
// graph is imported. Positions must therefore be known at import.
//
//===----------------------------------------------------------------------===//

#include "../GraphImporter.h"
#include "../NodeImporter.h"

#include "mp/Dialect/Mp/IR/MpTypeInference.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace mp::import {

static constexpr llvm::StringLiteral kSequenceAttr = "mp.sequence";

Value makeSequence(OpBuilder &b, Location loc, ValueRange elements) {
  auto cast = UnrealizedConversionCastOp::create(
      b, loc, TypeRange{TupleType::get(b.getContext(), elements.getTypes())},
      elements);
  cast->setAttr(kSequenceAttr, b.getUnitAttr());
  return cast.getResult(0);
}

std::optional<ValueRange> sequenceElements(Value v) {
  auto cast = v ? v.getDefiningOp<UnrealizedConversionCastOp>() : nullptr;
  if (!cast || !cast->hasAttr(kSequenceAttr))
    return std::nullopt;
  return ValueRange(cast.getInputs());
}

LogicalResult eraseSequences(Operation *root) {
  SmallVector<Operation *> casts;
  root->walk([&](UnrealizedConversionCastOp op) {
    if (op->hasAttr(kSequenceAttr))
      casts.push_back(op);
  });
  // Later sequences read earlier ones: erase from the last.
  for (Operation *op : llvm::reverse(casts)) {
    if (!op->use_empty())
      return op->emitError()
             << "a sequence reaches an op that takes tensors ("
             << (*op->getUsers().begin())->getName()
             << "); mp imports sequences only as lists of tensors that the "
                "sequence ops, Loop and Scan consume";
    op->erase();
  }
  return success();
}

namespace {

/// The elements of input `i`, which must be a sequence.
FailureOr<ValueRange> sequenceInput(NodeContext &n, size_t i) {
  FailureOr<Value> v = n.required(i, "input_sequence");
  if (failed(v))
    return failure();
  std::optional<ValueRange> elements = sequenceElements(*v);
  if (!elements)
    return n.error() << "input #" << i << " is not a sequence";
  return *elements;
}

/// The position of input `i` (a constant scalar), in [-size, size + extra)
/// and made non-negative; `dflt` when absent.
FailureOr<int64_t> position(NodeContext &n, size_t i, int64_t size,
                            int64_t extra, int64_t dflt) {
  if (!n.in(i))
    return dflt;
  std::optional<SmallVector<int64_t>> p = n.constInts(i);
  if (!p || p->size() != 1)
    return n.error() << "the position must be a scalar known at import "
                        "(mp keeps sequences as lists of tensors)";
  int64_t pos = p->front();
  if (pos < -size || pos >= size + extra)
    return n.error() << "position " << pos << " is out of range for a "
                     << "sequence of " << size << " tensors";
  return pos < 0 ? pos + size : pos;
}

FailureOr<ValueList> importSequenceEmpty(NodeContext &n) {
  return ValueList{makeSequence(n.b, n.loc, {})};
}

FailureOr<ValueList> importSequenceConstruct(NodeContext &n) {
  ValueList inputs = n.presentInputs();
  if (inputs.empty())
    return n.error() << "SequenceConstruct needs at least one tensor";
  return ValueList{makeSequence(n.b, n.loc, inputs)};
}

FailureOr<ValueList> importSequenceInsert(NodeContext &n) {
  FailureOr<ValueRange> seq = sequenceInput(n, 0);
  FailureOr<Value> tensor = n.required(1, "tensor");
  if (failed(seq) || failed(tensor))
    return failure();
  int64_t size = seq->size();
  FailureOr<int64_t> pos = position(n, 2, size, 1, size);
  if (failed(pos))
    return failure();
  SmallVector<Value> elements(seq->begin(), seq->end());
  elements.insert(elements.begin() + *pos, *tensor);
  return ValueList{makeSequence(n.b, n.loc, elements)};
}

FailureOr<ValueList> importSequenceErase(NodeContext &n) {
  FailureOr<ValueRange> seq = sequenceInput(n, 0);
  if (failed(seq))
    return failure();
  int64_t size = seq->size();
  if (size == 0)
    return n.error() << "cannot erase from an empty sequence";
  FailureOr<int64_t> pos = position(n, 1, size, 0, size - 1);
  if (failed(pos))
    return failure();
  SmallVector<Value> elements(seq->begin(), seq->end());
  elements.erase(elements.begin() + *pos);
  return ValueList{makeSequence(n.b, n.loc, elements)};
}

FailureOr<ValueList> importSequenceAt(NodeContext &n) {
  FailureOr<ValueRange> seq = sequenceInput(n, 0);
  if (failed(seq))
    return failure();
  if (!n.in(1))
    return n.error() << "SequenceAt needs a position";
  FailureOr<int64_t> pos = position(n, 1, seq->size(), 0, 0);
  if (failed(pos))
    return failure();
  return ValueList{(*seq)[*pos]};
}

FailureOr<ValueList> importSequenceLength(NodeContext &n) {
  FailureOr<ValueRange> seq = sequenceInput(n, 0);
  if (failed(seq))
    return failure();
  return ValueList{n.scalar(n.b.getI64Type(), seq->size())};
}

/// The chunk sizes SplitToSequence cuts a dim of size `dim` into.
FailureOr<SmallVector<int64_t>> chunkSizes(NodeContext &n, int64_t dim) {
  if (ShapedType::isDynamic(dim))
    return n.error() << "the split axis has a size known only at run time; "
                        "mp needs the chunks at import (without "
                        "--dynamic-shapes the input shapes are known)";
  if (!n.in(1))
    return SmallVector<int64_t>(dim, 1);
  std::optional<SmallVector<int64_t>> split = n.constInts(1);
  if (!split)
    return n.error() << "'split' must be known at import (mp keeps "
                        "sequences as lists of tensors)";
  bool scalar = shapeOf(n.in(1)).empty();
  if (!scalar) {
    int64_t total = 0;
    for (int64_t s : *split) {
      if (s < 0)
        return n.error() << "'split' has a negative size " << s;
      total += s;
    }
    if (total != dim)
      return n.error() << "'split' sums to " << total << " but the axis has "
                       << dim << " elements";
    return *split;
  }
  int64_t chunk = split->front();
  if (chunk <= 0)
    return n.error() << "'split' is " << chunk << "; it must be positive";
  SmallVector<int64_t> sizes(dim / chunk, chunk);
  if (dim % chunk)
    sizes.push_back(dim % chunk);
  return sizes;
}

FailureOr<ValueList> importSplitToSequence(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input");
  if (failed(x))
    return failure();
  int64_t rank = shapeOf(*x).size(), raw = n.getInt("axis", 0);
  std::optional<int64_t> axis = normalizeAxis(raw, rank);
  if (!axis)
    return n.error() << "axis " << raw << " is out of range for rank " << rank;
  FailureOr<SmallVector<int64_t>> sizes = chunkSizes(n, shapeOf(*x)[*axis]);
  if (failed(sizes))
    return failure();
  // Without 'split', keepdims=0 drops the axis of each size-1 chunk.
  bool squeeze = !n.in(1) && n.getInt("keepdims", 1) == 0;
  SmallVector<Value> elements;
  int64_t start = 0;
  for (int64_t size : *sizes) {
    Value indices = squeeze ? n.scalar(n.b.getI64Type(), start)
                            : n.i64Vector(llvm::to_vector(
                                  llvm::seq<int64_t>(start, start + size)));
    FailureOr<ValueList> chunk =
        n.results<GatherOp>(*x, indices, n.b.getI64IntegerAttr(*axis));
    if (failed(chunk))
      return failure();
    elements.push_back(chunk->front());
    start += size;
  }
  return ValueList{makeSequence(n.b, n.loc, elements)};
}

FailureOr<ValueList> importConcatFromSequence(NodeContext &n) {
  FailureOr<ValueRange> seq = sequenceInput(n, 0);
  if (failed(seq))
    return failure();
  if (!n.hasAttr("axis"))
    return n.error() << "attribute 'axis' is required";
  if (seq->empty())
    return n.error() << "the sequence is empty; ConcatFromSequence needs at "
                        "least one tensor";
  int64_t axis = n.getInt("axis", 0);
  bool newAxis = n.getInt("new_axis", 0) != 0;
  SmallVector<Value> parts(seq->begin(), seq->end());
  if (newAxis) {
    int64_t rank = shapeOf(parts.front()).size();
    std::optional<int64_t> at = normalizeAxis(axis, rank + 1);
    if (!at)
      return n.error() << "axis " << axis << " is out of range for rank "
                       << rank + 1;
    axis = *at;
    for (Value &part : parts) {
      FailureOr<ValueList> u = n.results<UnsqueezeOp>(part, n.intsAttr(axis));
      if (failed(u))
        return failure();
      part = u->front();
    }
  }
  return n.results<ConcatOp>(ValueRange(parts), n.b.getI64IntegerAttr(axis));
}

} // namespace

void registerSequenceImporters(OpTable &t) {
  t.add("SequenceEmpty", {11}, importSequenceEmpty);
  t.add("SequenceConstruct", {11}, importSequenceConstruct);
  t.add("SequenceInsert", {11}, importSequenceInsert);
  t.add("SequenceErase", {11}, importSequenceErase);
  t.add("SequenceAt", {11}, importSequenceAt);
  t.add("SequenceLength", {11}, importSequenceLength);
  t.add("SplitToSequence", {11, 24}, importSplitToSequence);
  t.add("ConcatFromSequence", {11}, importConcatFromSequence);
}

} // namespace mp::import
