"""A decode loop with in-place KV caches on the GPU, checked step by step.

    python3 bench/gpu/kv_decode.py prepare ART     # build machine, after the libraries
    python3 bench/gpu/kv_decode.py run ART OUT     # GPU machine
    python3 bench/gpu/kv_decode.py run ART OUT cpu # dry run of `run` on the CPU library

bench/gpu/build.sh compiles the bundled TTS decoder with --fuse-attention
--max-seq-len 64 for the CPU and for CUDA (sm_90), fp32 and mixed, into
ART/kv_decode/PRECISION/TARGET/libdec.so. `prepare` runs STEPS decode steps
of each CPU library here (fixed random inputs, caches carried in place,
past_sequence_length = step) and saves the inputs and every step's outputs.
`run` repeats the loop with the CUDA library and compares each step's
outputs and the final caches with the CPU ones (fp32: rtol 1e-3, atol 1e-4;
mixed: 1e-2 and 1e-2), which exercises the flash attention kernels, the
run-time fill level and the in-place cache writes; it also times one step
(median, ms; every lib.run call copies the caches host <-> device). The loop
then runs again on device buffers (lib.run_device: the caches and the
encoder output stay in device memory, each step uploads its mel frame and
downloads its outputs), checked the same way and timed per step. Its
inputs and outputs stay in the same device buffers from step to step, so
with CUDA graphs (on unless MP_CUDA_GRAPHS=0) each step after the second is
captured again and replayed as one graph launch (docs/decode.md). Results:
OUT/kv_decode.md and OUT/kv_decode.json, or OUT/kv_decode_plain.* with
MP_CUDA_GRAPHS=0 (bench/gpu/run.sh runs both). Needs numpy and python/mp
only.
"""

from __future__ import annotations

import os
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

STEPS = 8
TOLERANCE = {"fp32": (1e-3, 1e-4), "mixed": (1e-2, 1e-2)}


def decode(lib, feeds: dict, steps: int) -> list[dict]:
    """Runs `steps` steps; returns each step's outputs (caches copied)."""
    specs = {name: (dtype, shape) for name, dtype, shape in lib.inputs}
    caches = {n: np.zeros(shape, dtype) for n, (dtype, shape) in specs.items()
              if n.startswith("past_") and n != "past_sequence_length"}
    results = []
    for t in range(steps):
        inputs = {"mel_frame": feeds["mel"][t], "encoder_out": feeds["encoder_out"],
                  "past_sequence_length": np.array(t, np.int64), **caches}
        outs = lib.run(inputs, out={n.replace("past_", "present_", 1): a
                                    for n, a in caches.items()})
        results.append({n: np.array(a) for n, a in outs.items()})
    return results


def decode_device(lib, feeds: dict, steps: int) -> tuple[list[dict], list[float]]:
    """decode() on device buffers (run_device): each step's outputs (the
    caches only after the last step, where they hold every step) and the
    ms of each step, from its upload to its downloaded outputs."""
    specs = {name: (dtype, shape) for name, dtype, shape in lib.inputs}
    caches = {n: lib.to_device(np.zeros(shape, dtype)) for n, (dtype, shape) in specs.items()
              if n.startswith("past_") and n != "past_sequence_length"}
    out = {n.replace("past_", "present_", 1): a for n, a in caches.items()}
    produced = {n: lib.empty_device(shape, dtype) for n, dtype, shape in lib.outputs
                if n not in out}
    encoder = lib.to_device(feeds["encoder_out"])
    mel = lib.to_device(feeds["mel"][0])
    results, times = [], []
    for t in range(steps):
        t0 = time.perf_counter()
        mel.copy_from(feeds["mel"][t % len(feeds["mel"])])
        lib.run_device({"mel_frame": mel, "encoder_out": encoder,
                        "past_sequence_length": np.array(t, np.int64), **caches},
                       out={**out, **produced})
        results.append({n: a.numpy() for n, a in produced.items()})
        times.append((time.perf_counter() - t0) * 1e3)
    results[-1].update({n: a.numpy() for n, a in out.items()})
    return results, times


def worst_excess(steps: list[dict], ref, rtol: float, atol: float) -> float:
    """The largest |got - want| - (atol + rtol |want|) over every output of
    every step (<= 0: all within tolerance); caches over filled positions."""
    worst = -np.inf
    for t, got in enumerate(steps):
        for n, a in got.items():
            want = ref[f"step{t}.{n}"]
            if n.startswith("present_"):  # the filled positions
                want, a = want[:, :, :t + 1], a[:, :, :t + 1]
            worst = max(worst, excess(a, want, rtol, atol))
    return worst


def prepare(art: Path) -> int:
    rng = np.random.default_rng(0)
    feeds = {"mel": rng.standard_normal((STEPS, 2, 1, 80)).astype(np.float32),
             "encoder_out": rng.standard_normal((2, 10, 128)).astype(np.float32)}
    for precision in TOLERANCE:
        folder = art / "kv_decode" / precision
        with load(folder / "cpu" / "libdec.so") as lib:
            steps = decode(lib, feeds, STEPS)
        arrays = {"mel": feeds["mel"], "encoder_out": feeds["encoder_out"]}
        for t, outs in enumerate(steps):
            for n, a in outs.items():
                arrays[f"step{t}.{n}"] = a
        np.savez(folder / "reference.npz", **arrays)
        print(f"kv_decode: {precision}: {STEPS} CPU steps saved")
    return 0


def run(art: Path, out: Path, device: str = "cuda") -> int:
    target = library_target(device)
    graphs = os.environ.get("MP_CUDA_GRAPHS") != "0"
    report = {"steps": STEPS, "cuda_graphs": graphs, "results": []}
    for precision, (rtol, atol) in TOLERANCE.items():
        folder = art / "kv_decode" / precision
        row = {"precision": precision}
        try:
            ref = np.load(folder / "reference.npz")
            feeds = {"mel": ref["mel"], "encoder_out": ref["encoder_out"]}
            with load(folder / target / "libdec.so") as lib:
                steps = decode(lib, feeds, STEPS)
                # One more step at the last fill level, timed.
                times = []
                specs = {n: (d, s) for n, d, s in lib.inputs}
                caches = {n: np.zeros(s, d) for n, (d, s) in specs.items()
                          if n.startswith("past_") and n != "past_sequence_length"}
                inputs = {"mel_frame": feeds["mel"][0], "encoder_out": feeds["encoder_out"],
                          "past_sequence_length": np.array(STEPS, np.int64), **caches}
                outs = {n.replace("past_", "present_", 1): a for n, a in caches.items()}
                for _ in range(timed_runs(device)):
                    t0 = time.perf_counter()
                    lib.run(inputs, out=outs)
                    times.append((time.perf_counter() - t0) * 1e3)
                dev_steps, dev_times = decode_device(lib, feeds, STEPS)
                _, more = decode_device(lib, feeds, timed_runs(device))  # timing over a longer loop
            worst = worst_excess(steps, ref, rtol, atol)
            worst_dev = worst_excess(dev_steps, ref, rtol, atol)
            row.update(passed=worst <= 0 and worst_dev <= 0, worst_excess=worst,
                       worst_excess_device=worst_dev, step_ms=statistics.median(times),
                       device_step_ms=statistics.median(dev_times[1:] + more[1:]))
        except Exception as e:  # noqa: BLE001 - reported per row
            row.update(passed=False, error=f"{type(e).__name__}: {e}")
        report["results"].append(row)
        print(f"kv_decode: {row}")
    lines = ["# Decode loop with in-place KV caches (CUDA vs CPU library)", "",
             f"{STEPS} steps of the TTS decoder (--fuse-attention --max-seq-len 64), "
             "each step's outputs compared with the CPU library's. "
             + ("CUDA graphs on: on device buffers each step after the second is captured "
                "again and replayed as one graph launch." if graphs else
                "MP_CUDA_GRAPHS=0: every kernel launched one by one."), "",
             "worst excess: the largest |got - want| - (atol + rtol |want|), PASS when <= 0, for the "
             "loop through lib.run (host buffers, caches copied both ways every step) and through "
             "lib.run_device (caches kept in device memory). step ms: median wall time of one step "
             "(device: upload of the mel frame to download of the outputs, steps after the first).", "",
             "| precision | result | worst excess, host buffers | worst excess, device buffers "
             "| step ms, host buffers | step ms, device buffers |", "|---|---|---:|---:|---:|---:|"]
    for row in report["results"]:
        lines.append(f"| {row['precision']} | {result_cell(row)} | {row.get('worst_excess', NAN):.2e} "
                     f"| {row.get('worst_excess_device', NAN):.2e} | {row.get('step_ms', NAN):.3f} "
                     f"| {row.get('device_step_ms', NAN):.3f} |")
    return write_report(out, "kv_decode" if graphs else "kv_decode_plain", report, lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prepare, run, __doc__))
