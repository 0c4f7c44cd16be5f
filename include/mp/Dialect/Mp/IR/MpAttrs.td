//===- MpAttrs.td - mp dialect attributes ------------------*- tablegen -*-===//

#ifndef MP_DIALECT_MP_IR_MPATTRS_TD
#define MP_DIALECT_MP_IR_MPATTRS_TD

include "mp/Dialect/Mp/IR/MpBase.td"
include "mlir/IR/EnumAttr.td"

def Mp_PrecisionClass : I32EnumAttr<"PrecisionClass",
    "how an op takes part in mixed precision", [
      I32EnumAttrCase<"allow", 0>,  // always worth fp16 (contractions)
      I32EnumAttrCase<"infer", 1>,  // fp16 when its inputs are
      I32EnumAttrCase<"deny", 2>,   // fp32 (range or precision risk)
      I32EnumAttrCase<"clear", 3>   // type-agnostic data movement
    ]> {
  let cppNamespace = "::mp";
  let genSpecializedAttr = 0;
}

def Mp_PrecisionClassAttr : EnumAttr<Mp_Dialect, Mp_PrecisionClass, "class">;

def Mp_PrecisionAttr : AttrDef<Mp_Dialect, "Precision"> {
  let mnemonic = "precision";
  let summary = "the precision decision of one op";
  let description = [{
    `compute` is the element type the op computes and stores in (f16 or f32);
    `accumulate`, when present, is the wider type of its sums and statistics
    (MatMul/Conv accumulators, Softmax denominators, normalization
    statistics). `class` is the op's policy class and `rule` says which rule
    decided, e.g. "allow list", "propagated from deny node 'x'",
    "shape/index guard", "user override".

    ```mlir
    #mp.precision<compute = f16, accumulate = f32, cls = allow,
                  rule = "allow class of MatMul">
    ```
  }];
  let parameters = (ins "::mlir::Type":$compute,
                        OptionalParameter<"::mlir::Type">:$accumulate,
                        "::mp::PrecisionClass":$cls,
                        StringRefParameter<"the rule that decided">:$rule);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // MP_DIALECT_MP_IR_MPATTRS_TD
