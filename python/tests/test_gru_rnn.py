"""mp's GRU and RNN lowerings against onnxruntime on the same inputs: every
direction, both layouts, linear_before_reset 0 and 1, sequence lengths
shorter than the sequence, initial states, only Y_h requested, no bias,
clip and other activations, opsets 14 and 7, each also compiled with
dynamic shapes (sequence length and batch named, not fixed); and the ONNX
node tests (test_gru_*, test_rnn_*, test_simple_rnn_*) through `mp-run
--test-dir`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mp
from mp.tools import build_dir, node_tests

ort = pytest.importorskip("onnxruntime")

T, B, I, H = 5, 3, 4, 6
GATES = {"GRU": 3, "RNN": 1}
MP_RUN = build_dir() / "bin" / "mp-run"


def _model(op, direction="forward", layout=0, bias=True, with_lens=False, with_init=False,
           only_yh=False, symbolic=False, opset=14,
           **attrs) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(11)
    d = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    w = lambda *s: rng.uniform(-0.5, 0.5, s).astype(np.float32)  # noqa: E731
    x_shape = [B, T, I] if layout else [T, B, I]
    feeds = {"X": rng.uniform(-1, 1, x_shape).astype(np.float32)}
    inits = [onnx.numpy_helper.from_array(w(d, g * H, I), "W"),
             onnx.numpy_helper.from_array(w(d, g * H, H), "R")]
    inputs = ["X", "W", "R", "", "", ""]
    if bias:
        inits.append(onnx.numpy_helper.from_array(w(d, 2 * g * H), "Bias"))
        inputs[3] = "Bias"
    # With `symbolic`, the graph declares the sequence length and batch by
    # name only.
    t_dim, b_dim = ("t", "b") if symbolic else (T, B)
    graph_inputs = [helper.make_tensor_value_info(
        "X", TensorProto.FLOAT, [b_dim, t_dim, I] if layout else [t_dim, b_dim, I])]
    if with_lens:
        # One full sequence, two shorter ones.
        feeds["L"] = np.array([T, 2, 4], dtype=np.int32)
        inputs[4] = "L"
        graph_inputs.append(helper.make_tensor_value_info("L", TensorProto.INT32, [b_dim]))
    if with_init:
        feeds["H0"] = rng.uniform(-1, 1, [B, d, H] if layout else [d, B, H]).astype(np.float32)
        inputs[5] = "H0"
        graph_inputs.append(helper.make_tensor_value_info(
            "H0", TensorProto.FLOAT, [b_dim, d, H] if layout else [d, b_dim, H]))
    while inputs[-1] == "":
        inputs.pop()
    outputs = ["", "Y_h"] if only_yh else ["Y", "Y_h"]
    if opset >= 14:  # layout came with version 14
        attrs["layout"] = layout
    node = helper.make_node(op, inputs, outputs, name=op.lower(), hidden_size=H,
                            direction=direction, **attrs)
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs if n]
    graph = helper.make_graph([node], op.lower(), graph_inputs, outs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, feeds


def _reference(tmp_path, op, case, feeds) -> list[np.ndarray]:
    """onnxruntime's outputs; it has no batch-first GRU or RNN, so layout 1
    runs as layout 0 on transposed data."""
    path = tmp_path / "reference.onnx"
    layout = case.get("layout", 0)
    model, _ = _model(op, **{**case, "layout": 0})
    onnx.save(model, str(path))
    if layout:
        feeds = {k: np.ascontiguousarray(np.swapaxes(v, 0, 1)) if v.ndim == 3 else v
                 for k, v in feeds.items()}
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    if not layout:
        return got
    if case.get("only_yh"):
        return [np.swapaxes(got[0], 0, 1)]
    return [np.transpose(got[0], (2, 0, 1, 3)), np.swapaxes(got[1], 0, 1)]


GRU_CASES = {
    "forward": {},
    "reverse_lens": dict(direction="reverse", with_lens=True),
    "bidirectional_lens_init": dict(direction="bidirectional", with_lens=True, with_init=True),
    "linear_before_reset": dict(linear_before_reset=1, with_init=True),
    "linear_before_reset_bidirectional_lens": dict(linear_before_reset=1, with_lens=True,
                                                   direction="bidirectional"),
    "batch_first": dict(layout=1, with_init=True, with_lens=True, direction="bidirectional"),
    "batch_first_linear_before_reset": dict(layout=1, linear_before_reset=1, direction="reverse"),
    "only_y_h": dict(only_yh=True, with_lens=True, direction="reverse"),
    "no_bias": dict(bias=False, with_init=True),
    "opset7_bidirectional_lens": dict(opset=7, direction="bidirectional", with_lens=True,
                                      with_init=True, linear_before_reset=1),
    "clip_activations": dict(clip=0.7, direction="bidirectional",
                             activations=["Sigmoid", "Relu", "HardSigmoid", "Tanh"],
                             activation_alpha=[0.3], activation_beta=[0.4]),
}
RNN_CASES = {
    "forward": {},
    "reverse_lens": dict(direction="reverse", with_lens=True),
    "bidirectional_lens_init": dict(direction="bidirectional", with_lens=True, with_init=True),
    "batch_first": dict(layout=1, with_init=True, with_lens=True, direction="bidirectional"),
    "only_y_h": dict(only_yh=True, with_init=True),
    "no_bias": dict(bias=False),
    "relu_clip": dict(clip=0.9, activations=["Relu"], with_lens=True),
    "opset7_reverse_lens": dict(opset=7, direction="reverse", with_lens=True, with_init=True),
}
CASES = [("GRU", name) for name in GRU_CASES] + [("RNN", name) for name in RNN_CASES]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("op,case", CASES, ids=[f"{op}-{name}" for op, name in CASES])
def test_matches_onnxruntime(tmp_path, op, case, dynamic):
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")
    spec = (GRU_CASES if op == "GRU" else RNN_CASES)[case]
    model, feeds = _model(op, **spec, symbolic=dynamic)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    got = mp.compile(path, dynamic_shapes=dynamic).run(feeds)
    want = _reference(tmp_path, op, spec, feeds)
    names = ["Y_h"] if spec.get("only_yh") else ["Y", "Y_h"]
    assert list(got) == names
    for name, w in zip(names, want):
        assert got[name].shape == w.shape, (case, name)
        np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-6, err_msg=f"{op} {case}: {name}")


def test_gru_one_variant_for_every_length(tmp_path):
    """A bidirectional GRU compiled once with dynamic shapes runs sequence
    lengths 1 to 9 and batches 1 to 4 like onnxruntime."""
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")
    model, _ = _model("GRU", direction="bidirectional", with_init=True, symbolic=True)
    path = tmp_path / "gru.onnx"
    onnx.save(model, str(path))
    compiled = mp.compile(path, dynamic_shapes=True)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(5)
    for steps, batch in [(1, 1), (9, 2), (4, 4)]:
        feeds = {"X": rng.uniform(-1, 1, (steps, batch, I)).astype(np.float32),
                 "H0": rng.uniform(-1, 1, (2, batch, H)).astype(np.float32)}
        got = compiled.run(feeds)
        for (name, g), w in zip(got.items(), sess.run(None, feeds)):
            assert g.shape == w.shape, (name, steps, batch)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} at T={steps}, B={batch}")
    assert compiled.num_variants == 1


NODE_TEST_PATTERNS = ("test_gru_*", "test_rnn_*", "test_simple_rnn_*")


@pytest.mark.parametrize("flags", [[], ["--dynamic-shapes"], ["--precision", "mixed"]],
                         ids=["static", "dynamic", "mixed"])
def test_onnx_node_tests(tmp_path, flags):
    """The GRU and RNN node tests of Debian's libonnx-testdata and of the onnx
    wheel pass through mp-run --test-dir (the wheel's under a suffix), also
    with dynamic shapes and in mixed precision (mp-run's fp16 tolerances)."""
    if not MP_RUN.is_file():
        pytest.skip(f"mp-run is not built ({MP_RUN})")
    tree = tmp_path / "tree"
    tree.mkdir()
    for source, suffix in ((node_tests.DEBIAN_NODE_DIR, ""),
                           (node_tests.wheel_node_dir(), "_wheel")):
        for pattern in NODE_TEST_PATTERNS:
            for case in sorted(Path(source).glob(pattern)):
                (tree / (case.name + suffix)).symlink_to(case)
    cases = sorted(p.name for p in tree.iterdir())
    if not cases:
        pytest.skip("neither libonnx-testdata nor the onnx wheel has GRU/RNN node tests")
    run = subprocess.run([str(MP_RUN), "--test-dir", str(tree), *flags, "--timeout", "120"],
                         capture_output=True, text=True)
    totals = re.search(r"(\d+) passed, (\d+) failed, (\d+) skipped", run.stdout)
    assert totals, run.stdout[-2000:] + run.stderr[-2000:]
    failures = [line for line in run.stdout.splitlines() if not line.startswith("PASS")]
    assert int(totals.group(1)) == len(cases), "\n".join(failures)
