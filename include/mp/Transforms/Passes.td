//===- Passes.td - mp transformation passes ----------------*- tablegen -*-===//

#ifndef MP_TRANSFORMS_PASSES_TD
#define MP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ModelSummary : Pass<"mp-model-summary", "mlir::ModuleOp"> {
  let summary = "Print what the compiler sees of an imported model";
  let description = [{
    Prints, for every function: its inputs and outputs (ONNX names, element
    types, shapes with dynamic dims named by their ONNX `dim_param`), an op
    histogram, the number of parameters and weight bytes per element type.
    The IR is left unchanged.
  }];
  let options = [
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the summary ('-' for stdout)">,
  ];
  let dependentDialects = ["::mp::MpDialect"];
}

#endif // MP_TRANSFORMS_PASSES_TD
