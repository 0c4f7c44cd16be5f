"""Regression guard: mp-run (CPU JIT) against stored reference outputs.

Uses ``mp.tools.conformance`` (the full sweep is ``python bench/conformance.py``,
recorded in ``bench/conformance.md``):

* the shared models (and the bundled TTS decoder) whose fp32 outputs match
  the stored onnxruntime outputs today keep matching them, at mp-run's default
  tolerances (rtol 1e-4, atol 1e-5; 1e-2 for fp16 outputs);
* on a deterministic subset of the ONNX backend node tests (~150 cases, crc32
  of ``source/name`` = 0 mod 18, fp32, ONNX runner tolerances rtol 1e-3 atol
  1e-7), mp-run never crashes, never hangs, and every case listed in
  ``data/conformance_subset_passing.txt`` passes (new passes are reported).

The subset report is written to ``$MP_BUILD_DIR/test-logs/conformance-subset.md``.
About 30 s on 2 cores.
"""

from pathlib import Path

import pytest

from mp.tools import build_dir, conformance

REPO = Path(__file__).resolve().parents[2]
MP_RUN = conformance.default_mp_run()
MP_OPT = conformance.default_mp_opt()

# (model folder, test data set) pairs whose fp32 run passed when this list was
# written (2026-11-30, see bench/conformance.md). Add to it as lowerings land;
# never remove an entry to make a regression pass.
FP32_PASSING = [
    ("tts_decoder", "test_data_set_0"),
    ("openwakeword_hello_deepa", "test_data_set_0"),
    ("genai_gpt2_fp32_contrib_attention_past", "test_data_set_0"),
    ("genai_gpt2_fp32_contrib_attention_past", "test_data_set_1"),
    ("local_attn23_kv", "test_data_set_0"),
    ("local_attn23_gqa_fp16", "test_data_set_0"),
    # fp16 outputs: mp-run compares them at 1e-2/1e-2 (max rel err up to 196
    # on near-zero logits, argmax 100%).
    ("genai_llama_fp16_mha_extdata", "test_data_set_0"),
    ("genai_llama_fp16_mha_extdata", "test_data_set_1"),
    ("genai_llama_fp16_mha_extdata", "test_data_set_2"),
    # Scalar `sr` input pinned, If lowered (8ae0bc3).
    ("silero_vad_op18_ifless", "test_data_set_0"),
    ("silero_vad_op18_ifless", "test_data_set_1"),
]

# The subset cases that pass, one key per line (`source/name`); every one must
# keep passing, and a case that starts passing is reported so it can be added.
SUBSET_PASSING = Path(__file__).with_name("data") / "conformance_subset_passing.txt"
# Sanity floor on the subset size, so that a missing test-data folder does
# not make the guard vacuous.
SUBSET_MIN_CASES = 140


def _require_mp_run():
    if not MP_RUN.is_file():
        pytest.skip(f"mp-run is not built ({MP_RUN} missing; set MP_BUILD_DIR or build mp)")


@pytest.fixture(scope="module")
def fp32_models():
    _require_mp_run()
    dirs = {d.name: d for d in conformance.model_dirs()}
    wanted = {(m, s) for m, s in FP32_PASSING if m in dirs}
    runs = conformance.sweep_models(MP_RUN, MP_OPT, [dirs[m] for m in sorted({m for m, _ in wanted})],
                                    precisions=("fp32",), data_sets=wanted)
    return {(r.model, r.data_set): r for r in runs}


@pytest.mark.parametrize("model,data_set", FP32_PASSING, ids=[f"{m}/{s}" for m, s in FP32_PASSING])
def test_fp32_model_passes(fp32_models, model, data_set):
    dirs = {d.name: d for d in conformance.model_dirs()}
    if model not in dirs:
        pytest.skip(f"{model} is not on this machine (../shared/models missing?)")
    run = fp32_models[(model, data_set)]
    detail = run.verdict.error or "; ".join(
        f"{r.name}: abs {r.max_abs} rel {r.max_rel} {r.detail}" for r in run.rows if r.passed is False)
    assert run.verdict.status == conformance.PASSED, f"{model}/{data_set}: {run.verdict.status}: {detail}"
    assert not run.numpy_disagrees, f"numpy's check differs: {run.numpy_disagrees}"


@pytest.fixture(scope="module")
def node_subset():
    _require_mp_run()
    cases = conformance.collect_node_cases(subset=True)
    if len(cases) < SUBSET_MIN_CASES:
        pytest.skip(f"only {len(cases)} node-test cases in the subset (onnx wheel or "
                    "libonnx-testdata missing?)")
    import time
    start = time.monotonic()
    cases = conformance.sweep_nodes(MP_RUN, MP_OPT, cases)
    elapsed = time.monotonic() - start
    log_dir = build_dir() / "test-logs"
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / "conformance-subset.md").write_text(conformance.render_report(
            None, 0.0, cases, elapsed, MP_RUN, subset=True, jobs=conformance.JOBS,
            timeout=conformance.TIMEOUT_S))
    except OSError:
        pass
    return cases


def test_node_subset_no_crashes(node_subset):
    bad = [f"{c.key}: {c.verdict.status}: {c.verdict.error}" for c in node_subset
           if c.verdict.status in (conformance.CRASHED, conformance.TIMEOUT)]
    assert not bad, "mp-run crashed or hung on:\n  " + "\n  ".join(bad)


def _listed_passing() -> list[str]:
    lines = SUBSET_PASSING.read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_node_subset_listed_cases_pass(node_subset):
    """Every listed case is in the subset and passes; cases that pass and are not
    listed are reported (a warning naming them) so the list can grow."""
    listed = _listed_passing()
    assert len(listed) == len(set(listed)), "duplicate keys in " + SUBSET_PASSING.name
    by_key = {c.key: c for c in node_subset}
    missing = [k for k in listed if k not in by_key]
    assert not missing, (f"listed cases not in the subset (test data changed?): {missing}; "
                         f"see {SUBSET_PASSING}")
    failing = [f"{k}: {by_key[k].verdict.status} {by_key[k].verdict.error}".strip()
               for k in listed if by_key[k].verdict.status != conformance.PASSED]
    assert not failing, (f"{len(failing)} listed cases no longer pass (see "
                         f"{build_dir() / 'test-logs' / 'conformance-subset.md'}):\n  "
                         + "\n  ".join(failing))
    new = sorted(k for k, c in by_key.items()
                 if c.verdict.status == conformance.PASSED and k not in set(listed))
    if new:
        import warnings
        warnings.warn(f"{len(new)} subset cases pass and are not listed in "
                      f"{SUBSET_PASSING}; add them: {', '.join(new)}")


def test_node_subset_comparison_matches_numpy(node_subset):
    """mp-run's PASS/FAIL agrees with the ONNX runner's check done in numpy."""
    bad = [f"{c.key}: {'; '.join(c.numpy_disagrees)}" for c in node_subset if c.numpy_disagrees]
    assert not bad, "mp-run's comparison differs from numpy's on:\n  " + "\n  ".join(bad)
