//===- Passes.td - mp graph passes -------------------------*- tablegen -*-===//

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
    with `report=1`, prints a summary table on stderr. `keep-io-types=1`
    keeps graph inputs and outputs in their types, `0` lets them become f16,
    `policy` (the default) takes the policy's `keep_io_types` (else 1).
    With `ranges=FILE` (from `mp-run --calibrate`), nodes whose measured
    values exceed fp16's range with a margin, or mostly fall below its
    normal range, keep fp32 together with their readers; without it, static
    magnitude bounds do the same where they prove an overflow is possible.
    The plan records the rule and the figure. `index-guard=exact` makes the
    shape/index guard keep every op a shape, index or count depends on;
    `arithmetic` (the policy's default) stops it at contractions, whose
    outputs are learned values.
  }];
  let options = [
    Option<"policyFile", "policy", "std::string", /*default=*/"\"\"",
           "JSON precision policy (default: the built-in policy)">,
    Option<"planFile", "plan", "std::string", /*default=*/"\"\"",
           "Write the precision plan (JSON) to this file">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the precision summary table on stderr">,
    Option<"keepIoTypes", "keep-io-types", "::mp::KeepIoTypes",
           /*default=*/"::mp::KeepIoTypes::Policy",
           "Keep graph inputs/outputs in their types",
           [{::llvm::cl::values(
             clEnumValN(::mp::KeepIoTypes::Policy, "policy",
                        "as the policy says (default: keep)"),
             clEnumValN(::mp::KeepIoTypes::Yes, "1", "keep their types"),
             clEnumValN(::mp::KeepIoTypes::No, "0",
                        "let them become f16 where all users are"))}]>,
    Option<"rangesFile", "ranges", "std::string", /*default=*/"\"\"",
           "Value ranges measured on calibration data (mp-run --calibrate "
           "DIR --ranges-out FILE): nodes whose values overflow fp16 or "
           "mostly fall below its normal range keep fp32">,
    Option<"overflowMargin", "overflow-margin", "double", /*default=*/"4.0",
           "With ranges: a measured |x| above 65504 / margin keeps fp32">,
    Option<"staticBounds", "static-bounds", "bool", /*default=*/"true",
           "Without ranges: keep in fp32 what magnitude bounds derived from "
           "weights, normalizations and bounded activations show can "
           "overflow fp16">,
    Option<"indexGuard", "index-guard", "::mp::IndexGuardChoice",
           /*default=*/"::mp::IndexGuardChoice::Policy",
           "How far back the shape/index guard keeps ops in their types",
           [{::llvm::cl::values(
             clEnumValN(::mp::IndexGuardChoice::Policy, "policy",
                        "as the policy's index_guard says (default: "
                        "arithmetic)"),
             clEnumValN(::mp::IndexGuardChoice::Arithmetic, "arithmetic",
                        "the index arithmetic, up to the contractions whose "
                        "outputs it reads"),
             clEnumValN(::mp::IndexGuardChoice::Exact, "exact",
                        "everything the index depends on, contractions "
                        "included"))}]>,
  ];
  let dependentDialects = ["::mp::MpDialect"];
}

def ExposeValues : Pass<"mp-expose-values", "mlir::ModuleOp"> {
  let summary = "Return every node's float outputs from the entry function";
  let description = [{
    Appends to the entry function's results every float tensor result of
    its top-level precision nodes (ops in nested regions cannot be
    returned), in program order, each named `exposedValueName(KEY, i)`
    ("i:KEY", KEY as plans name the node). Run before
    `mp-assign-precision`, it lets a run observe what every node computes
    in either precision: `mp-run --calibrate` measures value ranges on the
    fp32 build, `mp-run --precision-diff` compares the two builds node by
    node. Under mixed precision with `keep-io-types`, an exposed fp16 value
    comes back widened to fp32, exactly.
  }];
  let dependentDialects = ["::mp::MpDialect", "::mlir::func::FuncDialect"];
}

def ShadowFp16 : Pass<"mp-shadow-fp16", "mlir::ModuleOp"> {
  let summary = "Compute every fp16 node twice: in fp32, and in fp16 from fp32 inputs";
  let description = [{
    Runs between `mp-assign-precision` and `mp-insert-casts`. Every
    top-level node of the entry function decided f16 is cloned right after
    itself: the original then computes in f32 (so the whole graph computes
    in fp32), the clone in f16 from the same fp32 inputs. The originals'
    float outputs are returned as `I:KEY` (as `mp-expose-values` names
    them), the clones' as `I:f16:KEY`. One run thus gives each node's own
    fp16 error, with no error inherited from its inputs: the sensitivity
    `mp-tune` orders its candidates by. Nodes with regions are not cloned.
  }];
  let dependentDialects = ["::mp::MpDialect", "::mlir::func::FuncDialect"];
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
    Option<"keepIoTypes", "keep-io-types", "::mp::KeepIoTypes",
           /*default=*/"::mp::KeepIoTypes::Policy",
           "Keep graph inputs/outputs in their types",
           [{::llvm::cl::values(
             clEnumValN(::mp::KeepIoTypes::Policy, "policy",
                        "as mp-assign-precision decided (else keep)"),
             clEnumValN(::mp::KeepIoTypes::Yes, "1", "keep their types"),
             clEnumValN(::mp::KeepIoTypes::No, "0",
                        "let them become f16 where all users are"))}]>,
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

def FuseAttention : Pass<"mp-fuse-attention", "mlir::ModuleOp"> {
  let summary = "Replace decomposed attention subgraphs with mp.attention";
  let description = [{
    Matches scaled dot-product attention as exporters write it, on 4-D
    [B, H, S, D] tensors:
    `MatMul(Q, Transpose(K, [0, 1, 3, 2]))` (or a K already laid out as
    [B, H, D, T]), an optional scale by `Mul` or `Div` with a scalar
    constant, an optional mask (`Add` of a float mask, or `Where(cond,
    scores, -inf)`), `Softmax` on the last axis, and `MatMul` with V. K/V
    with fewer heads than Q (a divisor) become grouped-query attention;
    K/V repeated with Tile (query head h reads KV head h % Hkv) too, with
    the query heads (and a per-head mask) regrouped around the fused op.
    A soft cap `c * tanh(scores / c)` between the scale and the mask
    (Gemma's export) becomes `softcap = c`.
    Each match becomes one `mp.attention` with that scale and mask. A mask
    that is a compile-time causal triangle (a bool tril or a -inf triangle,
    as a constant, sliced from a larger one or built with Trilu) becomes
    `is_causal` instead, so kernels skip the masked keys.

    The forms torch.onnx writes for transformers decoders match too: the
    SDPA export's `Where(IsNaN(P), 0, P)` guard before P.V (moved to the
    fused output), the scale applied to Q and to K^T separately, K^T written
    as Reshape/Transpose chains (dynamo), K/V repeated by Expand and Reshape
    (`repeat_kv`), fp16 scores widened to f32 around the Softmax, bool or
    additive masks built from `attention_mask` and a causal triangle,
    masked_fill with a finite fill at or below -1e30 (torch.finfo.min, as
    Bark writes it; it becomes an additive mask, exact since such a fill
    absorbs any score), and past K/V joined by Concat, which become the
    op's past and present. BART-family attention with the heads merged into
    the batch (SpeechT5: [B*H, S, D] Q/K/V, the scores viewed as
    [B, H, S, T] only to add the mask) is first lifted to the 4-D form when
    the shapes prove every reshape merges or splits the first two dims.

    onnxruntime's com.microsoft MultiHeadAttention and Attention (models
    from its transformer optimizer and onnxruntime-genai) become
    `mp.attention` where it holds them: 3-D Q/K/V, an additive
    attention_bias, a 2-D key padding mask (mask_filter_value added where it
    is <= 0), `unidirectional` as is_causal; Attention's packed projection
    becomes MatMul, Add and Slices and its [2, B, N, P, H] past is split and
    stacked again. Packed QKV, key ranges, 3-D masks and GroupQueryAttention
    keep their own lowering and are reported as kept.

    Graphs that look like attention but differ are left alone and reported
    as near misses with the reason: softmax on another axis, a scale that
    is not a scalar constant, a scale applied after the mask, a mask filled
    with a finite value, an intermediate result with another consumer.
    With `report=FILE` the fused sites (with the ONNX node names they
    replace and the patterns they were written with), the near misses and
    the kept com.microsoft ops are written as JSON, and a summary goes to
    stderr.
  }];
  let options = [
    Option<"reportFile", "report", "std::string", /*default=*/"\"\"",
           "Write fused sites and near misses as JSON here">,
  ];
  let dependentDialects = ["::mp::MpDialect"];
}

def BuildTrainingStep : Pass<"mp-build-training-step", "mlir::ModuleOp"> {
  let summary = "Turn a forward graph with a scalar loss into a training step";
  let description = [{
    Differentiates the output named `loss` (one element) with respect to the
    trained weights and appends the optimizer. The trained weights are the
    float initializers (rank >= 1) the loss depends on, or those listed in
    `weights`; they become fp32 function arguments (the master weights; an
    fp16 initializer is cast to fp16 where the forward used it).

    The step's signature: the model's inputs, then each weight `W`, then
    the optimizer state (`W.momentum` for SGD; `W.exp_avg`, `W.exp_avg_sq`
    and the shared `adamw.step` for AdamW). Results: `loss`, then
    `NAME.next` for every weight and state input, then `W.grad` for each
    weight with `gradients=1` (always with `optimizer=none`). Other model
    outputs are dropped.

    The backward pass is built from mp ops (see Gradients.h), so the
    precision passes assign it fp16 or fp32 like the forward graph. An op on
    the path from a weight to the loss without a gradient rule is an error
    naming the ONNX node.
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"\"",
           "Name of the scalar loss output">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, adamw, or none (the step returns gradients)">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (L2 for SGD, decoupled for AdamW)">,
    Option<"gradients", "gradients", "bool", /*default=*/"false",
           "Also return each weight's gradient as W.grad">,
    ListOption<"weights", "weights", "std::string",
               "Initializers to train (default: every float initializer "
               "the loss depends on)">,
  ];
  let dependentDialects = ["::mp::MpDialect"];
}

def InsertLossScaling : Pass<"mp-insert-loss-scaling", "mlir::ModuleOp"> {
  let summary = "Add loss scaling to a training step";
  let description = [{
    Runs on a step built by mp-build-training-step. The backward pass starts
    from `scale` instead of 1; one `mp.unscale_and_check` divides every
    gradient by the scale into fp32 and tests them all for inf/NaN; the
    optimizer updates (and AdamW's step count) are skipped when any is not
    finite, inside the graph.

    `mode=dynamic`: the scale and its count of finite steps are inputs
    (`loss_scale`, `loss_scale.good_steps`) and outputs (`.next`) updated by
    `mp.update_loss_scale`. `mode=static`: the scale is the constant
    `scale`. Both add an output `found_inf`.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"dynamic\"",
           "dynamic or static">,
    Option<"scale", "scale", "double", /*default=*/"512.0",
           "The loss scale (mode=static)">,
    Option<"init", "init", "double", /*default=*/"65536.0",
           "Initial scale, recorded for trainers (mode=dynamic)">,
    Option<"growth", "growth", "double", /*default=*/"2.0",
           "Growth factor after `interval` finite steps">,
    Option<"backoff", "backoff", "double", /*default=*/"0.5",
           "Backoff factor on overflow">,
    Option<"interval", "interval", "int64_t", /*default=*/"2000",
           "Finite steps between growths">,
    Option<"minScale", "min", "double", /*default=*/"1.0", "Smallest scale">,
    Option<"maxScale", "max", "double", /*default=*/"16777216.0",
           "Largest scale">,
  ];
  let dependentDialects = ["::mp::MpDialect"];
}

def KvCacheInPlace : Pass<"mp-kv-cache-in-place", "mlir::ModuleOp"> {
  let summary = "Keep KV caches in fixed-capacity buffers updated in place";
  let description = [{
    For every `mp.attention` whose `past_key`/`past_value` are graph inputs
    (possibly through one `mp.cast`) and whose `present_key`/`present_value`
    are graph outputs (likewise), the caches become buffers of
    `max-seq-len` positions: the inputs take [B, Hkv, max-seq-len, D] in the
    attention's storage type, a new scalar i64 input (`length-input`) says
    how many positions are filled, and the attention writes the new K/V at
    that position instead of joining past and new with a Concat. Each
    present output is marked `mp.in_place_of` its past input, and the past
    input `mp.updated_in_place` by it; the function records
    `mp.kv_cache = {length_input, capacity, new_positions}` so that callers
    can check `length + new_positions <= capacity` before a run.

    Every dim of the caches but the sequence one, and the number of new
    positions, must be static (pin the inputs first). An attention with a
    past that cannot be converted is an error naming it and the reason.
  }];
  let options = [
    Option<"maxSeqLen", "max-seq-len", "int64_t", /*default=*/"0",
           "Cache capacity in positions (required, > 0)">,
    Option<"lengthInput", "length-input", "std::string",
           /*default=*/"\"past_sequence_length\"",
           "Name of the new input holding the filled positions">,
  ];
  let dependentDialects = ["::mp::MpDialect"];
}

#endif // MP_TRANSFORMS_PASSES_TD
