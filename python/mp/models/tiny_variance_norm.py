"""A LayerNorm over a down-scaled branch whose activations are fp16 subnormals.

    h = (x @ W + b) * layer_scale            x: f32[2, 16, 64], W std 4e-4, layer_scale 1e-4
    y = LayerNormalization(h)                epsilon 1e-12 (BERT's), gamma 1, beta 0

A residual branch with a small-init output projection (weights std 4e-4, so
x @ W + b ~ 3e-3) and a LayerScale of 1e-4, normalized on its own (as
sandwich/NormFormer-style blocks do): h has std ~3e-7, so nearly every value
lies below fp16's smallest normal number (6.1e-5), where fp16 only has
subnormals 6e-8 apart -- a handful of quantization steps per value. LayerNorm
is scale invariant, so fp32 recovers the signal exactly (the variance, ~1e-13,
is a tenth of the epsilon, so the outputs are ~0.3 of unit scale); an fp16
product keeps 2-4 significant bits and the normalized output is off by ~5 %
of its scale on average and ~10 % at worst, far beyond mp-run's 1e-2 mixed
tolerance (with flush-to-zero, all of it is lost).

Why not a tiny constant: a weight std of 1e-6 or a scale of 1e-6 is below
fp16's normal range itself, which mp already sees and keeps in fp32. Here both
constants are in fp16's normal range (1e-4 and a 4e-4 std; as in any Gaussian
init some weights are smaller, but none rounds to zero) and only their
product with the activations is tiny, which takes a value-range analysis to
notice. (A nearly closed Sigmoid gate would be the other natural source, but
onnxruntime's Sigmoid has an absolute error of ~1e-8 near 0, too coarse for an
fp32 reference of values ~1e-7.)
"""

from __future__ import annotations

import numpy as np
import onnx

from ._graph import GraphBuilder

SHAPE = (2, 16, 64)
PROJ_WEIGHT_STD = 4e-4
LAYER_SCALE = 1e-4
EPSILON = 1e-12
SEED = 7003

PRODUCT = "block/Mul"  # the node whose fp16 result is subnormal


def build() -> onnx.ModelProto:
    g = GraphBuilder("tiny_variance_norm", seed=SEED)
    d = SHAPE[-1]
    x = g.input("x", list(SHAPE))
    w = g.normal("block.proj.weight", (d, d), 0.0, PROJ_WEIGHT_STD)
    b = g.normal("block.proj.bias", (d,), 0.0, PROJ_WEIGHT_STD)
    h = g.node("MatMul", [x, w], "block.proj")
    h = g.node("Add", [h, b], "block.proj")
    scale = g.param("block.layer_scale", np.full(d, LAYER_SCALE, np.float32))
    h = g.node("Mul", [h, scale], "block")  # -> PRODUCT
    gamma = g.param("block.norm.weight", np.ones(d, np.float32))
    beta = g.param("block.norm.bias", np.zeros(d, np.float32))
    g.node("LayerNormalization", [h, gamma, beta], "block.norm", outputs=["y"], axis=-1,
           epsilon=EPSILON)
    g.output("y", list(SHAPE))
    return g.model(doc="mp stress case: LayerNorm over activations below fp16's normal range")


def example_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(SHAPE).astype(np.float32)}
