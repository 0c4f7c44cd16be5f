"""The model builders in mp.models: valid, deterministic, and in sync with examples/."""

from pathlib import Path

import numpy as np
import onnx
import pytest

import mp.models

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "examples" / "tts_decoder"


@pytest.fixture(scope="module", params=sorted(mp.models.BUILDERS))
def example(request, tmp_path_factory):
    name = request.param
    path = mp.models.write_example(name, tmp_path_factory.mktemp(name) / "model.onnx")
    return name, path


def test_check_model_full(example):
    _, path = example
    onnx.checker.check_model(onnx.load(path), full_check=True)


def test_opset17_plain_onnx(example):
    _, path = example
    model = onnx.load(path)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    assert model.ir_version == 8
    assert all(n.domain in ("", "ai.onnx") for n in model.graph.node)
    assert all(n.name for n in model.graph.node)
    assert len({n.name for n in model.graph.node}) == len(model.graph.node)


def test_onnxruntime_matches_stored_outputs(example):
    name, path = example
    inputs, expected = mp.models.load_test_data(path.parent / "test_data_set_0")
    model = onnx.load(path)
    assert list(inputs) == [i.name for i in model.graph.input]
    assert list(expected) == [o.name for o in model.graph.output]
    actual = mp.models.run_onnxruntime(path, inputs)
    for k, want in expected.items():
        assert np.isfinite(want).all(), k
        np.testing.assert_allclose(actual[k], want, rtol=1e-4, atol=1e-5, err_msg=k)


def test_builder_is_deterministic(example):
    name, path = example
    assert mp.models.build(name).SerializeToString() == path.read_bytes()
    for k, v in mp.models.example_inputs(name).items():
        np.testing.assert_array_equal(v, mp.models.example_inputs(name)[k])


def test_committed_tts_decoder_is_current():
    model_path = COMMITTED / "model.onnx"
    assert model_path.read_bytes() == mp.models.build("tts_decoder").SerializeToString(), (
        "examples/tts_decoder/model.onnx is stale: run "
        "`python -m mp.models tts_decoder -o examples/tts_decoder/model.onnx`"
    )
    inputs, expected = mp.models.load_test_data(COMMITTED / "test_data_set_0")
    want_inputs = mp.models.example_inputs("tts_decoder")
    assert list(inputs) == list(want_inputs)
    for k, v in want_inputs.items():
        np.testing.assert_array_equal(inputs[k], v, err_msg=k)
    actual = mp.models.run_onnxruntime(model_path, inputs)
    assert list(expected) == list(actual)
    for k, want in expected.items():
        np.testing.assert_allclose(actual[k], want, rtol=1e-4, atol=1e-5, err_msg=k)


def test_committed_tts_decoder_is_small():
    total = sum(f.stat().st_size for f in COMMITTED.rglob("*") if f.is_file())
    assert total < 1_500_000, total


def test_tts_decoder_interface():
    model = mp.models.build("tts_decoder")

    def dims(vi):
        return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]

    ins = {i.name: dims(i) for i in model.graph.input}
    outs = {o.name: dims(o) for o in model.graph.output}
    assert ins["mel_frame"] == ["batch", 1, 80]
    assert ins["encoder_out"] == ["batch", "enc_len", 128]
    assert outs["mel_out"] == ["batch", 1, 80]
    assert outs["stop_logit"] == ["batch", 1, 1]
    for l in range(2):
        assert ins[f"past_key_{l}"] == ins[f"past_value_{l}"] == ["batch", 4, "past_len", 32]
        assert outs[f"present_key_{l}"] == outs[f"present_value_{l}"] == ["batch", 4, "present_len", 32]
    names = {n.name for n in model.graph.node}
    assert "layers.0.self_attn.q_proj/MatMul" in names
    assert "layers.1.cross_attn/Softmax" in names
    ops = {n.op_type for n in model.graph.node}
    assert {"LayerNormalization", "Softmax", "Erf", "Concat", "Sigmoid"} <= ops

    inputs = mp.models.example_inputs("tts_decoder")
    out = mp.models.run_onnxruntime(model, inputs)
    past = inputs["past_key_0"]
    # The cache grows by one step and keeps the past entries unchanged.
    assert out["present_key_0"].shape == (past.shape[0], 4, past.shape[2] + 1, 32)
    np.testing.assert_array_equal(out["present_key_0"][:, :, :-1], past)
    assert ((out["stop_logit"] > 0) & (out["stop_logit"] < 1)).all()


def test_layernorm_overflow_exceeds_fp16_range():
    model = mp.models.build("layernorm_overflow")
    w = next(onnx.numpy_helper.to_array(t) for t in model.graph.initializer
             if t.name == "block.proj.weight")
    h = mp.models.example_inputs("layernorm_overflow")["x"] @ w
    fp16_max = float(np.finfo(np.float16).max)
    peak = float(np.abs(h).max())
    assert 1e4 < peak < fp16_max  # the activations themselves fit in fp16 ...
    assert float((h.astype(np.float64) ** 2).mean()) > fp16_max  # ... their variance does not


def test_conv_vocoder_upsamples_8x():
    inputs = mp.models.example_inputs("conv_vocoder")
    out = mp.models.run_onnxruntime(mp.models.build("conv_vocoder"), inputs)
    frames = inputs["mel"].shape[-1]
    assert out["audio"].shape == (1, 1, 8 * frames)
    assert (np.abs(out["audio"]) <= 1).all()
