"""mp's LSTM lowering against onnxruntime on the same inputs: directions,
sequence lengths, clip, peepholes, initial states, coupled gates, other
activations, batch-first layout, each also compiled with dynamic shapes
(sequence length and batch named, not fixed). (The ONNX node tests cover
the defaults.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mp
from conftest import assert_outputs_close, ort_outputs

ort = pytest.importorskip("onnxruntime")

T, B, I, H = 5, 3, 4, 6


def _model(direction="forward", layout=0, with_lens=False, with_init=False, peepholes=False,
           symbolic=False, **attrs) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    d = 2 if direction == "bidirectional" else 1
    f = lambda *s: rng.uniform(-1, 1, s).astype(np.float32)  # noqa: E731
    x_shape = [B, T, I] if layout else [T, B, I]
    feeds = {"X": f(*x_shape)}
    inits = [onnx.numpy_helper.from_array(f(d, 4 * H, I), "W"),
             onnx.numpy_helper.from_array(f(d, 4 * H, H), "R"),
             onnx.numpy_helper.from_array(f(d, 8 * H), "Bias")]
    inputs = ["X", "W", "R", "Bias", "", "", "", ""]
    # With `symbolic`, the graph declares the sequence length and batch by
    # name only.
    t_dim, b_dim = ("t", "b") if symbolic else (T, B)
    graph_inputs = [helper.make_tensor_value_info(
        "X", TensorProto.FLOAT, [b_dim, t_dim, I] if layout else [t_dim, b_dim, I])]
    if with_lens:
        feeds["L"] = np.array([5, 2, 4], dtype=np.int32)
        inputs[4] = "L"
        graph_inputs.append(helper.make_tensor_value_info("L", TensorProto.INT32, [b_dim]))
    if with_init:
        s = [B, d, H] if layout else [d, B, H]
        feeds["H0"], feeds["C0"] = f(*s), f(*s)
        inputs[5], inputs[6] = "H0", "C0"
        s_dims = [b_dim, d, H] if layout else [d, b_dim, H]
        graph_inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, s_dims)
                         for n in ("H0", "C0")]
    if peepholes:
        inits.append(onnx.numpy_helper.from_array(f(d, 3 * H), "P"))
        inputs[7] = "P"
    while inputs and inputs[-1] == "":
        inputs.pop()
    node = helper.make_node("LSTM", inputs, ["Y", "Y_h", "Y_c"], name="lstm", hidden_size=H,
                            direction=direction, layout=layout, **attrs)
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("Y", "Y_h", "Y_c")]
    graph = helper.make_graph([node], "lstm", graph_inputs, outs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model, feeds


CASES = {
    "forward": {},
    "reverse_lens": dict(direction="reverse", with_lens=True),
    "bidirectional_lens_init": dict(direction="bidirectional", with_lens=True, with_init=True),
    "clip_peepholes": dict(clip=0.5, peepholes=True, with_init=True),
    "coupled_gates": dict(input_forget=1),
    "activations": dict(direction="bidirectional",
                        activations=["HardSigmoid", "LeakyRelu", "Softsign",
                                     "Sigmoid", "ScaledTanh", "Tanh"],
                        activation_alpha=[0.3, 0.1, 0.9], activation_beta=[0.4, 1.1]),
    "batch_first": dict(layout=1, with_init=True, direction="bidirectional"),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("case", list(CASES))
def test_lstm_matches_onnxruntime(tmp_path, case, dynamic):
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")
    model, feeds = _model(**CASES[case], symbolic=dynamic)
    path = tmp_path / "lstm.onnx"
    onnx.save(model, str(path))
    compiled = mp.compile(path, dynamic_shapes=dynamic)
    got = compiled.run(feeds)
    if CASES[case].get("layout"):
        # onnxruntime has no batch-first LSTM: run layout 0 on transposed data.
        model0, _ = _model(**{**CASES[case], "layout": 0})
        onnx.save(model0, str(path))
        feeds0 = {k: np.ascontiguousarray(np.swapaxes(v, 0, 1)) for k, v in feeds.items()}
        want = ort_outputs(path, feeds0)
        want = {n: np.transpose(w, (2, 0, 1, 3)) if w.ndim == 4 else np.swapaxes(w, 0, 1)
                for n, w in want.items()}
    else:
        want = ort_outputs(path, feeds)
    assert_outputs_close(got, want, rtol=1e-5, atol=1e-6, where=case)


def test_lstm_one_variant_for_every_length(tmp_path):
    """A bidirectional LSTM compiled once with dynamic shapes runs sequence
    lengths 1 to 9 and batches 1 to 4 like onnxruntime."""
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")
    model, _ = _model(direction="bidirectional", with_init=True, symbolic=True)
    path = tmp_path / "lstm.onnx"
    onnx.save(model, str(path))
    compiled = mp.compile(path, dynamic_shapes=True)
    rng = np.random.default_rng(3)
    for steps, batch in [(1, 1), (9, 2), (4, 4)]:
        feeds = {"X": rng.uniform(-1, 1, (steps, batch, I)).astype(np.float32),
                 "H0": rng.uniform(-1, 1, (2, batch, H)).astype(np.float32),
                 "C0": rng.uniform(-1, 1, (2, batch, H)).astype(np.float32)}
        assert_outputs_close(compiled.run(feeds), ort_outputs(path, feeds), rtol=1e-5,
                             atol=1e-6, where=f"T={steps}, B={batch}")
    assert compiled.num_variants == 1
