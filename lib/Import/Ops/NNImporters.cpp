//===- NNImporters.cpp - contractions, convolutions, pooling, RNNs --------===//

#include "../NodeImporter.h"
#include "mp/Dialect/Mp/IR/MpRecurrent.h"

using namespace mlir;

namespace mp::import {
namespace {

FailureOr<ValueList> importMatMul(NodeContext &n) {
  FailureOr<Value> a = n.required(0, "A"), b = n.required(1, "B");
  if (failed(a) || failed(b))
    return failure();
  return n.results<MatMulOp>(*a, *b);
}

FailureOr<ValueList> importGemm(NodeContext &n) {
  FailureOr<Value> a = n.required(0, "A"), b = n.required(1, "B");
  if (failed(a) || failed(b))
    return failure();
  return n.results<GemmOp>(*a, *b, n.in(2), n.f32Attr("alpha", 1.0f),
                           n.f32Attr("beta", 1.0f), n.boolAttr("transA", false),
                           n.boolAttr("transB", false));
}

FailureOr<ValueList> importEinsum(NodeContext &n) {
  if (!n.hasAttr("equation"))
    return n.error() << "attribute 'equation' is required";
  return n.results<EinsumOp>(ValueRange(n.presentInputs()),
                             n.strAttr("equation", ""));
}

/// Window attributes of Conv/ConvTranspose/pooling with ONNX defaults.
struct Window {
  std::string autoPad;
  SmallVector<int64_t> kernel, dilations, strides, pads, outputPadding;
};

/// Reads the window attributes for `spatial` axes. `kernelFromWeight` gives
/// the default kernel_shape (conv); pools require the attribute.
FailureOr<Window> readWindow(NodeContext &n, int64_t spatial,
                             ArrayRef<int64_t> kernelFromWeight) {
  Window w;
  w.autoPad = n.getString("auto_pad", "NOTSET");
  w.kernel = n.getInts("kernel_shape");
  if (w.kernel.empty()) {
    if (kernelFromWeight.empty())
      return n.error() << "attribute 'kernel_shape' is required";
    if (llvm::any_of(kernelFromWeight, ShapedType::isDynamic))
      return n.error() << "kernel_shape is missing and the weight's spatial "
                          "dims are dynamic";
    w.kernel.assign(kernelFromWeight.begin(), kernelFromWeight.end());
  }
  auto orDefault = [&](StringRef name, int64_t size, int64_t dflt) {
    SmallVector<int64_t> v = n.getInts(name);
    return v.empty() ? SmallVector<int64_t>(size, dflt) : v;
  };
  w.dilations = orDefault("dilations", spatial, 1);
  w.strides = orDefault("strides", spatial, 1);
  w.pads = orDefault("pads", 2 * spatial, 0);
  w.outputPadding = orDefault("output_padding", spatial, 0);
  if ((int64_t)w.kernel.size() != spatial ||
      (int64_t)w.dilations.size() != spatial ||
      (int64_t)w.strides.size() != spatial ||
      (int64_t)w.pads.size() != 2 * spatial ||
      (int64_t)w.outputPadding.size() != spatial)
    return n.error() << "window attributes do not match the " << spatial
                     << " spatial dims of the input";
  return w;
}

/// Splits a total padding between begin and end as SAME_UPPER/LOWER do.
void splitPadding(Window &w, int64_t i, int64_t spatial, int64_t total,
                  bool upper) {
  total = std::max<int64_t>(total, 0);
  int64_t small = total / 2, large = total - small;
  w.pads[i] = upper ? small : large;
  w.pads[spatial + i] = upper ? large : small;
}

/// Resolves SAME_* and VALID into explicit pads when the spatial input dims
/// are static, so that lowering sees a single form.
void resolveAutoPad(Window &w, ArrayRef<int64_t> inputShape) {
  int64_t spatial = w.kernel.size();
  if (w.autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
    w.autoPad = "NOTSET";
    return;
  }
  if (w.autoPad != "SAME_UPPER" && w.autoPad != "SAME_LOWER")
    return;
  ArrayRef<int64_t> dims = inputShape.drop_front(2);
  if (llvm::any_of(dims, ShapedType::isDynamic))
    return;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t out = (dims[i] + w.strides[i] - 1) / w.strides[i];
    int64_t total = (out - 1) * w.strides[i] +
                    (w.kernel[i] - 1) * w.dilations[i] + 1 - dims[i];
    splitPadding(w, i, spatial, total, w.autoPad == "SAME_UPPER");
  }
  w.autoPad = "NOTSET";
}

FailureOr<ValueList> importConv(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X"), wt = n.required(1, "W");
  if (failed(x) || failed(wt))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x), ws = shapeOf(*wt);
  if (xs.size() < 3 || ws.size() != xs.size())
    return n.error() << "X must be [N, C, D...] and W of the same rank, got "
                     << x->getType() << " and " << wt->getType();
  FailureOr<Window> w = readWindow(n, xs.size() - 2, ws.drop_front(2));
  if (failed(w))
    return failure();
  resolveAutoPad(*w, xs);
  return n.results<ConvOp>(*x, *wt, n.in(2), n.b.getStringAttr(w->autoPad),
                           n.intsAttr(w->dilations), n.i64Attr("group", 1),
                           n.intsAttr(w->kernel), n.intsAttr(w->pads),
                           n.intsAttr(w->strides));
}

FailureOr<ValueList> importConvTranspose(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X"), wt = n.required(1, "W");
  if (failed(x) || failed(wt))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x), ws = shapeOf(*wt);
  if (xs.size() < 3 || ws.size() != xs.size())
    return n.error() << "X must be [N, C, D...] and W of the same rank, got "
                     << x->getType() << " and " << wt->getType();
  int64_t spatial = xs.size() - 2;
  FailureOr<Window> w = readWindow(n, spatial, ws.drop_front(2));
  if (failed(w))
    return failure();
  SmallVector<int64_t> outputShape = n.getInts("output_shape");
  if ((int64_t)outputShape.size() == spatial + 2)
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  bool same = w->autoPad == "SAME_UPPER" || w->autoPad == "SAME_LOWER";
  if (!outputShape.empty() || same) {
    ArrayRef<int64_t> dims = xs.drop_front(2);
    if (llvm::any_of(dims, ShapedType::isDynamic))
      return n.error() << "output_shape/SAME padding needs static spatial "
                          "input dims";
    if (!outputShape.empty() && (int64_t)outputShape.size() != spatial)
      return n.error() << "output_shape must have " << spatial << " entries";
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t target =
          outputShape.empty() ? dims[i] * w->strides[i] : outputShape[i];
      int64_t total = w->strides[i] * (dims[i] - 1) + w->outputPadding[i] +
                      (w->kernel[i] - 1) * w->dilations[i] + 1 - target;
      // ONNX puts the larger half at the end for SAME_UPPER only. A negative
      // total (output_shape beyond the natural size) extends the end, as
      // output_padding does.
      if (total < 0)
        w->outputPadding[i] += -total;
      splitPadding(*w, i, spatial, total, w->autoPad == "SAME_UPPER");
    }
    w->autoPad = "NOTSET";
  }
  resolveAutoPad(*w, xs);
  return n.results<ConvTransposeOp>(
      *x, *wt, n.in(2), n.b.getStringAttr(w->autoPad),
      n.intsAttr(w->dilations), n.i64Attr("group", 1), n.intsAttr(w->kernel),
      n.intsAttr(w->outputPadding), n.intsAttr(w->pads),
      n.intsAttr(w->strides));
}

template <typename OpTy> FailureOr<ValueList> importPool(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(*x);
  if (xs.size() < 3)
    return n.error() << "X must be [N, C, D...], got " << x->getType();
  FailureOr<Window> w = readWindow(n, xs.size() - 2, {});
  if (failed(w))
    return failure();
  resolveAutoPad(*w, xs);
  return n.results<OpTy>(*x, n.b.getStringAttr(w->autoPad),
                         n.boolAttr("ceil_mode", false),
                         n.boolAttr("count_include_pad", false),
                         n.intsAttr(w->dilations), n.intsAttr(w->kernel),
                         n.intsAttr(w->pads), n.intsAttr(w->strides),
                         n.i64Attr("storage_order", 0));
}

/// The operands and attributes LSTM, GRU and RNN share.
struct Recurrent {
  Value x, w, r;
  IntegerAttr hidden;
  ArrayAttr acts, alphas, betas;
  FloatAttr clip;
  StringAttr direction;
  IntegerAttr layout;
};

/// Reads X, W, R and the shared attributes; hidden_size defaults to R's
/// last dim. Unknown activations are import errors naming the node.
FailureOr<Recurrent> readRecurrent(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X"), w = n.required(1, "W"),
                   r = n.required(2, "R");
  if (failed(x) || failed(w) || failed(r))
    return failure();
  int64_t hidden = n.getInt("hidden_size", 0);
  if (hidden <= 0) {
    ArrayRef<int64_t> rs = shapeOf(*r);
    if (rs.size() != 3 || ShapedType::isDynamic(rs[2]))
      return n.error() << "hidden_size is missing and R's shape does not "
                          "give it";
    hidden = rs[2];
  }
  SmallVector<Attribute> acts, alphas, betas;
  for (const std::string &a : n.getStrings("activations")) {
    if (!lookupRecurrentActivation(a))
      return n.error() << "unsupported activation '" << a << "'";
    acts.push_back(n.b.getStringAttr(a));
  }
  for (float f : n.getFloats("activation_alpha"))
    alphas.push_back(n.b.getF32FloatAttr(f));
  for (float f : n.getFloats("activation_beta"))
    betas.push_back(n.b.getF32FloatAttr(f));
  FloatAttr clip = n.hasAttr("clip") ? n.f32Attr("clip", 0) : FloatAttr();
  return Recurrent{*x,
                   *w,
                   *r,
                   n.b.getI64IntegerAttr(hidden),
                   n.b.getArrayAttr(acts),
                   n.b.getArrayAttr(alphas),
                   n.b.getArrayAttr(betas),
                   clip,
                   n.strAttr("direction", "forward"),
                   n.i64Attr("layout", 0)};
}

FailureOr<ValueList> importLSTM(NodeContext &n) {
  FailureOr<Recurrent> c = readRecurrent(n);
  if (failed(c))
    return failure();
  return n.results<LSTMOp>(c->x, c->w, c->r, n.in(3), n.in(4), n.in(5), n.in(6),
                           n.in(7), c->acts, c->alphas, c->betas, c->clip,
                           c->direction, c->hidden,
                           n.boolAttr("input_forget", false), c->layout);
}

FailureOr<ValueList> importGRU(NodeContext &n) {
  FailureOr<Recurrent> c = readRecurrent(n);
  if (failed(c))
    return failure();
  return n.results<GRUOp>(c->x, c->w, c->r, n.in(3), n.in(4), n.in(5), c->acts,
                          c->alphas, c->betas, c->clip, c->direction, c->hidden,
                          c->layout, n.boolAttr("linear_before_reset", false));
}

FailureOr<ValueList> importRNN(NodeContext &n) {
  FailureOr<Recurrent> c = readRecurrent(n);
  if (failed(c))
    return failure();
  return n.results<RNNOp>(c->x, c->w, c->r, n.in(3), n.in(4), n.in(5), c->acts,
                          c->alphas, c->betas, c->clip, c->direction, c->hidden,
                          c->layout);
}

} // namespace

void registerNNImporters(OpTable &t) {
  t.add("MatMul", {1, 9, 13}, importMatMul);
  t.add("Gemm", {7, 9, 11, 13}, importGemm);
  t.add("Einsum", {12}, importEinsum);
  t.add("Conv", {1, 11, 22}, importConv);
  t.add("ConvTranspose", {1, 11, 22}, importConvTranspose);
  t.add("AveragePool", {7, 10, 11, 19, 22}, importPool<AveragePoolOp>);
  t.add("MaxPool", {1, 8, 10, 11, 12, 22}, importPool<MaxPoolOp>);
  t.add("GlobalAveragePool", {1, 22}, [](NodeContext &n) -> FailureOr<ValueList> {
    FailureOr<Value> x = n.required(0, "X");
    if (failed(x))
      return failure();
    return n.results<GlobalAveragePoolOp>(*x);
  });
  // GlobalMaxPool is ReduceMax over the spatial dims, kept as size 1.
  t.add("GlobalMaxPool", {1, 22}, [](NodeContext &n) -> FailureOr<ValueList> {
    FailureOr<Value> x = n.required(0, "X");
    if (failed(x))
      return failure();
    SmallVector<int64_t> axes;
    for (int64_t d = 2, r = shapeOf(*x).size(); d < r; ++d)
      axes.push_back(d);
    if (axes.empty())
      return n.error() << "GlobalMaxPool needs an input of rank >= 3, got "
                       << x->getType();
    return n.results<ReduceMaxOp>(*x, n.intsAttr(axes), n.b.getBoolAttr(true),
                                  n.b.getBoolAttr(false));
  });
  t.add("LSTM", {7, 14, 22}, importLSTM);
  t.add("GRU", {7, 14, 22}, importGRU);
  t.add("RNN", {7, 14, 22}, importRNN);
}

} // namespace mp::import
