"""bench/kernels.py keeps working on examples/conv_vocoder. Every kernel
module mp-compile writes assembles with ptxas and has a register count in
ptxas's report; in mixed precision the convolutions run on Tensor Cores.
Register numbers are not asserted (bench/kernels.md records them)."""

from pathlib import Path

import pytest
from conftest import load_bench

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    module = load_bench("kernels")
    if module.find_ptxas() is None:
        pytest.skip("ptxas not found (CUDA_ROOT, CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda)")
    if not module.mp_compile().is_file():
        pytest.skip(f"mp-compile is not built ({module.mp_compile()})")
    return module


def test_kernels_bench_smoke(bench, conv_vocoder, tmp_path):
    res = bench.measure(conv_vocoder, "fp32", ["sm_90"], bench.find_ptxas(), tmp_path)
    assert set(res) == {"sm_90"}
    assert res["sm_90"]["failures"] == []
    kernels = res["sm_90"]["kernels"]
    assert kernels
    assert all(isinstance(k["regs"], int) and k["regs"] > 0 for k in kernels)
    assert len({k["entry"] for k in kernels}) == len(kernels)
    # fp32 has no f16 contraction to put on Tensor Cores.
    assert not any(k["mma"] for k in kernels)


def test_kernels_bench_tensor_cores(bench, conv_vocoder, tmp_path):
    """The vocoder's 8 convolutions are implicit GEMMs on Tensor Cores in
    mixed precision, and they assemble without spills."""
    res = bench.measure(conv_vocoder, "mixed", ["sm_80"], bench.find_ptxas(), tmp_path)
    assert res["sm_80"]["failures"] == []
    tc = [k for k in res["sm_80"]["kernels"] if k["mma"]]
    assert len(tc) == 8
    assert all(k["spill_st"] == 0 and k["spill_ld"] == 0 for k in tc)
