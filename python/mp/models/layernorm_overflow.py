"""A block whose LayerNorm statistics overflow in fp16.

    y = Relu(LayerNormalization(x @ W) + x),   x: f32[2, 16, 256]

W is scaled (std 500) so that x @ W reaches about 3e4 for x ~ N(0, 1): the
values themselves still fit fp16 (max 65504) but their squares, and so the
variance LayerNorm computes, are far beyond it (~6e7). A naive fp16 LayerNorm
returns inf/NaN here; the statistics must stay in fp32.
"""

from __future__ import annotations

import numpy as np
import onnx

from ._graph import GraphBuilder, layer_norm

SHAPE = (2, 16, 256)
WEIGHT_STD = 500.0
SEED = 4321


def build() -> onnx.ModelProto:
    g = GraphBuilder("layernorm_overflow", seed=SEED)
    d = SHAPE[-1]
    x = g.input("x", list(SHAPE))
    w = g.normal("block.proj.weight", (d, d), 0.0, WEIGHT_STD)
    h = g.node("MatMul", [x, w], "block.proj")
    h = layer_norm(g, h, "block.norm", d)
    h = g.node("Add", [h, x], "block")
    g.node("Relu", [h], "block", outputs=["y"])
    g.output("y", list(SHAPE))
    return g.model(doc="mp example: LayerNorm over activations whose squares overflow fp16")


def example_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(SHAPE).astype(np.float32)}
