"""The compile cache through the Python API (lit's test/Execution/compile-cache.mlir
covers mp-run): a second mp.compile of the same model, options and input shapes loads
the variant instead of compiling it, with bit-identical outputs; another key compiles;
a damaged entry is rebuilt, never loaded; the size bound holds; progress reports each
stage."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import mp
from conftest import REPO, ort_outputs, require_present

TTS = REPO / "examples" / "tts_decoder"
GPT2 = REPO.parent / "shared" / "corpus" / "decoders" / "gpt2_ts"


def _feeds(folder: Path, model: Path) -> dict[str, np.ndarray]:
    names = [i.name for i in onnx.load(str(model), load_external_data=False).graph.input]
    files = sorted(folder.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    tensors = [onnx.load_tensor(str(f)) for f in files]
    return {t.name or names[i]: numpy_helper.to_array(t) for i, t in enumerate(tensors)}


def _compile_and_run(model: Path, feeds: dict, **kwargs) -> tuple[dict, list[str]]:
    """Outputs of one fresh mp.compile and run, and the stages it reported."""
    stages: list[str] = []
    m = mp.compile(model, progress=lambda stage, ms: stages.append(stage), **kwargs)
    try:
        return m.run(feeds), stages
    finally:
        m.close()


def _assert_identical(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape, name
        assert got[name].tobytes() == want[name].tobytes(), f"{name} differs"


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "jit").glob("*") if not p.name.startswith("."))


@pytest.mark.parametrize("precision", ["fp32", "mixed"])
def test_second_compile_loads_bit_identical_outputs(tmp_path, precision):
    require_present(GPT2)
    model = GPT2 / "model.onnx"
    feeds = _feeds(GPT2 / "test_data_set_0", model)
    cold, cold_stages = _compile_and_run(model, feeds, precision=precision, cache=tmp_path)
    warm, warm_stages = _compile_and_run(model, feeds, precision=precision, cache=tmp_path)
    fresh, fresh_stages = _compile_and_run(model, feeds, precision=precision, cache=False)
    assert cold_stages == ["load", "import", "fusion and precision", "lowering", "LLVM",
                           "cache store"]
    assert warm_stages == ["load", "cache load"]
    assert "cache store" not in fresh_stages and "LLVM" in fresh_stages
    assert len(_entries(tmp_path)) == 1
    _assert_identical(warm, cold)
    _assert_identical(fresh, cold)
    # The cached build is the real one, not just a consistent one.
    if precision == "fp32":
        want = ort_outputs(model, feeds)
        for name, ref in want.items():
            np.testing.assert_allclose(warm[name], ref, rtol=1e-4, atol=1e-5, err_msg=name)


def test_every_key_change_compiles(tmp_path):
    model = TTS / "model.onnx"
    feeds = _feeds(TTS / "test_data_set_0", model)
    _, first = _compile_and_run(model, feeds, cache=tmp_path)
    _, mixed = _compile_and_run(model, feeds, cache=tmp_path, precision="mixed")
    _, fused = _compile_and_run(model, feeds, cache=tmp_path, fuse_attention=True)
    # Other input shapes: a longer encoder output.
    longer = dict(feeds)
    enc = feeds["encoder_out"]
    longer["encoder_out"] = np.concatenate([enc, enc], axis=1)
    _, shapes = _compile_and_run(model, longer, cache=tmp_path)
    for stages in (first, mixed, fused, shapes):
        assert "LLVM" in stages and "cache load" not in stages
    assert len(_entries(tmp_path)) == 4
    _, again = _compile_and_run(model, longer, cache=tmp_path)
    assert again == ["load", "cache load"]


def test_damaged_entry_is_rebuilt_not_loaded(tmp_path):
    model = TTS / "model.onnx"
    feeds = _feeds(TTS / "test_data_set_0", model)
    cold, _ = _compile_and_run(model, feeds, cache=tmp_path)
    (entry,) = _entries(tmp_path)
    obj = entry / "variant.o"
    data = bytearray(obj.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one byte changed: only the hash sees it
    obj.write_bytes(bytes(data))
    rebuilt, stages = _compile_and_run(model, feeds, cache=tmp_path)
    assert "LLVM" in stages and "cache store" in stages
    _assert_identical(rebuilt, cold)
    assert obj.read_bytes() != bytes(data)
    _, stages = _compile_and_run(model, feeds, cache=tmp_path)
    assert stages == ["load", "cache load"]


def test_size_bound_drops_least_recently_used(tmp_path, monkeypatch):
    small = REPO / "test" / "Execution" / "Inputs" / "add_matmul_softmax.onnx"
    x = np.ones((2, 4), np.float32)
    w = np.ones((4, 3), np.float32)
    # The TTS decoder's entry (~1.5 MB with its weights) is over a 1 MB bound.
    monkeypatch.setenv("MP_CACHE_MAX_MB", "1")
    _compile_and_run(small, {"x": x, "w": w}, cache=tmp_path)
    assert len(_entries(tmp_path)) == 1
    model = TTS / "model.onnx"
    _, stages = _compile_and_run(model, _feeds(TTS / "test_data_set_0", model), cache=tmp_path)
    assert "cache store" in stages
    total = sum(f.stat().st_size for e in _entries(tmp_path) for f in e.iterdir())
    assert total <= 1 << 20, f"{total} bytes kept under a 1 MB bound"


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MP_CACHE_DIR", "off")
    model = TTS / "model.onnx"
    _, stages = _compile_and_run(model, _feeds(TTS / "test_data_set_0", model))
    assert "cache store" not in stages and "LLVM" in stages
    assert list(tmp_path.iterdir()) == []


def test_stages_go_to_the_logger_without_a_callback(tmp_path, caplog):
    model = TTS / "model.onnx"
    feeds = _feeds(TTS / "test_data_set_0", model)
    with caplog.at_level(logging.INFO, logger="mp"):
        m = mp.compile(model, cache=tmp_path)
        m.run(feeds)
        m.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "mp"]
    assert any(line.startswith("compile stage LLVM: ") and line.endswith(" ms") for line in lines), lines


def test_default_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MP_CACHE_DIR", str(tmp_path / "here"))
    model = TTS / "model.onnx"
    _compile_and_run(model, _feeds(TTS / "test_data_set_0", model))
    assert len(_entries(tmp_path / "here")) == 1
