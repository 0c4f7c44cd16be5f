"""A tiny LM head whose logits overflow fp16.

    h = LayerNormalization(x)        x: f32[1, 8, 32]
    logits = h @ W + b               (vocabulary 128)
    probs = Softmax(logits, -1)      f32[1, 8, 128]
    logits_argmax = ArgMax(logits)   i64[1, 8]

W has std 8e3 (its largest value, ~3e4, fits fp16 like every constant), and
the LayerNorm'd input has norm sqrt(32), so the logits have std ~4.5e4 and
reach 0.85e5-1.6e5 in every row: beyond fp16's 65504. An fp16 head MatMul
writes +-inf, the Softmax then computes inf - inf = NaN, and ArgMax picks the
first of several tied infs. In fp32 the Softmax is simply one-hot (the two
largest logits of a row are >1e3 apart) and the argmax is exact. (LM heads
with badly scaled logits are where fp16 inference "goes NaN".)
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto

from ._graph import GraphBuilder

SHAPE = (1, 8, 32)
VOCAB = 128
WEIGHT_STD = 8e3
BIAS_STD = 1.0
SEED = 7002

HEAD = "lm_head/MatMul"  # the node whose fp16 result overflows


def build() -> onnx.ModelProto:
    g = GraphBuilder("large_logit_softmax", seed=SEED)
    d = SHAPE[-1]
    x = g.input("x", list(SHAPE))
    gamma = g.param("norm.weight", np.ones(d, np.float32))
    beta = g.param("norm.bias", np.zeros(d, np.float32))
    h = g.node("LayerNormalization", [x, gamma, beta], "norm", axis=-1, epsilon=1e-5)
    w = g.normal("lm_head.weight", (d, VOCAB), 0.0, WEIGHT_STD)
    b = g.normal("lm_head.bias", (VOCAB,), 0.0, BIAS_STD)
    logits = g.node("MatMul", [h, w], "lm_head")  # -> HEAD
    logits = g.node("Add", [logits, b], "lm_head")
    g.node("Softmax", [logits], "", outputs=["probs"], axis=-1)
    g.node("ArgMax", [logits], "", outputs=["logits_argmax"], axis=-1, keepdims=0)
    g.output("probs", [*SHAPE[:2], VOCAB])
    g.output("logits_argmax", list(SHAPE[:2]), elem=TensorProto.INT64)
    return g.model(doc="mp stress case: LM-head logits beyond fp16 range before Softmax")


def example_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(SHAPE).astype(np.float32)}
