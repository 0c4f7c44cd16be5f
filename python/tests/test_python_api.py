"""The Python package ``mp`` (python/mp) over the C API (libMPCAPI.so).

References are onnxruntime's stored outputs (examples/, the onnx wheel's
node tests) and onnxruntime run here on the same inputs -- never mp itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import mp
from conftest import assert_outputs_close, ort_outputs

REPO = Path(__file__).resolve().parents[2]
TTS = REPO / "examples" / "tts_decoder"
NODE = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
ERRORS = REPO / "test" / "Execution" / "Inputs"


def _require_library():
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")


def _tensors(folder: Path, prefix: str) -> list[np.ndarray]:
    files = sorted(folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    return [numpy_helper.to_array(onnx.load_tensor(str(f))) for f in files]


def _named_tensors(folder: Path, prefix: str) -> dict[str, np.ndarray]:
    tensors = [onnx.load_tensor(str(f)) for f in sorted(
        folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
    return {t.name: numpy_helper.to_array(t) for t in tensors}


@pytest.fixture(scope="module")
def tts_fp32():
    _require_library()
    return mp.compile(TTS / "model.onnx")


def test_signature(tts_fp32):
    names = [i.name for i in tts_fp32.inputs]
    assert names[:2] == ["mel_frame", "encoder_out"]
    mel = tts_fp32.inputs[0]
    assert mel.dtype == np.float32 and mel.shape == (None, 1, 80)
    assert [o.name for o in tts_fp32.outputs][:2] == ["mel_out", "stop_logit"]


def test_fp32_matches_onnxruntime_reference(tts_fp32):
    data = TTS / "test_data_set_0"
    inputs = dict(zip([i.name for i in tts_fp32.inputs], _tensors(data, "input")))
    outs = tts_fp32.run(inputs)
    assert list(outs) == [o.name for o in tts_fp32.outputs]
    want = _named_tensors(data, "output")
    assert all(outs[n].dtype == w.dtype for n, w in want.items() if n in outs)
    assert_outputs_close(outs, want, rtol=1e-4, atol=1e-5, where="set 0")


def test_new_shapes_compile_a_new_variant(tts_fp32):
    """Batch 1 and a longer cache: checked against onnxruntime on the same
    inputs."""
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(0)
    feeds = {}
    for info in tts_fp32.inputs:
        shape = [1 if i == 0 else (9 if d is None else d) for i, d in enumerate(info.shape)]
        feeds[info.name] = rng.standard_normal(shape).astype(info.dtype)
    outs = tts_fp32.run(feeds)
    assert_outputs_close(outs, ort_outputs(TTS / "model.onnx", feeds), rtol=1e-4, atol=1e-5,
                         where="batch 1, cache 9")


def test_positional_inputs(tts_fp32):
    data = TTS / "test_data_set_0"
    outs = tts_fp32.run(_tensors(data, "input"))
    np.testing.assert_allclose(outs["mel_out"], _tensors(data, "output")[0], rtol=1e-4, atol=1e-5)


def test_mixed_precision_close_to_reference():
    _require_library()
    data = TTS / "test_data_set_0"
    with mp.compile(TTS / "model.onnx", precision="mixed") as m:
        outs = m.run(_tensors(data, "input"))
    assert all(np.isfinite(got).all() for got in outs.values())
    assert_outputs_close(outs, _named_tensors(data, "output"), rtol=1e-2, atol=1e-2,
                         where="mixed")


def test_integer_inputs_are_compiled_in_per_value(tmp_path):
    """Reshape's shape input is compiled in as a constant: the node test
    passes, and each new value gets its own variant (checked with numpy)."""
    _require_library()
    case = NODE / "test_reshape_reordered_all_dims"
    if not case.is_dir():
        pytest.skip("the onnx wheel has no node test data")
    data, shape = _tensors(case / "test_data_set_0", "input")
    m = mp.compile(case / "model.onnx")
    want = _tensors(case / "test_data_set_0", "output")[0]
    np.testing.assert_array_equal(m.run([data, shape])["reshaped"], want)

    # The same graph with an undeclared output shape takes any target shape.
    model = onnx.load(str(case / "model.onnx"))
    model.graph.output[0].type.tensor_type.ClearField("shape")
    onnx.save(model, str(tmp_path / "reshape.onnx"))
    m = mp.compile(tmp_path / "reshape.onnx")
    for target in ([4, 2, 3], [3, 2, 4], [1, 24, 1]):
        got = m.run([data, np.array(target, dtype=np.int64)])["reshaped"]
        np.testing.assert_array_equal(got, data.reshape(target))
    assert m.num_variants == 3


def test_token_ids_stay_runtime_inputs(tmp_path):
    """An integer input that only indexes data (token ids into an embedding
    table) is not compiled in: new ids reuse the compiled code."""
    _require_library()
    from onnx import TensorProto, helper, numpy_helper
    table = np.arange(20, dtype=np.float32).reshape(5, 4)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["emb"], name="embed")], "embed",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 2])],
        [helper.make_tensor_value_info("emb", TensorProto.FLOAT, [1, 2, 4])],
        initializer=[numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "embed.onnx"))
    m = mp.compile(tmp_path / "embed.onnx")
    for ids in ([[0, 4]], [[3, 1]], [[2, 2]]):
        ids = np.array(ids, dtype=np.int64)
        np.testing.assert_array_equal(m.run({"ids": ids})["emb"], table[ids])
    assert m.num_variants == 1


def test_scalar_inputs_keep_rank_zero(tmp_path):
    """A 0-d array is passed as a scalar (not as shape [1]); checked with numpy."""
    _require_library()
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["y"], name="scale")], "scale",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "scale.onnx"))
    m = mp.compile(tmp_path / "scale.onnx")
    x = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    np.testing.assert_array_equal(m.run({"x": x, "s": np.float32(3.0)})["y"], x * 3)
    np.testing.assert_array_equal(m.run({"x": x[::-1], "s": np.array(2.0, np.float32)})["y"],
                                  x[::-1] * 2)


@pytest.mark.parametrize("feeds,message", [
    (lambda x: {"nope": x}, "the model has no input named 'nope'"),
    (lambda x: {"mel_frame": x}, "missing input 'encoder_out'"),
    (lambda x: {"mel_frame": x.astype(np.float64)}, "input 'mel_frame' is f64[2, 1, 80], the model expects"),
    (lambda x: {"mel_frame": x[0]}, "input 'mel_frame' is f32[1, 80], the model expects"),
    (lambda x: {"mel_frame": x.astype(np.complex64)}, "has dtype '<c8', which mp does not support"),
    (lambda x: [x] * 7, "input #6 is f32[2, 1, 80], but"),
])
def test_bad_inputs_are_reported_before_running(tts_fp32, feeds, message):
    x = _tensors(TTS / "test_data_set_0", "input")[0]
    with pytest.raises(mp.Error, match=message.replace("[", r"\[").replace("]", r"\]")):
        tts_fp32.run(feeds(x))


@pytest.mark.parametrize("args,message", [
    ((ERRORS / "nonexistent.onnx",), "cannot open model file"),
    ((ERRORS / "garbage.npy",), "is not a valid ONNX model"),
    ((ERRORS / "unsupported_op.onnx",), r"node 'foo': unsupported op Foo"),
    ((TTS / "model.onnx", "fp16"), "precision must be 'fp32' or 'mixed', got 'fp16'"),
    ((TTS / "model.onnx", "fp32", ERRORS / "w.npy"), "a precision policy only applies to mixed precision"),
    ((TTS / "model.onnx", "mixed", ERRORS / "garbage.npy"), "garbage.npy"),
])
def test_bad_models_and_options_raise(args, message):
    _require_library()
    with pytest.raises(mp.Error, match=message):
        mp.compile(*args)


def test_missing_library_is_a_clear_error(tmp_path):
    code = "import mp\ntry:\n    mp.compile('x.onnx')\nexcept mp.Error as e:\n    print(e)\n"
    env = dict(os.environ, MP_LIBRARY=str(tmp_path / "libMPCAPI.so"),
               PYTHONPATH=str(REPO / "python"))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "cannot find the mp C library" in p.stdout and "MP_LIBRARY" in p.stdout


def test_float_scales_input_is_compiled_in(tmp_path):
    """Resize's scales given as a graph input decide the output shape: mp
    compiles them in (a variant per value); checked against onnxruntime."""
    _require_library()
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="linear")
    graph = helper.make_graph(
        [node], "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4]),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "resize.onnx"))
    m = mp.compile(tmp_path / "resize.onnx")
    session = ort.InferenceSession(str(tmp_path / "resize.onnx"), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4)).astype(np.float32)
    for scales in ([1, 1, 2, 2], [1, 1, 0.5, 1.5]):
        s = np.array(scales, dtype=np.float32)
        got = m.run({"x": x, "scales": s})["y"]
        want = session.run(None, {"x": x, "scales": s})[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
