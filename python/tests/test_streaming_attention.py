"""Long KV caches take mp's streaming attention (keys in blocks of 256 with
an online softmax; the score matrix never exists whole). ONNX Attention-23
with 600+ cached keys against onnxruntime's CPU kernel: decode and prefill,
grouped-query heads, float and bool masks, causal, soft cap; and the
com.microsoft GroupQueryAttention path."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import run_mp_and_onnxruntime

B, HQ, HKV, D = 1, 4, 2, 16


def _model(S, P, mask=None, **attrs):
    rng = np.random.default_rng(P + S)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    vi = lambda n, t, s: helper.make_tensor_value_info(n, t, s)  # noqa: E731
    T = P + S
    feeds = {"q": f(B, HQ, S, D), "k": f(B, HKV, S, D), "v": f(B, HKV, S, D),
             "pk": f(B, HKV, P, D), "pv": f(B, HKV, P, D)}
    inputs = ["q", "k", "v", "", "pk", "pv"]
    graph_inputs = [vi(n, TensorProto.FLOAT, list(a.shape)) for n, a in feeds.items()]
    if mask == "float":
        feeds["m"] = np.where(rng.random((S, T)) < 0.2, -np.inf, f(S, T)).astype(np.float32)
        feeds["m"][:, 0] = 0  # every query sees a key
        graph_inputs.append(vi("m", TensorProto.FLOAT, [S, T]))
        inputs[3] = "m"
    elif mask == "bool":
        feeds["m"] = rng.random((S, T)) > 0.3
        feeds["m"][:, -1] = True
        graph_inputs.append(vi("m", TensorProto.BOOL, [S, T]))
        inputs[3] = "m"
    node = helper.make_node("Attention", inputs, ["y", "present_k", "present_v"], name="attn",
                            **attrs)
    outs = [vi(n, TensorProto.FLOAT, None) for n in ("y", "present_k", "present_v")]
    graph = helper.make_graph([node], "attn", graph_inputs, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)]), feeds


CASES = {
    "decode": dict(S=1, P=600),
    "decode_float_mask": dict(S=1, P=700, mask="float"),
    "prefill_causal": dict(S=8, P=600, is_causal=1),
    "prefill_bool_mask_softcap": dict(S=4, P=520, mask="bool", softcap=3.0),
    "exact_blocks_scaled": dict(S=2, P=510, scale=0.3),
}


@pytest.mark.parametrize("case", list(CASES))
def test_streaming_attention_matches_onnxruntime(tmp_path, case):
    model, feeds = _model(**CASES[case])
    got, want = run_mp_and_onnxruntime(tmp_path, model, feeds)
    for (name, g), w in zip(got.items(), want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"{case}: {name}")
