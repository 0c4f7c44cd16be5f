//===- MpElementwiseOps.td - elementwise ops ---------------*- tablegen -*-===//

#ifndef MP_DIALECT_MP_IR_MPELEMENTWISEOPS_TD
#define MP_DIALECT_MP_IR_MPELEMENTWISEOPS_TD

include "mp/Dialect/Mp/IR/MpBase.td"

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

def Mp_AbsOp : Mp_UnaryOp<"abs", Mp_NumericTensor> { let summary = "|x|"; }
def Mp_NegOp : Mp_UnaryOp<"neg", Mp_SignedNumericTensor> {
  let summary = "-x";
  let hasFolder = 1;
}
def Mp_SignOp : Mp_UnaryOp<"sign", Mp_NumericTensor> { let summary = "sign(x)"; }
def Mp_CeilOp : Mp_UnaryOp<"ceil"> { let summary = "ceil(x)"; }
def Mp_FloorOp : Mp_UnaryOp<"floor"> { let summary = "floor(x)"; }
def Mp_RoundOp : Mp_UnaryOp<"round"> {
  let summary = "x rounded to the nearest integer, halves to even (ONNX Round)";
}
def Mp_CosOp : Mp_UnaryOp<"cos"> { let summary = "cos(x)"; }
def Mp_SinOp : Mp_UnaryOp<"sin"> { let summary = "sin(x)"; }
def Mp_ErfOp : Mp_UnaryOp<"erf"> { let summary = "erf(x)"; }
def Mp_ExpOp : Mp_UnaryOp<"exp"> { let summary = "e^x"; }
def Mp_LogOp : Mp_UnaryOp<"log"> { let summary = "natural logarithm"; }
def Mp_ReciprocalOp : Mp_UnaryOp<"reciprocal"> { let summary = "1/x"; }
def Mp_ReluOp : Mp_UnaryOp<"relu", Mp_SignedNumericTensor> {
  let summary = "max(x, 0)";
}
def Mp_SigmoidOp : Mp_UnaryOp<"sigmoid"> { let summary = "1/(1+e^-x)"; }
def Mp_SoftplusOp : Mp_UnaryOp<"softplus"> { let summary = "log(1+e^x)"; }
def Mp_SqrtOp : Mp_UnaryOp<"sqrt"> { let summary = "square root"; }
def Mp_TanhOp : Mp_UnaryOp<"tanh"> { let summary = "hyperbolic tangent"; }
def Mp_NotOp : Mp_UnaryOp<"not", Mp_BoolTensor> {
  let summary = "logical not";
  let hasFolder = 1;
}

def Mp_IdentityOp : Mp_UnaryOp<"identity", Mp_Tensor> {
  let summary = "y = x (kept only where the graph needs a distinct value)";
  let hasFolder = 1;
}

def Mp_EluOp : Mp_UnaryOp<"elu"> {
  let summary = "x if x >= 0 else alpha*(e^x - 1)";
  let arguments = (ins Mp_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def Mp_LeakyReluOp : Mp_UnaryOp<"leaky_relu"> {
  let summary = "x if x >= 0 else alpha*x";
  let arguments = (ins Mp_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "0.01">:$alpha);
}
def Mp_HardSigmoidOp : Mp_UnaryOp<"hard_sigmoid"> {
  let summary = "max(0, min(1, alpha*x + beta))";
  let arguments = (ins Mp_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "0.2">:$alpha,
                   DefaultValuedAttr<F32Attr, "0.5">:$beta);
}
def Mp_GeluOp : Mp_UnaryOp<"gelu"> {
  let summary = "Gaussian error linear unit (ONNX Gelu-20)";
  let description = [{ `approximate` is "none" (erf form) or "tanh". }];
  let arguments = (ins Mp_FloatTensor:$input,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let hasVerifier = 1;
}
def Mp_QuickGeluOp : Mp_UnaryOp<"ms.quick_gelu"> {
  let summary = "x * sigmoid(alpha * x) (com.microsoft QuickGelu)";
  let arguments = (ins Mp_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "1.702">:$alpha);
}

def Mp_IsInfOp : Mp_InferOp<"is_inf", [], "return ::mp::inferSameShape("
      "adaptor.getInput(), ::mlir::IntegerType::get(context, 1), "
      "inferredReturnTypes);"> {
  let summary = "true where x is +inf (detect_positive) or -inf (detect_negative)";
  let arguments = (ins Mp_FloatTensor:$input,
                   DefaultValuedAttr<BoolAttr, "true">:$detect_negative,
                   DefaultValuedAttr<BoolAttr, "true">:$detect_positive);
  let results = (outs Mp_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}
def Mp_IsNaNOp : Mp_InferOp<"is_nan", [], "return ::mp::inferSameShape("
      "adaptor.getInput(), ::mlir::IntegerType::get(context, 1), "
      "inferredReturnTypes);"> {
  let summary = "true where x is NaN";
  let arguments = (ins Mp_FloatTensor:$input);
  let results = (outs Mp_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Mp_CastOp : Mp_InferOp<"cast", [], "return ::mp::inferSameShape("
      "adaptor.getInput(), adaptor.getTo(), inferredReturnTypes);"> {
  let summary = "element type conversion (the only op that changes a float type)";
  let description = [{
    ONNX Cast and CastLike. Float to integer truncates toward zero; integer
    to bool is `x != 0`. `mp.cast` is the only op that changes the element
    type of a float value, so precision decisions are visible as casts.
  }];
  let arguments = (ins Mp_Tensor:$input, TypeAttr:$to);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Mp_ClipOp : Mp_InferOp<"clip", [AttrSizedOperandSegments],
    "return ::mp::inferSameAsOperand(adaptor.getOperands(), 0, "
    "inferredReturnTypes);"> {
  let summary = "min(max(x, min), max); absent bounds do not clip";
  let arguments = (ins Mp_NumericTensor:$input,
                   Optional<Mp_NumericTensor>:$min,
                   Optional<Mp_NumericTensor>:$max);
  let results = (outs Mp_NumericTensor:$output);
  let assemblyFormat = [{
    $input (`min` $min^)? (`max` $max^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Binary and variadic, with broadcasting
//===----------------------------------------------------------------------===//

def Mp_AddOp : Mp_BinaryOp<"add"> { let summary = "a + b"; let hasFolder = 1; }
def Mp_SubOp : Mp_BinaryOp<"sub"> { let summary = "a - b"; let hasFolder = 1; }
def Mp_MulOp : Mp_BinaryOp<"mul"> { let summary = "a * b"; let hasFolder = 1; }
def Mp_DivOp : Mp_BinaryOp<"div"> {
  let summary = "a / b (integer division truncates)";
  let hasFolder = 1;
}
def Mp_PowOp : Mp_BroadcastOp<"pow",
    "::mlir::cast<::mlir::ShapedType>(adaptor.getBase().getType()).getElementType()"> {
  let summary = "base ^ exponent; the result has the base's element type";
  let arguments = (ins Mp_NumericTensor:$base, Mp_NumericTensor:$exponent);
  let results = (outs Mp_NumericTensor:$output);
}
def Mp_ModOp : Mp_BroadcastOp<"mod"> {
  let summary = "remainder: sign of the divisor, or of the dividend with fmod";
  let arguments = (ins Mp_NumericTensor:$lhs, Mp_NumericTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$fmod);
  let results = (outs Mp_NumericTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}
def Mp_AndOp : Mp_BinaryOp<"and", Mp_BoolTensor> {
  let summary = "logical and";
  let hasFolder = 1;
}
def Mp_OrOp : Mp_BinaryOp<"or", Mp_BoolTensor> {
  let summary = "logical or";
  let hasFolder = 1;
}
def Mp_XorOp : Mp_BinaryOp<"xor", Mp_BoolTensor> {
  let summary = "logical exclusive or";
  let hasFolder = 1;
}
def Mp_BitShiftOp : Mp_BinaryOp<"bit_shift", Mp_IntTensor> {
  let summary = "x << y or x >> y (logical) per `direction` (LEFT or RIGHT)";
  let arguments = (ins Mp_IntTensor:$lhs, Mp_IntTensor:$rhs,
                   StrAttr:$direction);
  let hasVerifier = 1;
}
def Mp_PReluOp : Mp_BroadcastOp<"prelu"> {
  let summary = "x if x >= 0 else slope*x (slope broadcasts to x)";
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$slope);
  let results = (outs Mp_FloatTensor:$output);
  let hasVerifier = 1;
}
def Mp_BiasGeluOp : Mp_BroadcastOp<"ms.bias_gelu"> {
  let summary = "gelu(a + bias) (com.microsoft BiasGelu)";
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$bias);
  let results = (outs Mp_FloatTensor:$output);
}
def Mp_FastGeluOp : Mp_BroadcastOp<"ms.fast_gelu"> {
  let summary = "tanh-approximated gelu of x (+ bias) (com.microsoft FastGelu)";
  let arguments = (ins Mp_FloatTensor:$input, Optional<Mp_FloatTensor>:$bias);
  let results = (outs Mp_FloatTensor:$output);
}

def Mp_EqualOp : Mp_CompareOp<"equal"> { let summary = "a == b"; }
def Mp_GreaterOp : Mp_CompareOp<"greater"> { let summary = "a > b"; }
def Mp_GreaterOrEqualOp : Mp_CompareOp<"greater_or_equal"> { let summary = "a >= b"; }
def Mp_LessOp : Mp_CompareOp<"less"> { let summary = "a < b"; }
def Mp_LessOrEqualOp : Mp_CompareOp<"less_or_equal"> { let summary = "a <= b"; }

def Mp_MaxOp : Mp_VariadicOp<"max"> {
  let summary = "elementwise maximum";
  let hasFolder = 1;
}
def Mp_MinOp : Mp_VariadicOp<"min"> {
  let summary = "elementwise minimum";
  let hasFolder = 1;
}
def Mp_MeanOp : Mp_VariadicOp<"mean", Mp_FloatTensor> { let summary = "elementwise mean"; }
def Mp_SumOp : Mp_VariadicOp<"sum"> { let summary = "elementwise sum"; }

def Mp_WhereOp : Mp_BroadcastOp<"where",
    "::mlir::cast<::mlir::ShapedType>(adaptor.getX().getType()).getElementType()"> {
  let summary = "select x where condition else y";
  let arguments = (ins Mp_BoolTensor:$condition, Mp_Tensor:$x, Mp_Tensor:$y);
  let results = (outs Mp_Tensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // MP_DIALECT_MP_IR_MPELEMENTWISEOPS_TD
