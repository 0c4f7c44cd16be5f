//===- MpReductionOps.td - reductions and normalizations ---*- tablegen -*-===//

#ifndef MP_DIALECT_MP_IR_MPREDUCTIONOPS_TD
#define MP_DIALECT_MP_IR_MPREDUCTIONOPS_TD

include "mp/Dialect/Mp/IR/MpBase.td"

def Mp_ReduceL2Op : Mp_ReduceOp<"reduce_l2", Mp_FloatTensor> {
  let summary = "sqrt(sum(x^2)) over axes";
}
def Mp_ReduceL1Op : Mp_ReduceOp<"reduce_l1"> {
  let summary = "sum(|x|) over axes";
}
def Mp_ReduceLogSumOp : Mp_ReduceOp<"reduce_log_sum", Mp_FloatTensor> {
  let summary = "log(sum(x)) over axes";
}
def Mp_ReduceLogSumExpOp : Mp_ReduceOp<"reduce_log_sum_exp", Mp_FloatTensor> {
  let summary = "log(sum(exp(x))) over axes (computed as max + log(sum(exp(x - max))))";
}
def Mp_ReduceMaxOp : Mp_ReduceOp<"reduce_max"> { let summary = "max over axes"; }
def Mp_ReduceMeanOp : Mp_ReduceOp<"reduce_mean"> { let summary = "mean over axes"; }
def Mp_ReduceMinOp : Mp_ReduceOp<"reduce_min"> { let summary = "min over axes"; }
def Mp_ReduceProdOp : Mp_ReduceOp<"reduce_prod"> { let summary = "product over axes"; }
def Mp_ReduceSumOp : Mp_ReduceOp<"reduce_sum"> { let summary = "sum over axes"; }
def Mp_ReduceSumSquareOp : Mp_ReduceOp<"reduce_sum_square"> {
  let summary = "sum(x^2) over axes";
}

class Mp_ArgOp<string mnemonic, string what> : Mp_CustomInferOp<mnemonic> {
  let summary = "index of the " # what # " along axis (first, or last if select_last_index)";
  let arguments = (ins Mp_NumericTensor:$data,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs Mp_I64Tensor:$output);
  let assemblyFormat = "$data attr-dict `:` type($data) `->` type($output)";
}
def Mp_ArgMaxOp : Mp_ArgOp<"arg_max", "maximum">;
def Mp_ArgMinOp : Mp_ArgOp<"arg_min", "minimum">;

def Mp_TopKOp : Mp_CustomInferOp<"top_k"> {
  let summary = "the k largest (or smallest) elements along axis, and their indices";
  let description = [{
    ONNX TopK (1, 10, 11): `values` are the `k` largest elements of each
    row along `axis` (smallest with `largest = false`), in sorted order;
    `indices` are their positions along `axis`. Equal values keep the lower
    index first and NaN counts as larger than any number (onnxruntime's
    order). `sorted = false` allows any order; the lowering produces the
    sorted one anyway. `k` is a 1-element i64 tensor: a constant gives a
    static size along `axis` (and must lie in `[0, d]`, `d` the input's
    size there); a value known only at run time sizes the results at run
    time, and one outside `[0, d]` stops the run with a message naming the
    node.
  }];
  let arguments = (ins Mp_NumericTensor:$input, Mp_I64Tensor:$k,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$largest,
                   DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Mp_NumericTensor:$values, Mp_I64Tensor:$indices);
  let assemblyFormat = [{
    $input `,` $k attr-dict `:` functional-type(operands, results)
  }];
}

def Mp_CumSumOp : Mp_InferOp<"cumsum", [], "return ::mp::inferSameAsOperand("
    "adaptor.getOperands(), 0, inferredReturnTypes);"> {
  let summary = "cumulative sum along axis";
  let arguments = (ins Mp_NumericTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Mp_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

class Mp_SoftmaxBase<string mnemonic> : Mp_InferOp<mnemonic,
    [], "return ::mp::inferSameAsOperand("
    "adaptor.getOperands(), 0, inferredReturnTypes);"> {
  let description = [{
    Normalizes over `axes`, a contiguous, increasing list of axes. Opset 13+
    Softmax(axis=a) imports as `axes = [a]`; before opset 13 the input was
    coerced to 2-D at `axis`, which is `axes = [axis .. rank-1]`.
  }];
  let arguments = (ins Mp_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}
def Mp_SoftmaxOp : Mp_SoftmaxBase<"softmax"> { let summary = "softmax over axes"; }
def Mp_LogSoftmaxOp : Mp_SoftmaxBase<"log_softmax"> {
  let summary = "log of softmax over axes";
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

def Mp_BatchNormOp : Mp_InferOp<"batch_norm", [], "return ::mp::inferSameAsOperand("
    "adaptor.getOperands(), 0, inferredReturnTypes);"> {
  let summary = "inference-mode batch normalization over axis 1";
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$scale,
                   Mp_FloatTensor:$bias, Mp_FloatTensor:$mean,
                   Mp_FloatTensor:$variance,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_InstanceNormOp : Mp_InferOp<"instance_norm", [], "return ::mp::inferSameAsOperand("
    "adaptor.getOperands(), 0, inferredReturnTypes);"> {
  let summary = "normalization over spatial axes per (batch, channel)";
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$scale,
                   Mp_FloatTensor:$bias,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_GroupNormOp : Mp_InferOp<"group_norm", [], "return ::mp::inferSameAsOperand("
    "adaptor.getOperands(), 0, inferredReturnTypes);"> {
  let summary = "normalization over channel groups";
  let description = [{
    `scale`/`bias` have one entry per channel (ONNX GroupNormalization-21) or,
    with `per_group_affine`, one per group (the deprecated opset-18 form).
    Statistics are computed in `stash_type` precision (f32 by default).
  }];
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$scale,
                   Mp_FloatTensor:$bias, I64Attr:$num_groups,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                   DefaultValuedAttr<BoolAttr, "false">:$per_group_affine);
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_LayerNormOp : Mp_CustomInferOp<"layer_norm", []> {
  let summary = "layer normalization over axes [axis, rank)";
  let description = [{
    ONNX LayerNormalization-17 (also com.microsoft LayerNormalization).
    `mean` and `inv_std_dev` keep the normalized axes as size 1 and have the
    `stash_type` element type (f32 unless the model says otherwise).
  }];
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$scale,
                   Optional<Mp_FloatTensor>:$bias,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                   TypeAttr:$stash_type);
  let results = (outs Mp_FloatTensor:$output, Mp_FloatTensor:$mean,
                 Mp_FloatTensor:$inv_std_dev);
  let assemblyFormat = [{
    $input `,` $scale (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_RMSNormOp : Mp_CustomInferOp<"rms_norm"> {
  let summary = "root-mean-square normalization over axes [axis, rank)";
  let description = [{
    ONNX RMSNormalization-23, and SimplifiedLayerNormalization (com.microsoft
    and default domain). `inv_std_dev` is 1/sqrt(mean(x^2) + epsilon) with the
    normalized axes kept as size 1, in `stash_type`.
  }];
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$scale,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                   TypeAttr:$stash_type);
  let results = (outs Mp_FloatTensor:$output, Mp_FloatTensor:$inv_std_dev);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_SkipLayerNormOp : Mp_CustomInferOp<"ms.skip_layer_norm",
    [AttrSizedOperandSegments]> {
  let summary = "layer_norm(input + skip + bias) (com.microsoft SkipLayerNormalization)";
  let description = [{
    With `simplified`, the RMS form (SkipSimplifiedLayerNormalization; no
    beta). Results: the normalized output, mean and inverse standard
    deviation (f32, last axis kept as 1) and the pre-normalization sum
    `input + skip + bias`.
  }];
  let arguments = (ins Mp_FloatTensor:$input, Mp_FloatTensor:$skip,
                   Mp_FloatTensor:$gamma, Optional<Mp_FloatTensor>:$beta,
                   Optional<Mp_FloatTensor>:$bias,
                   DefaultValuedAttr<F32Attr, "1e-12">:$epsilon,
                   DefaultValuedAttr<BoolAttr, "false">:$simplified);
  let results = (outs Mp_FloatTensor:$output, Mp_FloatTensor:$mean,
                 Mp_FloatTensor:$inv_std_dev, Mp_FloatTensor:$input_skip_bias_sum);
  let assemblyFormat = [{
    $input `,` $skip `,` $gamma (`beta` $beta^)? (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_EmbedLayerNormOp : Mp_CustomInferOp<"ms.embed_layer_norm",
    [AttrSizedOperandSegments]> {
  let summary = "embedding lookups + layer norm (com.microsoft EmbedLayerNormalization)";
  let description = [{
    output = layer_norm(word[input_ids] + position[position_ids or 0..S-1]
    (+ segment[segment_ids])). `mask_index` is the per-batch count of
    nonzero mask entries (int32) or zeros without a mask.
  }];
  let arguments = (ins Mp_IndexTensor:$input_ids,
                   Optional<Mp_IndexTensor>:$segment_ids,
                   Mp_FloatTensor:$word_embedding,
                   Mp_FloatTensor:$position_embedding,
                   Optional<Mp_FloatTensor>:$segment_embedding,
                   Mp_FloatTensor:$gamma, Mp_FloatTensor:$beta,
                   Optional<Mp_IndexTensor>:$mask,
                   Optional<Mp_IndexTensor>:$position_ids,
                   DefaultValuedAttr<F32Attr, "1e-12">:$epsilon,
                   DefaultValuedAttr<BoolAttr, "false">:$mask_index_type_sum);
  let results = (outs Mp_FloatTensor:$output, Mp_I32Tensor:$mask_index,
                 Mp_FloatTensor:$embedding_sum);
  let assemblyFormat = [{
    $input_ids (`segment_ids` $segment_ids^)? `word` $word_embedding
    `position` $position_embedding (`segment` $segment_embedding^)?
    `gamma` $gamma `beta` $beta (`mask` $mask^)? (`position_ids` $position_ids^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // MP_DIALECT_MP_IR_MPREDUCTIONOPS_TD
