"""Precision from data (docs/precision.md): calibrated ranges, static bounds and
the precision diff, on the fp16 stress cases of mp.models.

Each stress case is fine in fp32 and broken by an fp16 intermediate. The
references are onnxruntime's fp32 outputs; calibration data come from another
seed than the checked inputs, so a pass is not the calibration set echoed back.
"""

import json
import subprocess

import numpy as np
import pytest

import mp
import mp.models
from conftest import BUILD, require_built
from mp.tools.conformance import model_tolerances

MP_RUN = BUILD / "bin" / "mp-run"
MP_OPT = BUILD / "bin" / "mp-opt"
# Stress cases whose overflow static bounds prove (weights after a
# normalization); the others need data.
PROVABLE = ("attention_overflow", "large_logit_softmax")


@pytest.fixture(scope="module")
def stress(tmp_path_factory):
    require_built(BUILD / "lib" / "libMPCAPI.so")
    root = tmp_path_factory.mktemp("stress")
    return {name: mp.models.write_example(name, root / name / "model.onnx")
            for name in mp.models.STRESS}


def calibration_feeds(name, count=2):
    """Inputs like the example's, from other seeds."""
    builder = mp.models.BUILDERS[name]
    return [builder.example_inputs(np.random.default_rng(100 + k)) for k in range(count)]


def check_against_reference(path, outputs):
    inputs, expected = mp.models.load_test_data(path.parent / "test_data_set_0")
    assert sorted(outputs) == sorted(expected)
    for name, want in expected.items():
        got = outputs[name]
        assert np.isfinite(got).all(), name
        rtol, atol = model_tolerances("mixed", want)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.parametrize("name", mp.models.STRESS)
def test_calibrated_mixed_matches_fp32_reference(stress, name):
    path = stress[name]
    inputs, _ = mp.models.load_test_data(path.parent / "test_data_set_0")
    with mp.compile(path, "mixed", calibration=calibration_feeds(name)) as model:
        check_against_reference(path, model.run(inputs))


@pytest.mark.parametrize("name", ["tiny_variance_norm", "vocoder_overflow"])
def test_data_dependent_cases_fail_without_calibration(stress, name):
    """The control: without data the same mixed build is wrong."""
    path = stress[name]
    inputs, _ = mp.models.load_test_data(path.parent / "test_data_set_0")
    with mp.compile(path, "mixed") as model:
        with pytest.raises(AssertionError):
            check_against_reference(path, model.run(inputs))


@pytest.mark.parametrize("name", PROVABLE)
def test_static_bounds_keep_provable_overflow_in_fp32(stress, name, tmp_path):
    path = stress[name]
    inputs, _ = mp.models.load_test_data(path.parent / "test_data_set_0")
    with mp.compile(path, "mixed") as model:
        check_against_reference(path, model.run(inputs))
    # The plan says why; without static bounds the overflowing nodes are fp16.
    plans = {}
    for bounds in (1, 0):
        plan = tmp_path / f"plan{bounds}.json"
        subprocess.run([MP_OPT, path, f"--mp-assign-precision=plan={plan} static-bounds={bounds}",
                        "-o", "/dev/null"], check=True)
        plans[bounds] = json.loads(plan.read_text())["nodes"]
    bounded = {k for k, v in plans[1].items() if v["rule"].startswith("static bound |x| <= ")}
    assert bounded, "no node was kept in fp32 by a static bound"
    for key in bounded:
        assert plans[1][key]["compute"] == "f32"
        assert "static bound" not in plans[0][key]["rule"]
    assert any(plans[0][k]["compute"] == "f16" for k in bounded)


def test_calibrate_writes_ranges_by_node(stress, tmp_path):
    path = stress["attention_overflow"]
    out = mp.calibrate(path, calibration_feeds("attention_overflow", 3), tmp_path / "r.json")
    ranges = json.loads(out.read_text())
    assert ranges["kind"] == "mp-calibration" and ranges["samples"] == 3
    scores = ranges["nodes"]["layers.0.self_attn/MatMul"][0]
    # Scores reach beyond fp16 (the stress case's point), the softmax does not.
    assert scores["abs_max"] > 65504 and scores["non_finite"] == 0
    probs = ranges["nodes"]["layers.0.self_attn/Softmax"][0]
    assert 0 < probs["max"] <= 1 and probs["min"] >= 0
    assert probs["count"] == 3 * 4 * 16 * 16
    # The plan of a build from these ranges names the measured figure.
    plan = tmp_path / "plan.json"
    subprocess.run([MP_OPT, path, f"--mp-assign-precision=ranges={out} plan={plan}",
                    "-o", "/dev/null"], check=True)
    rule = json.loads(plan.read_text())["nodes"]["layers.0.self_attn/MatMul"]["rule"]
    assert rule.startswith("calibrated |x| max ") and rule.endswith(" > 65504/4")


def test_calibration_errors(stress, tmp_path):
    path = stress["attention_overflow"]
    with pytest.raises(mp.Error, match="calibration and ranges apply to precision='mixed'"):
        mp.compile(path, calibration=calibration_feeds("attention_overflow"))
    with pytest.raises(mp.Error, match="no calibration inputs"):
        mp.calibrate(path, [], tmp_path / "r.json")
    with pytest.raises(mp.Error, match="input 'x'"):
        mp.calibrate(path, [{"x": np.zeros((1, 3), np.float32)}], tmp_path / "r.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "mp-calibration", "nodes": {"a": 3}}')
    with pytest.raises(mp.Error, match="expected an array at calibration.nodes.a"):
        inputs, _ = mp.models.load_test_data(path.parent / "test_data_set_0")
        mp.compile(path, "mixed", ranges=bad).run(inputs)


def run_tool(*args):
    require_built(MP_RUN)
    return subprocess.run([str(MP_RUN), *map(str, args)], capture_output=True, text=True)


def test_mp_run_calibrate_then_compare(stress, tmp_path):
    path = stress["vocoder_overflow"]
    calib = tmp_path / "calib"
    for k, feed in enumerate(calibration_feeds("vocoder_overflow")):
        mp.models.write_inputs(path, feed, calib / f"test_data_set_{k}")
    data = path.parent / "test_data_set_0"
    plain = run_tool(path, "--precision", "mixed", "--compare", data)
    assert plain.returncode == 1 and "non-finite" in plain.stdout
    ranges = tmp_path / "ranges.json"
    run = run_tool(path, "--calibrate", calib, "--ranges-out", ranges)
    assert run.returncode == 0, run.stderr
    assert "calibrated 6 nodes on 2 input set(s)" in run.stderr
    run = run_tool(path, "--precision", "mixed", "--ranges", ranges, "--compare", data)
    assert run.returncode == 0, run.stdout + run.stderr
    # In one go, the ranges in a temporary file.
    run = run_tool(path, "--precision", "mixed", "--calibrate", calib, "--compare", data)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("args, message", [
    (["--ranges-out", "r.json"], "--ranges-out writes what --calibrate measures"),
    (["--calibrate", "DATA"], "--calibrate measures ranges for a mixed build"),
    (["--calibrate", "DATA", "--ranges", "r.json", "--precision", "mixed"],
     "--ranges and --calibrate both give value ranges"),
    (["--report", "r.json"], "--report and --diff-threshold apply to --precision-diff"),
    (["--calibrate", "EMPTY", "--ranges-out", "r.json"], "holds no inputs"),
    (["--precision-diff", "MODELDIR"], "holds several input sets"),
    (["--ranges", "r.json"], "calibration ranges and plans only apply to mixed precision"),
])
def test_mp_run_precision_option_errors(stress, tmp_path, args, message):
    path = stress["vocoder_overflow"]
    (tmp_path / "empty").mkdir()
    mp.models.write_inputs(path, calibration_feeds("vocoder_overflow", 1)[0],
                           tmp_path / "two" / "test_data_set_1")
    mp.models.write_inputs(path, calibration_feeds("vocoder_overflow", 1)[0],
                           tmp_path / "two" / "test_data_set_0")
    subst = {"DATA": path.parent / "test_data_set_0", "EMPTY": tmp_path / "empty",
             "MODELDIR": tmp_path / "two"}
    run = run_tool(path, *[subst.get(a, a) for a in args])
    assert run.returncode == 1
    assert message in run.stderr


def test_precision_diff_names_the_first_failing_node(stress, tmp_path):
    """The planted case: vocoder_overflow's second Conv overflows fp16 (its
    readers then see inf); the report must name it, with the rule that chose
    fp16, in the table, the verdict and the JSON."""
    path = stress["vocoder_overflow"]
    report = tmp_path / "diff.json"
    run = run_tool(path, "--precision-diff", path.parent / "test_data_set_0",
                   "--report", report)
    assert run.returncode == 0, run.stderr
    assert ("first non-finite: 'conv/Conv' (Conv, f16): relative error"
            in run.stdout), run.stdout
    assert "rule: allow class of Conv" in run.stdout
    diff = json.loads(report.read_text())
    first = diff["first_non_finite"]
    assert first["name"] == "conv/Conv" and first["compute"] == "f16"
    assert first["non_finite"] > 0
    names = [n["name"] for n in diff["nodes"]]
    # Program order, every node before it finite and close.
    before = diff["nodes"][:names.index("conv/Conv")]
    assert before and all(n["non_finite"] == 0 and n["rel_error"] < 1e-2 for n in before)
    assert [o["name"] for o in diff["outputs"]] == ["audio"]
    assert diff["outputs"][0]["non_finite"] > 0


def test_precision_diff_after_calibration_is_clean(stress, tmp_path):
    path = stress["vocoder_overflow"]
    calib = tmp_path / "calib"
    mp.models.write_inputs(path, calibration_feeds("vocoder_overflow", 1)[0], calib)
    run = run_tool(path, "--calibrate", calib, "--precision-diff",
                   path.parent / "test_data_set_0")
    assert run.returncode == 0, run.stderr
    assert "first non-finite: none" in run.stdout
    assert "first over 0.01: none" in run.stdout
    assert "calibrated |x| max" in run.stdout


def test_mp_compile_takes_ranges(stress, tmp_path):
    """A CPU library built with measured ranges passes where the plain mixed
    library gives NaN."""
    mp_compile = BUILD / "bin" / "mp-compile"
    require_built(mp_compile)
    path = stress["vocoder_overflow"]
    calib = mp.models.write_inputs(path, calibration_feeds("vocoder_overflow", 1)[0],
                                   tmp_path / "calib")
    ranges = tmp_path / "ranges.json"
    assert run_tool(path, "--calibrate", calib, "--ranges-out", ranges).returncode == 0
    data = path.parent / "test_data_set_0"
    results = {}
    for name, extra in (("plain", []), ("ranges", ["--ranges", ranges])):
        lib = tmp_path / name / f"lib{name}.so"
        subprocess.run([mp_compile, path, "--precision", "mixed", *extra, "--shapes-from", data,
                        "-o", lib], check=True, capture_output=True)
        results[name] = run_tool(lib, "--compare", data)
    assert results["plain"].returncode == 1 and "non-finite" in results["plain"].stdout
    assert results["ranges"].returncode == 0, results["ranges"].stdout
