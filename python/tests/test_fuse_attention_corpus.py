"""--mp-fuse-attention on real torch exports of ../shared/corpus/decoders.

Every attention layer of each sampled decoder becomes one mp.attention (the
report lists one fused site per layer and no near miss), and mp-run with
--fuse-attention matches onnxruntime's reference outputs (test_data_set_0:
prefill, test_data_set_1: decode with a left-padded row) and, for fp32, the
unfused run within 1e-5. The sample covers both exporters (TorchScript:
SDPA with its IsNaN/Where guard; dynamo: SDPA decomposed with K^T written as
reshapes), grouped-query heads by repeat_kv, transformers' eager attention
and TorchScript's fp16 SDPA (scores widened to f32). About a minute on 2
cores.
"""

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from conftest import BUILD, REPO

CORPUS = REPO.parent / "shared" / "corpus" / "decoders"
BIN = BUILD / "bin"

SAMPLE = ["gpt2_ts", "gpt2_dynamo", "llama_ts", "llama_dynamo", "llama_ts_eager", "llama_ts_fp16"]
# The fast tier runs one TorchScript export of each family on one test set;
# the other exports and sets run in the full tier (scripts/test.sh --full).
FAST_RUNS = {("gpt2_ts", "test_data_set_0"), ("llama_ts", "test_data_set_1")}
RUNS = [pytest.param(name, data_set, marks=() if (name, data_set) in FAST_RUNS else pytest.mark.slow)
        for data_set in ("test_data_set_0", "test_data_set_1") for name in SAMPLE]


def tool(name: str) -> Path:
    path = BIN / name
    if not path.is_file():
        pytest.skip(f"{name} is not built ({path})")
    return path


def model_dir(name: str) -> Path:
    d = CORPUS / name
    if not (d / "model.onnx").is_file():
        pytest.skip(f"the corpus decoder {name} is absent ({d})")
    return d


def layers(model: Path) -> int:
    graph = onnx.load(str(model), load_external_data=False).graph
    return sum(1 for i in graph.input if i.name.startswith("past_key_values.") and i.name.endswith(".key"))


def fusion_report(model: Path, tmp_path: Path) -> tuple[dict, str]:
    """mp-fuse-attention's report on `model` and the fused module's text."""
    report, fused = tmp_path / "report.json", tmp_path / "fused.mlir"
    r = subprocess.run([str(tool("mp-opt")), str(model), f"--mp-fuse-attention=report={report}",
                        "-o", str(fused)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(report.read_text()), fused.read_text()


@pytest.mark.parametrize("name", SAMPLE)
def test_every_layer_fuses(name, tmp_path):
    model = model_dir(name) / "model.onnx"
    data, text = fusion_report(model, tmp_path)
    assert data["near_misses"] == []
    assert len(data["fused"]) == layers(model)
    assert text.count("mp.attention ") == layers(model)
    assert "mp.softmax" not in text
    for site in data["fused"]:
        # The caches join inside the fused op.
        assert "past-concat" in site["pattern"], site
        if "eager" not in name:
            assert "nan-guard" in site["pattern"], site


def run(model: Path, data: Path, out: Path, fuse: bool) -> subprocess.CompletedProcess:
    cmd = [str(tool("mp-run")), str(model), "--compare", str(data), "--output-dir", str(out)]
    if fuse:
        cmd.append("--fuse-attention")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name, data_set", RUNS)
def test_fused_outputs_match(name, data_set, tmp_path):
    d = model_dir(name)
    fused = run(d / "model.onnx", d / data_set, tmp_path / "fused", fuse=True)
    assert fused.returncode == 0, fused.stdout + fused.stderr
    if name.endswith("fp16"):
        return
    plain = run(d / "model.onnx", d / data_set, tmp_path / "plain", fuse=False)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    outputs = sorted(p.name for p in (tmp_path / "plain").glob("*.npy"))
    assert outputs
    for o in outputs:
        a = np.load(tmp_path / "plain" / o)
        b = np.load(tmp_path / "fused" / o)
        assert a.shape == b.shape, o
        assert np.max(np.abs(a - b), initial=0.0) <= 1e-5, o


SHARED = REPO.parent / "shared" / "models"
CONTRIB = {"genai_gpt2_fp32_contrib_attention_past": "com.microsoft.Attention",
           "genai_llama_fp16_mha_extdata": "com.microsoft.MultiHeadAttention"}


# GPT-2's packed Attention with past takes ~40 s: full tier; Llama's MHA stays fast.
@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n.startswith("genai_gpt2") else n for n in sorted(CONTRIB)])
def test_contrib_attention_becomes_mp_attention(name, tmp_path):
    """onnxruntime-genai's com.microsoft Attention (GPT-2: packed projection,
    stacked past, 2-D mask_index, unidirectional) and MultiHeadAttention
    (Llama: attention_bias, fp16) become mp.attention, one per layer, and the
    fused runs match onnxruntime's stored outputs on every test set."""
    d = SHARED / name
    if not (d / "model.onnx").is_file():
        pytest.skip(f"the shared model {name} is absent ({d})")
    data, text = fusion_report(d / "model.onnx", tmp_path)
    assert data["kept"] == [] and data["near_misses"] == []
    assert data["fused"] and all(site["pattern"] == [CONTRIB[name]] for site in data["fused"])
    for op in ("mp.ms.attention", "mp.ms.multi_head_attention"):
        assert op not in text
    assert text.count("mp.attention ") == len(data["fused"])
    sets = sorted(p for p in d.glob("test_data_set_*") if p.is_dir())
    assert sets
    for s in sets:
        fused = run(d / "model.onnx", s, tmp_path / s.name, fuse=True)
        assert fused.returncode == 0, fused.stdout + fused.stderr


SPEECH = REPO.parent / "shared" / "corpus" / "speech"


@pytest.mark.parametrize("name", ["bark_semantic_step_ts", "bark_semantic_step_dynamo"])
def test_finfo_min_masks_fuse(name, tmp_path):
    """Bark masks with masked_fill(torch.finfo.min) (and, from dynamo, an
    added padding mask after it): every layer fuses, and the fused runs
    match onnxruntime's outputs on both test sets."""
    d = SPEECH / name
    if not (d / "model.onnx").is_file():
        pytest.skip(f"the corpus model {name} is absent ({d})")
    data, _ = fusion_report(d / "model.onnx", tmp_path)
    # The corpus Bark has 2 layers.
    assert data["near_misses"] == [] and len(data["fused"]) == 2
    assert all("fill-mask" in site["pattern"] for site in data["fused"])
    for s in ("test_data_set_0", "test_data_set_1"):
        fused = run(d / "model.onnx", d / s, tmp_path / s, fuse=True)
        assert fused.returncode == 0, fused.stdout + fused.stderr


def test_merged_head_attention_fuses(tmp_path):
    """SpeechT5's decoder step computes attention with the heads merged into
    the batch ([B*H, S, D], as BART-family models do): its self- and
    cross-attention of both layers fuse, and the fused runs of both exports
    match onnxruntime's outputs on both test sets."""
    d = SPEECH / "speecht5_decoder_step_dynamo"
    if not (d / "model.onnx").is_file():
        pytest.skip(f"the corpus model is absent ({d})")
    data, _ = fusion_report(d / "model.onnx", tmp_path)
    assert data["near_misses"] == [] and len(data["fused"]) == 4
    # The TorchScript export imports only with input shapes (an If on the
    # decoder length), so it is checked through mp-run alone.
    for name in ("speecht5_decoder_step_dynamo", "speecht5_decoder_step_ts"):
        for s in ("test_data_set_0", "test_data_set_1"):
            fused = run(SPEECH / name / "model.onnx", SPEECH / name / s, tmp_path / name / s,
                        fuse=True)
            assert fused.returncode == 0, fused.stdout + fused.stderr


def test_grouped_queries_folded_into_the_sequence(tmp_path):
    """Dia's TorchScript export runs grouped-query SDPA on one new token by
    reshaping Q [B, Hq, 1, D] to [B, Hq / 2, 2, D] (the groups as query
    positions), its size computed as Div(Shape(q)[1], 2): the division is
    read through, so all 4 sites fuse, and the fused runs match
    onnxruntime's outputs on both test sets."""
    d = SPEECH / "dia_decoder_step_ts"
    if not (d / "model.onnx").is_file():
        pytest.skip(f"the corpus model is absent ({d})")
    data, _ = fusion_report(d / "model.onnx", tmp_path)
    assert data["near_misses"] == [] and len(data["fused"]) == 4
    for s in ("test_data_set_0", "test_data_set_1"):
        fused = run(d / "model.onnx", d / s, tmp_path / s, fuse=True)
        assert fused.returncode == 0, fused.stdout + fused.stderr
