//===- ReductionImporters.cpp - reductions, softmax, normalizations -------===//

#include "../NodeImporter.h"

using namespace mlir;

namespace mp::import {
namespace {

/// Reduce* ops: `axes` is an attribute before `axesInputSince` and an
/// optional (constant) input from then on.
template <typename OpTy>
FailureOr<ValueList> importReduce(NodeContext &n, int64_t axesInputSince) {
  FailureOr<Value> data = n.required(0, "data");
  if (failed(data))
    return failure();
  SmallVector<int64_t> axes;
  if (n.since < axesInputSince) {
    axes = n.getInts("axes");
  } else {
    auto constAxes = n.requireConstInts(1, "axes");
    if (failed(constAxes))
      return failure();
    if (*constAxes)
      axes = **constAxes;
  }
  return n.results<OpTy>(*data, n.intsAttr(axes),
                         n.boolAttr("keepdims", true),
                         n.boolAttr("noop_with_empty_axes", false));
}

template <typename OpTy> void addReduce(OpTable &t, StringRef name,
                                        std::vector<int64_t> since,
                                        int64_t axesInputSince) {
  t.add(name, std::move(since), [axesInputSince](NodeContext &n) {
    return importReduce<OpTy>(n, axesInputSince);
  });
}

/// Softmax/LogSoftmax: before opset 13 the input is coerced to 2-D at `axis`
/// (default 1), i.e. normalized over [axis, rank); from 13 over `axis`
/// (default -1) alone.
template <typename OpTy> FailureOr<ValueList> importSoftmax(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input");
  if (failed(x))
    return failure();
  int64_t rank = shapeOf(*x).size();
  bool legacy = n.since < 13;
  int64_t raw = n.getInt("axis", legacy ? 1 : -1);
  std::optional<int64_t> axis = normalizeAxis(raw, rank);
  if (!axis)
    return n.error() << "axis " << raw << " is out of range for rank " << rank;
  SmallVector<int64_t> axes = {*axis};
  if (legacy)
    for (int64_t i = *axis + 1; i < rank; ++i)
      axes.push_back(i);
  return n.results<OpTy>(*x, n.intsAttr(axes));
}

/// The ONNX `stash_type` attribute as an MLIR type (f32 by default).
FailureOr<TypeAttr> stashType(NodeContext &n) {
  Type t = convertElementType(n.ctx(), n.getInt("stash_type", 1));
  if (!t || !isa<FloatType>(t))
    return n.error() << "stash_type must be a float type";
  return TypeAttr::get(t);
}

FailureOr<ValueList> importLayerNorm(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X"), scale = n.required(1, "Scale");
  FailureOr<TypeAttr> stash = stashType(n);
  if (failed(x) || failed(scale) || failed(stash))
    return failure();
  return n.results<LayerNormOp>(*x, *scale, n.in(2), n.i64Attr("axis", -1),
                                n.f32Attr("epsilon", 1e-5f), *stash);
}

FailureOr<ValueList> importRMSNorm(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X"), scale = n.required(1, "scale");
  FailureOr<TypeAttr> stash = stashType(n);
  if (failed(x) || failed(scale) || failed(stash))
    return failure();
  return n.results<RMSNormOp>(*x, *scale, n.i64Attr("axis", -1),
                              n.f32Attr("epsilon", 1e-5f), *stash);
}

/// com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization.
FailureOr<ValueList> importSkipLayerNorm(NodeContext &n, bool simplified) {
  FailureOr<Value> x = n.required(0, "input"), skip = n.required(1, "skip"),
                   gamma = n.required(2, "gamma");
  if (failed(x) || failed(skip) || failed(gamma))
    return failure();
  Value beta = simplified ? Value() : n.in(3);
  Value bias = simplified ? n.in(3) : n.in(4);
  return n.results<SkipLayerNormOp>(*x, *skip, *gamma, beta, bias,
                                    n.f32Attr("epsilon", 1e-12f),
                                    n.b.getBoolAttr(simplified));
}

FailureOr<ValueList> importEmbedLayerNorm(NodeContext &n) {
  FailureOr<Value> ids = n.required(0, "input_ids"),
                   word = n.required(2, "word_embedding"),
                   pos = n.required(3, "position_embedding"),
                   gamma = n.required(5, "gamma"), beta = n.required(6, "beta");
  if (failed(ids) || failed(word) || failed(pos) || failed(gamma) ||
      failed(beta))
    return failure();
  return n.results<EmbedLayerNormOp>(
      *ids, n.in(1), *word, *pos, n.in(4), *gamma, *beta, n.in(7), n.in(8),
      n.f32Attr("epsilon", 1e-12f),
      n.b.getBoolAttr(n.getInt("mask_index_type", 1) == 0));
}

FailureOr<ValueList> importBatchNorm(NodeContext &n) {
  if (n.getInt("training_mode", 0) != 0)
    return n.error() << "training_mode=1 is not supported (inference only)";
  if (n.since < 9 && n.getInt("spatial", 1) == 0)
    return n.error() << "spatial=0 (per-activation statistics) is not "
                        "supported";
  ValueList in;
  for (size_t i = 0; i < 5; ++i) {
    FailureOr<Value> v = n.required(i, "X, scale, B, mean, var");
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  return n.results<BatchNormOp>(in[0], in[1], in[2], in[3], in[4],
                                n.f32Attr("epsilon", 1e-5f));
}

FailureOr<ValueList> importInstanceNorm(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input"), s = n.required(1, "scale"),
                   b = n.required(2, "B");
  if (failed(x) || failed(s) || failed(b))
    return failure();
  return n.results<InstanceNormOp>(*x, *s, *b, n.f32Attr("epsilon", 1e-5f));
}

FailureOr<ValueList> importGroupNorm(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X"), s = n.required(1, "scale"),
                   b = n.required(2, "bias");
  if (failed(x) || failed(s) || failed(b))
    return failure();
  if (!n.hasAttr("num_groups"))
    return n.error() << "attribute 'num_groups' is required";
  // Opset 18 had one scale/bias per group; opset 21 has one per channel.
  return n.results<GroupNormOp>(*x, *s, *b, n.i64Attr("num_groups", 1),
                                n.f32Attr("epsilon", 1e-5f),
                                n.b.getBoolAttr(n.since < 21));
}

template <typename OpTy>
FailureOr<ValueList> importArgReduce(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data");
  if (failed(x))
    return failure();
  return n.results<OpTy>(*x, n.i64Attr("axis", 0),
                         n.boolAttr("keepdims", true),
                         n.boolAttr("select_last_index", false));
}

/// TopK: `k` is an attribute in version 1 and a 1-element int64 input from
/// 10; `largest` and `sorted` came with 11 (before, the largest, sorted).
FailureOr<ValueList> importTopK(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  Value k;
  if (n.since < 10) {
    if (!n.hasAttr("k"))
      return n.error() << "attribute 'k' is required";
    k = n.i64Vector({n.getInt("k", 0)});
  } else {
    FailureOr<Value> input = n.required(1, "K");
    if (failed(input))
      return failure();
    if (!elementTypeOf(*input).isInteger(64))
      return n.error() << "K (input #1) must be an int64 tensor, got "
                       << input->getType();
    k = *input;
  }
  bool since11 = n.since >= 11;
  return n.results<TopKOp>(
      *x, k, n.i64Attr("axis", -1),
      since11 ? n.boolAttr("largest", true) : n.b.getBoolAttr(true),
      since11 ? n.boolAttr("sorted", true) : n.b.getBoolAttr(true));
}

FailureOr<ValueList> importCumSum(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "x");
  auto axis = n.requireConstInts(1, "axis");
  if (failed(x) || failed(axis))
    return failure();
  if (!*axis || (*axis)->size() != 1)
    return n.error() << "axis must be a constant scalar";
  return n.results<CumSumOp>(*x, n.b.getI64IntegerAttr((**axis)[0]),
                             n.boolAttr("exclusive", false),
                             n.boolAttr("reverse", false));
}

} // namespace

void registerReductionImporters(OpTable &t) {
  // ReduceSum took axes as an input from opset 13, the others from 18.
  addReduce<ReduceSumOp>(t, "ReduceSum", {1, 11, 13}, 13);
  addReduce<ReduceL1Op>(t, "ReduceL1", {1, 11, 13, 18}, 18);
  addReduce<ReduceL2Op>(t, "ReduceL2", {1, 11, 13, 18}, 18);
  addReduce<ReduceLogSumOp>(t, "ReduceLogSum", {1, 11, 13, 18}, 18);
  addReduce<ReduceLogSumExpOp>(t, "ReduceLogSumExp", {1, 11, 13, 18}, 18);
  addReduce<ReduceMaxOp>(t, "ReduceMax", {1, 11, 12, 13, 18, 20}, 18);
  addReduce<ReduceMeanOp>(t, "ReduceMean", {1, 11, 13, 18}, 18);
  addReduce<ReduceMinOp>(t, "ReduceMin", {1, 11, 12, 13, 18, 20}, 18);
  addReduce<ReduceProdOp>(t, "ReduceProd", {1, 11, 13, 18}, 18);
  addReduce<ReduceSumSquareOp>(t, "ReduceSumSquare", {1, 11, 13, 18}, 18);
  t.add("ArgMax", {1, 11, 12, 13}, importArgReduce<ArgMaxOp>);
  t.add("ArgMin", {1, 11, 12, 13}, importArgReduce<ArgMinOp>);
  t.add("CumSum", {11, 14}, importCumSum);
  // TopK-24 only adds bfloat16.
  t.add("TopK", {1, 10, 11, 24}, importTopK);
  t.add("Softmax", {1, 11, 13}, importSoftmax<SoftmaxOp>);
  t.add("LogSoftmax", {1, 11, 13}, importSoftmax<LogSoftmaxOp>);

  t.add("BatchNormalization", {7, 9, 14, 15}, importBatchNorm);
  t.add("InstanceNormalization", {6, 22}, importInstanceNorm);
  t.add("GroupNormalization", {18, 21}, importGroupNorm);
  // Version 1 is onnxruntime's: it registers LayerNormalization in the
  // default domain for opsets below 17 (its transformers optimizer writes
  // it), with ONNX 17's attributes and meaning.
  t.add("LayerNormalization", {1, 17}, importLayerNorm);
  t.add("RMSNormalization", {23}, importRMSNorm);
  // onnxruntime registers SimplifiedLayerNormalization in both domains.
  t.add("SimplifiedLayerNormalization", {1}, importRMSNorm);
  t.add("com.microsoft", "SimplifiedLayerNormalization", {1}, importRMSNorm);
  t.add("com.microsoft", "LayerNormalization", {1}, importLayerNorm);
  t.add("com.microsoft", "SkipLayerNormalization", {1},
        [](NodeContext &n) { return importSkipLayerNorm(n, false); });
  t.add("com.microsoft", "SkipSimplifiedLayerNormalization", {1},
        [](NodeContext &n) { return importSkipLayerNorm(n, true); });
  t.add("com.microsoft", "EmbedLayerNormalization", {1}, importEmbedLayerNorm);
}

} // namespace mp::import
