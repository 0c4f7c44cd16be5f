"""mp-compile libraries of every shared model and bundled example.

CPU target: the library, run through the runtime alone (``mp.load``),
matches the JIT (``mp.compile``) on the model's first test data set. CUDA
target: the library builds (ptxas compiles every kernel for sm_80 and sm_90)
and, without a driver, fails to load with the documented message and exit
code 3 -- this machine has no GPU; bench/gpu/run.sh runs them on one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import BUILD, compiled_library

import mp

REPO = Path(__file__).resolve().parents[2]
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
MP_COMPILE = BUILD / "bin" / "mp-compile"
MP_RUN = BUILD / "bin" / "mp-run"
SHARED = REPO.parent / "shared" / "models"
MODELS = sorted(p.parent for p in list(SHARED.glob("*/model.onnx")) +
                list((REPO / "examples").glob("*/model.onnx")))


def _tensors(folder: Path, prefix: str) -> list[onnx.TensorProto]:
    files = sorted(folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    return [onnx.load_tensor(str(f)) for f in files]


def _require_tools():
    if not MP_COMPILE.is_file() or not mp.library_path().is_file():
        pytest.skip(f"mp-compile or libMPCAPI.so is not built ({BUILD})")


def _compile(model: Path, out: Path, *args: str) -> dict:
    data = model / "test_data_set_0"
    proc = subprocess.run([str(MP_COMPILE), str(model / "model.onnx"), "--shapes-from",
                           str(data), "-o", str(out), *args],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"mp-compile: wrote {out}" in proc.stderr
    return json.loads(out.with_suffix(".json").read_text())


# GPT-2's contrib Attention with past (~35 s) in the full tier.
@pytest.mark.parametrize("model", [
    pytest.param(m, marks=pytest.mark.slow) if m.name.startswith("genai_gpt2") else m for m in MODELS],
    ids=[m.name for m in MODELS])
def test_cpu_library_matches_jit(model, tmp_path):
    _require_tools()
    desc = _compile(model, tmp_path / "libmodel.so")
    assert desc["target"] == "cpu" and desc["abi_version"] == 1
    tensors = _tensors(model / "test_data_set_0", "input")
    jit = mp.compile(model / "model.onnx")
    names = [i.name for i in jit.inputs]
    feeds = {t.name or names[i]: numpy_helper.to_array(t) for i, t in enumerate(tensors)}
    want = jit.run(feeds)
    with mp.load(tmp_path / "libmodel.so") as lib:
        assert lib.target == "cpu"
        # Inputs whose values decide shapes are compiled into the library.
        assert [n for n, _, _ in lib.inputs] == [i["name"] for i in desc["inputs"]]
        got = lib.run({n: feeds[n] for n, _, _ in lib.inputs})
    assert list(got) == list(want)
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape
        np.testing.assert_allclose(got[name].astype(np.float64), want[name].astype(np.float64),
                                   rtol=1e-6, atol=1e-6, err_msg=name)


def _has_ptxas() -> bool:
    roots = [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    return bool(shutil.which("ptxas")) or any(r and (Path(r) / "bin" / "ptxas").is_file() for r in roots)


@pytest.mark.parametrize("model", MODELS, ids=[m.name for m in MODELS])
def test_cuda_library_builds_and_reports_missing_driver(model, tmp_path):
    _require_tools()
    if not _has_ptxas():
        pytest.skip("no CUDA toolkit (ptxas) on this machine")
    lib = tmp_path / "libmodel.so"
    desc = _compile(model, lib, "--target", "cuda", "--gpu", "sm_80,sm_90")
    assert desc["target"] == "cuda" and desc["gpu_archs"] == ["sm_80", "sm_90"]
    env = dict(os.environ, MP_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    proc = subprocess.run([str(MP_RUN), str(lib), "--generate-inputs"], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    assert "CUDA driver not found: could not load /nonexistent/libcuda.so.1" in proc.stderr


def test_load_errors(tmp_path):
    _require_tools()
    with pytest.raises(mp.Error, match="cannot open library") as e:
        mp.load(tmp_path / "missing.so")
    assert e.value.status == 2
    # The decoder's fp32 library from the run's cache (test_ptx_emulator.py's
    # reference library); test_cpu_library_matches_jit checks mp-compile itself.
    tts = REPO / "examples" / "tts_decoder"
    lib = compiled_library(tts / "model.onnx", "--precision", "fp32", "--shapes-from",
                           str(tts / "test_data_set_0"))
    with mp.load(lib) as m:
        with pytest.raises(mp.Error, match="missing input 'mel_frame'"):
            m.run({})
        name, dtype, shape = m.inputs[0]
        with pytest.raises(mp.Error, match="the library was compiled for float32"):
            m.run({n: np.zeros(s, d) for n, d, s in m.inputs} | {name: np.zeros(shape, np.float64)})
        with pytest.raises(mp.Error, match="no input named 'nope'"):
            m.run({"nope": np.zeros(1)})
