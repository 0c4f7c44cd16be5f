"""Self-attention whose key projection and scores overflow fp16.

    h = LayerNormalization(x)                        x: f32[1, 16, 64]
    q, k, v = h @ Wq + bq, h @ Wk + bk, h @ Wv + bv   (4 heads of 16)
    p = Softmax(q @ k^T / sqrt(16))
    y = (p @ v, heads merged) @ Wo + bo              y: f32[1, 16, 64]

The projection weights are N(0, 0.125) (so q and v are about N(0, 1)), but Wk
is additionally scaled by -1e4. Its values (std 1250, at most ~4.4e3) fit fp16
comfortably, like every other constant, so nothing about the constants flags
the graph. The activations do not fit: k has std ~1e4 (at most ~3.7e4, still
in range) and the scores q @ k^T reach ~1.5e5 (13 % of them beyond fp16's
65504), so an fp16 score MatMul writes inf, the Div keeps it, and the Softmax
after it returns NaN. In fp32 the scores are large but finite and the Softmax
is one-hot. The overflow is in intermediate activations, which only a
value-range analysis can see.

SEED is one whose scaled scores have their two largest entries at least ~180
apart in every row, so that the fp32 Softmax is exactly one-hot: with a near
tie, the rounding of 1e5-sized scores (fp32 ulp ~0.008) would make the fp32
reference itself ill-conditioned.
"""

from __future__ import annotations

import numpy as np
import onnx

from ._graph import GraphBuilder

SEQ = 16
D_MODEL = 64
HEADS = 4
HEAD_DIM = D_MODEL // HEADS
SHAPE = (1, SEQ, D_MODEL)
WEIGHT_STD = 0.125
BIAS_STD = 0.02
KEY_SCALE = -1e4  # Wk = KEY_SCALE * N(0, WEIGHT_STD)
SEED = 7007

ATTN = "layers.0.self_attn"
# The k projection (in fp16's range, but ~1e4) and the score MatMul it feeds
# (beyond it); the tests emulate both in fp16.
KEY_PROJ = f"{ATTN}.k_proj/MatMul"
SCORES = f"{ATTN}/MatMul"


def _linear(g: GraphBuilder, x: str, scope: str, scale: float = 1.0) -> str:
    """MatMul + Add bias with weights ``scale * N(0, WEIGHT_STD)``."""
    w = scale * WEIGHT_STD * g.rng.standard_normal((D_MODEL, D_MODEL))
    w = g.param(f"{scope}.weight", w.astype(np.float32))
    b = g.normal(f"{scope}.bias", (D_MODEL,), 0.0, BIAS_STD)
    y = g.node("MatMul", [x, w], scope)
    return g.node("Add", [y, b], scope)


def _split_heads(g: GraphBuilder, x: str, scope: str, perm: list[int]) -> str:
    shape = g.const([1, SEQ, HEADS, HEAD_DIM], scope, dtype=np.int64)
    x = g.node("Reshape", [x, shape], scope)
    return g.node("Transpose", [x], scope, perm=perm)


def build() -> onnx.ModelProto:
    g = GraphBuilder("attention_overflow", seed=SEED)
    x = g.input("x", list(SHAPE))
    gamma = g.param("layers.0.input_layernorm.weight", np.ones(D_MODEL, np.float32))
    beta = g.param("layers.0.input_layernorm.bias", np.zeros(D_MODEL, np.float32))
    h = g.node("LayerNormalization", [x, gamma, beta], "layers.0.input_layernorm",
               axis=-1, epsilon=1e-5)

    attn = ATTN
    q = _linear(g, h, f"{attn}.q_proj")
    k = _linear(g, h, f"{attn}.k_proj", scale=KEY_SCALE)  # -> KEY_PROJ
    v = _linear(g, h, f"{attn}.v_proj")
    q = _split_heads(g, q, attn, [0, 2, 1, 3])  # [1, H, S, Dh]
    k = _split_heads(g, k, attn, [0, 2, 3, 1])  # [1, H, Dh, S]
    v = _split_heads(g, v, attn, [0, 2, 1, 3])

    scores = g.node("MatMul", [q, k], attn)  # -> SCORES
    scores = g.node("Div", [scores, g.const(np.sqrt(HEAD_DIM), attn)], attn)
    p = g.node("Softmax", [scores], attn, axis=-1)
    o = g.node("MatMul", [p, v], attn)
    o = g.node("Transpose", [o], attn, perm=[0, 2, 1, 3])
    o = g.node("Reshape", [o, g.const(list(SHAPE), attn, dtype=np.int64)], attn)

    scope = f"{attn}.o_proj"
    w = g.normal(f"{scope}.weight", (D_MODEL, D_MODEL), 0.0, WEIGHT_STD)
    b = g.normal(f"{scope}.bias", (D_MODEL,), 0.0, BIAS_STD)
    o = g.node("MatMul", [o, w], scope)
    g.node("Add", [o, b], scope, outputs=["y"])
    g.output("y", list(SHAPE))
    return g.model(doc="mp stress case: attention scores beyond fp16 range (key weights x -1e4)")


def example_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(SHAPE).astype(np.float32)}
