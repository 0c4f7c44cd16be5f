"""bench/precision.py on the shared models: the report is written, every mp plan is valid,
mp's fp16 share of contraction FLOPs is at least each peer converter's (issue 3's goal)
on every model the peer converts, and mp's mixed build, run by mp's own CPU JIT, runs
with finite outputs at fp16-scale error on every shared model and on the generated
layernorm_overflow block.

Skipped when mp-opt is not built ($MP_BUILD_DIR/bin/mp-opt, default build/) or the shared
models (../shared/models of the repository) are absent; the mp-run tests also when
libMPCAPI.so is not built. One run of the script on the shared models (~15 s, mostly mp's
JIT) is shared by the tests, plus one on layernorm_overflow (~3 s).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD as MP_BUILD

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "precision.py"
MP_OPT = MP_BUILD / "bin" / "mp-opt"
MP_LIB = Path(os.environ.get("MP_LIBRARY") or MP_BUILD / "lib" / "libMPCAPI.so")
SHARED = REPO.parent / "shared" / "models"
SHARED_MODELS = sorted(p.parent.name for p in SHARED.glob("*/model.onnx"))
PEERS = ["occ", "ort"]

# (model, peer) pairs where mp's share is known to be lower: name -> reason. xfail(strict) so
# that a fix shows up. Empty today.
KNOWN_LOWER_SHARE: dict[tuple[str, str], str] = {}

# Models whose mixed build mp cannot run yet: name -> reason. xfail(strict) so that a fix
# shows up.
KNOWN_MP_RUN_FAILURES: dict[str, str] = {}
# Each output's max abs err must stay within this fraction of that output's max abs
# reference (fp16-scale: a wrong result, not rounding, breaks it), and at least
# MP_ERR_FLOOR. Measured (2026-12-03): at most 0.0062 (silero's 1e-3-sized output) on
# the shared models and generated blocks, openwakeword's 0.004-sized score 0.0014.
MP_ERR_REL = 0.01
MP_ERR_FLOOR = 1e-6
# Outputs allowed more, with the reason; each is measured in bench/precision.md.
MP_ERR_REL_KNOWN = {
    # The LSTM state after 64 steps: fp16 rounding compounds through the recurrence
    # (0.042 of 1.0; onnxruntime's float16 converter: 0.019). Issue 23 (precision from
    # data) is where the recurrence's precision gets chosen from measurements.
    ("silero_vad_op18_ifless", "stateN"): 0.05,
}
needs_mp_lib = pytest.mark.skipif(not MP_LIB.exists(), reason=f"{MP_LIB} is not built")

pytestmark = [
    pytest.mark.skipif(not MP_OPT.exists(), reason=f"{MP_OPT} is not built"),
    pytest.mark.skipif(not SHARED_MODELS, reason=f"no shared models under {SHARED}"),
]


def _run_bench(out: Path, *args: str):
    md, js = out / "precision.md", out / "precision.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--mp-opt", str(MP_OPT), "--models-dir", str(SHARED),
         "--out", str(md), "--json", str(js), *args],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(js.read_text())
    return md, {r["name"]: r for r in data["results"]}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return _run_bench(tmp_path_factory.mktemp("precision"), "--no-generated")


@pytest.fixture(scope="module")
def bench_overflow(tmp_path_factory):
    """The generated layernorm_overflow model only (LayerNorm statistics overflow fp16)."""
    return _run_bench(tmp_path_factory.mktemp("precision-overflow"), "--only",
                      "layernorm_overflow")


def test_markdown_written(bench):
    md, results = bench
    text = md.read_text()
    assert text.startswith("# Mixed precision")
    for heading in ("## Nodes computing in fp16", "## Casts added", "## fp16 share",
                    "## Weight bytes", "## Accuracy on test_data_set_0", "## Comparison",
                    "## Method"):
        assert heading in text
    for name in SHARED_MODELS:
        assert f"`{name}`" in text
    assert "pending" not in text
    assert set(results) == set(SHARED_MODELS)


@pytest.mark.parametrize("model", SHARED_MODELS)
def test_mp_plan_valid(bench, model):
    _, results = bench
    r = results[model]
    assert "error" not in r, r.get("error")
    mp = r["tools"]["mp"]
    assert "error" not in mp, mp["error"]
    assert mp["plan_problems"] == [], mp["plan_problems"]
    assert mp["nodes_total"] > 0
    assert 0.0 <= mp["contraction_flops_f16_share"] <= 1.0


@pytest.mark.parametrize("model", SHARED_MODELS)
def test_bench_counts_the_nodes_mp_counts(bench, model):
    """The peers' node counts use mp's rule; on the original graph they must give mp's total."""
    _, results = bench
    r = results[model]
    assert r["tools"]["mp"]["nodes_total"] == r["base"]["float_nodes"]


def _share_cases():
    for model in SHARED_MODELS:
        for peer in PEERS:
            marks = []
            if (model, peer) in KNOWN_LOWER_SHARE:
                marks = [pytest.mark.xfail(strict=True, reason=KNOWN_LOWER_SHARE[(model, peer)])]
            yield pytest.param(model, peer, marks=marks, id=f"{model}-{peer}")


@pytest.mark.parametrize(("model", "peer"), list(_share_cases()))
def test_mp_fp16_flop_share_at_least_peers(bench, model, peer):
    _, results = bench
    r = results[model]
    p = r["tools"][peer]
    if "error" in p or "contraction_flops_f16_share" not in p:
        pytest.skip(f"{peer} does not convert {model}: {p.get('error') or p.get('count_error')}")
    assert not p.get("flops_unknown_nodes"), f"shapes unknown for {p['flops_unknown_nodes']}"
    mp = r["tools"]["mp"]["contraction_flops_f16_share"]
    assert mp >= p["contraction_flops_f16_share"] - 1e-9, (
        f"{model}: mp fp16 FLOP share {mp:.4f} < {peer} {p['contraction_flops_f16_share']:.4f}")


def _check_mp_run(r: dict) -> None:
    run = r["tools"]["mp"]["run"]
    assert run.get("engine") == "mp"
    assert run.get("ok"), f"{r['name']}: mp's mixed build does not run: {run.get('error')}"
    assert run["nonfinite"] == 0, f"{r['name']}: NaN/inf in mp's outputs: {run['outputs']}"
    assert not run["uncompared"], f"{r['name']}: outputs without a reference: {run['uncompared']}"
    assert run["outputs"], f"{r['name']}: no outputs"
    for name, o in run["outputs"].items():
        if o["max_abs_err"] is None:
            continue  # not a float output with a reference (uncompared ones failed above)
        rel = MP_ERR_REL_KNOWN.get((r["name"], name), MP_ERR_REL)
        limit = max(rel * o["max_abs_ref"], MP_ERR_FLOOR)
        assert o["max_abs_err"] <= limit, (
            f"{r['name']}: output {name}: mp max abs err {o['max_abs_err']:.3g} > {limit:.3g} "
            f"({rel:g} of its max abs reference {o['max_abs_ref']:.3g})")


def _mp_run_cases():
    for model in SHARED_MODELS:
        marks = [needs_mp_lib]
        if model in KNOWN_MP_RUN_FAILURES:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_MP_RUN_FAILURES[model]))
        yield pytest.param(model, marks=marks, id=model)


@pytest.mark.parametrize("model", list(_mp_run_cases()))
def test_mp_mixed_runs_finite(bench, model):
    """mp's mixed build of each shared model runs on mp's CPU JIT: finite, fp16-scale error
    (genai_llama_fp16_mha_extdata includes the -65504 mask sentinels)."""
    _, results = bench
    _check_mp_run(results[model])


@needs_mp_lib
def test_mp_mixed_layernorm_overflow(bench_overflow):
    """The LayerNorm whose fp16 variance overflows: mp's mixed build has finite outputs.

    Not asserted: an error no larger than the peers'. On onnxruntime's CPU provider the
    peers' fp16 model of this block runs entirely in fp32 (only the weights are rounded),
    so their error is lower (0.0016 vs mp's 0.0029 today)."""
    _, results = bench_overflow
    assert set(results) == {"layernorm_overflow"}
    _check_mp_run(results["layernorm_overflow"])


def _record(name: str, out: str, err: float, ref: float) -> dict:
    return {"name": name, "tools": {"mp": {"run": {
        "engine": "mp", "ok": True, "nonfinite": 0, "uncompared": [],
        "outputs": {out: {"max_abs_err": err, "max_abs_ref": ref}}}}}}


@pytest.mark.parametrize(("err", "passes"), [(5e-6, True), (1e-3, False)])
def test_error_bound_scales_with_the_output(err, passes):
    """openwakeword's score is ~0.004: an error of 1e-3 (a quarter of the signal) fails,
    as the old bound of 0.05 * max(1, |ref|) let it pass."""
    record = _record("openwakeword_hello_deepa", "39", err, 0.0038)
    if passes:
        _check_mp_run(record)
    else:
        with pytest.raises(AssertionError, match="output 39"):
            _check_mp_run(record)
