"""bench/calibration.py on the fp16 stress cases only (--no-shared, no AutoCast): the page
has one row per stress case, and the calibrated mixed build has no non-finite output on
any of them (docs/precision.md, "Calibration"), while vocoder_overflow's default build
has some (the control).

Those are skipped when mp-run is not built ($MP_BUILD_DIR/bin/mp-run, default build/).
About 20 s: four small models, four mp-run calls each.

Unit tests of mp.tools.calibration_bench (no mp build, no bench run, tiny synthetic
graphs): FLOPs from run-time shapes where shape inference cannot know a dim, the
recount of a plan with them, the detection of models whose output length depends on
computed values, their random inputs, and the length comparison and its cells.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mp.models
from conftest import BUILD
from mp.tools import calibration_bench as cb

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "calibration.py"
MP_RUN = BUILD / "bin" / "mp-run"

needs_mp_run = pytest.mark.skipif(not MP_RUN.exists(), reason=f"{MP_RUN} is not built")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("calibration")
    md, js = out / "calibration.md", out / "calibration.json"
    subprocess.run([sys.executable, str(SCRIPT), "--no-shared", "--no-autocast",
                    "--mp-run", str(MP_RUN), "--out", str(md), "--json", str(js)],
                   check=True, timeout=600)
    return md.read_text(), {r["name"]: r for r in json.loads(js.read_text())["results"]}


@needs_mp_run
def test_page_has_a_row_per_stress_case(bench):
    page, results = bench
    assert sorted(results) == sorted(f"stress/{c}" for c in mp.models.STRESS)
    for case in mp.models.STRESS:
        rows = [l for l in page.splitlines() if l.startswith(f"| `stress/{case}` |")]
        assert len(rows) == 1, case
        assert "error" not in rows[0], rows[0]
    assert "- Regenerate: `.venv/bin/python bench/calibration.py --no-shared --no-autocast`" in page
    assert "AutoCast: not run" in page


@needs_mp_run
@pytest.mark.parametrize("case", mp.models.STRESS)
def test_calibrated_build_has_no_non_finite_output(bench, case):
    steps = bench[1][f"stress/{case}"]["steps"]
    for key in ("fp32", "default", "calibration", "calibrated", "metrics_calibrated"):
        assert steps[key]["ok"], (key, steps[key].get("error"))
    assert steps["metrics_calibrated"]["nonfinite"] == 0
    # Every stress case has values fp16 cannot hold: calibration keeps some node in fp32.
    assert steps["kept"]["kept"], case


@needs_mp_run
def test_vocoder_overflow_default_build_is_the_control(bench):
    steps = bench[1]["stress/vocoder_overflow"]["steps"]
    assert steps["metrics_default"]["nonfinite"] > 0
    assert steps["metrics_calibrated"]["kind"] == "snr"
    assert steps["metrics_calibrated"]["value"] >= 40.0


# ----------------------------------------------------------------------------- unit tests


def _ceil_model(*, unknown_op: bool = False) -> onnx.ModelProto:
    """x [1, 8] float, n [1] float: k = ceil(n) rows, the MatMul [k, 8] @ W [8, 16] has
    a dim (k) that only a run knows. ``unknown_op`` adds a node onnxruntime has no
    kernel for (on a side branch; shape inference skips it)."""
    nodes = [
        helper.make_node("Ceil", ["n"], ["nc"], name="ceil"),
        helper.make_node("Cast", ["nc"], ["k1"], to=TensorProto.INT64, name="cast"),
        helper.make_node("Squeeze", ["k1"], ["k"], name="squeeze"),
        helper.make_node("Range", ["zero", "k", "one"], ["r"], name="range"),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT, name="castf"),
        helper.make_node("Unsqueeze", ["rf", "ax1"], ["col"], name="unsq"),
        helper.make_node("Mul", ["col", "x"], ["rows"], name="mul"),        # [k, 8]
        helper.make_node("MatMul", ["rows", "W"], ["y"], name="mm"),         # [k, 16]
    ]
    if unknown_op:
        nodes.append(helper.make_node("Foo", ["x"], ["side"], name="foo", domain="test.unknown"))
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array([1], np.int64), "ax1"),
             numpy_helper.from_array(np.ones((8, 16), np.float32), "W")]
    graph = helper.make_graph(
        nodes, "ceil_rows",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("n", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("test.unknown", 1)] if unknown_op else [])
    return helper.make_model(graph, opset_imports=opsets)


FEEDS = {"x": np.ones((1, 8), np.float32), "n": np.array([4.2], np.float32)}  # k = 5


def test_runtime_shapes_give_the_data_dependent_dim():
    shapes = cb.runtime_shapes(_ceil_model(), FEEDS)
    assert shapes["rows"] == (TensorProto.FLOAT, [5, 8])
    assert shapes["y"] == (TensorProto.FLOAT, [5, 16])
    assert shapes["n"] == (TensorProto.FLOAT, [1])


def test_flops_from_runtime_shapes_where_inference_counts_one():
    model = _ceil_model()
    info, src = cb.flop_info(model, FEEDS)
    assert src["source"] == "run-time shapes"
    records = cb.node_flops(model, info, src["exact"])
    assert records["mm"]["flops"] == 2.0 * 5 * 16 * 8
    assert not records["mm"]["inferred"]
    # Shape inference alone leaves k unknown: counted as 1 (the count the bench had).
    inferred = cb.precision_bench.infer_types(cb.with_input_shapes(model, {k: v.shape for k, v in FEEDS.items()}))
    assert cb.node_flops(model, inferred)["mm"]["flops"] == 2.0 * 1 * 16 * 8


def test_flops_fall_back_to_shape_inference_when_onnxruntime_cannot_run():
    model = _ceil_model(unknown_op=True)
    info, src = cb.flop_info(model, FEEDS)
    assert src["source"] == "shape inference" and "onnxruntime" in src["why"]
    records = cb.node_flops(model, info, src["exact"])
    assert records["mm"]["flops"] == 2.0 * 1 * 16 * 8
    assert records["mm"]["inferred"]


def test_recount_weighs_plan_decisions_with_the_given_flops():
    records = {"a": {"op_type": "MatMul", "flops": 300.0}, "b": {"op_type": "Conv", "flops": 100.0},
               "c": {"op_type": "Relu", "flops": 0.0}, "d": {"op_type": "MatMul", "flops": 50.0}}
    plan = {"a": {"compute": "f16", "op_type": "MatMul"}, "b": {"compute": "f32", "op_type": "Conv"},
            "c": {"compute": "f16", "op_type": "Relu"}, "e": {"compute": "f16", "op_type": "MatMul"}}
    rc = cb.recount(plan, records)
    assert rc["share"] == pytest.approx(0.75)
    assert rc["unmatched"] == ["e"] and rc["not_in_plan"] == ["d"]
    assert cb.recount_plan({"c": {"compute": "f16"}}, records) is None


def test_share_cells_show_the_runtime_count_and_the_static_estimate_apart():
    steps = {"flops": {"ok": True, "source": "run-time shapes", "contractions_inferred": []},
             "plan_default": {"ok": True, "share": 0.647, "recount": 0.971, "nodes_f16": 143,
                              "nodes_total": 583, "recount_detail": {"unmatched": []}},
             "plan_calibrated": {"ok": True, "share": 0.647, "recount": 0.971, "nodes_f16": 143,
                                 "nodes_total": 583}}
    assert cb.share_cell(steps, "default") == "97.1 % (143/583)"
    assert cb.static_cell(steps) == "64.7 % / 64.7 %"
    line = cb.recount_lines([{"name": "speech/vits", "steps": steps}])[0]
    assert "static 64.7 %, run-time 97.1 %" in line
    steps["flops"]["source"] = "shape inference"
    assert cb.share_cell(steps, "default").endswith("(inferred shapes)")


def test_length_hazard_is_a_rounding_of_data_that_sets_a_shape():
    assert cb.length_hazard_nodes(_ceil_model()) == ["ceil"]
    # Ceil of a size computed from a shape (a padding amount) is not one.
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT, name="cast"),
             helper.make_node("Div", ["sf", "two"], ["h"], name="div"),
             helper.make_node("Ceil", ["h"], ["hc"], name="ceil"),
             helper.make_node("Cast", ["hc"], ["hi"], to=TensorProto.INT64, name="casti"),
             helper.make_node("Reshape", ["x", "hi"], ["y"], name="reshape")]
    graph = helper.make_graph(nodes, "pad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    assert cb.length_hazard_nodes(helper.make_model(graph)) == []
    # Ceil of data whose result never sets a shape is not one either.
    graph = helper.make_graph([helper.make_node("Ceil", ["x"], ["y"], name="ceil")], "plain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    assert cb.length_hazard_nodes(helper.make_model(graph)) == []


def _tts_model(extra_input: bool = False) -> onnx.ModelProto:
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "seq"])]
    if extra_input:
        inputs.append(helper.make_tensor_value_info("speaker", TensorProto.FLOAT, [1]))
    graph = helper.make_graph(
        [helper.make_node("Gather", ["emb", "input_ids"], ["h"], name="embed")], "tts", inputs,
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.zeros((37, 4), np.float32), "emb")])
    return helper.make_model(graph)


def test_token_inputs_read_the_vocabulary_from_the_embedding():
    tok = cb.token_inputs(_tts_model(), k=3, tokens=150)
    assert tok["vocab"] == 37 and tok["token_input"] == "input_ids" and tok["seeds"] == [0, 1, 2]
    for seed, feed in enumerate(tok["sets"]):
        ids = feed["input_ids"]
        assert ids.shape == (1, 150) and ids.dtype == np.int64
        assert ids.min() >= 1 and ids.max() < 37
        np.testing.assert_array_equal(ids, np.random.default_rng(seed).integers(1, 37, size=(1, 150)))
        np.testing.assert_array_equal(feed["attention_mask"], np.ones((1, 150), np.int64))
    with pytest.raises(cb.StepError, match="speaker"):
        cb.token_inputs(_tts_model(extra_input=True))


def test_compare_lengths_counts_equal_differing_and_failed_inputs():
    ref = [{"shapes": [[1, 1024]]}, {"shapes": [[1, 2048]]}, {"shapes": [[1, 512]]},
           {"error": "reference failed"}, {"shapes": [[1, 768]]}]
    got = [{"shapes": [[1, 1024]]}, {"shapes": [[1, 2304]]}, {"error": "boom"},
           {"shapes": [[1, 9]]}, {"shapes": [[1, 512]]}]
    c = cb.compare_lengths(ref, got, seeds=[10, 11, 12, 13, 14])
    assert c == {"equal": 1, "total": 4, "differ": [11, 14], "failed": [12], "diff": [256, -256]}
    assert cb.compare_lengths(ref, ref)["equal"] == 4
    cell = cb._length_cell({"compare": c, "variants": 1})
    assert cell == "1/4 (differ: seeds 11, 14; by +256, -256 samples; failed: seeds 12)"
    assert cb._length_cell({"error": "mp.compile(mixed): x"}).startswith("error: ")


def test_length_section_reports_the_measured_hazard():
    def entry(equal, differ):
        return {"runs": [], "compare": {"equal": equal, "total": 12, "differ": differ,
                                        "failed": [], "diff": [256] * len(differ)}}
    length = {"ok": True, "vocab": 40, "ref_lengths": [1000, 1200], "hazard_nodes": ["ceil"],
              "mp_mixed": {**entry(11, [3]), "seconds": 60.0, "variants": 1},
              "mp_fp32": {**entry(12, []), "seconds": 55.0, "variants": 1},
              "mp_mixed_exact": {**entry(12, []), "seconds": 58.0, "variants": 1},
              "autocast": {**entry(7, [0, 2, 3, 5, 9]), "rounding_input_types": {"ceil": "FLOAT16"}},
              "mp_rounding_compute": {"ceil": ["f32", "shape/index guard: feeds operand #1 of 'r'"]}}
    steps = {"length": length, "flops": {"ok": True, "source": "run-time shapes"},
             "autocast": {"ok": True, "contraction_flops_f16_share": 1.0, "nodes_f16": 9, "nodes_total": 9},
             "plan_default": {"ok": True, "share": 1.0, "recount": 1.0, "nodes_f16": 9, "nodes_total": 9},
             "plan_exact": {"ok": True, "share": 0.6, "recount": 0.97, "nodes_f16": 5, "nodes_total": 9}}
    results = [{"name": "speech/vits", "steps": steps, "length_hazard": ["ceil"]},
               {"name": "decoders/gpt2", "steps": {}, "length_hazard": []}]
    text = "\n".join(cb.length_lines(results, {}))
    row = [l for l in text.splitlines() if l.startswith("| `speech/vits` |")]
    assert len(row) == 1
    assert "| 11/12 (differ: seeds 3; by +256 samples) | 12/12 | 12/12 | 7/12 (differ: seeds 0, 2, 3, 5, 9; by +256" in row[0]
    assert "| 100.0 % (9/9) | 100.0 % (9/9) | 97.0 % (5/9) | 1000–1200 |" in row[0]
    assert "gpt2" not in text
    para = [l for l in text.splitlines() if l.startswith("**Output length")][0]
    assert "mp mixed `speech/vits` 11/12 at 100.0 %; AutoCast `speech/vits` 7/12 at 100.0 %" in para
    assert "rounding op reads float16" in para and "rule `shape/index guard" in para
    assert "contractions included: `speech/vits` 12/12 at 97.0 %" in para
    summary = cb.length_summary_lines(results)[0]
    assert "**11/12** inputs for mp mixed" in summary and "**7/12** for AutoCast" in summary
    assert "**12/12** for mp mixed with `index_guard` exact" in summary
    assert "not counted" not in summary

    # A count without onnxruntime's graph optimizations shows where it differs.
    length["autocast"]["compare_no_opt"] = {"equal": 6, "total": 12, "differ": [0, 1, 2, 3, 5, 9],
                                            "failed": [], "diff": [256] * 6}
    assert "6/12 without onnxruntime's graph optimizations: differ on seeds 0, 1, 2, 3, 5, 9" \
        in cb._length_cell(length["autocast"])

    # An original that rounds an fp16 value is no fp32 reference: marked, not summed, and
    # no claim about AutoCast is made from it.
    length.update(reference_fp16=True, reference_rounding_types={"ceil": "FLOAT16"})
    length["mp_mixed"]["compare_mp_fp32"] = {"equal": 12, "total": 12}
    text = "\n".join(cb.length_lines(results, {}))
    assert "| `speech/vits` (reference rounds fp16) |" in text
    assert "no fp32 reference" in text and "lengths equal to mp fp32's instead: mp mixed 12/12" in text
    assert "Output length and fp16 FLOP share" not in text
    summary = cb.length_summary_lines(results)[0]
    assert "on 0 models" in summary and "not counted: `speech/vits`" in summary


def test_share_summary_compares_with_every_autocast_conversion_unrounded():
    def row(name, mine, default=None, calib=None):
        steps = {"plan_calibrated": {"ok": True, "recount": mine}}
        for key, share in (("autocast", default), ("autocast_calib", calib)):
            steps[key] = ({"ok": True, "contraction_flops_f16_share": share} if share is not None
                          else {"ok": False, "error": "x"})
        return {"name": name, "steps": steps}
    rows = [row("a", 1.0, 1.0, 1.0), row("b", 0.9995, 0.9996), row("c", 0.5, None, 0.4),
            row("d", 0.7)]
    line = cb.share_summary_lines(rows)[0]
    assert "**2/3** models" in line
    assert "below: `b` (99.95 % < 99.96 %)" in line
    assert ("not compared (AutoCast converted neither way, or no count; in brackets mp's "
            "calibrated share): `d` (70.0 %)") in line


def test_recount_finds_unnamed_contractions_by_their_first_output():
    # An unnamed node: mp's plan calls it "OpType(first output)", the bench's records
    # "OpType__bench<i>" (precision_bench.name_nodes) with mp's name beside it.
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 2])
                                            for n in "ab"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(graph)
    cb.precision_bench.name_nodes(model)
    info = cb.precision_bench.infer_types(model)
    records = cb.node_flops(model, info)
    assert records["MatMul__bench0"]["mp_name"] == "MatMul(y)"
    rc = cb.recount({"MatMul(y)": {"op_type": "MatMul", "compute": "f16"}}, records)
    assert rc["share"] == 1.0 and rc["not_in_plan"] == []
    assert rc["matched_by_name"] == {"MatMul(y)": "MatMul__bench0"}
