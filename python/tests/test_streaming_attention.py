"""Long KV caches take mp's streaming attention (keys in blocks of 256 with
an online softmax; the score matrix never exists whole). ONNX Attention-23
with 600+ cached keys against onnxruntime's CPU kernel: decode and prefill,
grouped-query heads, float and bool masks, causal, soft cap; and the
com.microsoft GroupQueryAttention path. Every case also runs compiled once
with run-time cache, query and mask lengths (`dynamic_shapes`), where the
number of key blocks is decided at run time; a mask shorter than the keys
is padded as the ONNX reference pads it."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import assert_outputs_close, compile_with_dims, run_mp_and_onnxruntime

B, HQ, HKV, D = 1, 4, 2, 16


def _model(S, P, mask=None, mask_keys=None, **attrs):
    rng = np.random.default_rng(P + S)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    vi = lambda n, t, s: helper.make_tensor_value_info(n, t, s)  # noqa: E731
    T = P + S
    feeds = {"q": f(B, HQ, S, D), "k": f(B, HKV, S, D), "v": f(B, HKV, S, D),
             "pk": f(B, HKV, P, D), "pv": f(B, HKV, P, D)}
    inputs = ["q", "k", "v", "", "pk", "pv"]
    graph_inputs = [vi(n, TensorProto.FLOAT, list(a.shape)) for n, a in feeds.items()]
    if mask == "float":
        M = mask_keys or T  # a shorter mask is padded with -inf
        feeds["m"] = np.where(rng.random((S, M)) < 0.2, -np.inf, f(S, M)).astype(np.float32)
        feeds["m"][:, 0] = 0  # every query sees a key
        graph_inputs.append(vi("m", TensorProto.FLOAT, [S, M]))
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

# Run-time dims of the dynamic variant: query length, cache length, mask.
SYMBOLIC_DIMS = {"q": {2: "s"}, "k": {2: "s"}, "v": {2: "s"}, "pk": {2: "p"}, "pv": {2: "p"},
                 "m": {0: "s", 1: "t"}}


def _compile(tmp_path, model, dynamic):
    return compile_with_dims(tmp_path, model, SYMBOLIC_DIMS if dynamic else None)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", list(CASES))
def test_streaming_attention_matches_onnxruntime(tmp_path, case, dynamic):
    model, feeds = _model(**CASES[case])
    got, want = run_mp_and_onnxruntime(tmp_path, model, feeds)
    if dynamic:
        got = _compile(tmp_path, model, True).run(feeds)
    assert_outputs_close(got, want, rtol=1e-4, atol=1e-5, where=case)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_mask_shorter_than_keys_is_padded(tmp_path, dynamic):
    """An attn_mask covering fewer keys than the cache holds: the keys past
    its end are masked (the ONNX reference pads it with -inf), whether the
    lengths are known when compiling or only at run time."""
    from onnx.reference import ReferenceEvaluator
    model, feeds = _model(S=2, P=600, mask="float", mask_keys=590)
    names = [o.name for o in model.graph.output]
    want = dict(zip(names, ReferenceEvaluator(model).run(names, feeds)))
    got = _compile(tmp_path, model, dynamic).run(feeds)
    assert_outputs_close(got, want, rtol=1e-4, atol=1e-5, where="short mask")
