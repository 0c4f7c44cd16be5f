//===- MpControlFlowOps.td - If and its terminator ---------*- tablegen -*-===//

#ifndef MP_DIALECT_MP_IR_MPCONTROLFLOWOPS_TD
#define MP_DIALECT_MP_IR_MPCONTROLFLOWOPS_TD

include "mp/Dialect/Mp/IR/MpBase.td"

def Mp_IfOp : Mp_Op<"if", [RecursiveMemoryEffects, NoRegionArguments,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "ONNX If: runs then_branch or else_branch on a boolean scalar";
  let description = [{
    Branches may use values defined above (ONNX outer-scope references).
    Each branch ends in `mp.yield`; its values must be compatible with the
    results (dims that differ between branches are dynamic).
  }];
  let arguments = (ins Mp_BoolTensor:$condition);
  let results = (outs Variadic<Mp_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$then_branch, SizedRegion<1>:$else_branch);
  let assemblyFormat = [{
    $condition `:` type($condition) (`->` type($outputs)^)? $then_branch `else` $else_branch attr-dict
  }];
  let hasVerifier = 1;
}

def Mp_YieldOp : Mp_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"IfOp">]> {
  let summary = "the values a branch of mp.if produces";
  let arguments = (ins Variadic<Mp_Tensor>:$operands);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

#endif // MP_DIALECT_MP_IR_MPCONTROLFLOWOPS_TD
