"""The compile-time activation arena (mp-plan-arena) through mp-compile and
bench/arena.py: the plan holds at least the peak of live bytes, and on the
vocoder, whose layers free their inputs, buffers really share memory. That
no two live buffers overlap is checked by running: the CPU libraries and
the JIT use the same plan and match the references
(test_compiled_library.py, the conformance tests). The library's JSON
records the numbers."""

import json
import subprocess
from pathlib import Path

import pytest
from conftest import load_bench

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def arena():
    module = load_bench("arena")
    if not module.mp_compile().is_file():
        pytest.skip(f"mp-compile is not built ({module.mp_compile()})")
    return module


@pytest.mark.parametrize("precision", ["fp32", "mixed"])
def test_vocoder_buffers_share_the_arena(arena, conv_vocoder, precision):
    r = arena.measure(conv_vocoder, precision)
    assert r["buffers"] > 10
    assert r["peak_bytes"] <= r["bytes"] < r["buffer_bytes"] / 2
    assert r["bytes"] % 256 == 0


def test_library_json_records_the_arena(arena, conv_vocoder, tmp_path):
    out = tmp_path / "libvoc.so"
    subprocess.run([str(arena.mp_compile()), str(conv_vocoder / "model.onnx"), "--shapes-from",
                    str(conv_vocoder / "test_data_set_0"), "-o", str(out)], check=True,
                   capture_output=True)
    desc = json.loads(out.with_suffix(".json").read_text())["activation_arena"]
    assert desc["buffers"] > 0 and desc["peak_bytes"] <= desc["bytes"]
