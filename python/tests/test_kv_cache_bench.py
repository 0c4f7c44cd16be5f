"""bench/kv_cache.py keeps working on a 1-layer decoder with a short cache:
the in-place step and the Concat step give the same output (times are not
asserted; bench/kv_cache.md records them)."""

from pathlib import Path

import pytest
from conftest import load_bench

REPO = Path(__file__).resolve().parents[2]


def test_kv_cache_bench_smoke(tmp_path):
    if not (REPO / "build" / "bin" / "mp-compile").is_file():
        pytest.skip("build/bin/mp-compile is not built")
    bench = load_bench("kv_cache")
    out = tmp_path / "kv_cache.md"
    assert bench.main(["--layers", "1", "--repeat", "3", "--lengths", "64", "-o", str(out)]) == 0
    rows = [line.split("|") for line in out.read_text().splitlines() if line.startswith("| 64 |")]
    assert len(rows) == 1
    assert float(rows[0][6]) <= 1e-5
