"""A 2-layer causal transformer with its loss, for training demonstrations.

The task: each sequence counts modulo VOCAB from a random start with a
random stride (1, 2 or 3), and the model predicts every next token; it must
read at least two tokens to know the stride. The graph ends in the loss:

    loss = loss_weight * mean over (b, t) of -log softmax(logits)[target]

``loss_weight`` (a scalar input, normally 1) lets a test plant an overflow
step. The targets come in as token ids and are one-hot encoded in the graph
(Equal with a Range constant, Cast).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto

from ._graph import GraphBuilder, layer_norm, linear

VOCAB = 16
DIM = 32
HEADS = 2
LAYERS = 2
SEQ = 8
BATCH = 16
SEED = 2024


def _attention(g: GraphBuilder, h: str, scope: str, mask: str) -> str:
    head_dim = DIM // HEADS
    split = g.const([BATCH, SEQ, HEADS, head_dim], scope, np.int64)

    def heads(name: str, perm: list[int]) -> str:
        x = linear(g, h, f"{scope}.{name}_proj", DIM, DIM)
        x = g.node("Reshape", [x, split], f"{scope}.{name}")
        return g.node("Transpose", [x], f"{scope}.{name}", perm=perm)

    q = heads("q", [0, 2, 1, 3])             # [B, H, T, hd]
    k = heads("k", [0, 2, 3, 1])             # [B, H, hd, T]
    v = heads("v", [0, 2, 1, 3])
    s = g.node("MatMul", [q, k], scope)
    s = g.node("Mul", [s, g.const(1.0 / np.sqrt(head_dim), scope)], scope)
    s = g.node("Add", [s, mask], scope)
    p = g.node("Softmax", [s], scope, axis=-1)
    o = g.node("MatMul", [p, v], scope)
    o = g.node("Transpose", [o], scope, perm=[0, 2, 1, 3])
    o = g.node("Reshape", [o, g.const([BATCH, SEQ, DIM], scope, np.int64)], scope)
    return linear(g, o, f"{scope}.o_proj", DIM, DIM)


def build() -> onnx.ModelProto:
    g = GraphBuilder("tiny_lm", seed=SEED)
    tokens = g.input("tokens", [BATCH, SEQ], TensorProto.INT64)
    targets = g.input("targets", [BATCH, SEQ], TensorProto.INT64)
    weight = g.input("loss_weight", [])
    emb = g.normal("embed.weight", (VOCAB, DIM), 0.0, 0.5)
    pos = g.normal("pos.weight", (SEQ, DIM), 0.0, 0.1)
    x = g.node("Gather", [emb, tokens], "embed", axis=0)
    x = g.node("Add", [x, pos], "embed")
    # Causal: -1e4 above the diagonal (finite, so fp16 masks stay exact).
    causal = np.triu(np.full((SEQ, SEQ), -1e4, np.float32), 1)
    mask = g.const(causal, "mask")
    for i in range(LAYERS):
        scope = f"layers.{i}"
        a = _attention(g, layer_norm(g, x, f"{scope}.ln1", DIM), f"{scope}.attn", mask)
        x = g.node("Add", [x, a], scope)
        h = layer_norm(g, x, f"{scope}.ln2", DIM)
        h = g.node("Relu", [linear(g, h, f"{scope}.fc1", DIM, 4 * DIM)], scope)
        x = g.node("Add", [x, linear(g, h, f"{scope}.fc2", 4 * DIM, DIM)], scope)
    x = layer_norm(g, x, "final_ln", DIM)
    logits = linear(g, x, "head", DIM, VOCAB, out="logits")
    logp = g.node("LogSoftmax", [logits], "loss", axis=-1)
    ids = g.node("Unsqueeze", [targets, g.const([-1], "loss", np.int64)], "loss")
    hit = g.node("Equal", [ids, g.const(np.arange(VOCAB), "loss", np.int64)], "loss")
    onehot = g.node("Cast", [hit], "loss", to=TensorProto.FLOAT)
    picked = g.node("ReduceSum", [g.node("Mul", [logp, onehot], "loss"),
                                  g.const([-1], "loss", np.int64)], "loss", keepdims=0)
    nll = g.node("Neg", [g.node("ReduceMean", [picked], "loss", keepdims=0)], "loss")
    g.node("Mul", [nll, weight], "loss", outputs=["loss"])
    g.output("loss", [])
    g.output("logits", [BATCH, SEQ, VOCAB])
    return g.model(doc="mp example: a 2-layer causal transformer with its training loss")


def batch(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One batch of the counting task: tokens and their next tokens."""
    start = rng.integers(0, VOCAB, size=(BATCH, 1))
    stride = rng.integers(1, 4, size=(BATCH, 1))
    seq = (start + stride * np.arange(SEQ + 1)) % VOCAB
    return {"tokens": seq[:, :-1].astype(np.int64),
            "targets": seq[:, 1:].astype(np.int64),
            "loss_weight": np.array(1.0, np.float32)}


def example_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return batch(rng)
