//===- ShapeImporters.cpp - constants, shapes and data movement -----------===//

#include "../GraphImporter.h"
#include "../NodeImporter.h"
#include "../OnnxTensors.h"

using namespace mlir;

namespace mp::import {
namespace {

/// Axes given as an attribute before `inputSince`, else as input #1.
FailureOr<std::optional<SmallVector<int64_t>>>
axesOperand(NodeContext &n, int64_t inputSince, StringRef name = "axes") {
  if (n.since < inputSince) {
    if (!n.hasAttr(name))
      return std::optional<SmallVector<int64_t>>();
    return std::optional<SmallVector<int64_t>>(n.getInts(name));
  }
  return n.requireConstInts(1, name);
}

FailureOr<ValueList> importConstant(NodeContext &n) {
  if (n.node.attribute_size() != 1)
    return n.error() << "Constant needs exactly one value attribute";
  const onnx::AttributeProto &a = n.node.attribute(0);
  StringRef name = a.name();
  auto ints = [&](ArrayRef<int64_t> values, bool scalar) {
    auto type = RankedTensorType::get(
        scalar ? ArrayRef<int64_t>{} : ArrayRef<int64_t>{(int64_t)values.size()},
        n.b.getI64Type());
    return ValueList{ConstantOp::create(n.b, n.loc,
                                        DenseIntElementsAttr::get(type, values))};
  };
  auto floats = [&](ArrayRef<float> values, bool scalar) {
    auto type = RankedTensorType::get(
        scalar ? ArrayRef<int64_t>{} : ArrayRef<int64_t>{(int64_t)values.size()},
        n.b.getF32Type());
    return ValueList{ConstantOp::create(n.b, n.loc,
                                        DenseFPElementsAttr::get(type, values))};
  };
  if (name == "value") {
    // The model proto is owned by the importer: its bytes move into the IR.
    auto &tensor = const_cast<onnx::TensorProto &>(a.t());
    FailureOr<Value> v = n.graph.importTensor(tensor, n.b, n.loc);
    if (failed(v))
      return failure();
    return ValueList{*v};
  }
  if (name == "value_float")
    return floats({a.f()}, true);
  if (name == "value_floats")
    return floats(SmallVector<float>(a.floats().begin(), a.floats().end()),
                  false);
  if (name == "value_int")
    return ints({a.i()}, true);
  if (name == "value_ints")
    return ints(SmallVector<int64_t>(a.ints().begin(), a.ints().end()), false);
  return n.error() << "Constant attribute '" << name
                   << "' is not supported (sparse and string constants are "
                      "not)";
}

FailureOr<ValueList> importConstantOfShape(NodeContext &n) {
  FailureOr<Value> shape = n.required(0, "input");
  if (failed(shape))
    return failure();
  ElementsAttr value;
  if (const onnx::AttributeProto *a = n.attr("value")) {
    FailureOr<Value> v = n.graph.importTensor(
        const_cast<onnx::TensorProto &>(a->t()), n.b, n.loc);
    if (failed(v))
      return failure();
    value = cast<ElementsAttr>(cast<ConstantOp>(v->getDefiningOp()).getValue());
    v->getDefiningOp()->erase();
  } else {
    value = DenseFPElementsAttr::get(
        RankedTensorType::get({1}, n.b.getF32Type()), ArrayRef<float>{0.0f});
  }
  return n.results<ConstantOfShapeOp>(*shape, value);
}

FailureOr<ValueList> importShape(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data");
  if (failed(x))
    return failure();
  IntegerAttr end = n.hasAttr("end") ? n.i64Attr("end", 0) : IntegerAttr();
  return n.results<ShapeOp>(*x, n.i64Attr("start", 0), end);
}

FailureOr<ValueList> importReshape(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data"), shape = n.required(1, "shape");
  if (failed(x) || failed(shape))
    return failure();
  return n.results<ReshapeOp>(*x, *shape, n.boolAttr("allowzero", false));
}

FailureOr<ValueList> importSqueeze(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data");
  auto axes = axesOperand(n, 13);
  if (failed(x) || failed(axes))
    return failure();
  SmallVector<int64_t> list;
  if (*axes) {
    list = **axes;
  } else {
    for (auto [i, d] : llvm::enumerate(shapeOf(*x))) {
      if (ShapedType::isDynamic(d))
        return n.error() << "Squeeze without axes needs static dims; dim " << i
                         << " of " << x->getType() << " is dynamic";
      if (d == 1)
        list.push_back(i);
    }
  }
  return n.results<SqueezeOp>(*x, n.intsAttr(list));
}

FailureOr<ValueList> importUnsqueeze(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data");
  auto axes = axesOperand(n, 13);
  if (failed(x) || failed(axes))
    return failure();
  if (!*axes)
    return n.error() << "axes are required";
  return n.results<UnsqueezeOp>(*x, n.intsAttr(**axes));
}

FailureOr<ValueList> importTranspose(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data");
  if (failed(x))
    return failure();
  SmallVector<int64_t> perm = n.getInts("perm");
  if (!n.hasAttr("perm"))
    for (int64_t i = shapeOf(*x).size() - 1; i >= 0; --i)
      perm.push_back(i);
  return n.results<TransposeOp>(*x, n.intsAttr(perm));
}

FailureOr<ValueList> importConcat(NodeContext &n) {
  if (!n.hasAttr("axis"))
    return n.error() << "attribute 'axis' is required";
  ValueList inputs = n.presentInputs();
  if (inputs.empty())
    return n.error() << "Concat needs at least one input";
  return n.results<ConcatOp>(ValueRange(inputs), n.i64Attr("axis", 0));
}

FailureOr<ValueList> importSplit(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input");
  if (failed(x))
    return failure();
  int64_t rank = shapeOf(*x).size();
  int64_t raw = n.getInt("axis", 0);
  std::optional<int64_t> axis = normalizeAxis(raw, rank);
  if (!axis)
    return n.error() << "axis " << raw << " is out of range for rank " << rank;
  auto sizes = axesOperand(n, 13, "split");
  if (failed(sizes))
    return failure();
  SmallVector<int64_t> split;
  int64_t dim = shapeOf(*x)[*axis];
  int64_t outputs = n.since >= 18 && n.hasAttr("num_outputs")
                        ? n.getInt("num_outputs", 0)
                        : n.node.output_size();
  // Check the count before building anything sized by it (a hostile
  // num_outputs would otherwise allocate without bound).
  if (outputs != n.node.output_size())
    return n.error() << "num_outputs is " << outputs << " but the node has "
                     << n.node.output_size() << " outputs";
  if (*sizes && !(*sizes)->empty()) {
    split = **sizes;
  } else if (ShapedType::isDynamic(dim)) {
    split.assign(outputs, -1);
  } else if (outputs <= 0) {
    return n.error() << "cannot split into " << outputs << " outputs";
  } else if (n.since >= 18) {
    // Opset 18: ceil(dim / n) each, the last one smaller.
    int64_t chunk = (dim + outputs - 1) / outputs;
    for (int64_t i = 0; i < outputs; ++i)
      split.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  } else {
    if (dim % outputs != 0)
      return n.error() << "dim " << dim << " does not split evenly into "
                       << outputs << " outputs";
    split.assign(outputs, dim / outputs);
  }
  if ((int64_t)split.size() != n.node.output_size())
    return n.error() << "split has " << split.size() << " sizes for "
                     << n.node.output_size() << " outputs";
  return n.results<SplitOp>(*x, n.b.getI64IntegerAttr(*axis),
                            n.intsAttr(split));
}

FailureOr<ValueList> importSlice(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data");
  if (failed(x))
    return failure();
  if (n.since < 10) {
    Value axes = n.hasAttr("axes") ? n.i64Vector(n.getInts("axes")) : Value();
    return n.results<SliceOp>(*x, n.i64Vector(n.getInts("starts")),
                              n.i64Vector(n.getInts("ends")), axes, Value());
  }
  FailureOr<Value> starts = n.required(1, "starts"), ends = n.required(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  return n.results<SliceOp>(*x, *starts, *ends, n.in(3), n.in(4));
}

template <typename OpTy> FailureOr<ValueList> importGatherLike(NodeContext &n) {
  FailureOr<Value> data = n.required(0, "data"), idx = n.required(1, "indices");
  if (failed(data) || failed(idx))
    return failure();
  if constexpr (std::is_same_v<OpTy, GatherNDOp>)
    return n.results<OpTy>(*data, *idx, n.i64Attr("batch_dims", 0));
  else
    return n.results<OpTy>(*data, *idx, n.i64Attr("axis", 0));
}

FailureOr<ValueList> importScatterND(NodeContext &n) {
  FailureOr<Value> data = n.required(0, "data"), idx = n.required(1, "indices"),
                   upd = n.required(2, "updates");
  if (failed(data) || failed(idx) || failed(upd))
    return failure();
  return n.results<ScatterNDOp>(*data, *idx, *upd,
                                n.strAttr("reduction", "none"));
}

FailureOr<ValueList> importScatterElements(NodeContext &n) {
  FailureOr<Value> data = n.required(0, "data"), idx = n.required(1, "indices"),
                   upd = n.required(2, "updates");
  if (failed(data) || failed(idx) || failed(upd))
    return failure();
  // Reductions came with opset 16 (add, mul) and 18 (max, min).
  std::string reduction = n.getString("reduction", "none");
  bool known = reduction == "none" ||
               (n.since >= 16 && (reduction == "add" || reduction == "mul")) ||
               (n.since >= 18 && (reduction == "max" || reduction == "min"));
  if (!known)
    return n.error() << "reduction '" << reduction
                     << "' is not one ScatterElements-" << n.since
                     << " defines (none" << (n.since >= 16 ? ", add, mul" : "")
                     << (n.since >= 18 ? ", max, min" : "") << ")";
  return n.results<ScatterElementsOp>(*data, *idx, *upd, n.i64Attr("axis", 0),
                                      n.b.getStringAttr(reduction));
}

FailureOr<ValueList> importTensorScatter(NodeContext &n) {
  FailureOr<Value> cache = n.required(0, "past_cache"),
                   upd = n.required(1, "update");
  if (failed(cache) || failed(upd))
    return failure();
  return n.results<TensorScatterOp>(*cache, *upd, n.in(2), n.i64Attr("axis", -2),
                                    n.strAttr("mode", "linear"));
}

FailureOr<ValueList> importPad(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data");
  if (failed(x))
    return failure();
  StringAttr mode = n.strAttr("mode", "constant");
  if (n.since < 11) {
    Value value = n.scalar(elementTypeOf(*x), n.getFloat("value", 0.0f));
    return n.results<PadOp>(*x, n.i64Vector(n.getInts("pads")), value, Value(),
                            mode);
  }
  FailureOr<Value> pads = n.required(1, "pads");
  if (failed(pads))
    return failure();
  return n.results<PadOp>(*x, *pads, n.in(2), n.in(3), mode);
}

/// Resize inputs that are present but empty tensors mean "absent".
Value nonEmpty(Value v) {
  if (v && productOf(shapeOf(v)) == 0)
    return {};
  return v;
}

FailureOr<ValueList> importResize(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  Value roi, scales, sizes;
  if (n.since < 11) {
    scales = nonEmpty(n.in(1));
  } else {
    roi = nonEmpty(n.in(1));
    scales = nonEmpty(n.in(2));
    sizes = nonEmpty(n.in(3));
  }
  std::string ctm = n.getString("coordinate_transformation_mode",
                                n.since < 11 ? "asymmetric" : "half_pixel");
  return n.results<ResizeOp>(
      *x, roi, scales, sizes, n.i64Attr("antialias", 0),
      n.intsAttr(n.getInts("axes")), n.b.getStringAttr(ctm),
      n.f32Attr("cubic_coeff_a", -0.75f), n.i64Attr("exclude_outside", 0),
      n.f32Attr("extrapolation_value", 0.0f),
      n.strAttr("keep_aspect_ratio_policy", "stretch"),
      n.strAttr("mode", "nearest"),
      n.strAttr("nearest_mode", n.since < 11 ? "floor" : "round_prefer_floor"));
}

/// Upsample (deprecated since opset 10): Resize-10 semantics, asymmetric
/// coordinates, nearest rounding down; scales are an attribute before
/// opset 9.
FailureOr<ValueList> importUpsample(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  Value scales = nonEmpty(n.in(1));
  if (n.since < 9) {
    SmallVector<double> values;
    for (float f : n.getFloats("scales"))
      values.push_back(f);
    if (values.size() != shapeOf(*x).size())
      return n.error() << "Upsample needs one scale per dim of "
                       << x->getType();
    auto type = RankedTensorType::get({(int64_t)values.size()},
                                      n.b.getF32Type());
    SmallVector<float> fs(values.begin(), values.end());
    scales = ConstantOp::create(
        n.b, n.loc,
        cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef<float>(fs))));
  }
  if (!scales)
    return n.error() << "Upsample needs scales";
  std::string mode = n.getString("mode", "nearest");
  return n.results<ResizeOp>(
      *x, Value(), scales, Value(), n.b.getI64IntegerAttr(0), n.intsAttr({}),
      n.b.getStringAttr("asymmetric"), n.b.getF32FloatAttr(-0.75f),
      n.b.getI64IntegerAttr(0), n.b.getF32FloatAttr(0.0f),
      n.b.getStringAttr("stretch"),
      n.b.getStringAttr(mode == "bilinear" ? "linear" : mode),
      n.b.getStringAttr("floor"));
}

FailureOr<ValueList> importTrilu(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input");
  if (failed(x))
    return failure();
  return n.results<TriluOp>(*x, n.in(1), n.boolAttr("upper", true));
}

template <typename OpTy> FailureOr<ValueList> twoInputs(NodeContext &n) {
  FailureOr<Value> a = n.required(0, "input"), b = n.required(1, "shape");
  if (failed(a) || failed(b))
    return failure();
  return n.results<OpTy>(*a, *b);
}

//===--- RandomNormal, RandomUniform and their Like forms ----------------===//

/// The element type of a random op's result: `dtype` when given, else
/// `like`'s type (the Like forms) or float (the others).
FailureOr<Type> randomDtype(NodeContext &n, Value like) {
  if (!n.hasAttr("dtype") && like) {
    Type elt = elementTypeOf(like);
    if (!isa<FloatType>(elt))
      return n.error() << "the input is " << elt
                       << ": give the dtype attribute (a float type) for "
                          "the random output";
    return elt;
  }
  int64_t dtype = n.getInt("dtype", onnx::TensorProto::FLOAT);
  Type elt = convertElementType(n.ctx(), dtype);
  if (!elt || !isa<FloatType>(elt))
    return n.error() << "dtype " << onnxTypeName(dtype)
                     << " is not a float type (float16, bfloat16, float or "
                        "double)";
  return elt;
}

/// RandomNormal(Like) and RandomUniform(Like): `likeForm` reads the shape
/// from input 0, the others from the `shape` attribute. `a` and `b` name the
/// two parameters (mean and scale, low and high) with their defaults.
template <typename OpTy>
FailureOr<ValueList> importRandom(NodeContext &n, bool likeForm,
                                  std::pair<StringRef, float> a,
                                  std::pair<StringRef, float> b) {
  Value like;
  DenseI64ArrayAttr shape;
  if (likeForm) {
    FailureOr<Value> x = n.required(0, "input");
    if (failed(x))
      return failure();
    like = *x;
  } else {
    if (!n.hasAttr("shape"))
      return n.error() << "attribute 'shape' is required";
    shape = n.intsAttr(n.getInts("shape"));
  }
  FailureOr<Type> dtype = randomDtype(n, like);
  if (failed(dtype))
    return failure();
  FloatAttr seed = n.hasAttr("seed") ? n.f32Attr("seed", 0) : FloatAttr();
  return n.results<OpTy>(like, shape, TypeAttr::get(*dtype),
                         n.f32Attr(a.first, a.second),
                         n.f32Attr(b.first, b.second), seed);
}

} // namespace

void registerShapeImporters(OpTable &t) {
  t.add("Constant", {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}, importConstant);
  t.add("ConstantOfShape", {9, 20, 21, 23, 24, 25}, importConstantOfShape);
  t.add("Shape", {1, 13, 15, 19, 21, 23, 24, 25}, importShape);
  t.add("Size", {1, 13, 19, 21, 23, 24, 25}, [](NodeContext &n) -> FailureOr<ValueList> {
    FailureOr<Value> x = n.required(0, "data");
    if (failed(x))
      return failure();
    return n.results<SizeOp>(*x);
  });
  t.add("Range", {11, 27}, [](NodeContext &n) -> FailureOr<ValueList> {
    FailureOr<Value> s = n.required(0, "start"), l = n.required(1, "limit"),
                     d = n.required(2, "delta");
    if (failed(s) || failed(l) || failed(d))
      return failure();
    return n.results<RangeOp>(*s, *l, *d);
  });
  t.add("Reshape", {5, 13, 14, 19, 21, 23, 24, 25}, importReshape);
  t.add("Expand", {8, 13}, twoInputs<ExpandOp>);
  t.add("Tile", {6, 13}, twoInputs<TileOp>);
  t.add("NonZero", {9, 13}, [](NodeContext &n) -> FailureOr<ValueList> {
    FailureOr<Value> x = n.required(0, "X");
    if (failed(x))
      return failure();
    return n.results<NonZeroOp>(*x);
  });
  t.add("Flatten", {1, 9, 11, 13, 21, 23, 24, 25}, [](NodeContext &n) -> FailureOr<ValueList> {
    FailureOr<Value> x = n.required(0, "input");
    if (failed(x))
      return failure();
    return n.results<FlattenOp>(*x, n.i64Attr("axis", 1));
  });
  t.add("Squeeze", {1, 11, 13, 21, 23, 24, 25}, importSqueeze);
  t.add("Unsqueeze", {1, 11, 13, 21, 23, 24, 25}, importUnsqueeze);
  t.add("Transpose", {1, 13, 21, 23, 24, 25}, importTranspose);
  t.add("Concat", {4, 11, 13}, importConcat);
  t.add("Split", {2, 11, 13, 18}, importSplit);
  t.add("Slice", {1, 10, 11, 13}, importSlice);
  t.add("Gather", {1, 11, 13}, importGatherLike<GatherOp>);
  t.add("GatherElements", {11, 13}, importGatherLike<GatherElementsOp>);
  t.add("GatherND", {11, 12, 13}, importGatherLike<GatherNDOp>);
  t.add("ScatterND", {11, 13, 16, 18}, importScatterND);
  t.add("TensorScatter", {24}, importTensorScatter);
  t.add("Pad", {2, 11, 13, 18, 19, 21, 23, 24, 25}, importPad);
  t.add("Resize", {10, 11, 13, 18, 19}, importResize);
  t.add("Upsample", {7, 9}, importUpsample);
  t.add("Trilu", {14}, importTrilu);

  // ScatterElements: reductions add/mul since 16, max/min since 18.
  t.add("ScatterElements", {11, 13, 16, 18}, importScatterElements);

  // OneHot-11 adds negative indices (counting from depth); 9 left them
  // undefined, so both import alike.
  t.add("OneHot", {9, 11}, [](NodeContext &n) -> FailureOr<ValueList> {
    FailureOr<Value> indices = n.required(0, "indices"),
                     depth = n.required(1, "depth"),
                     values = n.required(2, "values");
    if (failed(indices) || failed(depth) || failed(values))
      return failure();
    return n.results<OneHotOp>(*indices, *depth, *values,
                               n.i64Attr("axis", -1));
  });

  // Random generators; 22 only added bfloat16.
  auto normal = [](bool like) {
    return [like](NodeContext &n) {
      return importRandom<RandomNormalOp>(n, like, {"mean", 0.0f},
                                          {"scale", 1.0f});
    };
  };
  auto uniform = [](bool like) {
    return [like](NodeContext &n) {
      return importRandom<RandomUniformOp>(n, like, {"low", 0.0f},
                                           {"high", 1.0f});
    };
  };
  t.add("RandomNormal", {1, 22}, normal(false));
  t.add("RandomNormalLike", {1, 22}, normal(true));
  t.add("RandomUniform", {1, 22}, uniform(false));
  t.add("RandomUniformLike", {1, 22}, uniform(true));
}

} // namespace mp::import
