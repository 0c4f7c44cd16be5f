"""One step of a small autoregressive TTS mel-spectrogram decoder.

Written the way torch.onnx exports such a model: plain opset-17 ops, no contrib
ops, node names from the module paths. Per step it takes the previous mel frame
and the KV cache of the self-attention layers, and returns the next frame, the
stop-token probability and the grown cache:

    mel_frame [batch,1,80] -> prenet (2 x Linear+Relu) -> 2 x decoder layer
      -> final LayerNorm -> mel_out [batch,1,80]  (Linear)
                         -> stop_logit [batch,1,1] (Linear + Sigmoid)

Decoder layer (pre-norm): x += SelfAttn(LN(x)) with past/present K,V;
x += CrossAttn(LN(x), encoder_out); x += FFN(LN(x)) with Gelu written out as
x*0.5*(1+erf(x/sqrt2)). d_model 128, 4 heads of 32, FFN 512.

The two decoder layers share their attention and FFN weights (ALBERT-style
cross-layer sharing; LayerNorms are per layer): the initializers are named
after layer 0 and layer 1's nodes use them, as torch.onnx exports tied
parameters. With distinct weights the model is 2.3 MB; shared, 1.2 MB. Pass
``share_layer_weights=False`` for the unshared variant.
"""

from __future__ import annotations

import numpy as np
import onnx

from ._graph import GraphBuilder, layer_norm, linear

N_MELS = 80
D_MODEL = 128
N_HEADS = 4
HEAD_DIM = 32
D_FFN = 512
N_LAYERS = 2
SEED = 1234


def _split_heads(g: GraphBuilder, x: str, scope: str) -> str:
    """[b, t, 128] -> [b, 4, t, 32] (Reshape + Transpose)."""
    shape = g.const([0, 0, N_HEADS, HEAD_DIM], scope, np.int64)
    y = g.node("Reshape", [x, shape], scope)
    return g.node("Transpose", [y], scope, perm=[0, 2, 1, 3])


def _merge_heads(g: GraphBuilder, x: str, scope: str) -> str:
    """[b, 4, t, 32] -> [b, t, 128] (Transpose + Reshape)."""
    y = g.node("Transpose", [x], scope, perm=[0, 2, 1, 3])
    shape = g.const([0, 0, D_MODEL], scope, np.int64)
    return g.node("Reshape", [y, shape], scope)


def _attention(g: GraphBuilder, q: str, k: str, v: str, scope: str) -> str:
    """softmax(q k^T * 1/sqrt(d)) v on [b, h, t, d] heads."""
    kt = g.node("Transpose", [k], scope, perm=[0, 1, 3, 2])
    scores = g.node("MatMul", [q, kt], scope)
    scale = g.const(1.0 / np.sqrt(HEAD_DIM), scope)
    scores = g.node("Mul", [scores, scale], scope)
    probs = g.node("Softmax", [scores], scope, axis=-1)
    return g.node("MatMul", [probs, v], scope)


def _self_attention(g: GraphBuilder, x: str, layer: int, params: str | None) -> str:
    s = f"layers.{layer}.self_attn"
    p = (lambda n: f"{params}.self_attn.{n}") if params else (lambda n: None)
    q = _split_heads(g, linear(g, x, f"{s}.q_proj", D_MODEL, D_MODEL, p("q_proj")), s)
    k = _split_heads(g, linear(g, x, f"{s}.k_proj", D_MODEL, D_MODEL, p("k_proj")), s)
    v = _split_heads(g, linear(g, x, f"{s}.v_proj", D_MODEL, D_MODEL, p("v_proj")), s)
    # KV cache: append this step's key/value on the sequence axis.
    k = g.node("Concat", [f"past_key_{layer}", k], s, outputs=[f"present_key_{layer}"], axis=2)
    v = g.node("Concat", [f"past_value_{layer}", v], s, outputs=[f"present_value_{layer}"], axis=2)
    o = _merge_heads(g, _attention(g, q, k, v, s), s)
    return linear(g, o, f"{s}.out_proj", D_MODEL, D_MODEL, p("out_proj"))


def _cross_attention(g: GraphBuilder, x: str, layer: int, params: str | None) -> str:
    s = f"layers.{layer}.cross_attn"
    p = (lambda n: f"{params}.cross_attn.{n}") if params else (lambda n: None)
    q = _split_heads(g, linear(g, x, f"{s}.q_proj", D_MODEL, D_MODEL, p("q_proj")), s)
    k = _split_heads(g, linear(g, "encoder_out", f"{s}.k_proj", D_MODEL, D_MODEL, p("k_proj")), s)
    v = _split_heads(g, linear(g, "encoder_out", f"{s}.v_proj", D_MODEL, D_MODEL, p("v_proj")), s)
    o = _merge_heads(g, _attention(g, q, k, v, s), s)
    return linear(g, o, f"{s}.out_proj", D_MODEL, D_MODEL, p("out_proj"))


def _gelu(g: GraphBuilder, x: str, scope: str) -> str:
    """Exact Gelu as torch.onnx writes it below opset 20: x*0.5*(1+erf(x/sqrt2))."""
    t = g.node("Div", [x, g.const(np.sqrt(2.0), scope)], scope)
    t = g.node("Erf", [t], scope)
    t = g.node("Add", [t, g.const(1.0, scope)], scope)
    t = g.node("Mul", [x, t], scope)
    return g.node("Mul", [t, g.const(0.5, scope)], scope)


def _feed_forward(g: GraphBuilder, x: str, layer: int, params: str | None) -> str:
    s = f"layers.{layer}.ffn"
    p = (lambda n: f"{params}.ffn.{n}") if params else (lambda n: None)
    h = linear(g, x, f"{s}.fc1", D_MODEL, D_FFN, p("fc1"))
    h = _gelu(g, h, f"{s}.act")
    return linear(g, h, f"{s}.fc2", D_FFN, D_MODEL, p("fc2"))


def build(share_layer_weights: bool = True, n_layers: int = N_LAYERS) -> onnx.ModelProto:
    """The decoder step; ``n_layers`` > 2 gives the deeper variants the
    benchmarks use (bench/cpu.py builds a 12-layer one)."""
    g = GraphBuilder("tts_decoder", seed=SEED)
    g.input("mel_frame", ["batch", 1, N_MELS])
    g.input("encoder_out", ["batch", "enc_len", D_MODEL])
    for l in range(n_layers):
        g.input(f"past_key_{l}", ["batch", N_HEADS, "past_len", HEAD_DIM])
        g.input(f"past_value_{l}", ["batch", N_HEADS, "past_len", HEAD_DIM])

    x = "mel_frame"
    x = g.node("Relu", [linear(g, x, "prenet.layers.0", N_MELS, D_MODEL)], "prenet.layers.0")
    x = g.node("Relu", [linear(g, x, "prenet.layers.1", D_MODEL, D_MODEL)], "prenet.layers.1")

    for l in range(n_layers):
        params = "layers.0" if share_layer_weights and l > 0 else None
        h = layer_norm(g, x, f"layers.{l}.self_attn_layer_norm", D_MODEL)
        x = g.node("Add", [x, _self_attention(g, h, l, params)], f"layers.{l}")
        h = layer_norm(g, x, f"layers.{l}.cross_attn_layer_norm", D_MODEL)
        x = g.node("Add", [x, _cross_attention(g, h, l, params)], f"layers.{l}")
        h = layer_norm(g, x, f"layers.{l}.final_layer_norm", D_MODEL)
        x = g.node("Add", [x, _feed_forward(g, h, l, params)], f"layers.{l}")

    x = layer_norm(g, x, "layer_norm", D_MODEL)
    linear(g, x, "mel_proj", D_MODEL, N_MELS, out="mel_out")
    stop = linear(g, x, "stop_proj", D_MODEL, 1)
    g.node("Sigmoid", [stop], "stop_proj", outputs=["stop_logit"])

    g.output("mel_out", ["batch", 1, N_MELS])
    g.output("stop_logit", ["batch", 1, 1])
    for l in range(n_layers):
        g.output(f"present_key_{l}", ["batch", N_HEADS, "present_len", HEAD_DIM])
        g.output(f"present_value_{l}", ["batch", N_HEADS, "present_len", HEAD_DIM])
    return g.model(doc="mp example: one decoder step of a small autoregressive TTS mel decoder")


def example_inputs(rng: np.random.Generator, n_layers: int = N_LAYERS, batch: int = 2,
                   enc_len: int = 10, past_len: int = 5) -> dict[str, np.ndarray]:
    f = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    inputs = {"mel_frame": f(batch, 1, N_MELS), "encoder_out": f(batch, enc_len, D_MODEL)}
    for l in range(n_layers):
        inputs[f"past_key_{l}"] = f(batch, N_HEADS, past_len, HEAD_DIM)
        inputs[f"past_value_{l}"] = f(batch, N_HEADS, past_len, HEAD_DIM)
    return inputs
