//===- MpTrainingOps.td - loss scaling and optimizer updates -*- tablegen -*-===//
//
// The ops a mixed-precision training step adds to a forward graph: loss
// scaling (PyTorch GradScaler / TF LossScaleOptimizer semantics) and the
// fp32 optimizer updates of the master weights. Their state (scale, growth
// counter, moments, step count) is always explicit: operands in, results out.
//
//===----------------------------------------------------------------------===//

#ifndef MP_DIALECT_MP_IR_MPTRAININGOPS_TD
#define MP_DIALECT_MP_IR_MPTRAININGOPS_TD

include "mp/Dialect/Mp/IR/MpBase.td"

/// The op always computes in fp32; precision passes leave it alone.
def Mp_KeepsFp32 : NativeOpTrait<"KeepsFp32"> { let cppNamespace = "::mp"; }

def Mp_F32Scalar : 0DTensorOf<[F32]>;
def Mp_BoolScalar : 0DTensorOf<[I1]>;
def Mp_I64Scalar : 0DTensorOf<[I64]>;
def Mp_F32Tensor : RankedTensorOf<[F32]>;

def Mp_UnscaleAndCheckOp : Mp_Op<"unscale_and_check",
    [Pure, Mp_KeepsFp32]> {
  let summary = "divide every gradient by the loss scale into fp32 and test "
                "them all for inf/NaN";
  let description = [{
    `grads` are the gradients of `loss * scale` (f16, bf16 or f32). Each
    result `unscaled[i]` is `grads[i] / scale` in f32, and `found_inf` is true
    when any element of any gradient is inf or NaN. One op for all gradients,
    so a GPU reads each gradient once; casts that widen a gradient before it
    are folded into the op.

    ```mlir
    %g:2, %inf = mp.unscale_and_check %scale, %dw, %db
        : tensor<f32>, tensor<4x4xf16>, tensor<4xf32>
        -> (tensor<4x4xf32>, tensor<4xf32>), tensor<i1>
    ```
  }];
  let arguments = (ins Mp_F32Scalar:$scale, Variadic<Mp_FloatTensor>:$grads);
  let results = (outs Variadic<Mp_F32Tensor>:$unscaled,
                 Mp_BoolScalar:$found_inf);
  let builders = [OpBuilder<(ins "::mlir::Value":$scale,
                                 "::mlir::ValueRange":$grads)>];
  let assemblyFormat = [{
    $scale `,` $grads attr-dict `:` type($scale) `,` type($grads) `->`
    `(` type($unscaled) `)` `,` type($found_inf)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Mp_UpdateLossScaleOp : Mp_Op<"update_loss_scale", [Pure, Mp_KeepsFp32,
    AllTypesMatch<["scale", "new_scale"]>,
    AllTypesMatch<["good_steps", "new_good_steps"]>]> {
  let summary = "dynamic loss scale: back off on overflow, grow after "
                "`growth_interval` finite steps";
  let description = [{
    With `found_inf`: `new_scale = max(scale * backoff_factor, min_scale)` and
    the counter restarts at 0. Otherwise the counter counts the step; when it
    reaches `growth_interval`, `new_scale = min(scale * growth_factor,
    max_scale)` and it restarts at 0.
  }];
  let arguments = (ins Mp_F32Scalar:$scale, Mp_I64Scalar:$good_steps,
                   Mp_BoolScalar:$found_inf,
                   DefaultValuedAttr<F32Attr, "2.0">:$growth_factor,
                   DefaultValuedAttr<F32Attr, "0.5">:$backoff_factor,
                   DefaultValuedAttr<I64Attr, "2000">:$growth_interval,
                   DefaultValuedAttr<F32Attr, "1.0">:$min_scale,
                   DefaultValuedAttr<F32Attr, "16777216.0">:$max_scale);
  let results = (outs Mp_F32Scalar:$new_scale, Mp_I64Scalar:$new_good_steps);
  let assemblyFormat = [{
    $scale `,` $good_steps `,` $found_inf attr-dict `:` type($scale) `,`
    type($good_steps) `,` type($found_inf)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Mp_SgdUpdateOp : Mp_Op<"sgd_update",
    [Pure, Mp_KeepsFp32, AllTypesMatch<["param", "grad", "momentum_buffer",
                                        "new_param", "new_momentum_buffer"]>]> {
  let summary = "SGD with momentum and L2 weight decay on an fp32 weight";
  let description = [{
    `g = grad + weight_decay * param; buf = momentum * momentum_buffer + g;
    param -= lr * buf` (PyTorch SGD, dampening 0). When `skip` is given and
    true, every result equals its operand: the step is skipped.
  }];
  let arguments = (ins Mp_F32Tensor:$param, Mp_F32Tensor:$grad,
                   Mp_F32Tensor:$momentum_buffer, Optional<Mp_BoolScalar>:$skip,
                   F32Attr:$lr, DefaultValuedAttr<F32Attr, "0.0">:$momentum,
                   DefaultValuedAttr<F32Attr, "0.0">:$weight_decay);
  let results = (outs Mp_F32Tensor:$new_param,
                 Mp_F32Tensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer (`skip` $skip^)? attr-dict `:`
    type($param) (`,` type($skip)^)?
  }];
  let hasVerifier = 1;
}

def Mp_AdamWUpdateOp : Mp_Op<"adamw_update",
    [Pure, Mp_KeepsFp32, AllTypesMatch<["param", "grad", "exp_avg",
                                        "exp_avg_sq", "new_param",
                                        "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "AdamW (decoupled weight decay) on an fp32 weight";
  let description = [{
    `step` is the number of updates applied before this one (f32, rank 0);
    this update is number `t = step + 1`:
    `param *= 1 - lr * weight_decay; m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g^2;
    param -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)`
    (PyTorch AdamW). When `skip` is given and true, every result equals its
    operand.
  }];
  let arguments = (ins Mp_F32Tensor:$param, Mp_F32Tensor:$grad,
                   Mp_F32Tensor:$exp_avg, Mp_F32Tensor:$exp_avg_sq,
                   Mp_F32Scalar:$step, Optional<Mp_BoolScalar>:$skip,
                   F32Attr:$lr, DefaultValuedAttr<F32Attr, "0.9">:$beta1,
                   DefaultValuedAttr<F32Attr, "0.999">:$beta2,
                   DefaultValuedAttr<F32Attr, "1e-8">:$eps,
                   DefaultValuedAttr<F32Attr, "0.01">:$weight_decay);
  let results = (outs Mp_F32Tensor:$new_param, Mp_F32Tensor:$new_exp_avg,
                 Mp_F32Tensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step
    (`skip` $skip^)? attr-dict `:` type($param) `,` type($step)
    (`,` type($skip)^)?
  }];
  let hasVerifier = 1;
}

#endif // MP_DIALECT_MP_IR_MPTRAININGOPS_TD
