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

def AssignPrecision : Pass<"mp-assign-precision", "mlir::ModuleOp"> {
  let summary = "Decide fp16 or fp32 for every float op from a precision policy";
  let description = [{
    Classifies every float op (allow / infer / deny / clear, from the policy
    file or the built-in default in docs/precision.md), applies the safety
    rules (shape/index guard, constants out of fp16 range, mask sentinels)
    and propagates as TensorFlow's auto-mixed-precision does. Each op gets a
    `mp.precision = #mp.precision<compute, acc = ..., class, "rule">`
    attribute; types do not change until `mp-insert-casts`. With `plan=`,
    writes every decision and the totals as JSON (itself a valid policy);
    with `report=1`, prints a summary table on stderr.
  }];
  let options = [
    Option<"policyFile", "policy", "std::string", /*default=*/"\"\"",
           "JSON precision policy (default: the built-in policy)">,
    Option<"planFile", "plan", "std::string", /*default=*/"\"\"",
           "Write the precision plan (JSON) to this file">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the precision summary table on stderr">,
    Option<"keepIoTypes", "keep-io-types", "int", /*default=*/"-1",
           "Keep graph inputs/outputs in their types (1/0; -1: from the "
           "policy, else 1)">,
  ];
  let dependentDialects = ["::mp::MpDialect"];
}

def InsertCasts : Pass<"mp-insert-casts", "mlir::ModuleOp"> {
  let summary = "Materialize precision decisions as f16 types and mp.cast ops";
  let description = [{
    Rewrites every op decided by `mp-assign-precision` to its compute type:
    one `mp.cast` per (value, type) shared by all users, constants converted
    at compile time (weights stored as f16; mask sentinels rewritten),
    ONNX casts retargeted when all their users run in f16, and graph
    inputs/outputs kept in their types with keep-io-types.
  }];
  let options = [
    Option<"keepIoTypes", "keep-io-types", "int", /*default=*/"-1",
           "Keep graph inputs/outputs in their types (1/0; -1: as "
           "mp-assign-precision decided, else 1)">,
  ];
  let dependentDialects = ["::mp::MpDialect"];
}

def PrecisionReport : Pass<"mp-precision-report", "mlir::ModuleOp"> {
  let summary = "Print the precision decisions as a table on stderr";
  let description = [{
    Per op type: class, nodes, how many compute in f16 and f32; then nodes
    in f16, runtime casts, the fp16 share of matmul/conv FLOPs and weight
    bytes before and after. Reads the `mp.precision` attributes.
  }];
}

def SpecializeShapes : Pass<"mp-specialize-shapes", "mlir::ModuleOp"> {
  let summary = "Pin dynamic graph-input dims and re-infer every shape";
  let description = [{
    `shapes=NAME=1x16x80,OTHER=2x4` gives graph inputs (by ONNX name) static
    shapes; every op's result type is then inferred again and shape
    computations fold, so that the whole function becomes static.
  }];
  let dependentDialects = ["::mp::MpDialect"];
  let options = [
    ListOption<"shapes", "shapes", "std::string",
               "NAME=DxDxD pins of graph inputs, by ONNX input name">,
  ];
}

def OutlineKernels : Pass<"mp-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Move each top-level linalg op into its own noinline function";
  let description = [{
    Every linalg op directly in a function body (on tensors, before
    bufferization) becomes a call to a private function
    `<function>_kernel_<N>` holding that op, the `tensor.empty` it writes
    into and a `linalg.fill` that only it uses; small scalar constants it
    captures are cloned, tensors are passed. The kernels are marked
    `noinline` (`passthrough`, kept by func-to-llvm), so LLVM optimizes many small loop nests instead of one
    function with thousands of loops (whose loop passes grow much faster
    than linearly), and the CPU code has the structure the GPU backend
    needs: one kernel per linalg op.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // MP_TRANSFORMS_PASSES_TD
