"""mp's lowerings of onnxruntime's com.microsoft Attention (packed QKV
projection, past as [2, B, N, P, H]) and MultiHeadAttention (separate Q, K,
V; past_key/past_value) against onnxruntime's CPU kernels on the same
inputs: with and without a cache, unidirectional (causal), key padding
masks, attention bias, an explicit scale, qkv_hidden_sizes (com.microsoft
Attention), the Q/K/V projection bias (MultiHeadAttention), and
packed KV ([B, L, N, 2, H]) and QKV ([B, S, N, 3, H]) inputs, which
onnxruntime's CPU kernel lacks: those are checked against it on the same
data unpacked."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import run_mp_and_onnxruntime

B, S, N, H = 2, 3, 2, 8
HIDDEN = N * H


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(graph_inputs, node, outputs):
    graph = helper.make_graph([node], "attn", graph_inputs,
                              [_vi(n, TensorProto.FLOAT, None) for n in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("com.microsoft", 1)])


def _ms_attention(P=0, unidirectional=0, padding=False, attention_bias=False, **attrs):
    rng = np.random.default_rng(21 + P)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    width = sum(attrs.get("qkv_hidden_sizes", [3 * HIDDEN]))
    feeds = {"x": f(B, S, HIDDEN), "w": f(HIDDEN, width) * 0.3, "b": f(width) * 0.1}
    inputs = ["x", "w", "b", "", ""]
    if attention_bias:
        feeds["attn_bias"] = f(1, N, S, P + S)
        inputs += ["attn_bias"]
    if padding:
        mask = np.ones((B, P + S), np.int32)
        mask[1, :2] = 0  # batch 1 ignores its first two keys
        feeds["mask"] = mask
        inputs[3] = "mask"
    if P:
        feeds["past"] = f(2, B, N, P, H)
        inputs[4] = "past"
    while inputs[-1] == "":
        inputs.pop()
    graph_inputs = [_vi(k, TensorProto.INT32 if k == "mask" else TensorProto.FLOAT,
                        list(v.shape)) for k, v in feeds.items()]
    # K and V of different widths have no present cache.
    outputs = ["y"] if "qkv_hidden_sizes" in attrs else ["y", "present"]
    node = helper.make_node("Attention", inputs, outputs, domain="com.microsoft",
                            name="attn", num_heads=N, unidirectional=unidirectional, **attrs)
    return _model(graph_inputs, node, outputs), feeds


def _mha(P=0, padding=False, bias=False, proj_bias=False, packed=None, **attrs):
    rng = np.random.default_rng(33 + P)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    feeds = {"q": f(B, S, HIDDEN), "k": f(B, S, HIDDEN), "v": f(B, S, HIDDEN)}
    inputs = ["q", "k", "v", "", "", "", "", ""]
    if packed == "kv":  # key [B, L, N, 2, H], no value
        del feeds["v"]
        feeds["k"] = f(B, S, N, 2, H)
        inputs[2] = ""
    elif packed == "qkv":  # query [B, S, N, 3, H], no key or value
        del feeds["k"], feeds["v"]
        feeds["q"] = f(B, S, N, 3, H)
        inputs[1:3] = ["", ""]
    if proj_bias:  # the Q, K, V projections' biases
        feeds["proj_bias"] = f(3 * HIDDEN)
        inputs[3] = "proj_bias"
    if padding:
        mask = np.ones((B, P + S), np.int32)
        mask[0, -1] = 0
        feeds["mask"] = mask
        inputs[4] = "mask"
    if bias:
        feeds["bias_qk"] = f(1, N, S, P + S)
        inputs[5] = "bias_qk"
    if P:
        feeds["pk"], feeds["pv"] = f(B, N, P, H), f(B, N, P, H)
        inputs[6:8] = ["pk", "pv"]
    while inputs[-1] == "":
        inputs.pop()
    graph_inputs = [_vi(k, TensorProto.INT32 if k == "mask" else TensorProto.FLOAT,
                        list(v.shape)) for k, v in feeds.items()]
    outputs = ["y", "present_key", "present_value"] if P else ["y"]
    node = helper.make_node("MultiHeadAttention", inputs, outputs, domain="com.microsoft",
                            name="mha", num_heads=N, **attrs)
    return _model(graph_inputs, node, outputs), feeds


CASES = {
    "attention_prompt": (_ms_attention, {}),
    "attention_causal_past": (_ms_attention, dict(P=4, unidirectional=1)),
    "attention_key_padding": (_ms_attention, dict(P=2, padding=True)),
    "attention_scaled": (_ms_attention, dict(scale=0.2)),
    "attention_bias_causal": (_ms_attention, dict(attention_bias=True, unidirectional=1)),
    "attention_qkv_hidden_sizes": (_ms_attention, dict(qkv_hidden_sizes=[16, 16, 24])),
    "mha_prompt": (_mha, {}),
    "mha_past": (_mha, dict(P=5)),
    "mha_padding_bias": (_mha, dict(P=3, padding=True, bias=True)),
    "mha_scaled": (_mha, dict(scale=0.5)),
    "mha_projection_bias": (_mha, dict(proj_bias=True)),
    "mha_projection_bias_past": (_mha, dict(P=2, proj_bias=True, unidirectional=1)),
    "mha_packed_kv": (_mha, dict(packed="kv")),
    "mha_packed_qkv": (_mha, dict(packed="qkv")),
    "mha_packed_kv_bias": (_mha, dict(packed="kv", proj_bias=True)),
}


def _unpacked(kwargs, feeds):
    """The same attention with separate Q, K, V inputs (onnxruntime's CPU
    kernel has no packed forms): the reference for a packed case."""
    kwargs = dict(kwargs)
    packed = kwargs.pop("packed")
    model, plain = _mha(**kwargs)
    plain.update({k: v for k, v in feeds.items() if k not in ("q", "k")})
    src = feeds["q"] if packed == "qkv" else feeds["k"]
    parts = [src[:, :, :, i, :].reshape(B, S, HIDDEN) for i in range(src.shape[3])]
    if packed == "qkv":
        plain["q"], plain["k"], plain["v"] = parts
    else:
        plain["q"] = feeds["q"]
        plain["k"], plain["v"] = parts
    return model, plain


# Which dims of each input are the batch, sequence, cache and key lengths
# (named instead of fixed in the dynamic-shape variant of each case).
SYMBOLIC_DIMS = {"x": {0: "b", 1: "s"}, "q": {0: "b", 1: "s"}, "k": {0: "b", 1: "s"},
                 "v": {0: "b", 1: "s"}, "pk": {0: "b", 2: "p"}, "pv": {0: "b", 2: "p"},
                 "past": {1: "b", 3: "p"}, "mask": {0: "b", 1: "t"},
                 "attn_bias": {2: "s", 3: "t"}, "bias_qk": {2: "s", 3: "t"}}


def _with_symbolic_dims(model):
    """`model` with its batch, sequence and cache dims named, not fixed."""
    for vi in model.graph.input:
        for axis, name in SYMBOLIC_DIMS.get(vi.name, {}).items():
            vi.type.tensor_type.shape.dim[axis].dim_param = name
    return model


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", list(CASES))
def test_contrib_attention_matches_onnxruntime(tmp_path, case, dynamic):
    import onnx

    import mp
    build, kwargs = CASES[case]
    model, feeds = build(**kwargs)
    if kwargs.get("packed"):
        ref_model, ref_feeds = _unpacked(kwargs, feeds)
        _, want = run_mp_and_onnxruntime(tmp_path, ref_model, ref_feeds)
    else:
        _, want = run_mp_and_onnxruntime(tmp_path, model, feeds)
    path = tmp_path / "case.onnx"
    onnx.save(_with_symbolic_dims(model) if dynamic else model, str(path))
    got = mp.compile(path, dynamic_shapes=dynamic).run(feeds)
    for (name, g), w in zip(got.items(), want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"{case}: {name}")
