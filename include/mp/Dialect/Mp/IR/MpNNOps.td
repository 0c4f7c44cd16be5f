//===- MpNNOps.td - contractions, convolutions, pooling, RNN -*- tablegen -*-===//

#ifndef MP_DIALECT_MP_IR_MPNNOPS_TD
#define MP_DIALECT_MP_IR_MPNNOPS_TD

include "mp/Dialect/Mp/IR/MpBase.td"

def Mp_MatMulOp : Mp_CustomInferOp<"matmul", [SameOperandsAndResultElementType]> {
  let summary = "numpy matmul: batch dims broadcast, 1-D operands promoted";
  let arguments = (ins Mp_NumericTensor:$lhs, Mp_NumericTensor:$rhs);
  let results = (outs Mp_NumericTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Mp_GemmOp : Mp_CustomInferOp<"gemm"> {
  let summary = "alpha * op(A) * op(B) + beta * C (C broadcasts to [M, N])";
  let arguments = (ins Mp_NumericTensor:$a, Mp_NumericTensor:$b,
                   Optional<Mp_NumericTensor>:$c,
                   DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Mp_NumericTensor:$output);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_EinsumOp : Mp_CustomInferOp<"einsum", [SameOperandsAndResultElementType]> {
  let summary = "Einstein summation (explicit or implicit output, `...` allowed)";
  let arguments = (ins Variadic<Mp_NumericTensor>:$inputs, StrAttr:$equation);
  let results = (outs Mp_NumericTensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Mp_ConvOp : Mp_CustomInferOp<"conv"> {
  let summary = "N-D convolution, NCHW layout, weights [M, C/group, k...]";
  let description = [{
    `pads` holds begin pads for every spatial axis then end pads, already
    resolved from `auto_pad` when the input shape is static; `auto_pad` is
    kept ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER") for dynamic shapes.
  }];
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$weight,
                   Optional<Mp_FloatTensor>:$bias,
                   DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$strides);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_ConvTransposeOp : Mp_CustomInferOp<"conv_transpose"> {
  let summary = "N-D transposed convolution, weights [C, M/group, k...]";
  let description = [{
    Output size per spatial axis: stride*(in-1) + output_padding +
    ((k-1)*dilation+1) - pad_begin - pad_end. An explicit ONNX `output_shape`
    is resolved into `pads` by the importer.
  }];
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$weight,
                   Optional<Mp_FloatTensor>:$bias,
                   DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group,
                   DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$output_padding, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$strides);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Mp_PoolOp<string mnemonic, Type dataType = Mp_FloatTensor>
    : Mp_CustomInferOp<mnemonic> {
  let arguments = (ins dataType:$input,
                   DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
                   DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$strides,
                   DefaultValuedAttr<I64Attr, "0">:$storage_order);
  let hasVerifier = 1;
}

def Mp_AveragePoolOp : Mp_PoolOp<"average_pool"> {
  let summary = "average pooling (count_include_pad decides the divisor)";
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Mp_MaxPoolOp : Mp_PoolOp<"max_pool", Mp_NumericTensor> {
  let summary = "max pooling; `indices` are flat offsets (storage_order)";
  let results = (outs Mp_NumericTensor:$output, Mp_I64Tensor:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Mp_GlobalAveragePoolOp : Mp_CustomInferOp<"global_average_pool"> {
  let summary = "mean over all spatial axes; spatial dims become 1";
  let arguments = (ins Mp_FloatTensor:$input);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Mp_LSTMOp : Mp_CustomInferOp<"lstm", [AttrSizedOperandSegments]> {
  let summary = "ONNX LSTM (gates i, o, f, c; layout 0 or 1)";
  let arguments = (ins Mp_FloatTensor:$x, Mp_FloatTensor:$w, Mp_FloatTensor:$r,
                   Optional<Mp_FloatTensor>:$b,
                   Optional<Mp_IndexTensor>:$sequence_lens,
                   Optional<Mp_FloatTensor>:$initial_h,
                   Optional<Mp_FloatTensor>:$initial_c,
                   Optional<Mp_FloatTensor>:$p,
                   DefaultValuedAttr<StrArrayAttr, "{}">:$activations,
                   DefaultValuedAttr<F32ArrayAttr, "{}">:$activation_alpha,
                   DefaultValuedAttr<F32ArrayAttr, "{}">:$activation_beta,
                   OptionalAttr<F32Attr>:$clip,
                   DefaultValuedAttr<StrAttr, "\"forward\"">:$direction,
                   I64Attr:$hidden_size,
                   DefaultValuedAttr<BoolAttr, "false">:$input_forget,
                   DefaultValuedAttr<I64Attr, "0">:$layout);
  let results = (outs Mp_FloatTensor:$y, Mp_FloatTensor:$y_h,
                 Mp_FloatTensor:$y_c);
  let assemblyFormat = [{
    $x `,` $w `,` $r (`bias` $b^)? (`sequence_lens` $sequence_lens^)?
    (`initial_h` $initial_h^)? (`initial_c` $initial_c^)? (`peepholes` $p^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_GRUOp : Mp_CustomInferOp<"gru", [AttrSizedOperandSegments]> {
  let summary = "ONNX GRU (gates z, r, h; layout 0 or 1)";
  let description = [{
    `linear_before_reset` applies the reset gate after the recurrent
    projection: r * (H·Rhᵀ + Rbh) instead of (r * H)·Rhᵀ + Rbh.
  }];
  let arguments = (ins Mp_FloatTensor:$x, Mp_FloatTensor:$w, Mp_FloatTensor:$r,
                   Optional<Mp_FloatTensor>:$b,
                   Optional<Mp_IndexTensor>:$sequence_lens,
                   Optional<Mp_FloatTensor>:$initial_h,
                   DefaultValuedAttr<StrArrayAttr, "{}">:$activations,
                   DefaultValuedAttr<F32ArrayAttr, "{}">:$activation_alpha,
                   DefaultValuedAttr<F32ArrayAttr, "{}">:$activation_beta,
                   OptionalAttr<F32Attr>:$clip,
                   DefaultValuedAttr<StrAttr, "\"forward\"">:$direction,
                   I64Attr:$hidden_size,
                   DefaultValuedAttr<I64Attr, "0">:$layout,
                   DefaultValuedAttr<BoolAttr, "false">:$linear_before_reset);
  let results = (outs Mp_FloatTensor:$y, Mp_FloatTensor:$y_h);
  let assemblyFormat = [{
    $x `,` $w `,` $r (`bias` $b^)? (`sequence_lens` $sequence_lens^)?
    (`initial_h` $initial_h^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_RNNOp : Mp_CustomInferOp<"rnn", [AttrSizedOperandSegments]> {
  let summary = "ONNX RNN (one gate: H = f(X·Wᵀ + H·Rᵀ + Wb + Rb); layout 0 or 1)";
  let arguments = (ins Mp_FloatTensor:$x, Mp_FloatTensor:$w, Mp_FloatTensor:$r,
                   Optional<Mp_FloatTensor>:$b,
                   Optional<Mp_IndexTensor>:$sequence_lens,
                   Optional<Mp_FloatTensor>:$initial_h,
                   DefaultValuedAttr<StrArrayAttr, "{}">:$activations,
                   DefaultValuedAttr<F32ArrayAttr, "{}">:$activation_alpha,
                   DefaultValuedAttr<F32ArrayAttr, "{}">:$activation_beta,
                   OptionalAttr<F32Attr>:$clip,
                   DefaultValuedAttr<StrAttr, "\"forward\"">:$direction,
                   I64Attr:$hidden_size,
                   DefaultValuedAttr<I64Attr, "0">:$layout);
  let results = (outs Mp_FloatTensor:$y, Mp_FloatTensor:$y_h);
  let assemblyFormat = [{
    $x `,` $w `,` $r (`bias` $b^)? (`sequence_lens` $sequence_lens^)?
    (`initial_h` $initial_h^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // MP_DIALECT_MP_IR_MPNNOPS_TD
