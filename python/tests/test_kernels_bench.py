"""bench/kernels.py keeps working: examples/conv_vocoder, fp32, sm_90 only.
Every kernel module mp-compile writes assembles with ptxas and has a register
count in ptxas's report. Register and spill numbers are not asserted
(bench/kernels.md records them)."""

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_kernels_bench_smoke(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_kernels", REPO / "bench" / "kernels.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ptxas = bench.find_ptxas()
    if ptxas is None:
        pytest.skip("ptxas not found (CUDA_ROOT, CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda)")
    if not bench.mp_compile().is_file():
        pytest.skip(f"mp-compile is not built ({bench.mp_compile()})")
    res = bench.measure(REPO / "examples" / "conv_vocoder", "fp32", ["sm_90"], ptxas, tmp_path)
    assert set(res) == {"sm_90"}
    assert res["sm_90"]["failures"] == []
    kernels = res["sm_90"]["kernels"]
    assert kernels
    assert all(isinstance(k["regs"], int) and k["regs"] > 0 for k in kernels)
    assert len({k["module"] for k in kernels}) == len(kernels)
