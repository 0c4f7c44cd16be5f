//===- ElementwiseImporters.cpp - elementwise ONNX ops --------------------===//

#include "../NodeImporter.h"
#include "../OnnxTensors.h"

using namespace mlir;

namespace mp::import {
namespace {

/// Op with the node's inputs as operands and no attributes.
template <typename OpTy> FailureOr<ValueList> plain(NodeContext &n) {
  ValueList inputs = n.presentInputs();
  if (inputs.size() != n.numInputs())
    return n.error() << "empty input slots are not allowed here";
  constexpr bool variadic =
      OpTy::template hasTrait<OpTrait::VariadicOperands>();
  constexpr size_t arity =
      OpTy::template hasTrait<OpTrait::OneOperand>() ? 1 : 2;
  if (variadic ? inputs.empty() : inputs.size() != arity)
    return n.error() << "expects " << (variadic ? "at least 1" : std::to_string(arity))
                     << " input(s), got " << inputs.size();
  if constexpr (OpTy::template hasTrait<OpTrait::VariadicOperands>())
    return n.results<OpTy>(ValueRange(inputs));
  else if constexpr (OpTy::template hasTrait<OpTrait::OneOperand>())
    return n.results<OpTy>(inputs.empty() ? Value() : inputs[0]);
  else
    return n.results<OpTy>(inputs.size() > 0 ? inputs[0] : Value(),
                           inputs.size() > 1 ? inputs[1] : Value());
}

FailureOr<ValueList> importIdentity(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input");
  if (failed(x))
    return failure();
  return ValueList{*x};
}

FailureOr<ValueList> importDropout(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "data");
  if (failed(x))
    return failure();
  bool training = n.getInt("is_test", 1) == 0 && n.since < 7;
  if (n.since >= 12 && n.in(2)) {
    std::optional<SmallVector<int64_t>> mode = n.constInts(2);
    if (!mode)
      return n.error() << "training_mode must be a constant";
    training = !mode->empty() && (*mode)[0] != 0;
  }
  if (training)
    return n.error() << "Dropout in training mode is not supported "
                        "(mp imports inference graphs)";
  ValueList results{*x};
  if (n.node.output_size() > 1 && !n.node.output(1).empty()) {
    // Inference: the mask keeps every element.
    FailureOr<ValueList> shape =
        n.results<ShapeOp>(*x, n.b.getI64IntegerAttr(0), IntegerAttr());
    if (failed(shape))
      return failure();
    // Before opset 10 the mask had the input's type; since then it is bool.
    Type maskType = n.since < 10 ? elementTypeOf(*x) : n.b.getI1Type();
    auto oneType = RankedTensorType::get({1}, maskType);
    Attribute one =
        n.since < 10 ? Attribute(DenseElementsAttr::get(
                           oneType, n.b.getFloatAttr(maskType, 1.0)))
                     : Attribute(DenseElementsAttr::get(oneType, true));
    FailureOr<ConstantOfShapeOp> mask =
        n.create<ConstantOfShapeOp>((*shape)[0], cast<ElementsAttr>(one));
    if (failed(mask))
      return failure();
    results.push_back(mask->getResult());
  }
  return results;
}

FailureOr<ValueList> importCast(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input");
  if (failed(x) || failed(n.checkAttrType("to", onnx::AttributeProto::INT)))
    return failure();
  if (!n.hasAttr("to"))
    return n.error() << "attribute 'to' is required";
  Type to = convertElementType(n.ctx(), n.getInt("to", 0));
  if (!to)
    return n.error() << "cannot cast to unsupported type "
                     << onnxTypeName(n.getInt("to", 0));
  return n.results<CastOp>(*x, TypeAttr::get(to));
}

FailureOr<ValueList> importCastLike(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input");
  FailureOr<Value> like = n.required(1, "target_type");
  if (failed(x) || failed(like))
    return failure();
  return n.results<CastOp>(*x, TypeAttr::get(elementTypeOf(*like)));
}

FailureOr<ValueList> importClip(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "input");
  if (failed(x))
    return failure();
  Value lo = n.in(1), hi = n.in(2);
  if (n.since < 11) {
    Type elt = elementTypeOf(*x);
    lo = n.hasAttr("min") ? n.scalar(elt, n.getFloat("min", 0)) : Value();
    hi = n.hasAttr("max") ? n.scalar(elt, n.getFloat("max", 0)) : Value();
  }
  return n.results<ClipOp>(*x, lo, hi);
}

FailureOr<ValueList> importGelu(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  return n.results<GeluOp>(*x, n.strAttr("approximate", "none"));
}

template <typename OpTy>
FailureOr<ValueList> withAlpha(NodeContext &n, float dflt) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  return n.results<OpTy>(*x, n.f32Attr("alpha", dflt));
}

FailureOr<ValueList> importHardSigmoid(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  return n.results<HardSigmoidOp>(*x, n.f32Attr("alpha", 0.2f),
                                  n.f32Attr("beta", 0.5f));
}

FailureOr<ValueList> importIsInf(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  return n.results<IsInfOp>(*x, n.boolAttr("detect_negative", true),
                            n.boolAttr("detect_positive", true));
}

FailureOr<ValueList> importMod(NodeContext &n) {
  FailureOr<Value> a = n.required(0, "A"), b = n.required(1, "B");
  if (failed(a) || failed(b))
    return failure();
  return n.results<ModOp>(*a, *b, n.boolAttr("fmod", false));
}

FailureOr<ValueList> importFastGelu(NodeContext &n) {
  FailureOr<Value> x = n.required(0, "X");
  if (failed(x))
    return failure();
  return n.results<FastGeluOp>(*x, n.in(1));
}

} // namespace

void registerElementwiseImporters(OpTable &t) {
  // Unary math. Version bumps of these ops only widened the type lists.
  t.add("Abs", {1, 6, 13}, plain<AbsOp>);
  t.add("Ceil", {1, 6, 13}, plain<CeilOp>);
  t.add("Cos", {7, 22}, plain<CosOp>);
  t.add("Erf", {9, 13}, plain<ErfOp>);
  t.add("Exp", {1, 6, 13}, plain<ExpOp>);
  t.add("Floor", {1, 6, 13}, plain<FloorOp>);
  t.add("Log", {1, 6, 13}, plain<LogOp>);
  t.add("Neg", {1, 6, 13}, plain<NegOp>);
  t.add("Not", {1}, plain<NotOp>);
  t.add("Reciprocal", {1, 6, 13}, plain<ReciprocalOp>);
  t.add("Relu", {1, 6, 13, 14}, plain<ReluOp>);
  t.add("Sigmoid", {1, 6, 13}, plain<SigmoidOp>);
  t.add("Sign", {9, 13}, plain<SignOp>);
  t.add("Sin", {7, 22}, plain<SinOp>);
  t.add("Softplus", {1, 22}, plain<SoftplusOp>);
  t.add("Sqrt", {1, 6, 13}, plain<SqrtOp>);
  t.add("Tanh", {1, 6, 13}, plain<TanhOp>);
  // Round: halves to even; 22 only added bfloat16.
  t.add("Round", {11, 22}, plain<RoundOp>);
  t.add("IsNaN", {9, 13, 20}, plain<IsNaNOp>);
  t.add("IsInf", {10, 20}, importIsInf);
  t.add("Identity", {1, 13, 14, 16, 19, 21, 23, 24, 25}, importIdentity);
  t.add("Dropout", {1, 6, 7, 10, 12, 13, 22}, importDropout);
  t.add("Elu", {1, 6, 22}, [](NodeContext &n) { return withAlpha<EluOp>(n, 1.0f); });
  t.add("LeakyRelu", {1, 6, 16},
        [](NodeContext &n) { return withAlpha<LeakyReluOp>(n, 0.01f); });
  t.add("HardSigmoid", {1, 6, 22}, importHardSigmoid);
  t.add("Gelu", {20}, importGelu);
  t.add("Cast", {1, 6, 9, 13, 19, 21, 23, 24, 25}, importCast);
  t.add("CastLike", {15, 19, 21, 23, 24, 25}, importCastLike);
  // Clip-11 moved min/max from attributes to inputs.
  t.add("Clip", {1, 6, 11, 12, 13}, importClip);

  // Broadcasting binary and variadic ops (multidirectional broadcast since 7).
  t.add("Add", {7, 13, 14}, plain<AddOp>);
  t.add("Sub", {7, 13, 14}, plain<SubOp>);
  t.add("Mul", {7, 13, 14}, plain<MulOp>);
  t.add("Div", {7, 13, 14}, plain<DivOp>);
  t.add("Pow", {7, 12, 13, 15}, plain<PowOp>);
  t.add("Mod", {10, 13}, importMod);
  t.add("And", {7}, plain<AndOp>);
  t.add("Or", {7}, plain<OrOp>);
  t.add("Xor", {7}, plain<XorOp>);
  t.add("BitShift", {11}, [](NodeContext &n) -> FailureOr<ValueList> {
    FailureOr<Value> x = n.required(0, "X"), y = n.required(1, "Y");
    if (failed(x) || failed(y))
      return failure();
    if (!n.hasAttr("direction"))
      return n.error() << "BitShift needs the direction attribute";
    return n.results<BitShiftOp>(*x, *y, n.strAttr("direction", ""));
  });
  t.add("PRelu", {7, 9, 16}, plain<PReluOp>);
  t.add("Equal", {7, 11, 13, 19}, plain<EqualOp>);
  t.add("Greater", {7, 9, 13}, plain<GreaterOp>);
  t.add("GreaterOrEqual", {12, 16}, plain<GreaterOrEqualOp>);
  t.add("Less", {7, 9, 13}, plain<LessOp>);
  t.add("LessOrEqual", {12, 16}, plain<LessOrEqualOp>);
  t.add("Max", {6, 8, 12, 13}, plain<MaxOp>);
  t.add("Min", {6, 8, 12, 13}, plain<MinOp>);
  t.add("Mean", {6, 8, 13}, plain<MeanOp>);
  t.add("Sum", {6, 8, 13}, plain<SumOp>);
  t.add("Where", {9, 16}, [](NodeContext &n) -> FailureOr<ValueList> {
    Value c = n.in(0), x = n.in(1), y = n.in(2);
    if (!c || !x || !y)
      return n.error() << "Where needs condition, X and Y";
    return n.results<WhereOp>(c, x, y);
  });

  // com.microsoft activations.
  t.add("com.microsoft", "FastGelu", {1}, importFastGelu);
  t.add("com.microsoft", "BiasGelu", {1}, plain<BiasGeluOp>);
  t.add("com.microsoft", "QuickGelu", {1},
        [](NodeContext &n) { return withAlpha<QuickGeluOp>(n, 1.702f); });
  t.add("com.microsoft", "Gelu", {1}, importGelu);
}

} // namespace mp::import
