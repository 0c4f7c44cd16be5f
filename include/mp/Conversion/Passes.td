//===- Passes.td - mp conversion passes --------------------*- tablegen -*-===//

#ifndef MP_CONVERSION_PASSES_TD
#define MP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MpToLinalg : Pass<"mp-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower mp ops on static shapes to linalg, tensor, arith and math";
  let description = [{
    Elementwise ops (with numpy broadcasting) become `linalg.generic`;
    MatMul/Gemm become contractions accumulating in f32 for f16 inputs;
    Softmax, Reduce* and LayerNorm/RMSNorm become reductions computed in f32;
    shape ops become tensor ops. Transcendental functions of f16 values are
    evaluated in f32 and rounded once. Ops with dynamic shapes or not yet
    lowered are reported by name and node (run `mp-specialize-shapes` first
    to pin dynamic dims).
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
  ];
}

#endif // MP_CONVERSION_PASSES_TD
