"""CPU speed of one decoder step: mp (JIT, fp32 and mixed) vs onnxruntime.

The model is the generated TTS decoder (python/mp/models/tts_decoder.py)
with 12 layers and unshared weights, run for one step at batch 1 with a
64-frame encoder output and a 128-step KV cache. Each engine runs the same
inputs; rounds alternate between engines so that machine noise hits all of
them alike, and the table reports the median and minimum of the per-step
times and the ratio of medians against onnxruntime. The outputs are compared
too (max abs difference to onnxruntime fp32), so a fast wrong answer shows.

    python bench/cpu.py [--layers 12] [--rounds 30] [-o bench/cpu.md]

mp runs single-threaded (its JIT code has no threading yet); onnxruntime is
measured with its default thread pool and with one thread.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import mp  # noqa: E402
from mp.models import tts_decoder  # noqa: E402
from mp.tools.report import header, table  # noqa: E402


def time_once(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def measure(args) -> dict:
    rng = np.random.default_rng(0)
    feeds = tts_decoder.example_inputs(rng, n_layers=args.layers, batch=1,
                                       enc_len=args.enc_len, past_len=args.past_len)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decoder.onnx"
        model = tts_decoder.build(share_layer_weights=False, n_layers=args.layers)
        onnx.save(model, str(path))
        weight_mb = path.stat().st_size / 1e6

        engines = {}
        opts = ort.SessionOptions()
        engines["onnxruntime fp32"] = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        one = ort.SessionOptions()
        one.intra_op_num_threads = 1
        one.inter_op_num_threads = 1
        engines["onnxruntime fp32, 1 thread"] = ort.InferenceSession(str(path), one, providers=["CPUExecutionProvider"])
        compile_ms = {}
        variants = {"mp fp32": ("fp32", False), "mp mixed": ("mixed", False),
                    "mp fp32, dynamic shapes": ("fp32", True)}
        for name, (precision, dynamic) in variants.items():
            t0 = time.perf_counter()
            m = mp.compile(path, precision=precision, dynamic_shapes=dynamic)
            m.run(feeds)  # the first run JIT-compiles (for these shapes)
            compile_ms[name] = (time.perf_counter() - t0) * 1e3
            engines[name] = m

        def run(name):
            e = engines[name]
            if isinstance(e, mp.Model):
                return list(e.run(feeds).values())
            return e.run(None, feeds)

        reference = run("onnxruntime fp32")
        errors = {name: max(float(np.abs(a - b).max()) for a, b in zip(run(name), reference))
                  for name in engines}
        for name in engines:  # warm-up
            run(name)
        times = {name: [] for name in engines}
        for _ in range(args.rounds):
            for name in engines:
                times[name].append(time_once(lambda: run(name)))
    return {"times": times, "errors": errors, "compile_ms": compile_ms, "weight_mb": weight_mb,
            "feeds": {k: v.shape for k, v in feeds.items()}}


# Earlier measurements of the same step (same machine type), kept by hand so that the
# report shows what changed them.
HISTORY = [
    "2026-11-30, the tree just before commit 074ba39 (MatMul loops (b, m, n, k), the whole model "
    "in one function, JIT at O2 without a host target machine): mp fp32 52.6 ms = 11.8x "
    "onnxruntime, mixed 118 ms = 26.4x; compile + first run 80 s / 111 s, 67 s of them in "
    "LLVM's IndVarSimplify on the one huge function.",
    "2026-11-30, commits 074ba39 (MatMul loops (b, m, k, n)) and 65fc631 (one noinline kernel "
    "per linalg op, O3 for the host CPU): mp fp32 10.3 ms = 2.45x onnxruntime, mixed 11.2 ms = "
    "2.65x. A profile of that step showed a third of it in the runtime's memrefCopy (the KV "
    "caches joined by Concat, copied element by element) and a tenth in copies of the inputs.",
    "2026-11-30, commit a051bae (register-tiled, vectorized contractions; strided copies as "
    "loops) and the next one (inputs read in place, reassociable sums so that LLVM vectorizes "
    "reductions): mp fp32 6.67 ms = 1.62x onnxruntime, mixed 7.52 ms = 1.82x.",
    "2026-11-30, the buffer pool (JIT allocations reuse the previous run's memory instead of "
    "fresh pages): mp fp32 6.95 ms = 1.26x onnxruntime, mixed 8.01 ms = 1.45x (AMD EPYC).",
    "2026-12-01, dynamic shapes added as an engine (one variant for every shape): this report, "
    "on an Intel Xeon host of the same size.",
]


def report(args, r: dict) -> str:
    base = statistics.median(r["times"]["onnxruntime fp32"])
    lines = [
        "# CPU: one decoder step, mp vs onnxruntime",
        "",
        *header(f"python bench/cpu.py --layers {args.layers} --rounds {args.rounds}",
                f"Python {platform.python_version()}, onnxruntime {ort.__version__}"),
        "",
        f"Model: the generated TTS decoder (`python/mp/models/tts_decoder.py`) with {args.layers} "
        f"layers, unshared weights ({r['weight_mb']:.1f} MB), d_model 128, 4 heads, FFN 512; one step "
        f"at batch 1, encoder length {args.enc_len}, KV cache length {args.past_len}. {args.rounds} "
        "rounds, engines alternating within each round; times are per step in ms.",
        "",
    ]
    rows = []
    for name, ts in r["times"].items():
        med = statistics.median(ts)
        comp = r["compile_ms"].get(name)
        rows.append((name, f"{med:.3f}", f"{min(ts):.3f}", f"{med / base:.2f}x", f"{r['errors'][name]:.2e}",
                     "" if comp is None else f"{comp:.0f}"))
    lines += table(["engine", "median ms", "min ms", "median / onnxruntime",
                    "max abs diff vs onnxruntime fp32", "compile + first run ms"], rows, align="lrrrrr")
    mp_ratio = statistics.median(r["times"]["mp fp32"]) / base
    lines += [
        "",
        f"Issue goal: mp within 10x of onnxruntime CPU fp32 on this step. Measured: "
        f"{mp_ratio:.2f}x ({'met' if mp_ratio <= 10 else 'NOT met'}).",
        "",
        "mp's code is single-threaded; each linalg op is its own kernel (no fusion yet). "
        "MatMul-like contractions are tiled into 4x16 output blocks held in vector registers "
        "across the k loop (mp-tile-and-vectorize); other loops are vectorized by LLVM for the "
        "host CPU, reductions included (their sums are reassociable). The mixed-precision variant computes f16 ops with fp32 "
        "arithmetic rounded to f16 after every op, which costs conversions on a CPU without native f16.",
        "",
        "\"dynamic shapes\" is one variant compiled for every input shape (`mp.compile(..., "
        "dynamic_shapes=True)`): sizes are read at run time, contractions whose rows are known "
        "only at run time take one-row register blocks instead of 4x16 ones, and a dynamic dim "
        "that may broadcast costs a run-time check per operand (its expansion, when taken, is "
        "one more kernel, which is also why it compiles longer).",
        "",
        "## History",
        "",
        *[f"- {h}" for h in HISTORY],
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--enc-len", type=int, default=64)
    ap.add_argument("--past-len", type=int, default=128)
    ap.add_argument("-o", "--output", type=Path, help="write the markdown report here")
    args = ap.parse_args(argv)
    r = measure(args)
    text = report(args, r)
    print(text)
    if args.output:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
