//===- MpShapeOps.td - constants, shapes and data movement -*- tablegen -*-===//

#ifndef MP_DIALECT_MP_IR_MPSHAPEOPS_TD
#define MP_DIALECT_MP_IR_MPSHAPEOPS_TD

include "mp/Dialect/Mp/IR/MpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Mp_ConstantOp : Mp_Op<"constant", [ConstantLike, Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a constant tensor (ONNX initializer or Constant node)";
  let description = [{
    Large initializers are held as `dense_resource` blobs that own the bytes
    read from the model (no copy into the context); small ones as `dense`.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Mp_ShapeOp : Mp_CustomInferOp<"shape"> {
  let summary = "the dims [start, end) of the input's shape, as i64";
  let arguments = (ins Mp_Tensor:$input,
                   DefaultValuedAttr<I64Attr, "0">:$start,
                   OptionalAttr<I64Attr>:$end);
  let results = (outs Mp_I64Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Mp_SizeOp : Mp_CustomInferOp<"size"> {
  let summary = "number of elements, as a rank-0 i64 tensor";
  let arguments = (ins Mp_Tensor:$input);
  let results = (outs Mp_I64Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Mp_ConstantOfShapeOp : Mp_CustomInferOp<"constant_of_shape"> {
  let summary = "a tensor of the given shape filled with `value`";
  let arguments = (ins Mp_I64Tensor:$shape, ElementsAttr:$value);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = "$shape attr-dict `:` type($shape) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Mp_RangeOp : Mp_CustomInferOp<"range", [SameOperandsAndResultElementType]> {
  let summary = "[start, limit) by delta (rank-0 operands)";
  let arguments = (ins Mp_NumericTensor:$start, Mp_NumericTensor:$limit,
                   Mp_NumericTensor:$delta);
  let results = (outs Mp_NumericTensor:$output);
  let assemblyFormat = [{
    $start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Mp_ReshapeOp : Mp_CustomInferOp<"reshape"> {
  let summary = "reshape; shape entries 0 copy the input dim unless allowzero, -1 is inferred";
  let arguments = (ins Mp_Tensor:$input, Mp_I64Tensor:$shape,
                   DefaultValuedAttr<BoolAttr, "false">:$allowzero);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $shape attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Mp_ExpandOp : Mp_CustomInferOp<"expand"> {
  let summary = "broadcast the input to `shape` (numpy rules)";
  let arguments = (ins Mp_Tensor:$input, Mp_I64Tensor:$shape);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $shape attr-dict `:` functional-type(operands, results)
  }];
}

def Mp_FlattenOp : Mp_CustomInferOp<"flatten"> {
  let summary = "reshape to 2-D: [prod(dims[:axis]), prod(dims[axis:])]";
  let arguments = (ins Mp_Tensor:$input, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Mp_SqueezeOp : Mp_CustomInferOp<"squeeze"> {
  let summary = "remove the size-1 dims listed in axes";
  let arguments = (ins Mp_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Mp_UnsqueezeOp : Mp_CustomInferOp<"unsqueeze"> {
  let summary = "insert size-1 dims at axes (of the output)";
  let arguments = (ins Mp_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Mp_TransposeOp : Mp_CustomInferOp<"transpose"> {
  let summary = "permute dims: output dim i is input dim perm[i]";
  let arguments = (ins Mp_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Mp_ConcatOp : Mp_CustomInferOp<"concat", [SameOperandsAndResultElementType]> {
  let summary = "join along axis";
  let arguments = (ins Variadic<Mp_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Mp_SplitOp : Mp_CustomInferOp<"split"> {
  let summary = "split along axis into pieces of the sizes in `split`";
  let description = [{
    `split` lists the size of every output; the importer resolves the ONNX
    forms (sizes as attribute before opset 13, as input after, equal split,
    `num_outputs` in opset 18 with a smaller last piece). A dynamic size is
    written -1.
  }];
  let arguments = (ins Mp_Tensor:$input, I64Attr:$axis,
                   DenseI64ArrayAttr:$split);
  let results = (outs Variadic<Mp_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($outputs)";
  let hasVerifier = 1;
}

def Mp_SliceOp : Mp_CustomInferOp<"slice", [AttrSizedOperandSegments]> {
  let summary = "ONNX Slice: starts/ends/axes/steps as 1-D integer tensors";
  let arguments = (ins Mp_Tensor:$input, Mp_IndexTensor:$starts,
                   Mp_IndexTensor:$ends, Optional<Mp_IndexTensor>:$axes,
                   Optional<Mp_IndexTensor>:$steps);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $starts `,` $ends (`axes` $axes^)? (`steps` $steps^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Mp_GatherOp : Mp_CustomInferOp<"gather"> {
  let summary = "take slices of data along axis at indices (negative wraps)";
  let arguments = (ins Mp_Tensor:$data, Mp_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Mp_GatherElementsOp : Mp_CustomInferOp<"gather_elements"> {
  let summary = "out[i][j][k] = data[index][j][k] (index from indices, along axis)";
  let arguments = (ins Mp_Tensor:$data, Mp_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Mp_GatherNDOp : Mp_CustomInferOp<"gather_nd"> {
  let summary = "gather slices addressed by the last axis of indices";
  let arguments = (ins Mp_Tensor:$data, Mp_I64Tensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Mp_ScatterNDOp : Mp_InferOp<"scatter_nd", [], "return ::mp::inferSameAsOperand("
    "adaptor.getOperands(), 0, inferredReturnTypes);"> {
  let summary = "copy of data with slices at indices replaced (or reduced) by updates";
  let arguments = (ins Mp_Tensor:$data, Mp_I64Tensor:$indices,
                   Mp_Tensor:$updates,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_TensorScatterOp : Mp_InferOp<"tensor_scatter", [],
    "return ::mp::inferSameAsOperand(adaptor.getOperands(), 0, "
    "inferredReturnTypes);"> {
  let summary = "write update into a cache at per-batch positions (ONNX TensorScatter-24)";
  let arguments = (ins Mp_Tensor:$past_cache, Mp_Tensor:$update,
                   Optional<Mp_I64Tensor>:$write_indices,
                   DefaultValuedAttr<I64Attr, "-2">:$axis,
                   DefaultValuedAttr<StrAttr, "\"linear\"">:$mode);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $past_cache `,` $update (`at` $write_indices^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the lowering writes only the update, one slice per batch
    /// (linear mode, static shapes, not along the batch axis, at most 64
    /// batches), so that the cache's buffer can be updated in place.
    bool writesSlices();
  }];
}

def Mp_PadOp : Mp_CustomInferOp<"pad", [AttrSizedOperandSegments]> {
  let summary = "pad with begin/end amounts per axis (constant, reflect, edge, wrap)";
  let arguments = (ins Mp_Tensor:$input, Mp_I64Tensor:$pads,
                   Optional<Mp_Tensor>:$constant_value,
                   Optional<Mp_IndexTensor>:$axes,
                   DefaultValuedAttr<StrAttr, "\"constant\"">:$mode);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $pads (`value` $constant_value^)? (`axes` $axes^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_TileOp : Mp_CustomInferOp<"tile"> {
  let summary = "repeat the input `repeats[i]` times along axis i";
  let arguments = (ins Mp_Tensor:$input, Mp_I64Tensor:$repeats);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $repeats attr-dict `:` functional-type(operands, results)
  }];
}

def Mp_NonZeroOp : Mp_CustomInferOp<"non_zero"> {
  let summary = "coordinates of the non-zero elements, one column each";
  let description = [{
    ONNX NonZero: a `[rank, n]` i64 tensor whose columns are the row-major
    coordinates of the `n` elements that are not zero (NaN counts as not
    zero, as in numpy). `n` depends on the values: the result's second dim
    is dynamic and is allocated at run time.
  }];
  let arguments = (ins Mp_Tensor:$input);
  let results = (outs Mp_I64Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Mp_OneHotOp : Mp_CustomInferOp<"one_hot"> {
  let summary = "one-hot encoding of indices along a new axis of size depth";
  let description = [{
    ONNX OneHot (9, 11): the result has the shape of `indices` with a new
    dim of size `depth` inserted at `axis` (in `[-r-1, r]`, `r` the rank of
    `indices`; negative counts from the end of the result). Its element at
    `d` along that axis is `values[1]` (on) where the index equals `d` and
    `values[0]` (off) elsewhere. Indices of any numeric type are truncated
    to integers; a negative one counts from `depth`, and one outside
    `[-depth, depth)` gives an all-off row. `depth` is a scalar or a
    1-element tensor of any numeric type (truncated): a constant gives a
    static size, a run-time value sizes the result at run time.
  }];
  let arguments = (ins Mp_NumericTensor:$indices, Mp_NumericTensor:$depth,
                   Mp_Tensor:$values,
                   DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $indices `,` $depth `,` $values attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mp_TriluOp : Mp_InferOp<"trilu", [],
    "return ::mp::inferSameAsOperand(adaptor.getOperands(), 0, "
    "inferredReturnTypes);"> {
  let summary = "keep the upper or lower triangle (diagonal offset k) of the last two dims";
  let arguments = (ins Mp_Tensor:$input, Optional<Mp_I64Tensor>:$k,
                   DefaultValuedAttr<BoolAttr, "true">:$upper);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $input (`k` $k^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Mp_ResizeOp : Mp_CustomInferOp<"resize", [AttrSizedOperandSegments]> {
  let summary = "ONNX Resize (nearest, linear, cubic) by scales or sizes";
  let arguments = (ins Mp_Tensor:$input, Optional<Mp_FloatTensor>:$roi,
                   Optional<Mp_FloatTensor>:$scales,
                   Optional<Mp_I64Tensor>:$sizes,
                   DefaultValuedAttr<I64Attr, "0">:$antialias,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
                   DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode,
                   DefaultValuedAttr<F32Attr, "-0.75">:$cubic_coeff_a,
                   DefaultValuedAttr<I64Attr, "0">:$exclude_outside,
                   DefaultValuedAttr<F32Attr, "0.0">:$extrapolation_value,
                   DefaultValuedAttr<StrAttr, "\"stretch\"">:$keep_aspect_ratio_policy,
                   DefaultValuedAttr<StrAttr, "\"nearest\"">:$mode,
                   DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $input (`roi` $roi^)? (`scales` $scales^)? (`sizes` $sizes^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ScatterElements
//===----------------------------------------------------------------------===//

def Mp_ScatterElementsOp : Mp_InferOp<"scatter_elements", [],
    "return ::mp::inferSameAsOperand(adaptor.getOperands(), 0, "
    "inferredReturnTypes);"> {
  let summary = "copy of data with data[.., indices[i..], ..] (along axis) "
                "replaced (or reduced) by updates[i..]";
  let description = [{
    ONNX ScatterElements: for every position `p` of `indices` (and of
    `updates`, which has its shape), the output at `p` with its `axis`
    coordinate replaced by `indices[p]` (negative counts from the end) is
    `updates[p]`, or its combination with what is there (`reduction` add,
    mul, max, min). Updates apply in row-major order, so with `none` the last
    write to a position wins. An index outside `[-d, d)` (`d` the data's
    size along `axis`) stops the run with a message naming the node.
  }];
  let arguments = (ins Mp_Tensor:$data, Mp_IndexTensor:$indices,
                   Mp_Tensor:$updates,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs Mp_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RandomNormal, RandomUniform (and their Like forms)
//===----------------------------------------------------------------------===//

/// A tensor of pseudo-random numbers: of the shape `shape`, or of the shape
/// of `like` (the ONNX *Like forms, whose input gives only its shape).
class Mp_RandomOp<string mnemonic, string distribution>
    : Mp_CustomInferOp<mnemonic> {
  let summary = "a tensor of " # distribution # " pseudo-random numbers";
  let description = [{
    Values come from a counter-based generator (splitmix64, see
    docs/ops.md): element `i` (row-major) is a function of `seed` and `i`
    only, so the result is the same on every run, for static and dynamic
    shapes, and an element does not depend on the tensor's shape. No
    `seed` is seed 0.0. The numbers differ from onnxruntime's: ONNX does
    not define the generator.
  }];
  let results = (outs Mp_FloatTensor:$output);
  let assemblyFormat = [{
    ($like^ `:` type($like))? attr-dict `->` type($output)
  }];
  let hasVerifier = 1;
}

def Mp_RandomNormalOp : Mp_RandomOp<"random_normal", "normally distributed"> {
  let arguments = (ins Optional<Mp_Tensor>:$like,
                   OptionalAttr<DenseI64ArrayAttr>:$shape, TypeAttr:$dtype,
                   DefaultValuedAttr<F32Attr, "0.0">:$mean,
                   DefaultValuedAttr<F32Attr, "1.0">:$scale,
                   OptionalAttr<F32Attr>:$seed);
}

def Mp_RandomUniformOp : Mp_RandomOp<"random_uniform",
                                     "uniformly distributed ([low, high))"> {
  let arguments = (ins Optional<Mp_Tensor>:$like,
                   OptionalAttr<DenseI64ArrayAttr>:$shape, TypeAttr:$dtype,
                   DefaultValuedAttr<F32Attr, "0.0">:$low,
                   DefaultValuedAttr<F32Attr, "1.0">:$high,
                   OptionalAttr<F32Attr>:$seed);
}

#endif // MP_DIALECT_MP_IR_MPSHAPEOPS_TD
