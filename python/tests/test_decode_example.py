"""examples/decode on a real decoder export: compile_decoder.py builds the
prefill and in-place step libraries of ../shared/corpus's Llama (dynamo
export), decode.py and the C program decode greedily, and the tokens equal
onnxruntime's greedy tokens on the original model with Concat caches."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD, require_built, require_present

REPO = Path(__file__).resolve().parents[2]
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
MP_COMPILE = BUILD / "bin" / "mp-compile"
DECODE_C = BUILD / "bin" / "mp-decode-example"
EXAMPLE = REPO / "examples" / "decode"
DECODERS = REPO.parent / "shared" / "corpus" / "decoders"
PROMPT = [5, 17, 42, 3, 9, 11]
STEPS = 8

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


def _compile(model: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(EXAMPLE / "compile_decoder.py"), str(model),
                           str(out), "--prompt-len", str(len(PROMPT)), "--max-seq-len", "16",
                           "--mp-compile", str(MP_COMPILE), *extra],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def llama_libs(tmp_path_factory):
    model = DECODERS / "llama_dynamo" / "model.onnx"
    require_built(MP_COMPILE)
    require_present(model)
    out = tmp_path_factory.mktemp("llama_decode")
    built = _compile(model, out)
    assert built.returncode == 0, built.stdout + built.stderr
    return model, out


def _tokens(stdout: str) -> list[int]:
    line = next(line for line in stdout.splitlines() if line.startswith("tokens:"))
    return [int(t) for t in line.split()[1:]]


def test_python_loop_matches_onnxruntime(llama_libs):
    model, out = llama_libs
    run = subprocess.run([sys.executable, str(EXAMPLE / "decode.py"), str(out), "--prompt",
                          ",".join(map(str, PROMPT)), "--steps", str(STEPS), "--reference",
                          str(model)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(_tokens(run.stdout)) == STEPS
    assert "onnxruntime: the same tokens" in run.stdout, run.stdout


def test_c_loop_matches_onnxruntime(llama_libs):
    """The C program over the runtime alone gives onnxruntime's tokens."""
    if not DECODE_C.is_file():
        pytest.skip("mp-decode-example is not built")
    model, out = llama_libs
    sys.path.insert(0, str(EXAMPLE))
    try:
        import decode
    finally:
        sys.path.remove(str(EXAMPLE))
    want, _ = decode.decode_onnxruntime(model, PROMPT, STEPS)
    run = subprocess.run([str(DECODE_C), str(out / "libprefill.so"), str(out / "libstep.so"),
                          str(STEPS), *map(str, PROMPT)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _tokens(run.stdout) == want


def test_c_loop_refuses_bad_requests(llama_libs):
    """More tokens than the caches hold, and a prompt of the wrong length,
    are errors with a message and a non-zero exit."""
    if not DECODE_C.is_file():
        pytest.skip("mp-decode-example is not built")
    _, out = llama_libs
    libs = [str(out / "libprefill.so"), str(out / "libstep.so")]
    long = subprocess.run([str(DECODE_C), *libs, "20", *map(str, PROMPT)],
                          capture_output=True, text=True, timeout=60)
    assert long.returncode != 0 and "exceed the cache positions" in long.stderr
    short = subprocess.run([str(DECODE_C), *libs, "4", "1", "2"],
                           capture_output=True, text=True, timeout=60)
    assert short.returncode != 0 and "takes 6 prompt tokens, got 2" in short.stderr


def test_sliding_window_step_is_refused(tmp_path):
    """Mistral's sliding window folds into the step's mask at the buffer's
    end: the in-place step is refused naming the node, not compiled into
    wrong tokens."""
    model = DECODERS / "mistral_dynamo" / "model.onnx"
    require_built(MP_COMPILE)
    require_present(model)
    built = _compile(model, tmp_path)
    assert built.returncode != 0
    assert "cannot keep this attention's KV cache in place (from node" in built.stderr
    assert "sliding window" in built.stderr
