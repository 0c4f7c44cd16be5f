"""bench/gpu_model.py (mp.tools.gpu_model_bench) on one corpus decoder at a
small shape: the decode-step feeds follow the corpus layout, the library is
checked against onnxruntime on them, and the page's numbers come from the
emulator's profile."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import BUILD, REPO, require_built, require_present
from mp.tools.gpu_model_bench import decode_step_feeds, layer_kernels

ENV = {**os.environ, "PYTHONPATH": str(REPO / "python")}


def test_decode_step_feeds_follow_the_corpus_layout():
    onnx = pytest.importorskip("onnx")
    model_path = REPO.parent / "shared" / "corpus" / "decoders" / "llama_ts" / "model.onnx"
    require_present(model_path)
    feeds = decode_step_feeds(onnx.load(str(model_path), load_external_data=False), 3, 40, 40)
    assert feeds["input_ids"].shape == (3, 1) and feeds["input_ids"].max() < 256
    assert feeds["attention_mask"].shape == (3, 41) and (feeds["attention_mask"] == 1).all()
    assert (feeds["position_ids"] == 40).all()
    assert feeds["past_key_values.1.value"].shape == (3, 2, 40, 16)
    assert feeds["past_key_values.0.key"].dtype == np.float32


def test_gpu_model_bench_on_one_decoder(tmp_path):
    require_built(BUILD / "bin" / "mp-compile")
    require_present(REPO.parent / "shared" / "corpus" / "decoders" / "gpt2_ts")
    out, data = tmp_path / "gpu-model.md", tmp_path / "gpu-model.json"
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "gpu_model.py"), "--models",
                           "gpt2_ts", "--configs", "2x300", "--out", str(out), "--json", str(data)],
                          env=ENV, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (r,) = json.loads(data.read_text())["results"]
    assert (r["model"], r["batch"], r["cache"], r["layers"]) == ("gpt2_ts", 2, 300, 2)
    assert r["position"] == 255  # gpt2's 256 learned positions
    assert r["matched"] == r["outputs"] == 5
    assert r["launches"] > 0 and r["dram_bytes"] > 0 and 0 < r["coalesced"] <= 1
    # Minimal bytes are at least the caches read and written (f32, 2 layers, K and V).
    assert r["minimal_bytes"] >= 4 * 2 * 2 * (2 * 4 * 300 * 16 + 2 * 4 * 301 * 16)
    page = out.read_text()
    assert "| gpt2_ts | 2 | 300 |" in page and "a model from the emulator's counts" in page
    assert "position 255 at cache 300" in page


def test_gpu_model_bench_with_decomposed_attention(tmp_path):
    """--decomposed-attention builds with mp-compile --fuse-attention=false
    (the CUDA target fuses attention by default); the page and its data say
    so, the library still matches onnxruntime, and it launches more kernels
    than the default build, whose flash kernels replace Q·Kᵀ, the masks,
    the Softmax and ·V."""
    require_built(BUILD / "bin" / "mp-compile")
    require_present(REPO.parent / "shared" / "corpus" / "decoders" / "llama_ts")
    runs = {}
    for flag in ((), ("--decomposed-attention",)):
        out, data = tmp_path / f"page{len(flag)}.md", tmp_path / f"page{len(flag)}.json"
        proc = subprocess.run([sys.executable, str(REPO / "bench" / "gpu_model.py"), "--models",
                               "llama_ts", "--configs", "1x40", *flag, "--out", str(out),
                               "--json", str(data)],
                              env=ENV, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs[flag] = (json.loads(data.read_text()), out.read_text())
    run, page = runs[("--decomposed-attention",)]
    assert run["flags"] == "--fuse-attention=false"
    (r,) = run["results"]
    assert r["matched"] == r["outputs"] == 5
    assert 0 < r["layer_kernels"] <= r["launches"] // 2
    assert "attention decomposed" in page and "Built with `mp-compile --fuse-attention=false`" in page
    (fused,) = runs[()][0]["results"]
    assert fused["matched"] == 5 and fused["launches"] < r["launches"]


def _launch(grid, flops):
    return {"grid": [grid, 1, 1], "block": [64, 1, 1], "tensor_flops": flops, "core_flops": 0}


def test_layer_kernels_is_the_run_repeated_once_per_layer():
    head, layer, tail = [_launch(1, 0)], [_launch(2, 10), _launch(3, 0), _launch(1, 5)], \
        [_launch(4, 0), _launch(1, 0)]
    assert layer_kernels(head + layer * 3 + tail, 3) == 3
    assert layer_kernels(head + layer * 2 + tail, 2) == 3
    # One launch of four paired differently in one layer still repeats.
    other = [_launch(2, 10), _launch(5, 0), _launch(1, 5), _launch(3, 0)]
    assert layer_kernels(head + layer + [_launch(3, 0)] + other + tail, 2) == 4
    # llama_dynamo's decode step at batch 1 (launch signatures as
    # mp.emu --profile-json gives them): the rotary tables' kernel joins
    # three of the first layer's ten launches, which then differ from the
    # second layer's; the layer is still ten kernels.
    def sig(grid, block, tc, core):
        return {"grid": [grid, 1, 1], "block": [block, 1, 1], "tensor_flops": tc,
                "core_flops": core}
    layer1 = [sig(1, 64, 0, 4426), sig(3, 64, 262144, 0), sig(1, 32, 0, 96)]
    shared = [sig(5, 128, 327680, 20996), sig(4, 160, 0, 12796), sig(1, 128, 294912, 4608),
              sig(1, 64, 131072, 64), sig(1, 64, 0, 4426), sig(2, 128, 524288, 0),
              sig(1, 64, 262144, 26688)]
    layer0 = [sig(2, 64, 0, 4426), sig(4, 64, 262144, 608), sig(1, 161, 0, 96)]
    step = [sig(66, 256, 0, 8)] + layer0 + shared + layer1 + shared + \
        [sig(1, 64, 0, 4171), sig(2, 128, 524288, 4608)]
    assert layer_kernels(step, 2) == 10
    # Layers that launch different kernels: no run repeats.
    assert layer_kernels([_launch(1, 0), _launch(2, 0), _launch(3, 0), _launch(4, 0)], 2) \
        is None
