"""A corner of bench/precision-search.md: mp-tune and onnxconverter-common's
auto_convert_mixed_precision on one stress case (mp.tools.search_bench).

tiny_variance_norm (4 nodes) misses max-rel 1e-3 with both tools' default
fp16 conversions (0.03); both searches must meet it with a non-empty fp32 set,
and the page must show both. The metric is checked on its own first (no build
needed). About 15 s on 2 cores, mostly mp-tune's and mp-run's JIT.
"""

import math

import numpy as np
import pytest

import mp.models
from conftest import BUILD, require_built
from mp.tools import search_bench

pytest.importorskip("onnxruntime")
pytest.importorskip("onnxconverter_common")

MP_TUNE = BUILD / "bin" / "mp-tune"
MP_RUN = BUILD / "bin" / "mp-run"
MODEL = "tiny_variance_norm"
METRIC, BUDGET = "max-rel", 1e-3


def test_metric():
    ref = np.array([[1.0, 2.0, 4.0], [0.5, -3.0, 1.0]], np.float32)
    near = ref + np.float32(0.004)
    assert search_bench.score_output("max-rel", near, ref) == pytest.approx(1e-3, rel=1e-3)
    assert search_bench.score_output("max-abs", near, ref) == pytest.approx(4e-3, rel=1e-3)
    snr = 10 * math.log10(float((ref.astype(np.float64) ** 2).sum()) / (6 * 0.004 ** 2))
    assert search_bench.score_output("snr", near, ref) == pytest.approx(snr, rel=1e-3)
    swapped = ref.copy()
    swapped[1] = [0.5, 2.0, 1.0]  # row 1's argmax moves from 2 to 1
    assert search_bench.score_output("argmax", swapped, ref) == 0.5
    assert search_bench.score_output("argmax", ref[:, :1], ref[:, :1]) is None  # last dim 1
    bad = near.copy()
    bad[0, 0] = np.inf
    assert search_bench.score_output("max-rel", bad, ref) == math.inf
    assert search_bench.score_output("snr", bad, ref) == -math.inf
    assert search_bench.score_output("snr", ref, ref) == math.inf
    # Integer outputs must be equal; the worst output decides.
    ids = np.array([1, 2], np.int64)
    assert search_bench.score("max-rel", [near, ids], [ref, ids]) == pytest.approx(1e-3, rel=1e-3)
    assert search_bench.score("max-rel", [near, ids + 1], [ref, ids]) == math.inf
    assert search_bench.meets("snr", 61.0, 60.0) and not search_bench.meets("max-rel", 2e-3, 1e-3)
    # mp-tune's JSON null: an exact snr when met, an overflow otherwise.
    assert search_bench._finite_or("snr", None, True) == math.inf
    assert search_bench._finite_or("max-rel", None, False) == math.inf


def test_occ_search(tmp_path):
    """The occ side alone (no mp build needed)."""
    path = mp.models.write_example(MODEL, tmp_path / MODEL / "model.onnx")
    import onnx
    feeds, _ = mp.models.load_test_data(path.parent / "test_data_set_0")
    occ = search_bench.run_occ_search(onnx.load(str(path)), feeds, METRIC, BUDGET)
    assert "error" not in occ, occ.get("error")
    assert occ["met"] and occ["achieved"] <= BUDGET
    # validate_fn: once on fp32 vs fp32, then once per conversion.
    assert occ["validate_calls"] == occ["evaluations"] + 1
    assert occ["history"][0]["fp32_nodes"] == 0 and occ["history"][0]["score"] > BUDGET
    assert occ["fp32_nodes"], "the all-fp16 model misses the budget: something stays fp32"
    names = {n.name for n in onnx.load(str(path)).graph.node}
    assert set(occ["fp32_nodes"]) <= names


def test_compare(tmp_path):
    require_built(MP_TUNE, MP_RUN)
    results = search_bench.run_all([f"stress:{MODEL}"], METRIC, BUDGET, MP_TUNE, MP_RUN)
    (r,) = results
    assert not r.get("error"), r.get("trace") or r["error"]
    occ, tune, checks = r["occ"], r["mp"], r["checks"]
    assert "error" not in tune, tune["error"]
    # Both defaults miss, both searches meet it with something in fp32.
    assert occ["plain"]["default"] > BUDGET and tune["default_score"] > BUDGET
    assert occ["met"] and tune["met"]
    assert occ["fp32_nodes"] and tune["fp32_nodes"]
    assert tune["achieved"] <= BUDGET and occ["achieved"] <= BUDGET
    assert tune["evaluations"] >= 2 and tune["sensitivity_runs"] == 1
    # mp-tune's plan is a policy: mp-run rebuilds the same score.
    assert checks["mp_plan"] == pytest.approx(tune["achieved"], rel=1e-6, abs=1e-12)
    assert "occ_set_in_mp" in checks

    meta = {"command": "test", "commit": "test", "mp_tune": "mp-tune", "mp_tune_built": "",
            "mp_run": "mp-run", "mp_run_built": "", "versions": search_bench.versions(),
            "seconds": 0.0, "discussion": ""}
    page = search_bench.render([{"metric": METRIC, "budget": BUDGET, "results": results}], meta)
    row = next(line for line in page.splitlines() if line.startswith(f"| `{MODEL}` | mp.models"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 13 and all(cells), row
    assert cells[6] == str(len(occ["fp32_nodes"])) and cells[10] == str(len(tune["fp32_nodes"]))
    assert "## max-rel ≤ 0.001" in page and "## Method" in page
