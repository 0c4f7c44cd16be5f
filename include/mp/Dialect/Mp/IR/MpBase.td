//===- MpBase.td - mp dialect base definitions -------------*- tablegen -*-===//
//
// The mp dialect holds one op per ONNX operator (ONNX granularity), on ranked
// tensors. Version-dependent ONNX semantics are normalized by the importer so
// that each op here has exactly one meaning.
//
//===----------------------------------------------------------------------===//

#ifndef MP_DIALECT_MP_IR_MPBASE_TD
#define MP_DIALECT_MP_IR_MPBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinTypes.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Mp_Dialect : Dialect {
  let name = "mp";
  let cppNamespace = "::mp";
  let summary = "ONNX-granularity tensor ops for mixed-precision compilation";
  let description = [{
    One op per ONNX operator (default domain and the com.microsoft contrib
    ops that exported transformer models use, under the `mp.ms.` prefix).
    Ops work on ranked tensors; ONNX `dim_param` dimensions are dynamic (`?`).
    The importer normalizes opset-dependent semantics (axes given as inputs
    or attributes, Softmax coercion before opset 13, ...) so that every op
    here has a single, version-independent meaning. ONNX node names are kept
    as `NameLoc` locations so diagnostics name nodes as the user knows them.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Mp_FloatType : AnyTypeOf<[F16, BF16, F32, F64]>;
def Mp_Tensor : RankedTensorOf<[AnyType]>;
def Mp_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Mp_IntTensor : RankedTensorOf<[AnyInteger]>;
def Mp_I64Tensor : RankedTensorOf<[I64]>;
def Mp_I32Tensor : RankedTensorOf<[I32]>;
def Mp_IndexTensor : RankedTensorOf<[I32, I64]>;
def Mp_BoolTensor : RankedTensorOf<[I1]>;
def Mp_NumericTensor : RankedTensorOf<[F16, BF16, F32, F64, AnyInteger]>;
def Mp_SignedNumericTensor
    : RankedTensorOf<[F16, BF16, F32, F64, AnySignlessInteger]>;

//===----------------------------------------------------------------------===//
// Base op classes
//===----------------------------------------------------------------------===//

class Mp_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mp_Dialect, mnemonic, traits>;

/// An op whose result types follow from its operands and attributes. The
/// inferred types may be more or less refined than the declared ones (a
/// folded shape operand makes a dynamic dim static): results only need to be
/// compatible, see `mp::isCompatibleReturnTypes`. `inferBody` is the C++
/// statement that fills `inferredReturnTypes`; when empty the op defines
/// `inferReturnTypes` itself in C++.
class Mp_InferOp<string mnemonic, list<Trait> traits = [], code inferBody = "">
    : Mp_Op<mnemonic, !listconcat(traits, [Pure,
          InferTypeOpAdaptorWithIsCompatible])> {
  code commonDefinition = [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::mp::isCompatibleReturnTypes(l, r);
    }
  }];
  let extraClassDefinition = !if(!empty(inferBody), commonDefinition,
      commonDefinition # [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      }] # inferBody # [{
    }
  }]);
}

/// Elementwise op with one operand and a result of the same type.
class Mp_UnaryOp<string mnemonic, Type operandType = Mp_FloatTensor,
                 list<Trait> traits = []>
    : Mp_InferOp<mnemonic, traits,
                 "return ::mp::inferSameAsOperand(adaptor.getOperands(), 0, "
                 "inferredReturnTypes);"> {
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

/// Elementwise op with numpy-style (multidirectional) broadcasting. The
/// result element type is the first operand's unless `resultElt` is given.
class Mp_BroadcastOp<string mnemonic, string resultElt = "",
                     list<Trait> traits = []>
    : Mp_InferOp<mnemonic, traits,
                 "return ::mp::inferBroadcast(location, adaptor.getOperands(), "
                 # !if(!empty(resultElt), "::mlir::Type()", resultElt)
                 # ", inferredReturnTypes);"> {
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}

class Mp_BinaryOp<string mnemonic, Type operandType = Mp_NumericTensor,
                  Type resultType = operandType, string resultElt = "",
                  list<Trait> traits = []>
    : Mp_BroadcastOp<mnemonic, resultElt,
                     !listconcat(traits, [SameOperandsElementType])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$output);
}

/// Comparison: broadcasting, boolean result.
class Mp_CompareOp<string mnemonic>
    : Mp_BinaryOp<mnemonic, Mp_Tensor, Mp_BoolTensor,
                  "::mlir::IntegerType::get(context, 1)"> {
  let hasFolder = 1;
}

/// Variadic elementwise op (Max, Min, Mean, Sum) with broadcasting.
class Mp_VariadicOp<string mnemonic, Type operandType = Mp_NumericTensor>
    : Mp_BroadcastOp<mnemonic, "", [SameOperandsAndResultElementType]> {
  let arguments = (ins Variadic<operandType>:$inputs);
  let results = (outs operandType:$output);
}

/// Reduction over `axes` (empty: all axes, unless `noop_with_empty_axes`).
class Mp_ReduceOp<string mnemonic, Type operandType = Mp_NumericTensor>
    : Mp_InferOp<mnemonic, [], "return ::mp::inferReduce(location, "
          "adaptor.getData(), adaptor.getAxes(), adaptor.getKeepdims(), "
          "adaptor.getNoopWithEmptyAxes(), inferredReturnTypes);"> {
  let arguments = (ins operandType:$data,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$noop_with_empty_axes);
  let results = (outs operandType:$output);
  let assemblyFormat =
      "$data attr-dict `:` type($data) `->` type($output)";
}

/// An op that defines `inferReturnTypes` in C++ (lib/Dialect/Mp/IR).
class Mp_CustomInferOp<string mnemonic, list<Trait> traits = []>
    : Mp_InferOp<mnemonic, traits>;

#endif // MP_DIALECT_MP_IR_MPBASE_TD
