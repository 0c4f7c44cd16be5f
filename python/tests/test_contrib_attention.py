"""mp's lowerings of onnxruntime's com.microsoft Attention (packed QKV
projection, past as [2, B, N, P, H]) and MultiHeadAttention (separate Q, K,
V; past_key/past_value) against onnxruntime's CPU kernels on the same
inputs: with and without a cache, unidirectional (causal), key padding
masks (com.microsoft Attention's mask_index also as key lengths [B],
key ranges [2B] and per-query masks [B, S, T]), attention bias, an explicit
scale, qkv_hidden_sizes (com.microsoft Attention), past_sequence_length
without a shared buffer (unread, as in onnxruntime), the Q/K/V projection
bias (MultiHeadAttention), and
packed KV ([B, L, N, 2, H]) and QKV ([B, S, N, 3, H]) inputs, which
onnxruntime's CPU kernel lacks: those are checked against it on the same
data unpacked."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import assert_outputs_close, compile_with_dims, run_mp_and_onnxruntime

B, S, N, H = 2, 3, 2, 8
HIDDEN = N * H


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(graph_inputs, node, outputs):
    graph = helper.make_graph([node], "attn", graph_inputs,
                              [_vi(n, TensorProto.FLOAT, None) for n in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("com.microsoft", 1)])


def _ms_attention(P=0, unidirectional=0, padding=False, attention_bias=False, mask=None,
                  past_sequence_length=False, **attrs):
    rng = np.random.default_rng(21 + P)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    width = sum(attrs.get("qkv_hidden_sizes", [3 * HIDDEN]))
    feeds = {"x": f(B, S, HIDDEN), "w": f(HIDDEN, width) * 0.3, "b": f(width) * 0.1}
    inputs = ["x", "w", "b", "", ""]
    if attention_bias:
        feeds["attn_bias"] = f(1, N, S, P + S)
        inputs += ["attn_bias"]
    if padding:
        keep = np.ones((B, P + S), np.int32)
        keep[1, :2] = 0  # batch 1 ignores its first two keys
        feeds["mask"] = keep
        inputs[3] = "mask"
    if mask in ("lengths", "no_keys"):  # 1-D [B]: keys from end[b] on are padding
        feeds["mask_ends"] = np.array([P + S, P + S - 2 if mask == "lengths" else 0],
                                      np.int32)
        inputs[3] = "mask_ends"
    elif mask == "ranges":  # 1-D [2B]: ends, then starts (left padding)
        feeds["mask_ranges"] = np.array([P + S - 1, P + S, 0, 2], np.int32)
        inputs[3] = "mask_ranges"
    elif mask == "per_query":  # 3-D [B, S, T]
        keep = (rng.random((B, S, P + S)) > 0.3).astype(np.int32)
        keep[:, :, 0] = 1  # every query sees a key
        feeds["mask_3d"] = keep
        inputs[3] = "mask_3d"
    if P:
        feeds["past"] = f(2, B, N, P, H)
        inputs[4] = "past"
    if past_sequence_length:  # read only with a shared past/present buffer
        feeds["past_len"] = np.array(P, np.int32)
        inputs += [""] * (7 - len(inputs))
        inputs[6] = "past_len"
    while inputs[-1] == "":
        inputs.pop()
    graph_inputs = [_vi(k, TensorProto.INT32 if v.dtype == np.int32 else TensorProto.FLOAT,
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
    "attention_key_lengths": (_ms_attention, dict(P=3, mask="lengths")),
    # Every key of batch 1 masked: onnxruntime adds mask_filter_value to
    # the scores, so the row keeps their softmax.
    "attention_no_keys": (_ms_attention, dict(P=3, mask="no_keys")),
    "attention_key_ranges_causal": (_ms_attention, dict(P=3, mask="ranges", unidirectional=1)),
    "attention_mask_per_query": (_ms_attention, dict(P=2, mask="per_query")),
    "attention_past_sequence_length": (_ms_attention, dict(P=4, past_sequence_length=True,
                                                           unidirectional=1)),
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
                 "mask_ends": {0: "b"}, "mask_ranges": {0: "b2"},
                 "mask_3d": {0: "b", 1: "s", 2: "t"},
                 "attn_bias": {2: "s", 3: "t"}, "bias_qk": {2: "s", 3: "t"}}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", list(CASES))
def test_contrib_attention_matches_onnxruntime(tmp_path, case, dynamic):
    build, kwargs = CASES[case]
    model, feeds = build(**kwargs)
    if kwargs.get("packed"):
        ref_model, ref_feeds = _unpacked(kwargs, feeds)
        _, want = run_mp_and_onnxruntime(tmp_path, ref_model, ref_feeds)
    else:
        _, want = run_mp_and_onnxruntime(tmp_path, model, feeds)
    got = compile_with_dims(tmp_path, model, SYMBOLIC_DIMS if dynamic else None).run(feeds)
    assert_outputs_close(got, want, rtol=1e-4, atol=1e-5, where=case)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("layout", ["bsd", "bnsh"])
def test_ms_rotary_embedding_matches_onnxruntime(tmp_path, layout, dynamic):
    """com.microsoft RotaryEmbedding on [B, S, hidden] with per-token
    positions and on [B, N, S, H] with one start position, interleaved or
    not, with `scale` and `is_packed_batching` set: onnxruntime's kernels
    read both and leave the rotation unchanged, and so does mp."""
    rng = np.random.default_rng(44)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    if layout == "bsd":
        feeds = {"x": f(B, S, HIDDEN), "pos": rng.integers(0, 16, (B, S)).astype(np.int64)}
        dims = {"x": {0: "b", 1: "s"}, "pos": {0: "b", 1: "s"}}
    else:
        feeds = {"x": f(B, N, S, H), "pos": np.array([5], np.int64)}
        dims = {"x": {0: "b", 2: "s"}}
    feeds["cos"], feeds["sin"] = f(16, H // 2), f(16, H // 2)
    nodes = [helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], [f"y{i}"],
                              domain="com.microsoft", num_heads=N, interleaved=i,
                              scale=0.5, is_packed_batching=1) for i in (0, 1)]
    graph = helper.make_graph(
        nodes, "rotary",
        [_vi(k, TensorProto.INT64 if v.dtype == np.int64 else TensorProto.FLOAT, list(v.shape))
         for k, v in feeds.items()],
        [_vi(f"y{i}", TensorProto.FLOAT, None) for i in (0, 1)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    _, want = run_mp_and_onnxruntime(tmp_path, model, feeds)
    got = compile_with_dims(tmp_path, model, dims if dynamic else None).run(feeds)
    assert_outputs_close(got, want, rtol=1e-5, atol=1e-6, where=layout)

