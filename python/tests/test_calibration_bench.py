"""bench/calibration.py on the fp16 stress cases only (--no-shared, no AutoCast): the page
has one row per stress case, and the calibrated mixed build has no non-finite output on
any of them (docs/precision.md, "Calibration"), while vocoder_overflow's default build
has some (the control).

Skipped when mp-run is not built ($MP_BUILD_DIR/bin/mp-run, default build/). About
20 s: four small models, four mp-run calls each.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import mp.models
from conftest import BUILD

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "calibration.py"
MP_RUN = BUILD / "bin" / "mp-run"

pytestmark = pytest.mark.skipif(not MP_RUN.exists(), reason=f"{MP_RUN} is not built")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("calibration")
    md, js = out / "calibration.md", out / "calibration.json"
    subprocess.run([sys.executable, str(SCRIPT), "--no-shared", "--no-autocast",
                    "--mp-run", str(MP_RUN), "--out", str(md), "--json", str(js)],
                   check=True, timeout=600)
    return md.read_text(), {r["name"]: r for r in json.loads(js.read_text())["results"]}


def test_page_has_a_row_per_stress_case(bench):
    page, results = bench
    assert sorted(results) == sorted(f"stress/{c}" for c in mp.models.STRESS)
    for case in mp.models.STRESS:
        rows = [l for l in page.splitlines() if l.startswith(f"| `stress/{case}` |")]
        assert len(rows) == 1, case
        assert "error" not in rows[0], rows[0]
    assert "- Regenerate: `.venv/bin/python bench/calibration.py --no-shared --no-autocast`" in page
    assert "AutoCast: not run" in page


@pytest.mark.parametrize("case", mp.models.STRESS)
def test_calibrated_build_has_no_non_finite_output(bench, case):
    steps = bench[1][f"stress/{case}"]["steps"]
    for key in ("fp32", "default", "calibration", "calibrated", "metrics_calibrated"):
        assert steps[key]["ok"], (key, steps[key].get("error"))
    assert steps["metrics_calibrated"]["nonfinite"] == 0
    # Every stress case has values fp16 cannot hold: calibration keeps some node in fp32.
    assert steps["kept"]["kept"], case


def test_vocoder_overflow_default_build_is_the_control(bench):
    steps = bench[1]["stress/vocoder_overflow"]["steps"]
    assert steps["metrics_default"]["nonfinite"] > 0
    assert steps["metrics_calibrated"]["kind"] == "snr"
    assert steps["metrics_calibrated"]["value"] >= 40.0
