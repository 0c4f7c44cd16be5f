//===- MpReductionOps.cpp - reductions and normalizations -----------------===//

#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mp;

/// Fails unless `value` is a 1-D tensor whose size is compatible with `dim`.
static LogicalResult verifyPerChannel(Operation *op, Value value, int64_t dim,
                                      StringRef what) {
  ArrayRef<int64_t> shape = shapeOf(value);
  if (shape.size() != 1 || failed(verifyCompatibleShape({shape[0]}, {dim})))
    return op->emitOpError() << what << " must be 1-D of size "
                             << (ShapedType::isDynamic(dim) ? std::string("C")
                                                            : std::to_string(dim))
                             << ", got " << value.getType();
  return success();
}

/// Input type with the axes from `axis` on set to 1, element type `elt`.
static Type statsType(Value input, int64_t axis, Type elt) {
  SmallVector<int64_t> shape = llvm::to_vector(shapeOf(input));
  for (size_t i = axis; i < shape.size(); ++i)
    shape[i] = 1;
  return RankedTensorType::get(shape, elt);
}

//===----------------------------------------------------------------------===//
// ArgMax/ArgMin, TopK, CumSum, Softmax
//===----------------------------------------------------------------------===//

/// ArgMax/ArgMin: the reduced shape, i64.
static LogicalResult inferArgReduce(MLIRContext *context,
                                    std::optional<Location> location,
                                    Value data, int64_t axis, bool keepdims,
                                    SmallVectorImpl<Type> &types) {
  SmallVector<Type> reduced;
  if (failed(inferReduce(location, data, {axis}, keepdims, false, reduced)))
    return failure();
  types.push_back(RankedTensorType::get(
      cast<ShapedType>(reduced[0]).getShape(), IntegerType::get(context, 64)));
  return success();
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduce(context, location, adaptor.getData(),
                        (int64_t)adaptor.getAxis(), adaptor.getKeepdims(),
                        types);
}

LogicalResult ArgMinOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferArgReduce(context, location, adaptor.getData(),
                        (int64_t)adaptor.getAxis(), adaptor.getKeepdims(),
                        types);
}

/// TopK: the input's shape with `k` along the axis (dynamic unless `k` is
/// a constant), for the values and for the i64 indices. The checks live
/// here rather than in a verifier so that the importer reports them at the
/// node.
LogicalResult TopKOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  Value input = adaptor.getInput(), k = adaptor.getK();
  SmallVector<int64_t> shape = llvm::to_vector(shapeOf(input));
  int64_t rank = shape.size(), axis = adaptor.getAxis();
  if (rank == 0)
    return emitOptionalError(location, "input must have rank >= 1, got ",
                             input.getType());
  std::optional<int64_t> a = normalizeAxis(axis, rank);
  if (!a)
    return emitOptionalError(location, "axis ", axis,
                             " is out of range for rank ", rank);
  ArrayRef<int64_t> kShape = shapeOf(k);
  int64_t kCount = productOf(kShape);
  if (kShape.size() > 1 || (!ShapedType::isDynamic(kCount) && kCount != 1))
    return emitOptionalError(
        location, "k must be a tensor of one element, got ", k.getType());
  int64_t size = shape[*a];
  shape[*a] = ShapedType::kDynamic;
  if (std::optional<SmallVector<int64_t>> values = getConstantInts(k)) {
    int64_t kValue = values->front();
    if (kValue < 0)
      return emitOptionalError(location, "k must not be negative, got ",
                               kValue);
    if (!ShapedType::isDynamic(size) && kValue > size)
      return emitOptionalError(location, "k = ", kValue,
                               " is larger than the input's size ", size,
                               " along axis ", *a);
    shape[*a] = kValue;
  }
  types.push_back(RankedTensorType::get(shape, elementTypeOf(input)));
  types.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult CumSumOp::verify() {
  if (!normalizeAxis(getAxis(), shapeOf(getInput()).size()))
    return emitOpError("axis ") << (int64_t)getAxis() << " is out of range for "
                                << getInput().getType();
  return success();
}

template <typename OpTy>
static LogicalResult verifySoftmaxAxes(OpTy op) {
  int64_t rank = shapeOf(op.getInput()).size();
  ArrayRef<int64_t> axes = op.getAxes();
  if (axes.empty())
    return op.emitOpError("axes must not be empty");
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (a < 0 || a >= rank)
      return op.emitOpError("axis ") << a << " is out of range for rank "
                                     << rank << " (axes are normalized)";
    if (i > 0 && a != axes[i - 1] + 1)
      return op.emitOpError("axes must be contiguous and increasing");
  }
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxAxes(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxAxes(*this); }

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> shape = shapeOf(getInput());
  if (shape.size() < 2)
    return emitOpError("input must have rank >= 2 (N, C, ...), got ")
           << getInput().getType();
  for (auto [v, name] : llvm::zip(getOperands().drop_front(),
                                  ArrayRef<StringRef>{"scale", "bias", "mean",
                                                      "variance"}))
    if (failed(verifyPerChannel(*this, v, shape[1], name)))
      return failure();
  return success();
}

LogicalResult InstanceNormOp::verify() {
  ArrayRef<int64_t> shape = shapeOf(getInput());
  if (shape.size() < 3)
    return emitOpError("input must have rank >= 3 (N, C, D...), got ")
           << getInput().getType();
  if (failed(verifyPerChannel(*this, getScale(), shape[1], "scale")) ||
      failed(verifyPerChannel(*this, getBias(), shape[1], "bias")))
    return failure();
  return success();
}

LogicalResult GroupNormOp::verify() {
  ArrayRef<int64_t> shape = shapeOf(getInput());
  int64_t groups = getNumGroups();
  if (shape.size() < 3)
    return emitOpError("input must have rank >= 3 (N, C, D...), got ")
           << getInput().getType();
  if (groups <= 0)
    return emitOpError("num_groups must be positive, got ") << groups;
  if (!ShapedType::isDynamic(shape[1]) && shape[1] % groups != 0)
    return emitOpError("channels (") << shape[1]
                                     << ") must be divisible by num_groups ("
                                     << groups << ")";
  int64_t affine = getPerGroupAffine() ? groups : shape[1];
  if (failed(verifyPerChannel(*this, getScale(), affine, "scale")) ||
      failed(verifyPerChannel(*this, getBias(), affine, "bias")))
    return failure();
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  Value input = adaptor.getInput();
  std::optional<int64_t> axis =
      normalizeAxis(adaptor.getAxis(), shapeOf(input).size());
  if (!axis)
    return emitOptionalError(location, "axis ", (int64_t)adaptor.getAxis(),
                             " is out of range for ", input.getType());
  Type stash = adaptor.getStashType();
  types.push_back(input.getType());
  types.push_back(statsType(input, *axis, stash));
  types.push_back(statsType(input, *axis, stash));
  return success();
}

/// Scale/bias must broadcast to the normalized trailing dims.
static LogicalResult verifyNormAffine(Operation *op, Value input, int64_t axis,
                                      Value param, StringRef name) {
  if (!param)
    return success();
  ArrayRef<int64_t> in = shapeOf(input), p = shapeOf(param);
  if (elementTypeOf(param) != elementTypeOf(input))
    return op->emitOpError() << name << " must have the input's element type "
                             << elementTypeOf(input) << ", got "
                             << param.getType();
  SmallVector<SmallVector<int64_t>> shapes = {llvm::to_vector(in),
                                              llvm::to_vector(p)};
  FailureOr<SmallVector<int64_t>> b = broadcastShapes(shapes);
  if ((int64_t)p.size() > (int64_t)in.size() - axis || failed(b) ||
      failed(verifyCompatibleShape(*b, in)))
    return op->emitOpError() << name << " of type " << param.getType()
                             << " does not broadcast to the normalized dims of "
                             << input.getType();
  return success();
}

LogicalResult LayerNormOp::verify() {
  int64_t axis = *normalizeAxis(getAxis(), shapeOf(getInput()).size());
  if (failed(verifyNormAffine(*this, getInput(), axis, getScale(), "scale")) ||
      failed(verifyNormAffine(*this, getInput(), axis, getBias(), "bias")))
    return failure();
  return success();
}

LogicalResult RMSNormOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  Value input = adaptor.getInput();
  std::optional<int64_t> axis =
      normalizeAxis(adaptor.getAxis(), shapeOf(input).size());
  if (!axis)
    return emitOptionalError(location, "axis ", (int64_t)adaptor.getAxis(),
                             " is out of range for ", input.getType());
  types.push_back(input.getType());
  types.push_back(statsType(input, *axis, adaptor.getStashType()));
  return success();
}

LogicalResult RMSNormOp::verify() {
  int64_t axis = *normalizeAxis(getAxis(), shapeOf(getInput()).size());
  return verifyNormAffine(*this, getInput(), axis, getScale(), "scale");
}

LogicalResult SkipLayerNormOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  Value input = adaptor.getInput();
  int64_t rank = shapeOf(input).size();
  if (rank < 1)
    return emitOptionalError(location, "input must not be a scalar");
  Type f32 = Float32Type::get(context);
  types.push_back(input.getType());
  types.push_back(statsType(input, rank - 1, f32));
  types.push_back(statsType(input, rank - 1, f32));
  types.push_back(input.getType());
  return success();
}

LogicalResult SkipLayerNormOp::verify() {
  int64_t last = shapeOf(getInput()).size() - 1;
  SmallVector<SmallVector<int64_t>> shapes = {
      llvm::to_vector(shapeOf(getInput())), llvm::to_vector(shapeOf(getSkip()))};
  FailureOr<SmallVector<int64_t>> b = broadcastShapes(shapes);
  if (failed(b) || failed(verifyCompatibleShape(*b, shapeOf(getInput()))))
    return emitOpError("skip of type ")
           << getSkip().getType() << " does not broadcast to the input "
           << getInput().getType();
  if (getSimplified() && getBeta())
    return emitOpError("the simplified (RMS) form takes no beta");
  for (auto [v, name] : {std::pair<Value, StringRef>{getGamma(), "gamma"},
                         {getBeta(), "beta"},
                         {getBias(), "bias"}})
    if (failed(verifyNormAffine(*this, getInput(), last, v, name)))
      return failure();
  return success();
}

LogicalResult EmbedLayerNormOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> ids = shapeOf(adaptor.getInputIds());
  ArrayRef<int64_t> word = shapeOf(adaptor.getWordEmbedding());
  if (ids.size() != 2 || word.size() != 2)
    return emitOptionalError(location, "input_ids must be [batch, seq] and "
                                       "word_embedding [vocab, hidden]");
  Type elt = elementTypeOf(adaptor.getWordEmbedding());
  auto out = RankedTensorType::get({ids[0], ids[1], word[1]}, elt);
  types.push_back(out);
  types.push_back(
      RankedTensorType::get({ids[0]}, IntegerType::get(context, 32)));
  types.push_back(out);
  return success();
}

LogicalResult EmbedLayerNormOp::verify() {
  int64_t hidden = shapeOf(getWordEmbedding())[1];
  for (auto [v, name] :
       {std::pair<Value, StringRef>{getPositionEmbedding(), "position_embedding"},
        {getSegmentEmbedding(), "segment_embedding"}}) {
    if (!v)
      continue;
    ArrayRef<int64_t> s = shapeOf(v);
    if (s.size() != 2 || failed(verifyCompatibleShape({s[1]}, {hidden})))
      return emitOpError() << name << " must be [N, " << hidden << "], got "
                           << v.getType();
  }
  if (failed(verifyPerChannel(*this, getGamma(), hidden, "gamma")) ||
      failed(verifyPerChannel(*this, getBeta(), hidden, "beta")))
    return failure();
  if ((bool)getSegmentIds() != (bool)getSegmentEmbedding())
    return emitOpError("segment_ids and segment_embedding go together");
  return success();
}
