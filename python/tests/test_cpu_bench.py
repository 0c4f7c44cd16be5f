"""bench/cpu.py keeps working: a 1-layer decoder, a few rounds. Times are not
asserted (speed is checked by the benchmark's recorded report, bench/cpu.md);
the outputs are: mp fp32 must match onnxruntime fp32 on the same inputs."""

from pathlib import Path

import pytest
from conftest import load_bench

REPO = Path(__file__).resolve().parents[2]


def test_cpu_bench_smoke(tmp_path):
    pytest.importorskip("onnxruntime")
    import mp
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")
    bench = load_bench("cpu")
    out = tmp_path / "cpu.md"
    assert bench.main(["--layers", "1", "--rounds", "2", "--enc-len", "8", "--past-len", "8",
                       "-o", str(out)]) == 0
    text = out.read_text()
    rows = {line.split("|")[1].strip(): line.split("|") for line in text.splitlines()
            if line.startswith("| mp ") or line.startswith("| onnxruntime")}
    assert set(rows) == {"onnxruntime fp32", "onnxruntime fp32, 1 thread", "mp fp32", "mp mixed",
                         "mp fp32, dynamic shapes"}
    assert float(rows["mp fp32"][5]) < 1e-4      # max abs diff vs onnxruntime fp32
    assert float(rows["mp fp32, dynamic shapes"][5]) < 1e-4
    assert float(rows["mp mixed"][5]) < 2e-2
    assert "Issue goal" in text
