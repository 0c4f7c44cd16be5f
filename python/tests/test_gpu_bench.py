"""The GPU benchmark's flow, end to end, without a GPU (bench/gpu/README.md).

build.sh on one small model (CUDA and CPU libraries, references, manifest),
then run.py --device cpu (the CPU libraries through the same checks and
timing), and run.py --device cuda with no driver: every library must fail
to load with the runtime's message, the results must still be written and
the exit status must be 1. This is what keeps the prepared GPU run from
failing on something a CPU could have caught.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD, compiled_library, require_built

REPO = Path(__file__).resolve().parents[2]
# The smallest model that is present (shared models are not in the repo).
CANDIDATES = [REPO.parent / "shared" / "models" / "openwakeword_hello_deepa", REPO / "examples" / "tts_decoder"]


def _has_ptxas() -> bool:
    roots = [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    return bool(shutil.which("ptxas")) or any(r and (Path(r) / "bin" / "ptxas").is_file() for r in roots)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    require_built(BUILD / "bin" / "mp-compile")
    if not _has_ptxas():
        pytest.skip("no CUDA toolkit (ptxas) on this machine")
    model = next(m for m in CANDIDATES if (m / "test_data_set_0").is_dir())
    art = tmp_path_factory.mktemp("gpu-bench") / "artifacts"
    env = dict(os.environ, ARTIFACTS=str(art), PYTHON=sys.executable)
    proc = subprocess.run(["bash", str(REPO / "bench" / "gpu" / "build.sh"), model.name],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "artifacts:" in proc.stdout
    return model.name, art


def _run(art: Path, out: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "bench" / "gpu" / "run.py"), "--artifacts", str(art),
                           "--out", str(out), "--runs", "5", "--seconds", "0.2", *args],
                          env=dict(os.environ, **env), capture_output=True, text=True, timeout=300)


def test_build_writes_manifest(artifacts):
    name, art = artifacts
    manifest = json.loads((art / "manifest.json").read_text())
    (model,) = manifest["models"]
    assert model["name"] == name and (art / model["onnx"]).is_file()
    assert [b["precision"] for b in model["builds"]] == ["fp32", "mixed"]
    for b in model["builds"]:
        for target in ("cuda", "cpu"):
            assert b[target]["ok"], b[target]
            lib = art / b[target]["library"]
            assert (lib.parent / "libmp_runtime.so").is_file()
        assert b["cuda"]["gpu_archs"] == ["sm_90"]
        assert all((art / r["file"]).is_file() for r in b["reference"])


def test_dry_run_on_cpu(artifacts, tmp_path):
    name, art = artifacts
    proc = _run(art, tmp_path, "--device", "cpu")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["done"] and not results["failures"]
    assert [(x["model"], x["precision"], x["ok"]) for x in results["libraries"]] == \
        [(name, "fp32", True), (name, "mixed", True)]
    assert all(x["timing"]["runs"] >= 3 for x in results["libraries"])
    # The runs on device buffers are timed and checked too.
    assert all(x["timing_device"]["runs"] >= 3 for x in results["libraries"])
    assert not any("device_buffers_ok" in o for x in results["libraries"]
                   for o in x["outputs"].values())
    assert "| PASS |" in (tmp_path / "results.md").read_text()


def test_cuda_without_driver_fails_cleanly(artifacts, tmp_path):
    _, art = artifacts
    proc = _run(art, tmp_path, "--device", "cuda", MP_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    assert len(results["libraries"]) == 2
    assert all("CUDA driver not found" in x["error"] for x in results["libraries"])
    assert "FAIL" in (tmp_path / "results.md").read_text()


def test_dry_run_on_the_ptx_emulator(tmp_path):
    """build.sh with MP_GPU_ARCH=compute_80 (PTX), then run.py --device
    emulator: the CUDA libraries themselves, every kernel included, go
    through the GPU run's loading, checks against the CPU references, runs
    on device buffers and memory statistics, on the PTX emulator
    (docs/emulator.md)."""
    require_built(BUILD / "bin" / "mp-compile")
    if not _has_ptxas():
        pytest.skip("no CUDA toolkit on this machine")
    model = next(m for m in CANDIDATES if (m / "test_data_set_0").is_dir())
    art = tmp_path / "artifacts"
    env = dict(os.environ, ARTIFACTS=str(art), PYTHON=sys.executable, MP_GPU_ARCH="compute_80")
    proc = subprocess.run(["bash", str(REPO / "bench" / "gpu" / "build.sh"), model.name],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest = json.loads((art / "manifest.json").read_text())
    assert manifest["gpu_arch"] == "compute_80"
    assert all(b["cuda"]["gpu_archs"] == ["compute_80"] for b in manifest["models"][0]["builds"])
    proc = _run(art, tmp_path / "out", "--device", "emulator")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["device"] == "emulator" and results["done"] and not results["failures"]
    assert [(x["precision"], x["ok"]) for x in results["libraries"]] == [("fp32", True), ("mixed", True)]
    assert all(x["timing_device"]["runs"] >= 1 and "error" not in x["memory"]
               for x in results["libraries"])


def _decoder_check_dry_run(tmp_path: Path, check: str, *args: str) -> dict:
    """bench/gpu/CHECK.py on CPU libraries of the decoder compiled with
    ARGS (fp32 and mixed, as build.sh compiles them): `prepare`, then
    `run ... cpu`; the JSON report. The libraries come from the run's
    cache (test_dynamic_shapes.py builds the --dynamic-shapes ones too),
    copied into the folders build.sh would write."""
    for precision in ("fp32", "mixed"):
        built = compiled_library(REPO / "examples" / "tts_decoder" / "model.onnx", *args,
                                 "--precision", precision, name="libdec.so")
        folder = tmp_path / check / precision / "cpu"
        folder.mkdir(parents=True)
        for f in built.parent.iterdir():
            shutil.copyfile(f, folder / f.name)
    script = REPO / "bench" / "gpu" / f"{check}.py"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    for step in (["prepare", str(tmp_path)], ["run", str(tmp_path), str(tmp_path / "out"), "cpu"]):
        proc = subprocess.run([sys.executable, str(script), *step], capture_output=True, text=True,
                              env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((tmp_path / "out" / f"{check}.json").read_text())


@pytest.mark.slow  # the GPU run's decode check on CPU libraries; the dry run stays fast
def test_kv_decode_flow_on_cpu_libraries(tmp_path):
    """bench/gpu/kv_decode.py: `prepare` saves 8 decode steps of the CPU
    library, `run ... cpu` repeats them through the same comparison the GPU
    run makes (a dry run here: CPU against itself must pass)."""
    pins = ["mel_frame=2x1x80", "encoder_out=2x10x128"]
    pins += [f"past_{kind}_{l}=2x4x0x32" for l in range(2) for kind in ("key", "value")]
    report = _decoder_check_dry_run(tmp_path, "kv_decode", "--fuse-attention", "--max-seq-len", "64",
                                    *[a for p in pins for a in ("--input-shape", p)])
    assert [r["precision"] for r in report["results"]] == ["fp32", "mixed"]
    assert all(r["passed"] for r in report["results"]), report
    assert all(r["worst_excess_device"] <= 0 and r["device_step_ms"] > 0
               for r in report["results"]), report


@pytest.mark.slow  # the GPU run's dynamic-shape check on CPU libraries
def test_dynamic_flow_on_cpu_libraries(tmp_path):
    """bench/gpu/dynamic.py: `prepare` saves the CPU library's outputs at
    three shapes of one --dynamic-shapes decoder, `run ... cpu` repeats them
    through the comparison the GPU run makes (a dry run here: CPU against
    itself must pass, shapes included)."""
    report = _decoder_check_dry_run(tmp_path, "dynamic", "--dynamic-shapes")
    assert [r["precision"] for r in report["results"]] == ["fp32"] * 3 + ["mixed"] * 3
    assert all(r["passed"] and r["ms"] > 0 for r in report["results"]), report
