"""CUDA libraries with dims fixed at run time, checked against the CPU.

    python3 bench/gpu/dynamic.py prepare ART     # build machine, after the libraries
    python3 bench/gpu/dynamic.py run ART OUT     # GPU machine
    python3 bench/gpu/dynamic.py run ART OUT cpu # dry run of `run` on the CPU library

bench/gpu/build.sh compiles the bundled TTS decoder with --dynamic-shapes for
the CPU and for CUDA (sm_90), fp32 and mixed, into
ART/dynamic/PRECISION/TARGET/libdec.so: one library for every batch, encoder
length and cache length (on CUDA every kernel a generic one, grids sized at
run time). `prepare` runs each CPU library here at SHAPES (random inputs
from a fixed seed, which `run` draws again) and saves the outputs. `run`
runs the CUDA library at the same shapes and compares every output (fp32: rtol 1e-3, atol 1e-4; mixed:
1e-2 and 1e-2) and its shape, and times each shape (median ms of lib.run,
host buffers). Results: OUT/dynamic.md and OUT/dynamic.json. Needs numpy
and python/mp only.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from mp.library import load  # noqa: E402
from stepcheck import (NAN, excess, library_target, main, result_cell,  # noqa: E402
                       timed_runs, write_report)

# (batch, encoder length, cache length): a decode step, a longer context,
# a first step on empty caches, and more keys than one block of threads.
SHAPES = [(2, 10, 5), (1, 37, 0), (3, 40, 100)]
TOLERANCE = {"fp32": (1e-3, 1e-4), "mixed": (1e-2, 1e-2)}


def feeds_for(lib, shape, rng) -> dict:
    batch, enc_len, past = shape
    feeds = {"mel_frame": rng.standard_normal((batch, 1, 80)).astype(np.float32),
             "encoder_out": rng.standard_normal((batch, enc_len, 128)).astype(np.float32)}
    for name, dtype, _ in lib.inputs:
        if name.startswith("past_"):
            feeds[name] = rng.standard_normal((batch, 4, past, 32)).astype(dtype)
    return feeds


def prepare(art: Path) -> int:
    for precision in TOLERANCE:
        folder = art / "dynamic" / precision
        arrays = {}
        with load(folder / "cpu" / "libdec.so") as lib:
            rng = np.random.default_rng(0)
            for i, shape in enumerate(SHAPES):
                feeds = feeds_for(lib, shape, rng)
                for n, a in lib.run(feeds).items():
                    arrays[f"shape{i}.{n}"] = a
        np.savez(folder / "reference.npz", **arrays)
        print(f"dynamic: {precision}: {len(SHAPES)} shapes of the CPU library saved")
    return 0


def run(art: Path, out: Path, device: str = "cuda") -> int:
    target = library_target(device)
    report = {"shapes": SHAPES, "results": []}
    for precision, (rtol, atol) in TOLERANCE.items():
        folder = art / "dynamic" / precision
        ref = np.load(folder / "reference.npz")
        with load(folder / target / "libdec.so") as lib:
            rng = np.random.default_rng(0)  # the inputs `prepare` drew
            for i, shape in enumerate(SHAPES):
                row = {"precision": precision, "shape": shape}
                try:
                    feeds = feeds_for(lib, shape, rng)
                    got = lib.run(feeds)
                    worst = -np.inf
                    for n, a in got.items():
                        want = ref[f"shape{i}.{n}"]
                        if a.shape != want.shape:
                            raise ValueError(f"{n} is {a.shape}, the CPU gives {want.shape}")
                        worst = max(worst, excess(a, want, rtol, atol))
                    times = []
                    for _ in range(timed_runs(device)):
                        t0 = time.perf_counter()
                        lib.run(feeds)
                        times.append((time.perf_counter() - t0) * 1e3)
                    row.update(passed=worst <= 0, worst_excess=worst, ms=statistics.median(times))
                except Exception as e:  # noqa: BLE001 - reported per row
                    row.update(passed=False, error=f"{type(e).__name__}: {e}")
                report["results"].append(row)
                print(f"dynamic: {row}")
    lines = ["# Dims fixed at run time (CUDA vs CPU library)", "",
             "The TTS decoder compiled once with --dynamic-shapes, run at each (batch, encoder "
             "length, cache length); every output and its shape compared with the CPU library's. "
             "worst excess: the largest |got - want| - (atol + rtol |want|), PASS when <= 0. "
             "ms: median of 20 lib.run (host buffers in and out).", "",
             "| precision | shape | result | worst excess | ms |", "|---|---|---|---:|---:|"]
    for row in report["results"]:
        lines.append(f"| {row['precision']} | {tuple(row['shape'])} | {result_cell(row)} "
                     f"| {row.get('worst_excess', NAN):.2e} | {row.get('ms', NAN):.3f} |")
    return write_report(out, "dynamic", report, lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prepare, run, __doc__))
