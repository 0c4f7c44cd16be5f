"""The shape/index guard on a real export (docs/precision.md, "shape/index guard").

In ../shared/corpus/speech/vits_ts the spline's bin index (flows.2/GatherElements)
and the output length (Range over ceil() of the predicted durations) depend on the
duration predictor and, through it, on the text encoder. With the default
index_guard ("arithmetic") every contraction computes in f16 and the guard stops at
the duration predictor's flows.2/conv_proj, which the report names; with "exact"
the 36 contractions of the text encoder and duration predictor stay fp32 (the
whole-chain guard). Import and precision assignment only: a few seconds.
"""

import json
import subprocess

import pytest

from conftest import BUILD, REPO

MODEL = REPO.parent / "shared" / "corpus" / "speech" / "vits_ts" / "model.onnx"
MP_OPT = BUILD / "bin" / "mp-opt"
CONTRACTIONS = {"MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum"}


def plan(tmp_path, guard):
    if not MP_OPT.is_file():
        pytest.skip(f"mp-opt is not built ({MP_OPT})")
    if not MODEL.is_file():
        pytest.skip(f"{MODEL} is missing")
    out = tmp_path / f"plan_{guard}.json"
    run = subprocess.run([str(MP_OPT), str(MODEL), "--no-output",
                          f"--mp-assign-precision=plan={out} report=1 index-guard={guard}"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(out.read_text()), run.stderr


def test_default_guard_stops_at_the_duration_predictor_projection(tmp_path):
    p, report = plan(tmp_path, "arithmetic")
    assert p["index_guard"] == "arithmetic"
    contractions = {k: e for k, e in p["nodes"].items() if e["op_type"] in CONTRACTIONS}
    assert len(contractions) == 80
    assert all(e["compute"] == "f16" for e in contractions.values()), \
        [k for k, e in contractions.items() if e["compute"] != "f16"]
    assert p["summary"]["contraction_flops_f16_share"] == 1.0
    stops = [l for l in report.splitlines() if "follows its class although" in l]
    assert stops == ["  [guard] '/model/duration_predictor/flows.2/conv_proj/Conv' follows its "
                     "class although its output reaches operand #1 of "
                     "'/model/duration_predictor/flows.2/GatherElements' "
                     "(index-guard=arithmetic; exact would keep it in its type)"]
    # The arithmetic between the Conv and the indices still computes in fp32.
    for key in ("/model/Ceil", "/model/duration_predictor/flows.2/CumSum_1",
                "/model/duration_predictor/flows.2/GreaterOrEqual_1"):
        assert p["nodes"][key]["compute"] == "f32", key
        assert p["nodes"][key]["rule"].startswith("shape/index guard: feeds operand #"), key


def test_exact_guard_keeps_the_text_encoder_and_duration_predictor(tmp_path):
    p, report = plan(tmp_path, "exact")
    assert p["index_guard"] == "exact"
    kept = sorted(k for k, e in p["nodes"].items()
                  if e["op_type"] in CONTRACTIONS and e["compute"] == "f32")
    assert len(kept) == 36
    assert all(k.startswith(("/model/text_encoder/", "/model/duration_predictor/")) for k in kept)
    assert all(p["nodes"][k]["rule"].startswith("shape/index guard: ") for k in kept)
    assert "follows its class although" not in report
