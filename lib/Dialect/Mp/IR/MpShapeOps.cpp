//===- MpShapeOps.cpp - constants, shapes and data movement ---------------===//

#include "MpFoldUtils.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mp;

static constexpr int64_t kDyn = ShapedType::kDynamic;
static bool isDyn(int64_t d) { return ShapedType::isDynamic(d); }

static RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elt) {
  return RankedTensorType::get(shape, elt);
}

/// Length of a 1-D operand (a shape vector); kDynamic if unknown.
static int64_t vectorLength(Value v) {
  ArrayRef<int64_t> s = shapeOf(v);
  return s.size() == 1 ? s[0] : kDyn;
}

//===----------------------------------------------------------------------===//
// Constant, Shape, Size, ConstantOfShape, Range
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange, DictionaryAttr attrs,
    OpaqueProperties props, RegionRange, SmallVectorImpl<Type> &types) {
  Adaptor adaptor(ValueRange{}, attrs, props);
  types.push_back(adaptor.getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// The [start, end) range of dims Shape-15 selects, clamped like ONNX.
static std::pair<int64_t, int64_t> shapeRange(int64_t rank, int64_t start,
                                              std::optional<int64_t> end) {
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  int64_t s = clamp(start), e = end ? clamp(*end) : rank;
  return {s, std::max(s, e)};
}

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location>, Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto [s, e] = shapeRange(shapeOf(adaptor.getInput()).size(),
                           adaptor.getStart(), adaptor.getEnd());
  types.push_back(tensorOf({e - s}, IntegerType::get(context, 64)));
  return success();
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> shape = shapeOf(getInput());
  auto [s, e] = shapeRange(shape.size(), getStart(), getEnd());
  ArrayRef<int64_t> dims = shape.slice(s, e - s);
  if (llvm::any_of(dims, isDyn) || !isFoldableIntType(getType()))
    return {};
  return makeInts(getType(), dims);
}

LogicalResult SizeOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location>, Adaptor,
                                       SmallVectorImpl<Type> &types) {
  types.push_back(tensorOf({}, IntegerType::get(context, 64)));
  return success();
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  int64_t n = productOf(shapeOf(getInput()));
  if (isDyn(n))
    return {};
  return makeInts(getType(), {n});
}

LogicalResult ConstantOfShapeOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  Type elt = adaptor.getValue().getElementType();
  if (std::optional<SmallVector<int64_t>> dims =
          getConstantInts(adaptor.getShape())) {
    if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }))
      return emitOptionalError(loc, "shape entries must be >= 0");
    types.push_back(tensorOf(*dims, elt));
    return success();
  }
  // The shape of another tensor (a full mp.shape) gives its dims.
  if (auto shape = adaptor.getShape().getDefiningOp<ShapeOp>())
    if (shape.getStart() == 0 && !shape.getEnd()) {
      types.push_back(tensorOf(shapeOf(shape.getInput()), elt));
      return success();
    }
  int64_t rank = vectorLength(adaptor.getShape());
  if (isDyn(rank))
    return emitOptionalError(loc, "the rank of the result must be static "
                                  "(shape operand of static length)");
  types.push_back(tensorOf(SmallVector<int64_t>(rank, kDyn), elt));
  return success();
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  auto type = getType();
  auto value = dyn_cast<DenseElementsAttr>(getValue());
  if (!type.hasStaticShape() || !value || !value.isSplat())
    return {};
  return DenseElementsAttr::get(type, value.getSplatValue<Attribute>());
}

LogicalResult ConstantOfShapeOp::verify() {
  if (getValue().getNumElements() != 1)
    return emitOpError("value must hold exactly one element");
  return success();
}

LogicalResult RangeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  for (Value v : adaptor.getOperands())
    if (productOf(shapeOf(v)) != 1)
      return emitOptionalError(loc, "start, limit and delta must be scalars");
  int64_t n = kDyn;
  auto s = getConstantFloats(adaptor.getStart());
  auto l = getConstantFloats(adaptor.getLimit());
  auto d = getConstantFloats(adaptor.getDelta());
  auto si = getConstantInts(adaptor.getStart());
  auto li = getConstantInts(adaptor.getLimit());
  auto di = getConstantInts(adaptor.getDelta());
  if (si && li && di && (*di)[0] != 0)
    n = std::max<int64_t>(
        0, (int64_t)std::ceil(double((*li)[0] - (*si)[0]) / double((*di)[0])));
  else if (s && l && d && (*d)[0] != 0)
    n = std::max<int64_t>(0, (int64_t)std::ceil(((*l)[0] - (*s)[0]) / (*d)[0]));
  types.push_back(tensorOf({n}, elementTypeOf(adaptor.getStart())));
  return success();
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  DenseIntElementsAttr s = asDenseInts(adaptor.getStart()),
                       l = asDenseInts(adaptor.getLimit()),
                       d = asDenseInts(adaptor.getDelta());
  if (!s || !l || !d || !isFoldableIntType(getType()))
    return {};
  int64_t start = readInts(s)[0], delta = readInts(d)[0];
  SmallVector<int64_t> values;
  for (int64_t i = 0, n = getType().getDimSize(0); i < n; ++i)
    values.push_back(start + i * delta);
  return makeInts(getType(), values);
}

//===----------------------------------------------------------------------===//
// Reshape, Expand, Flatten, Squeeze, Unsqueeze, Transpose
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  Value input = adaptor.getInput();
  ArrayRef<int64_t> in = shapeOf(input);
  Type elt = elementTypeOf(input);
  if (shapeOf(adaptor.getShape()).size() != 1)
    return emitOptionalError(loc, "shape must be a 1-D tensor, got ",
                             adaptor.getShape().getType());
  std::optional<SmallVector<int64_t>> target = getConstantInts(adaptor.getShape());
  if (!target) {
    int64_t rank = vectorLength(adaptor.getShape());
    if (isDyn(rank))
      return emitOptionalError(loc, "shape operand must have a static length");
    types.push_back(tensorOf(SmallVector<int64_t>(rank, kDyn), elt));
    return success();
  }
  SmallVector<int64_t> out;
  SmallVector<bool> copied(in.size(), false);
  int64_t inferIndex = -1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !adaptor.getAllowzero()) {
      if (i >= in.size())
        return emitOptionalError(loc, "shape entry 0 at ", i,
                                 " copies a dim the input (", input.getType(),
                                 ") does not have");
      out.push_back(in[i]);
      copied[i] = true;
    } else if (d == -1) {
      if (inferIndex >= 0)
        return emitOptionalError(loc, "at most one shape entry may be -1");
      inferIndex = i;
      out.push_back(kDyn);
    } else if (d < 0) {
      return emitOptionalError(loc, "invalid shape entry ", d);
    } else {
      out.push_back(d);
    }
  }
  int64_t total = productOf(in);
  // Dims copied by 0 appear on both sides and cancel: [N,3,4] -> [0,-1]
  // infers 12 even with N dynamic.
  SmallVector<int64_t> rest;
  for (auto [i, d] : llvm::enumerate(in))
    if (!copied[i])
      rest.push_back(d);
  int64_t restTotal = productOf(rest);
  if (inferIndex >= 0 && !isDyn(restTotal)) {
    int64_t known = 1;
    bool allKnown = true;
    for (auto [i, d] : llvm::enumerate(out))
      if ((int64_t)i != inferIndex &&
          !((*target)[i] == 0 && !adaptor.getAllowzero())) {
        allKnown &= !isDyn(d);
        known *= isDyn(d) ? 1 : d;
      }
    if (allKnown) {
      if (known == 0 || restTotal % known != 0)
        return emitOptionalError(loc, "cannot reshape ", input.getType(),
                                 " to a shape with fixed part ", known);
      out[inferIndex] = restTotal / known;
    }
  }
  int64_t outTotal = productOf(out);
  if (!isDyn(total) && !isDyn(outTotal) && total != outTotal)
    return emitOptionalError(loc, "cannot reshape ", input.getType(), " (",
                             total, " elements) into ", outTotal, " elements");
  types.push_back(tensorOf(out, elt));
  return success();
}

/// Folds a data-movement op whose input is a small integer constant and
/// whose result is static: the values stay in order, only the type changes.
static OpFoldResult foldReinterpret(Attribute input, Type resultType) {
  DenseIntElementsAttr ints = asDenseInts(input);
  if (!ints || !isFoldableIntType(resultType))
    return {};
  return ints.reshape(cast<ShapedType>(resultType));
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() && getType().hasStaticShape())
    return getInput();
  return foldReinterpret(adaptor.getInput(), getType());
}

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Value input = adaptor.getInput();
  std::optional<SmallVector<int64_t>> target = getConstantInts(adaptor.getShape());
  if (!target) {
    int64_t rank = vectorLength(adaptor.getShape());
    if (isDyn(rank))
      return emitOptionalError(loc, "shape operand must have a static length");
    int64_t outRank = std::max<int64_t>(rank, shapeOf(input).size());
    types.push_back(tensorOf(SmallVector<int64_t>(outRank, kDyn),
                             elementTypeOf(input)));
    return success();
  }
  SmallVector<SmallVector<int64_t>> shapes = {llvm::to_vector(shapeOf(input)),
                                              *target};
  FailureOr<SmallVector<int64_t>> out = broadcastShapes(shapes);
  if (failed(out))
    return emitOptionalError(loc, input.getType(),
                             " cannot be expanded to the requested shape");
  types.push_back(tensorOf(*out, elementTypeOf(input)));
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t rank = in.size(), axis = adaptor.getAxis();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return emitOptionalError(loc, "axis ", (int64_t)adaptor.getAxis(),
                             " is out of range for rank ", rank);
  types.push_back(tensorOf({productOf(in.take_front(axis)),
                            productOf(in.drop_front(axis))},
                           elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  SmallVector<bool> drop(in.size(), false);
  for (int64_t a : adaptor.getAxes()) {
    std::optional<int64_t> n = normalizeAxis(a, in.size());
    if (!n)
      return emitOptionalError(loc, "axis ", a, " is out of range for ",
                               adaptor.getInput().getType());
    if (!isDyn(in[*n]) && in[*n] != 1)
      return emitOptionalError(loc, "cannot squeeze axis ", a, " of size ",
                               in[*n]);
    drop[*n] = true;
  }
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(in))
    if (!drop[i])
      out.push_back(d);
  types.push_back(tensorOf(out, elementTypeOf(adaptor.getInput())));
  return success();
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReinterpret(adaptor.getInput(), getType());
}

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t rank = in.size() + adaptor.getAxes().size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t a : adaptor.getAxes()) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n || inserted[*n])
      return emitOptionalError(loc, "axis ", a,
                               " is out of range or repeated for output rank ",
                               rank);
    inserted[*n] = true;
  }
  SmallVector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(inserted[i] ? 1 : in[next++]);
  types.push_back(tensorOf(out, elementTypeOf(adaptor.getInput())));
  return success();
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReinterpret(adaptor.getInput(), getType());
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (perm.size() != in.size())
    return emitOptionalError(loc, "perm has ", perm.size(),
                             " entries for rank ", in.size());
  SmallVector<bool> seen(in.size(), false);
  SmallVector<int64_t> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return emitOptionalError(loc, "perm is not a permutation of 0..",
                               in.size() - 1);
    seen[p] = true;
    out.push_back(in[p]);
  }
  types.push_back(tensorOf(out, elementTypeOf(adaptor.getInput())));
  return success();
}

//===----------------------------------------------------------------------===//
// Concat, Split, Slice
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "expects at least one input");
  int64_t rank = shapeOf(inputs[0]).size();
  std::optional<int64_t> axis = normalizeAxis(adaptor.getAxis(), rank);
  if (!axis)
    return emitOptionalError(loc, "axis ", (int64_t)adaptor.getAxis(),
                             " is out of range for rank ", rank);
  SmallVector<int64_t> out = llvm::to_vector(shapeOf(inputs[0]));
  out[*axis] = 0;
  for (Value v : inputs) {
    ArrayRef<int64_t> s = shapeOf(v);
    if ((int64_t)s.size() != rank)
      return emitOptionalError(loc, "inputs must have the same rank");
    for (int64_t i = 0; i < rank; ++i) {
      if (i == *axis) {
        out[i] = isDyn(out[i]) || isDyn(s[i]) ? kDyn : out[i] + s[i];
      } else if (isDyn(out[i])) {
        out[i] = s[i];
      } else if (!isDyn(s[i]) && s[i] != out[i]) {
        return emitOptionalError(loc, "inputs differ in dim ", i, ": ", out[i],
                                 " vs ", s[i]);
      }
    }
  }
  types.push_back(tensorOf(out, elementTypeOf(inputs[0])));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  // Only 1-D integer vectors (shape computations).
  if (!isFoldableIntType(getType()) || getType().getRank() != 1)
    return {};
  SmallVector<int64_t> values;
  for (Attribute a : adaptor.getInputs()) {
    DenseIntElementsAttr ints = asDenseInts(a);
    if (!ints)
      return {};
    llvm::append_range(values, readInts(ints));
  }
  return makeInts(getType(), values);
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  std::optional<int64_t> axis = normalizeAxis(adaptor.getAxis(), in.size());
  if (!axis)
    return emitOptionalError(loc, "axis ", (int64_t)adaptor.getAxis(),
                             " is out of range for rank ", in.size());
  // With the axis known, the -1 pieces split what the others leave equally,
  // the last one smaller (ONNX num_outputs), as the lowering does.
  ArrayRef<int64_t> split = adaptor.getSplit();
  int64_t dim = in[*axis], fixed = 0, numDynamic = 0;
  for (int64_t size : split) {
    if (size < 0)
      ++numDynamic;
    else
      fixed += size;
  }
  int64_t each =
      numDynamic
          ? llvm::divideCeil(std::max<int64_t>(dim - fixed, 0), numDynamic)
          : 0;
  int64_t offset = 0, seen = 0;
  for (int64_t size : split) {
    SmallVector<int64_t> out = llvm::to_vector(in);
    if (size < 0 && !isDyn(dim)) {
      int64_t left = std::max<int64_t>(dim - offset, 0);
      size = ++seen == numDynamic ? left : std::min(each, left);
    }
    out[*axis] = size < 0 ? kDyn : size;
    offset += std::max<int64_t>(size, 0);
    types.push_back(tensorOf(out, elementTypeOf(adaptor.getInput())));
  }
  return success();
}

LogicalResult SplitOp::verify() {
  int64_t axis = *normalizeAxis(getAxis(), shapeOf(getInput()).size());
  int64_t dim = shapeOf(getInput())[axis], total = 0;
  bool allStatic = true;
  for (int64_t s : getSplit()) {
    if (s < -1)
      return emitOpError("split sizes must be >= 0 (or -1: dynamic)");
    allStatic &= s >= 0;
    total += std::max<int64_t>(s, 0);
  }
  if (allStatic && !isDyn(dim) && total != dim)
    return emitOpError("split sizes sum to ")
           << total << " but the axis has size " << dim;
  return success();
}

namespace {
/// Start, end and step of one sliced axis, resolved like ONNX Slice-13.
struct SliceRange {
  int64_t start, end, step;
};
} // namespace

/// Clamps an ONNX slice [start, end) with `step` to an axis of size `dim`
/// and returns the number of elements selected.
static int64_t sliceCount(int64_t dim, int64_t start, int64_t end,
                          int64_t step, SliceRange *range = nullptr) {
  auto clampIndex = [&](int64_t v, bool forStart) {
    if (v < 0)
      v += dim;
    if (step > 0)
      return std::min(std::max<int64_t>(v, 0), dim);
    return std::min(std::max<int64_t>(v, forStart ? 0 : -1), dim - 1);
  };
  int64_t s = clampIndex(start, true), e = clampIndex(end, false);
  int64_t n = step > 0 ? (e - s + step - 1) / step : (s - e - step - 1) / -step;
  if (range)
    *range = {s, e, step};
  return std::max<int64_t>(n, 0);
}

/// Per input axis: the (start, end, step) triple or nothing if untouched.
/// Returns failure for invalid constant operands; `known` is false when
/// starts/ends/steps are not all constant.
static LogicalResult
sliceTriples(std::optional<Location> loc, int64_t rank, Value starts, Value ends,
             Value axes, Value steps,
             SmallVectorImpl<std::optional<SliceRange>> &perAxis, bool &known,
             SmallVectorImpl<bool> &touched) {
  perAxis.assign(rank, std::nullopt);
  touched.assign(rank, false);
  int64_t n = vectorLength(starts);
  std::optional<SmallVector<int64_t>> ax = axes ? getConstantInts(axes)
                                                : std::nullopt;
  if (axes && !ax) {
    // Unknown axes: every axis may be sliced.
    touched.assign(rank, true);
    known = false;
    return success();
  }
  SmallVector<int64_t> axisList;
  if (ax) {
    axisList = *ax;
  } else {
    if (isDyn(n))
      return emitOptionalError(loc, "starts must have a static length");
    for (int64_t i = 0; i < n; ++i)
      axisList.push_back(i);
  }
  for (int64_t &a : axisList) {
    std::optional<int64_t> na = normalizeAxis(a, rank);
    if (!na)
      return emitOptionalError(loc, "slice axis ", a,
                               " is out of range for rank ", rank);
    if (touched[*na])
      return emitOptionalError(loc, "slice axis ", a, " is repeated");
    touched[*na] = true;
    a = *na;
  }
  auto s = getConstantInts(starts), e = getConstantInts(ends);
  std::optional<SmallVector<int64_t>> st =
      steps ? getConstantInts(steps)
            : std::optional<SmallVector<int64_t>>(
                  SmallVector<int64_t>(axisList.size(), 1));
  known = s && e && st;
  if (!known)
    return success();
  if (s->size() != axisList.size() || e->size() != axisList.size() ||
      st->size() != axisList.size())
    return emitOptionalError(loc, "starts, ends, axes and steps must have "
                                  "the same length");
  for (auto [i, a] : llvm::enumerate(axisList)) {
    if ((*st)[i] == 0)
      return emitOptionalError(loc, "slice steps must not be 0");
    perAxis[a] = SliceRange{(*s)[i], (*e)[i], (*st)[i]};
  }
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  SmallVector<std::optional<SliceRange>> perAxis;
  SmallVector<bool> touched;
  bool known = false;
  if (failed(sliceTriples(loc, in.size(), adaptor.getStarts(),
                          adaptor.getEnds(), adaptor.getAxes(),
                          adaptor.getSteps(), perAxis, known, touched)))
    return failure();
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(in)) {
    if (!touched[i])
      out.push_back(d);
    else if (!known || isDyn(d))
      out.push_back(kDyn);
    else
      out.push_back(
          sliceCount(d, perAxis[i]->start, perAxis[i]->end, perAxis[i]->step));
  }
  types.push_back(tensorOf(out, elementTypeOf(adaptor.getInput())));
  return success();
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Slices of integer constants of any rank (torch's `F.pad` export slices
/// its [n, 2] pad table backwards before flattening it).
OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  DenseIntElementsAttr input = asDenseInts(adaptor.getInput());
  if (!input || !isFoldableIntType(getType()))
    return {};
  ArrayRef<int64_t> inShape = input.getType().getShape();
  SmallVector<std::optional<SliceRange>> perAxis;
  SmallVector<bool> touched;
  bool known = false;
  if (failed(sliceTriples(std::nullopt, inShape.size(), getStarts(), getEnds(),
                          getAxes(), getSteps(), perAxis, known, touched)) ||
      !known)
    return {};
  SmallVector<SliceRange> ranges;
  SmallVector<int64_t> outShape;
  for (auto [d, range] : llvm::zip(inShape, perAxis)) {
    SliceRange r{0, d, 1};
    int64_t n = d;
    if (range)
      n = sliceCount(d, range->start, range->end, range->step, &r);
    ranges.push_back(r);
    outShape.push_back(n);
  }
  if (ArrayRef<int64_t>(outShape) != getType().getShape())
    return {};
  SmallVector<int64_t> values = readInts(input), out;
  SmallVector<int64_t> inStrides = rowMajorStrides(inShape);
  int64_t count = getType().getNumElements();
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, index = 0;
    for (int64_t d = (int64_t)outShape.size() - 1; d >= 0; --d) {
      int64_t coord = rest % outShape[d];
      rest /= outShape[d];
      index += (ranges[d].start + coord * ranges[d].step) * inStrides[d];
    }
    out.push_back(values[index]);
  }
  return makeInts(getType(), out);
}

/// Transposes of integer constants (the same pad tables).
OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  DenseIntElementsAttr input = asDenseInts(adaptor.getInput());
  if (!input || !isFoldableIntType(getType()))
    return {};
  ArrayRef<int64_t> perm = getPerm();
  ArrayRef<int64_t> outShape = getType().getShape();
  SmallVector<int64_t> inStrides = rowMajorStrides(input.getType().getShape());
  SmallVector<int64_t> values = readInts(input), out;
  for (int64_t flat = 0, e = getType().getNumElements(); flat < e; ++flat) {
    int64_t rest = flat, index = 0;
    for (int64_t d = (int64_t)outShape.size() - 1; d >= 0; --d) {
      index += (rest % outShape[d]) * inStrides[perm[d]];
      rest /= outShape[d];
    }
    out.push_back(values[index]);
  }
  return makeInts(getType(), out);
}

//===----------------------------------------------------------------------===//
// Gather family, scatter
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> data = shapeOf(adaptor.getData());
  std::optional<int64_t> axis = normalizeAxis(adaptor.getAxis(), data.size());
  if (!axis)
    return emitOptionalError(loc, "axis ", (int64_t)adaptor.getAxis(),
                             " is out of range for ",
                             adaptor.getData().getType());
  SmallVector<int64_t> out(data.begin(), data.begin() + *axis);
  llvm::append_range(out, shapeOf(adaptor.getIndices()));
  out.append(data.begin() + *axis + 1, data.end());
  types.push_back(tensorOf(out, elementTypeOf(adaptor.getData())));
  return success();
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseIntElementsAttr data = asDenseInts(adaptor.getData());
  DenseIntElementsAttr indices = asDenseInts(adaptor.getIndices());
  if (!data || !indices || data.getType().getRank() != 1 ||
      !isFoldableIntType(getType()))
    return {};
  SmallVector<int64_t> values = readInts(data), out;
  int64_t n = values.size();
  for (int64_t i : readInts(indices)) {
    if (i < -n || i >= n)
      return {};
    out.push_back(values[i < 0 ? i + n : i]);
  }
  return makeInts(getType(), out);
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> data = shapeOf(adaptor.getData());
  ArrayRef<int64_t> indices = shapeOf(adaptor.getIndices());
  if (data.size() != indices.size() ||
      !normalizeAxis(adaptor.getAxis(), data.size()))
    return emitOptionalError(loc, "indices must have the data's rank and "
                                  "axis must be in range");
  types.push_back(tensorOf(indices, elementTypeOf(adaptor.getData())));
  return success();
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> data = shapeOf(adaptor.getData());
  ArrayRef<int64_t> indices = shapeOf(adaptor.getIndices());
  int64_t b = adaptor.getBatchDims();
  if (indices.empty() || isDyn(indices.back()))
    return emitOptionalError(loc, "the last dim of indices must be static");
  int64_t last = indices.back();
  if (b < 0 || b + last > (int64_t)data.size() ||
      b >= (int64_t)indices.size())
    return emitOptionalError(loc, "indices do not address the data: batch_dims ",
                             b, ", index length ", last, ", data rank ",
                             data.size());
  SmallVector<int64_t> out(indices.begin(), indices.end() - 1);
  out.append(data.begin() + b + last, data.end());
  types.push_back(tensorOf(out, elementTypeOf(adaptor.getData())));
  return success();
}

static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      reduction != "max" && reduction != "min")
    return op->emitOpError("reduction must be none, add, mul, max or min, got ")
           << reduction;
  return success();
}

LogicalResult ScatterNDOp::verify() {
  if (elementTypeOf(getData()) != elementTypeOf(getUpdates()))
    return emitOpError("updates must have the data's element type");
  return verifyReduction(*this, getReduction());
}

bool TensorScatterOp::writesSlices() {
  auto cache = cast<RankedTensorType>(getPastCache().getType());
  auto update = cast<RankedTensorType>(getUpdate().getType());
  int64_t axis = getAxis();
  if (axis < 0)
    axis += cache.getRank();
  return getMode() == "linear" && cache.hasStaticShape() &&
         update.hasStaticShape() && axis > 0 && axis < cache.getRank() &&
         update.getDimSize(axis) <= cache.getDimSize(axis) &&
         cache.getDimSize(0) <= 64;
}

LogicalResult TensorScatterOp::verify() {
  if (getMode() != "linear" && getMode() != "circular")
    return emitOpError("mode must be linear or circular, got ") << getMode();
  if (shapeOf(getPastCache()).size() != shapeOf(getUpdate()).size())
    return emitOpError("update must have the cache's rank");
  if (!normalizeAxis(getAxis(), shapeOf(getPastCache()).size()))
    return emitOpError("axis ") << (int64_t)getAxis() << " is out of range";
  return success();
}

//===----------------------------------------------------------------------===//
// Pad, Tile, Resize
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t rank = in.size();
  Type elt = elementTypeOf(adaptor.getInput());
  std::optional<SmallVector<int64_t>> pads = getConstantInts(adaptor.getPads());
  SmallVector<int64_t> axes;
  if (Value a = adaptor.getAxes()) {
    std::optional<SmallVector<int64_t>> ax = getConstantInts(a);
    if (!ax) {
      types.push_back(tensorOf(SmallVector<int64_t>(rank, kDyn), elt));
      return success();
    }
    for (int64_t v : *ax) {
      std::optional<int64_t> n = normalizeAxis(v, rank);
      if (!n)
        return emitOptionalError(loc, "pad axis ", v, " is out of range");
      axes.push_back(*n);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  SmallVector<int64_t> out = llvm::to_vector(in);
  if (!pads) {
    for (int64_t a : axes)
      out[a] = kDyn;
  } else {
    if (pads->size() != 2 * axes.size())
      return emitOptionalError(loc, "pads has ", pads->size(),
                               " entries, expected ", 2 * axes.size());
    for (auto [i, a] : llvm::enumerate(axes))
      if (!isDyn(out[a]))
        out[a] += (*pads)[i] + (*pads)[i + axes.size()];
  }
  types.push_back(tensorOf(out, elt));
  return success();
}

LogicalResult PadOp::verify() {
  StringRef mode = getMode();
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return emitOpError("mode must be constant, reflect, edge or wrap, got ")
           << mode;
  if (Value v = getConstantValue())
    if (elementTypeOf(v) != elementTypeOf(getInput()))
      return emitOpError("constant_value must have the input's element type");
  return success();
}

LogicalResult NonZeroOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  // The count of non-zero elements is a run-time value.
  int64_t rank = shapeOf(adaptor.getInput()).size();
  types.push_back(tensorOf({rank, kDyn}, IntegerType::get(ctx, 64)));
  return success();
}

/// OneHot: the indices' shape with `depth` inserted at the axis (dynamic
/// unless `depth` is a constant), of the values' element type. Checked here
/// so that the importer reports a bad axis or depth at the node.
LogicalResult OneHotOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> shape = llvm::to_vector(shapeOf(adaptor.getIndices()));
  int64_t rank = shape.size() + 1, axis = adaptor.getAxis();
  std::optional<int64_t> a = normalizeAxis(axis, rank);
  if (!a)
    return emitOptionalError(loc, "axis ", axis, " is out of range [", -rank,
                             ", ", rank - 1, "] for indices of rank ",
                             rank - 1);
  Value depth = adaptor.getDepth();
  ArrayRef<int64_t> depthShape = shapeOf(depth);
  int64_t count = productOf(depthShape);
  if (depthShape.size() > 1 || (!isDyn(count) && count != 1))
    return emitOptionalError(
        loc, "depth must be a scalar or a tensor of one element, got ",
        depth.getType());
  // A constant depth of any numeric type, truncated as ONNX casts it.
  int64_t size = kDyn;
  if (isa<FloatType>(elementTypeOf(depth))) {
    if (std::optional<SmallVector<double>> f = getConstantFloats(depth)) {
      if (!std::isfinite(f->front()))
        return emitOptionalError(loc, "depth must be finite, got ", f->front());
      size = (int64_t)std::trunc(f->front());
    }
  } else if (std::optional<SmallVector<int64_t>> i = getConstantInts(depth)) {
    size = i->front();
  }
  if (!isDyn(size) && size <= 0)
    return emitOptionalError(loc, "depth must be positive, got ", size);
  shape.insert(shape.begin() + *a, size);
  types.push_back(tensorOf(shape, elementTypeOf(adaptor.getValues())));
  return success();
}

LogicalResult OneHotOp::verify() {
  ArrayRef<int64_t> values = shapeOf(getValues());
  if (values.size() != 1 || (!isDyn(values[0]) && values[0] != 2))
    return emitOpError("values must be a 1-D tensor of two elements "
                       "[off, on], got ")
           << getValues().getType();
  return success();
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  SmallVector<int64_t> out = llvm::to_vector(in);
  if (std::optional<SmallVector<int64_t>> reps =
          getConstantInts(adaptor.getRepeats())) {
    if (reps->size() != in.size())
      return emitOptionalError(loc, "repeats has ", reps->size(),
                               " entries for rank ", in.size());
    for (auto [d, r] : llvm::zip(out, *reps))
      d = isDyn(d) ? kDyn : d * r;
  } else {
    out.assign(in.size(), kDyn);
  }
  types.push_back(tensorOf(out, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t rank = in.size();
  SmallVector<int64_t> axes = llvm::to_vector(adaptor.getAxes());
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  SmallVector<int64_t> out = llvm::to_vector(in);
  auto sizes = getConstantInts(adaptor.getSizes());
  auto scales = getConstantFloats(adaptor.getScales());
  StringRef policy = adaptor.getKeepAspectRatioPolicy();
  bool policyStretch = policy == "stretch";
  // not_larger / not_smaller: one scale for all axes (the smallest or the
  // largest ratio), sizes rounded half up, as the ONNX reference does.
  std::optional<double> common;
  if (sizes && sizes->size() == axes.size() && !policyStretch) {
    for (auto [i, a] : llvm::enumerate(axes)) {
      std::optional<int64_t> n = normalizeAxis(a, rank);
      if (!n || isDyn(in[*n])) {
        common.reset();
        break;
      }
      double ratio = double((*sizes)[i]) / in[*n];
      common = !common ? ratio
               : policy == "not_larger" ? std::min(*common, ratio)
                                        : std::max(*common, ratio);
    }
  }
  for (auto [i, a] : llvm::enumerate(axes)) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n)
      return emitOptionalError(loc, "resize axis ", a, " is out of range");
    if (sizes && sizes->size() == axes.size() && policyStretch)
      out[*n] = (*sizes)[i];
    else if (common)
      out[*n] = (int64_t)(*common * in[*n] + 0.5);
    else if (scales && scales->size() == axes.size() && !isDyn(in[*n]))
      out[*n] = (int64_t)std::floor(in[*n] * (*scales)[i]);
    else if (adaptor.getSizes() || adaptor.getScales())
      out[*n] = kDyn;
  }
  types.push_back(tensorOf(out, elementTypeOf(adaptor.getInput())));
  return success();
}

LogicalResult ResizeOp::verify() {
  StringRef mode = getMode();
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return emitOpError("mode must be nearest, linear or cubic, got ") << mode;
  if ((bool)getScales() == (bool)getSizes())
    return emitOpError("exactly one of scales and sizes must be given");
  return success();
}

//===----------------------------------------------------------------------===//
// ScatterElements
//===----------------------------------------------------------------------===//

LogicalResult ScatterElementsOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData());
  ArrayRef<int64_t> indices = shapeOf(getIndices());
  ArrayRef<int64_t> updates = shapeOf(getUpdates());
  if (elementTypeOf(getData()) != elementTypeOf(getUpdates()))
    return emitOpError("updates must have the data's element type, got ")
           << elementTypeOf(getUpdates()) << " for "
           << elementTypeOf(getData());
  if (indices.size() != data.size())
    return emitOpError("indices must have the data's rank ")
           << data.size() << ", got rank " << indices.size();
  if (failed(verifyCompatibleShape(indices, updates)))
    return emitOpError("updates must have the shape of indices, got ")
           << getUpdates().getType() << " for " << getIndices().getType();
  if (!normalizeAxis(getAxis(), data.size()))
    return emitOpError("axis ")
           << (int64_t)getAxis() << " is out of range for rank " << data.size();
  return verifyReduction(*this, getReduction());
}

//===----------------------------------------------------------------------===//
// RandomNormal, RandomUniform
//===----------------------------------------------------------------------===//

/// The result type of a random op: `like`'s shape or `shape`, of `dtype`.
static LogicalResult inferRandom(std::optional<Location> loc, Value like,
                                 std::optional<ArrayRef<int64_t>> shape,
                                 Type dtype, SmallVectorImpl<Type> &types) {
  if (!dtype)
    return emitOptionalError(loc, "the dtype attribute is required");
  if (like && shape)
    return emitOptionalError(loc, "give either a like operand or a shape "
                                  "attribute, not both");
  if (like) {
    types.push_back(tensorOf(shapeOf(like), dtype));
    return success();
  }
  if (!shape)
    return emitOptionalError(loc, "a shape attribute (or a like operand) is "
                                  "required");
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return emitOptionalError(loc, "shape entries must be >= 0");
  types.push_back(tensorOf(*shape, dtype));
  return success();
}

/// Checks what inference does not: a float dtype and finite parameters.
static LogicalResult
verifyRandom(Operation *op, Type dtype,
             ArrayRef<std::pair<StringRef, float>> params) {
  if (!isa<FloatType>(dtype) || dtype.isF80() || dtype.isF128())
    return op->emitOpError("dtype must be f16, bf16, f32 or f64, got ")
           << dtype;
  for (auto [name, value] : params)
    if (!std::isfinite(value))
      return op->emitOpError() << name << " must be finite, got " << value;
  return success();
}

LogicalResult RandomNormalOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  return inferRandom(loc, adaptor.getLike(), adaptor.getShape(),
                     adaptor.getDtypeAttr() ? adaptor.getDtype() : Type(),
                     types);
}

LogicalResult RandomNormalOp::verify() {
  return verifyRandom(*this, getDtype(),
                      {{"mean", getMean().convertToFloat()},
                       {"scale", getScale().convertToFloat()}});
}

LogicalResult RandomUniformOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  return inferRandom(loc, adaptor.getLike(), adaptor.getShape(),
                     adaptor.getDtypeAttr() ? adaptor.getDtype() : Type(),
                     types);
}

LogicalResult RandomUniformOp::verify() {
  float low = getLow().convertToFloat(), high = getHigh().convertToFloat();
  if (!(low < high))
    return emitOpError("low (")
           << low << ") must be below high (" << high << ")";
  return verifyRandom(*this, getDtype(), {{"low", low}, {"high", high}});
}
