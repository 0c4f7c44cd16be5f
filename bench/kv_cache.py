"""KV cache updated in place vs joined by Concat: one decoder step on the CPU.

    python bench/kv_cache.py [--layers 4] [--repeat 50] [--lengths 256 1024 4096]
                             [-o bench/kv_cache.md]

The generated TTS decoder (`python/mp/models/tts_decoder.py`, `--layers`
layers, batch 1, 64 encoder frames) is compiled by mp-compile
`--fuse-attention` twice per cache length L, both fp32 CPU libraries run
through the runtime (`mp.load`):

- concat: the model as exported, pinned to a past of L-1 positions; the
  step joins past and new K/V (a copy of every cache) and returns the joined
  caches;
- in place: `--max-seq-len L`; the step writes its position into the
  caller's L-position buffers (passed as input and output) at fill level
  L-1.

Both steps see the same L-1 cached positions and inputs; their outputs are
compared (max relative difference of mel_out). Times are the median of
`--repeat` runs after a warm-up, alternating the two libraries; the ratio
is concat / in place (above 1: in place is faster).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import mp  # noqa: E402
from mp.models import tts_decoder  # noqa: E402
from mp.tools import build_tool  # noqa: E402
from mp.tools.report import header, table, write  # noqa: E402

HEADS, HEAD_DIM, ENC = tts_decoder.N_HEADS, tts_decoder.HEAD_DIM, 64


def compile_step(model: Path, out: Path, layers: int, past: int, *extra: str) -> Path:
    pins = ["mel_frame=1x1x80", f"encoder_out=1x{ENC}x128"]
    pins += [f"past_{kind}_{l}=1x{HEADS}x{past}x{HEAD_DIM}"
             for l in range(layers) for kind in ("key", "value")]
    args = [a for p in pins for a in ("--input-shape", p)]
    subprocess.run([str(build_tool("mp-compile")), str(model), "-o", str(out), "--fuse-attention",
                    *args, *extra], check=True, capture_output=True, text=True)
    return out


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("-o", "--output", type=Path, default=REPO / "bench" / "kv_cache.md")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        model = tmp / "decoder.onnx"
        onnx.save(tts_decoder.build(share_layer_weights=False, n_layers=args.layers), str(model))
        names = [f"{kind}_{l}" for l in range(args.layers) for kind in ("key", "value")]
        for length in args.lengths:
            print(f"kv_cache: L={length}: compiling", file=sys.stderr, flush=True)
            concat = mp.load(compile_step(model, tmp / f"libcat{length}.so", args.layers,
                                          length - 1))
            inplace = mp.load(compile_step(model, tmp / f"libinp{length}.so", args.layers, 0,
                                           "--max-seq-len", str(length)))
            step = {"mel_frame": rng.standard_normal((1, 1, 80)).astype(np.float32),
                    "encoder_out": rng.standard_normal((1, ENC, 128)).astype(np.float32)}
            past = {n: rng.standard_normal((1, HEADS, length - 1, HEAD_DIM)).astype(np.float32)
                    for n in names}
            caches = {n: np.zeros((1, HEADS, length, HEAD_DIM), np.float32) for n in names}
            for n in names:
                caches[n][:, :, :length - 1] = past[n]
            cat_in = {**step, **{f"past_{n}": past[n] for n in names}}
            inp_in = {**step, **{f"past_{n}": caches[n] for n in names},
                      "past_sequence_length": np.array(length - 1, np.int64)}
            inp_out = {f"present_{n}": caches[n] for n in names}
            cat_outs = concat.run(cat_in)
            inp_outs = inplace.run(inp_in, out=inp_out)
            ref = cat_outs["mel_out"]
            diff = float(np.abs(inp_outs["mel_out"] - ref).max() / max(np.abs(ref).max(), 1e-30))
            # The step rewrites the same position each time: repeatable.
            cat_ms, inp_ms = [], []
            for _ in range(3):
                cat_ms.append(median_ms(lambda: concat.run(cat_in), args.repeat // 3 or 1))
                inp_ms.append(median_ms(lambda: inplace.run(inp_in, out=inp_out),
                                        args.repeat // 3 or 1))
            c, i = float(np.median(cat_ms)), float(np.median(inp_ms))
            cache_mb = 2 * args.layers * HEADS * length * HEAD_DIM * 4 / 2**20
            rows.append((length, cache_mb, c, i, diff))
            print(f"kv_cache: L={length}: concat {c:.3f} ms, in place {i:.3f} ms, "
                  f"ratio {c / i:.2f}x, max rel diff {diff:.1e}", file=sys.stderr, flush=True)
            concat.close()
            inplace.close()
    lines = [
        "# KV cache in place vs Concat: one decoder step (CPU library)",
        "",
        *header(f"python bench/kv_cache.py --layers {args.layers} --repeat {args.repeat}"),
        "",
        f"The generated TTS decoder with {args.layers} layers (batch 1, 4 heads of 32), fp32 CPU "
        "libraries from mp-compile --fuse-attention run through `mp.load`. *concat*: the "
        "exported step over a past of L-1 positions (joins and returns the caches). *in "
        "place*: `--max-seq-len L`, fill level L-1, each cache passed as its own output. "
        "Median step time; ratio = concat / in place. The machine is noisy; compare the "
        "ratios.",
        "",
        *table(["L", "caches (MiB)", "concat ms", "in place ms", "ratio", "max rel diff (mel_out)"],
               [(length, f"{mb:.1f}", f"{c:.3f}", f"{i:.3f}", f"{c / i:.2f}x", f"{diff:.1e}")
                for length, mb, c, i, diff in rows], align="rrrrrr"),
    ]
    write(args.output, lines)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
