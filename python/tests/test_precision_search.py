"""mp-tune (docs/precision.md, "Searching for a budget") on the fp16 stress
cases: it meets the budget against the fp32 build, keeps fewer nodes in fp32
than there are fp16 candidates, writes a plan that reproduces the build without
data, and reports evaluations honestly."""

import json
import subprocess

import numpy as np
import pytest

import mp.models
from conftest import BUILD, require_built
from mp.tools.conformance import model_tolerances

MP_TUNE = BUILD / "bin" / "mp-tune"
MP_RUN = BUILD / "bin" / "mp-run"


@pytest.fixture(scope="module")
def stress(tmp_path_factory):
    require_built(MP_TUNE, MP_RUN)
    root = tmp_path_factory.mktemp("stress")
    return {name: mp.models.write_example(name, root / name / "model.onnx")
            for name in ("tiny_variance_norm", "vocoder_overflow", "attention_overflow")}


def tune(*args):
    return subprocess.run([str(MP_TUNE), *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("name, metric, budget", [
    ("tiny_variance_norm", "max-rel", 0.01),
    ("vocoder_overflow", "snr", 40),
])
def test_search_meets_the_budget_with_few_fp32_nodes(stress, tmp_path, name, metric, budget):
    path = stress[name]
    data = path.parent / "test_data_set_0"
    plan, report = tmp_path / "plan.json", tmp_path / "report.json"
    run = tune(path, "--data", data, "--metric", metric, "--budget", budget,
               "--plan-out", plan, "--report", report)
    assert run.returncode == 0, run.stdout + run.stderr
    r = json.loads(report.read_text())
    assert r["met"] and r["metric"] == metric
    # The policy's build misses the budget: the search had to work.
    assert not r["history"][0]["met"] and r["sensitivity_runs"] == 1
    assert 0 < len(r["fp32_nodes"]) < r["fp16_nodes_default"]
    assert r["evaluations"] == len(r["history"])
    # Bisection over the ordered candidates: about log2(candidates) + 1.
    assert r["evaluations"] <= 2 + int(np.ceil(np.log2(r["fp16_nodes_default"])))
    # Sensitivity is worst first, and the kept nodes are its head.
    # ("inf": the node's fp16 output overflowed.)
    errors = [float(s["error"]) for s in r["sensitivity"]]
    assert errors == sorted(errors, reverse=True)
    assert r["fp32_nodes"] == [s["node"] for s in r["sensitivity"]][:len(r["fp32_nodes"])]
    # The plan is a policy: the kept nodes are fp32 with mp-tune's rule ...
    nodes = json.loads(plan.read_text())["nodes"]
    for key in r["fp32_nodes"]:
        assert nodes[key]["compute"] == "f32"
        assert nodes[key]["rule"].startswith("mp-tune: own fp16 error ")
    # ... and the build it describes passes onnxruntime's fp32 reference
    # at mp-run's mixed tolerances, without data.
    run = subprocess.run([str(MP_RUN), path, "--precision", "mixed", "--policy", plan,
                          "--compare", data], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_search_stops_when_the_policy_already_meets_the_budget(stress, tmp_path):
    path = stress["attention_overflow"]
    report = tmp_path / "report.json"
    run = tune(path, "--data", path.parent / "test_data_set_0", "--report", report)
    assert run.returncode == 0, run.stderr
    r = json.loads(report.read_text())
    assert r["met"] and r["evaluations"] == 1 and r["fp32_nodes"] == []
    assert r["sensitivity_runs"] == 0


def test_exact_budget_keeps_every_candidate(stress, tmp_path):
    """max-abs 0 is met only by the build with every candidate in fp32: the
    bisection ends there, and the result is exact."""
    path = stress["tiny_variance_norm"]
    report = tmp_path / "r.json"
    run = tune(path, "--data", path.parent / "test_data_set_0", "--metric", "max-abs",
               "--budget", "0", "--report", report)
    assert run.returncode == 0, run.stdout + run.stderr
    r = json.loads(report.read_text())
    assert r["achieved"] == 0 and len(r["fp32_nodes"]) == r["fp16_nodes_default"]
    assert [h["met"] for h in r["history"]][-1] and not any(h["met"] for h in r["history"][:-1])


def test_scores_match_numpy(stress, tmp_path):
    """The reported score is what numpy computes from mp-run's outputs."""
    path = stress["tiny_variance_norm"]
    data = path.parent / "test_data_set_0"
    report = tmp_path / "r.json"
    tune(path, "--data", data, "--report", report)
    first = json.loads(report.read_text())["history"][0]["score"]
    outs = {}
    for precision in ("fp32", "mixed"):
        subprocess.run([str(MP_RUN), path, "--precision", precision, "--input",
                        f"x={data / 'input_0.pb'}", "--output-dir", tmp_path / precision],
                       check=True, capture_output=True)
        outs[precision] = np.load(tmp_path / precision / "y.npy").astype(np.float64)
    want = np.abs(outs["mixed"] - outs["fp32"]).max() / np.abs(outs["fp32"]).max()
    np.testing.assert_allclose(first, want, rtol=1e-6)
    rtol, atol = model_tolerances("mixed", outs["fp32"])
    assert want > rtol  # the default build is outside mp-run's tolerance too


@pytest.mark.parametrize("args, message", [
    ([], "--data DIR: give the inputs"),
    (["--data", "DATA", "--metric", "psnr"], "--metric must be max-rel, max-abs, argmax or snr"),
    (["--data", "DATA", "--metric", "argmax", "--budget", "1.5"],
     "--budget 1.5 is not a bound argmax can meet"),
    (["--data", "NOWHERE"], "is not a folder"),
])
def test_mp_tune_errors(stress, tmp_path, args, message):
    path = stress["tiny_variance_norm"]
    subst = {"DATA": path.parent / "test_data_set_0", "NOWHERE": tmp_path / "none"}
    run = tune(path, *[subst.get(a, a) for a in args])
    assert run.returncode == 1
    assert message in run.stderr
