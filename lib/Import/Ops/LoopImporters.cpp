//===- LoopImporters.cpp - Loop and Scan, unrolled at import
//---------------===//
//
// mp unrolls Loop and Scan while importing: each iteration imports the body
// with the state of the one before. This serves the loops exporters write
// (TorchScript's loops over a dim of a tensor, `repeat_interleave` by tensor
// counts through sequences), whose trip counts follow from the input shapes
// or from small integer inputs, both known when mp-run and mp.compile
// import. The unrolled graph is ordinary dataflow: every pass and target
// handles it. A trip count or condition known only at run time is an error
// naming the node.
//
//===----------------------------------------------------------------------===//

#include "../GraphImporter.h"
#include "../NodeImporter.h"

#include "mp/Dialect/Mp/IR/MpTypeInference.h"

using namespace mlir;

namespace mp::import {
namespace {

/// Bigger unrollings would make the IR, and compile time, explode.
constexpr int64_t kMaxUnrolledNodes = 1 << 18;

/// The body graph of a Loop or Scan.
FailureOr<onnx::GraphProto *> bodyOf(NodeContext &n) {
  const onnx::AttributeProto *body = n.attr("body");
  if (!body || !body->has_g())
    return n.error() << "attribute 'body' (a graph) is required";
  return &const_cast<onnx::GraphProto &>(body->g());
}

/// Checks that one more iteration of `body` stays within the unroll limit.
LogicalResult checkUnrollLimit(NodeContext &n, const onnx::GraphProto &body,
                               int64_t iterations) {
  int64_t nodes = std::max(body.node_size(), 1);
  if (iterations * nodes <= kMaxUnrolledNodes)
    return success();
  return n.error() << "unrolling " << iterations << " iterations of a body of "
                   << body.node_size() << " nodes exceeds mp's limit of "
                   << kMaxUnrolledNodes
                   << " nodes (mp unrolls loops at import)";
}

/// The per-iteration values `parts` stacked along a new `axis` (in reverse
/// order when `reverse`). Without iterations the result is empty, shaped by
/// the body output `declared`, which must then have a static shape.
FailureOr<Value> stack(NodeContext &n, ArrayRef<Value> parts, int64_t axis,
                       bool reverse, const onnx::ValueInfoProto &declared) {
  if (parts.empty()) {
    FailureOr<RankedTensorType> type = convertValueType(
        declared.type(), n.loc, "scan output '" + declared.name() + "'");
    if (failed(type))
      return failure();
    if (!type->hasStaticShape())
      return n.error() << "the loop runs no iteration and scan output '"
                       << declared.name()
                       << "' has no static shape to make an empty tensor of";
    SmallVector<int64_t> shape(type->getShape());
    std::optional<int64_t> at = normalizeAxis(axis, shape.size() + 1);
    if (!at)
      return n.error() << "scan output axis " << axis << " is out of range";
    shape.insert(shape.begin() + *at, 0);
    auto empty = RankedTensorType::get(shape, type->getElementType());
    return ConstantOp::create(
               n.b, n.loc,
               DenseElementsAttr::getFromRawBuffer(empty, ArrayRef<char>()))
        .getResult();
  }
  std::optional<int64_t> at = normalizeAxis(axis, shapeOf(parts[0]).size() + 1);
  if (!at)
    return n.error() << "scan output axis " << axis << " is out of range";
  SmallVector<Value> slices;
  for (Value part : parts) {
    FailureOr<ValueList> u = n.results<UnsqueezeOp>(part, n.intsAttr(*at));
    if (failed(u))
      return failure();
    slices.push_back(u->front());
  }
  if (reverse)
    std::reverse(slices.begin(), slices.end());
  FailureOr<ValueList> all =
      n.results<ConcatOp>(ValueRange(slices), n.b.getI64IntegerAttr(*at));
  if (failed(all))
    return failure();
  return all->front();
}

FailureOr<ValueList> importLoop(NodeContext &n) {
  FailureOr<onnx::GraphProto *> body = bodyOf(n);
  if (failed(body))
    return failure();
  int64_t numCarried = std::max<int64_t>(n.numInputs(), 2) - 2;
  if ((*body)->input_size() != numCarried + 2 ||
      (*body)->output_size() < numCarried + 1)
    return n.error() << "the body takes " << (*body)->input_size()
                     << " inputs and gives " << (*body)->output_size()
                     << " outputs; with " << numCarried
                     << " loop-carried values it must take " << numCarried + 2
                     << " and give at least " << numCarried + 1;
  int64_t numScans = (*body)->output_size() - 1 - numCarried;

  std::optional<int64_t> trips;
  if (Value m = n.in(0)) {
    auto dense = dyn_cast_if_present<DenseIntElementsAttr>(foldedValue(m));
    if (!dense || dense.getNumElements() != 1)
      return n.error() << "the trip count is not known at import: mp unrolls "
                          "Loop, so it must follow from constants, the input "
                          "shapes or small integer inputs (as with mp-run and "
                          "mp.compile without --dynamic-shapes)";
    trips = (*dense.value_begin<APInt>()).getSExtValue();
  }
  bool cond = true;
  if (Value c = n.in(1)) {
    std::optional<bool> known = knownCondition(c);
    if (!known)
      return n.error() << "the loop condition is not known at import: mp "
                          "unrolls Loop, so it must follow from constants, "
                          "the input shapes or small integer inputs";
    cond = *known;
  }

  SmallVector<Value> carried;
  for (int64_t i = 0; i < numCarried; ++i) {
    Value v = n.in(2 + i);
    if (!v)
      return n.error() << "loop-carried value #" << i << " is absent";
    carried.push_back(v);
  }
  SmallVector<SmallVector<Value>> scans(numScans);
  Type i64 = n.b.getI64Type(), i1 = n.b.getI1Type();
  for (int64_t i = 0; cond && (!trips || i < *trips); ++i) {
    if (failed(checkUnrollLimit(n, **body, i + 1)))
      return failure();
    SmallVector<Value> inputs = {n.scalar(i64, i), n.scalar(i1, 1)};
    llvm::append_range(inputs, carried);
    SmallVector<Value> outputs;
    if (failed(n.graph.importIteration(**body, n.b, outputs, inputs)))
      return failure();
    std::optional<bool> next = knownCondition(outputs[0]);
    if (!next)
      return n.error() << "the condition the body computes in iteration " << i
                       << " is not known at import (mp unrolls Loop)";
    cond = *next;
    carried.assign(outputs.begin() + 1, outputs.begin() + 1 + numCarried);
    for (int64_t k = 0; k < numScans; ++k)
      scans[k].push_back(outputs[1 + numCarried + k]);
  }

  ValueList results(carried.begin(), carried.end());
  for (int64_t k = 0; k < numScans; ++k) {
    if (k + numCarried >= n.node.output_size())
      break;
    FailureOr<Value> all = stack(n, scans[k], 0, /*reverse=*/false,
                                 (*body)->output(1 + numCarried + k));
    if (failed(all))
      return failure();
    results.push_back(*all);
  }
  return results;
}

/// The `attr` list of a Scan: one entry per value, zeros by default.
FailureOr<SmallVector<int64_t>> scanAttr(NodeContext &n, StringRef attr,
                                         int64_t count) {
  SmallVector<int64_t> values = n.getInts(attr);
  if (values.empty())
    values.assign(count, 0);
  if ((int64_t)values.size() != count)
    return n.error() << "'" << attr << "' has " << values.size()
                     << " entries for " << count << " values";
  return values;
}

/// One Scan over `scanInputs` along `inAxes` (ONNX 9+ semantics): returns
/// the final states followed by the stacked scan outputs.
FailureOr<ValueList>
unrollScan(NodeContext &n, onnx::GraphProto &body, ArrayRef<Value> initial,
           ArrayRef<Value> scanInputs, ArrayRef<int64_t> inAxes,
           ArrayRef<int64_t> inReverse, ArrayRef<int64_t> outAxes,
           ArrayRef<int64_t> outReverse) {
  int64_t length = ShapedType::kDynamic;
  SmallVector<int64_t> axes;
  for (auto [j, x] : llvm::enumerate(scanInputs)) {
    ArrayRef<int64_t> shape = shapeOf(x);
    std::optional<int64_t> axis = normalizeAxis(inAxes[j], shape.size());
    if (!axis)
      return n.error() << "scan input axis " << inAxes[j]
                       << " is out of range for rank " << shape.size();
    axes.push_back(*axis);
    int64_t len = shape[*axis];
    if (ShapedType::isDynamic(len))
      return n.error() << "scan input #" << j << " has a length known only at "
                       << "run time; mp unrolls Scan, so it must be known at "
                          "import (it is without --dynamic-shapes)";
    if (!ShapedType::isDynamic(length) && len != length)
      return n.error() << "scan inputs have lengths " << length << " and "
                       << len;
    length = len;
  }
  if (ShapedType::isDynamic(length))
    return n.error() << "Scan needs at least one scan input";

  SmallVector<Value> states(initial.begin(), initial.end());
  int64_t numScans = body.output_size() - (int64_t)states.size();
  SmallVector<SmallVector<Value>> scans(numScans);
  for (int64_t t = 0; t < length; ++t) {
    if (failed(checkUnrollLimit(n, body, t + 1)))
      return failure();
    SmallVector<Value> inputs(states);
    for (auto [j, x] : llvm::enumerate(scanInputs)) {
      int64_t at = inReverse[j] ? length - 1 - t : t;
      FailureOr<ValueList> element = n.results<GatherOp>(
          x, n.scalar(n.b.getI64Type(), at), n.b.getI64IntegerAttr(axes[j]));
      if (failed(element))
        return failure();
      inputs.push_back(element->front());
    }
    SmallVector<Value> outputs;
    if (failed(n.graph.importIteration(body, n.b, outputs, inputs)))
      return failure();
    states.assign(outputs.begin(), outputs.begin() + initial.size());
    for (int64_t k = 0; k < numScans; ++k)
      scans[k].push_back(outputs[initial.size() + k]);
  }
  ValueList results(states.begin(), states.end());
  for (int64_t k = 0; k < numScans; ++k) {
    FailureOr<Value> all = stack(n, scans[k], outAxes[k], outReverse[k] != 0,
                                 body.output(initial.size() + k));
    if (failed(all))
      return failure();
    results.push_back(*all);
  }
  return results;
}

FailureOr<ValueList> importScan(NodeContext &n) {
  FailureOr<onnx::GraphProto *> body = bodyOf(n);
  if (failed(body))
    return failure();
  if (!n.hasAttr("num_scan_inputs"))
    return n.error() << "attribute 'num_scan_inputs' is required";
  // Scan 8 scans every input along axis 1 for each batch row (axis 0) and
  // takes the lengths of the rows first.
  bool batched = n.since == 8;
  if (batched && n.in(0))
    return n.error() << "sequence_lens is not supported (mp unrolls Scan); "
                        "leave it empty to scan whole rows";
  int64_t first = batched ? 1 : 0;
  int64_t numInputs = (int64_t)n.numInputs() - first;
  int64_t numScanInputs = n.getInt("num_scan_inputs", 0);
  int64_t numStates = numInputs - numScanInputs;
  if (numScanInputs <= 0 || numStates < 0 ||
      (*body)->input_size() != numInputs || (*body)->output_size() < numStates)
    return n.error() << "the body takes " << (*body)->input_size()
                     << " inputs and gives " << (*body)->output_size()
                     << " outputs, which does not fit " << numInputs
                     << " inputs of which " << numScanInputs << " are scanned";
  int64_t numScanOutputs = (*body)->output_size() - numStates;

  SmallVector<Value> states, scanInputs;
  for (int64_t i = 0; i < numInputs; ++i) {
    Value v = n.in(first + i);
    if (!v)
      return n.error() << "input #" << first + i << " is absent";
    (i < numStates ? states : scanInputs).push_back(v);
  }
  if (!batched) {
    auto inAxes = scanAttr(n, "scan_input_axes", numScanInputs);
    auto inReverse = scanAttr(n, "scan_input_directions", numScanInputs);
    auto outAxes = scanAttr(n, "scan_output_axes", numScanOutputs);
    auto outReverse = scanAttr(n, "scan_output_directions", numScanOutputs);
    if (failed(inAxes) || failed(inReverse) || failed(outAxes) ||
        failed(outReverse))
      return failure();
    return unrollScan(n, **body, states, scanInputs, *inAxes, *inReverse,
                      *outAxes, *outReverse);
  }

  // Scan 8: one Scan 9 per batch row, the results stacked on axis 0.
  auto inReverse = scanAttr(n, "directions", numScanInputs);
  if (failed(inReverse))
    return failure();
  SmallVector<int64_t> zeros(std::max(numScanInputs, numScanOutputs), 0);
  int64_t batch = shapeOf(scanInputs.front()).empty()
                      ? ShapedType::kDynamic
                      : shapeOf(scanInputs.front())[0];
  if (ShapedType::isDynamic(batch) || batch == 0)
    return n.error() << "the batch size is "
                     << (batch == 0 ? "0" : "not known at import")
                     << " (mp unrolls Scan over each batch row)";
  auto row = [&](Value v, int64_t b) -> FailureOr<Value> {
    FailureOr<ValueList> r = n.results<GatherOp>(
        v, n.scalar(n.b.getI64Type(), b), n.b.getI64IntegerAttr(0));
    if (failed(r))
      return failure();
    return r->front();
  };
  SmallVector<SmallVector<Value>> perRow(numStates + numScanOutputs);
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<Value> rowStates, rowInputs;
    for (Value v : states) {
      FailureOr<Value> r = row(v, b);
      if (failed(r))
        return failure();
      rowStates.push_back(*r);
    }
    for (Value v : scanInputs) {
      FailureOr<Value> r = row(v, b);
      if (failed(r))
        return failure();
      rowInputs.push_back(*r);
    }
    FailureOr<ValueList> results =
        unrollScan(n, **body, rowStates, rowInputs,
                   ArrayRef(zeros).take_front(numScanInputs), *inReverse,
                   ArrayRef(zeros).take_front(numScanOutputs),
                   ArrayRef(zeros).take_front(numScanOutputs));
    if (failed(results))
      return failure();
    for (auto [k, v] : llvm::enumerate(*results))
      perRow[k].push_back(v);
  }
  ValueList results;
  for (auto [k, rows] : llvm::enumerate(perRow)) {
    FailureOr<Value> all =
        stack(n, rows, 0, /*reverse=*/false, (*body)->output(k));
    if (failed(all))
      return failure();
    results.push_back(*all);
  }
  return results;
}

} // namespace

void registerLoopImporters(OpTable &t) {
  t.add("Loop", {1, 11, 13, 16, 19, 21, 23, 24, 25}, importLoop);
  t.add("Scan", {8, 9, 11, 16, 19, 21, 23, 24, 25}, importScan);
}

} // namespace mp::import
