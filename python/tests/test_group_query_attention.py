"""mp's lowering of com.microsoft GroupQueryAttention against onnxruntime's
CPU kernel on the same inputs: first prompt, decode steps after a cache,
a prompt continuing a cache, batches whose caches differ in length, packed
QKV, rotary (both layouts), local windows, soft cap, a cache buffer
longer than the sequence, head sinks and smooth_softmax. total_sequence_length decides the present
cache's shape, so mp compiles it in; seqlens_k stays a run-time input. With dynamic shapes
one compiled variant serves every batch, sequence and cache length, and total_sequence_length
is read at run time."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import ort_outputs, run_mp_and_onnxruntime

N, KV, MAX_POS = 4, 2, 64


def _model(B, S, P, total, seqlens, packed=False, rotary=False, H=8, head_sink=False,
           symbolic=False, **attrs):
    """The model and its feeds; with `symbolic` the graph names the batch,
    sequence and cache lengths instead of fixing them, and has past inputs
    even when P is 0 (empty caches)."""
    rng = np.random.default_rng(11)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    vi = lambda n, t, s: helper.make_tensor_value_info(n, t, s)  # noqa: E731
    inputs = ["q", "", "", "", "", "seqlens_k", "total"]
    feeds = {"q": f(B, S, (N + 2 * KV) * H if packed else N * H)}
    b_dim, s_dim, p_dim = ("b", "s", "p") if symbolic else (B, S, P)
    graph_inputs = [vi("q", TensorProto.FLOAT, [b_dim, s_dim, feeds["q"].shape[2]])]
    if not packed:
        feeds["k"], feeds["v"] = f(B, S, KV * H), f(B, S, KV * H)
        inputs[1:3] = ["k", "v"]
        graph_inputs += [vi(n, TensorProto.FLOAT, [b_dim, s_dim, KV * H]) for n in ("k", "v")]
    if P or symbolic:
        feeds["pk"], feeds["pv"] = f(B, KV, P, H), f(B, KV, P, H)
        inputs[3:5] = ["pk", "pv"]
        graph_inputs += [vi(n, TensorProto.FLOAT, [b_dim, KV, p_dim, H]) for n in ("pk", "pv")]
    feeds["seqlens_k"] = np.array(seqlens, np.int32)
    feeds["total"] = np.array(total, np.int32)
    graph_inputs += [vi("seqlens_k", TensorProto.INT32, [b_dim]),
                     vi("total", TensorProto.INT32, [])]
    if rotary:
        angles = np.arange(MAX_POS)[:, None] / (100.0 ** (np.arange(H // 2)[None] / (H // 2)))
        feeds["cos"], feeds["sin"] = (np.cos(angles).astype(np.float32),
                                      np.sin(angles).astype(np.float32))
        inputs += ["cos", "sin"]
        graph_inputs += [vi(n, TensorProto.FLOAT, [MAX_POS, H // 2]) for n in ("cos", "sin")]
        attrs["do_rotary"] = 1
    if head_sink:
        feeds["sink"] = rng.uniform(-1, 2, size=N).astype(np.float32)
        inputs += [""] * (11 - len(inputs)) + ["sink"]
        graph_inputs.append(vi("sink", TensorProto.FLOAT, [N]))
    node = helper.make_node("GroupQueryAttention", inputs, ["out", "present_key", "present_value"],
                            domain="com.microsoft", name="gqa", num_heads=N, kv_num_heads=KV,
                            **attrs)
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
            for n in ("out", "present_key", "present_value")]
    graph = helper.make_graph([node], "gqa", graph_inputs, outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid("com.microsoft", 1)])
    return model, feeds


CASES = {
    "first_prompt": dict(B=1, S=5, P=0, total=5, seqlens=[4]),
    "decode": dict(B=1, S=1, P=6, total=7, seqlens=[6]),
    "prompt_after_cache": dict(B=1, S=3, P=4, total=7, seqlens=[6]),
    "batch_of_lengths": dict(B=2, S=1, P=6, total=7, seqlens=[6, 3]),
    # onnxruntime rotates only heads whose size is a multiple of 16.
    "packed_rotary": dict(B=1, S=1, P=5, total=6, seqlens=[5], packed=True, rotary=True, H=16),
    "rotary_interleaved_prompt": dict(B=1, S=4, P=0, total=4, seqlens=[3], rotary=True,
                                      rotary_interleaved=1, H=16),
    "rotary_batch_of_lengths": dict(B=2, S=1, P=6, total=7, seqlens=[6, 2], rotary=True, H=16),
    "local_window": dict(B=1, S=4, P=0, total=4, seqlens=[3], local_window_size=2),
    "softcap_scale": dict(B=1, S=1, P=3, total=4, seqlens=[3], softcap=2.0, scale=0.5),
    "long_cache_buffer": dict(B=1, S=1, P=8, total=5, seqlens=[4]),
    # An extra logit per head in every softmax row (gpt-oss style sinks),
    # and smooth_softmax (a sink of 0); the long cache streams on the CPU.
    "head_sink_decode": dict(B=2, S=1, P=6, total=7, seqlens=[6, 3], head_sink=True),
    "head_sink_prompt": dict(B=1, S=4, P=0, total=4, seqlens=[3], head_sink=True),
    "smooth_softmax": dict(B=1, S=3, P=4, total=7, seqlens=[6], smooth_softmax=1),
    "head_sink_long_cache": dict(B=1, S=1, P=600, total=601, seqlens=[600], head_sink=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_group_query_attention_matches_onnxruntime(tmp_path, case):
    model, feeds = _model(**CASES[case])
    got, want = run_mp_and_onnxruntime(tmp_path, model, feeds)
    assert set(got) == set(want) == {"out", "present_key", "present_value"}, case
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-5, atol=1e-5, err_msg=case)
    # The caches agree on every valid position (past the last one
    # onnxruntime leaves the buffer as it was allocated).
    for name in ("present_key", "present_value"):
        w = want[name]
        assert got[name].shape == w.shape, (case, name)
        for b, last in enumerate(feeds["seqlens_k"]):
            np.testing.assert_allclose(got[name][b, :, :last + 1], w[b, :, :last + 1],
                                       rtol=1e-6, atol=1e-6, err_msg=f"{case}: {name}[{b}]")


DYNAMIC_STEPS = [dict(B=1, S=5, P=0, total=5, seqlens=[4]),
                 dict(B=1, S=1, P=5, total=6, seqlens=[5]),
                 dict(B=2, S=1, P=6, total=7, seqlens=[6, 3]),
                 dict(B=1, S=3, P=4, total=7, seqlens=[6]),
                 dict(B=1, S=1, P=8, total=5, seqlens=[4])]


@pytest.mark.parametrize("rotary", [False, True], ids=["plain", "rotary"])
def test_group_query_attention_one_variant_for_every_shape(tmp_path, rotary):
    """Compiled once with dynamic shapes, GroupQueryAttention runs a first
    prompt on empty caches, decode steps, a batch whose caches differ in
    length, a prompt after a cache and a cache buffer longer than the
    sequence like onnxruntime, with total_sequence_length read at run time."""
    import onnx

    import mp
    pytest.importorskip("onnxruntime")
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")
    path = tmp_path / "model.onnx"
    onnx.save(_model(**DYNAMIC_STEPS[0], rotary=rotary, H=16 if rotary else 8,
                     symbolic=True)[0], str(path))
    compiled = mp.compile(path, dynamic_shapes=True)
    for step in DYNAMIC_STEPS:
        _, feeds = _model(**step, rotary=rotary, H=16 if rotary else 8, symbolic=True)
        got, want = compiled.run(feeds), ort_outputs(path, feeds)
        assert set(got) == set(want) == {"out", "present_key", "present_value"}, step
        np.testing.assert_allclose(got["out"], want["out"], rtol=1e-5, atol=1e-5,
                                   err_msg=str(step))
        for name in ("present_key", "present_value"):
            w = want[name]
            assert got[name].shape == w.shape, (step, name)
            for b, last in enumerate(feeds["seqlens_k"]):
                np.testing.assert_allclose(got[name][b, :, :last + 1], w[b, :, :last + 1],
                                           rtol=1e-6, atol=1e-6, err_msg=f"{step}: {name}[{b}]")
    assert compiled.num_variants == 1


def test_group_query_attention_library_with_dynamic_shapes(tmp_path):
    """mp-compile --dynamic-shapes keeps total_sequence_length a library
    input: one library runs the same steps as above through the runtime."""
    import os
    import subprocess
    from pathlib import Path

    import onnx

    import mp
    ort = pytest.importorskip("onnxruntime")
    build = Path(os.environ.get("MP_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
    mp_compile = build / "bin" / "mp-compile"
    if not mp_compile.is_file() or not mp.library_path().is_file():
        pytest.skip("mp-compile or libMPCAPI.so is not built")
    path, lib_path = tmp_path / "model.onnx", tmp_path / "libgqa.so"
    onnx.save(_model(**DYNAMIC_STEPS[0], symbolic=True)[0], str(path))
    proc = subprocess.run([str(mp_compile), str(path), "-o", str(lib_path), "--dynamic-shapes"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lib = mp.load(lib_path)
    assert lib.dynamic_shapes
    assert "total" in [name for name, _, _ in lib.inputs]
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for step in DYNAMIC_STEPS:
        _, feeds = _model(**step, symbolic=True)
        got, want = lib.run(feeds), sess.run(None, feeds)
        np.testing.assert_allclose(got["out"], want[0], rtol=1e-5, atol=1e-5, err_msg=str(step))
