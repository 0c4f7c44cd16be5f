"""Models run from several threads (docs/running.md, "Threads").

One ``mp.compile`` model (the JIT) and one ``mp.load`` library (written by
mp-compile) each run from four threads at once, and two models, or two
libraries, run at the same time from two threads. The model is the bundled
TTS decoder step; each thread runs on inputs of its own, and every output
is compared by name with onnxruntime's on the same inputs.

The first runs of a new JIT model race to compile it: with two shapes among
the threads, two variants are compiled while other threads run.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from conftest import BUILD, ort_outputs, require_built

import mp

MODEL = Path(__file__).resolve().parents[2] / "examples" / "tts_decoder" / "model.onnx"
RTOL, ATOL = 1e-4, 1e-5
RUNS = 4


def _feeds(seed: int, past_len: int) -> dict[str, np.ndarray]:
    """Inputs of the decoder step: batch 2, 10 encoder frames, `past_len`
    cached positions, random values from `seed`."""
    rng = np.random.default_rng(seed)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    feeds = {"mel_frame": normal(2, 1, 80), "encoder_out": normal(2, 10, 128)}
    for layer in range(2):
        for kind in ("key", "value"):
            feeds[f"past_{kind}_{layer}"] = normal(2, 4, past_len, 32)
    return feeds


@pytest.fixture(scope="module")
def cases():
    """Per thread (8 of them), RUNS input sets and onnxruntime's outputs;
    odd threads take 6 cached positions, even ones 5."""
    pytest.importorskip("onnxruntime")
    out = []
    for thread in range(8):
        runs = []
        for run in range(RUNS):
            feeds = _feeds(100 * thread + run, 5 + thread % 2)
            runs.append((feeds, ort_outputs(MODEL, feeds)))
        out.append(runs)
    return out


def _run_threads(runners, cases):
    """Runs runners[i] (a callable taking feeds, returning {name: array})
    on the input sets of cases[i], each on its own thread, all released at
    once; checks every output against onnxruntime's by name."""
    start = threading.Barrier(len(runners))

    def work(i):
        start.wait()
        return [runners[i](feeds) for feeds, _ in cases[i]]

    with ThreadPoolExecutor(max_workers=len(runners)) as pool:
        results = list(pool.map(work, range(len(runners))))
    for i, (got_runs, want_runs) in enumerate(zip(results, cases)):
        for run, (got, (_, want)) in enumerate(zip(got_runs, want_runs)):
            assert list(got) == list(want), f"thread {i} run {run}: outputs {list(got)}"
            for name, w in want.items():
                np.testing.assert_allclose(got[name], w, rtol=RTOL, atol=ATOL,
                                           err_msg=f"thread {i} run {run}: {name}")


def _require_jit():
    require_built(mp.library_path())


def test_jit_one_model_from_four_threads(cases):
    _require_jit()
    with mp.compile(MODEL) as model:
        _run_threads([model.run] * 4, cases[:4])
        # Two shapes among the threads: two variants, each compiled once.
        assert model.num_variants == 2


def test_jit_two_models_at_once(cases):
    _require_jit()
    with mp.compile(MODEL) as a, mp.compile(MODEL) as b:
        _run_threads([a.run, b.run], cases[4:6])
        assert a.num_variants == b.num_variants == 1


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    """The decoder step compiled by mp-compile for the shapes of its test data
    (batch 2, 10 encoder frames, 5 cached positions), and a copy of it, which loads as a second
    library."""
    compiler = BUILD / "bin" / "mp-compile"
    require_built(compiler, mp.library_path())
    out = tmp_path_factory.mktemp("threads")
    args = [str(compiler), str(MODEL), "--shapes-from",
            str(MODEL.parent / "test_data_set_0"), "-o", str(out / "liba.so")]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    shutil.copy(out / "liba.so", out / "libb.so")
    return out / "liba.so", out / "libb.so"


def _five_positions(cases):
    """The threads' input sets with 5 cached positions (the library's)."""
    return [runs for runs in cases if runs[0][0]["past_key_0"].shape[2] == 5]


def test_library_one_handle_from_four_threads(cases, libraries):
    with mp.load(libraries[0]) as lib:
        _run_threads([lib.run] * 4, _five_positions(cases))


def test_library_two_handles_and_two_libraries_at_once(cases, libraries):
    # Two handles of one file share its loaded image; the copy is another.
    with mp.load(libraries[0]) as a1, mp.load(libraries[0]) as a2, \
            mp.load(libraries[1]) as b:
        _run_threads([a1.run, a2.run, b.run], _five_positions(cases)[:3])
