"""Mixed-precision training of mp.models.tiny_lm: fp32 vs three fp16 setups.

    .venv/bin/python bench/training.py [-o bench/training.md] [--steps 300]

Every run starts from the same weights and sees the same batches (the
counting task of mp.models.tiny_lm, batch 16 x 8 tokens) with AdamW
(lr 3e-3). Runs:

- fp32: the whole step in fp32;
- mixed + dynamic: mixed precision (default policy) with dynamic loss
  scaling (init 65536, growth 2 every 2000 finite steps, backoff 0.5);
- mixed, no scaling: fp16 gradients as the backward pass produces them;
- mixed + static 512;
- mixed + dynamic, planted overflow: as mixed + dynamic with growth every 50
  steps, and step 100's loss weighted by 1e6 so its fp16 gradients overflow.

Underflow is measured twice. *Lost at step 0*: on the first batch, with the
same weights, the gradient elements that are non-zero in fp32 but exactly
zero in the run's (unscaled, fp32) gradients, over all non-zero fp32
elements. *Zero during training*: the mean over steps of the fraction of
gradient elements that are exactly zero (fp32's own rate is the baseline:
masked positions and Relu give true zeros).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import onnx  # noqa: E402

from mp.training import Trainer  # noqa: E402
from mp.models import tiny_lm  # noqa: E402
from mp.tools.report import header, table  # noqa: E402

PLANTED_STEP = 100
RUNS = [
    ("fp32", "fp32", None, False),
    ("mixed + dynamic", "mixed", "mode=dynamic", False),
    ("mixed, no scaling", "mixed", None, False),
    ("mixed + static 512", "mixed", "mode=static scale=512", False),
    ("mixed + dynamic, planted overflow", "mixed", "mode=dynamic interval=50", True),
]


def run(path: Path, precision: str, scaling: str | None, planted: bool, steps: int,
        ref_grads: dict | None, log) -> dict:
    t0 = time.perf_counter()
    trainer = Trainer(path, optimizer="adamw", lr=3e-3, precision=precision,
                      loss_scaling=scaling, gradients=True)
    first = tiny_lm.batch(np.random.default_rng(1))
    grads0 = trainer.step(first).grads  # compiles
    compile_s = time.perf_counter() - t0
    trainer.reset()
    lost = None
    if ref_grads is not None:
        nonzero = sum(int((ref_grads[n] != 0).sum()) for n in ref_grads)
        lost = sum(int(((ref_grads[n] != 0) & (grads0[n] == 0)).sum())
                   for n in ref_grads) / nonzero
    rng = np.random.default_rng(0)
    zero, trace = [], []

    def batches(i):
        b = tiny_lm.batch(rng)
        if planted and i == PLANTED_STEP:
            b["loss_weight"] = np.array(1e6, np.float32)
        return b

    def on_step(i, r):
        total = sum(g.size for g in r.grads.values())
        zero.append(sum(int((g == 0).sum()) for g in r.grads.values()) / total)
        if i % 50 == 0 or (planted and PLANTED_STEP <= i <= PLANTED_STEP + 1):
            trace.append((i, r.scale))

    t1 = time.perf_counter()
    history = trainer.train(batches, steps, log_every=100, out=log, on_step=on_step)
    step_ms = (time.perf_counter() - t1) / steps * 1e3
    losses = [r.loss for r in history if np.isfinite(r.loss) and r.loss < 1e3]
    return {"grads0": grads0, "first": history[0].loss,
            "final": float(np.mean([r.loss for r in history[-20:]])),
            "lost0": lost, "zero": float(np.mean(zero)), "skipped": trainer.skipped,
            "skipped_at": [i for i, r in enumerate(history) if r.skipped],
            "trace": trace, "final_scale": trainer.scale, "compile_s": compile_s,
            "step_ms": step_ms, "min": min(losses)}


def report(results: list, steps: int) -> str:
    fp32 = results[0][1]["final"]
    lines = [
        "# Mixed-precision training: fp32 vs fp16 with and without loss scaling",
        "",
        "Model: `mp.models.tiny_lm` (2-layer causal transformer, d=32, 2 heads, vocab 16,",
        "whose output is its loss: mean next-token cross-entropy), counting task, batch",
        f"16 x 8, AdamW lr 3e-3, {steps} steps, same weights and batches for every run. The",
        "step is compiled by `mp-build-training-step` (+ `mp-insert-loss-scaling`) and JIT-",
        "compiled for the CPU; *mixed* is mp's default precision policy on the whole step",
        "(forward and backward matmuls in fp16, statistics and optimizer in fp32). See the",
        "docstring of bench/training.py for the definitions.",
        "",
        *header(f"python bench/training.py --steps {steps}", f"Python {platform.python_version()}"),
        "",
    ]
    rows = []
    for name, r in results:
        lost = "—" if r["lost0"] is None else f"{100 * r['lost0']:.4f}%"
        skipped = str(r["skipped"])
        if r["skipped_at"]:
            skipped += " (" + ", ".join(map(str, r["skipped_at"][:6])) + \
                ("…" if len(r["skipped_at"]) > 6 else "") + ")"
        rows.append((name, f"{r['first']:.4f}", f"{r['final']:.4f}",
                     f"{(r['final'] - fp32) / fp32:+.1%}", lost, f"{100 * r['zero']:.4f}%",
                     skipped, f"{r['final_scale']:g}", f"{r['compile_s']:.1f}", f"{r['step_ms']:.0f}"))
    lines += table(["run", "first loss", "final loss (mean of last 20)", "vs fp32", "lost at step 0",
                    "zero during training", "skipped steps", "final scale", "compile s", "ms/step"],
                   rows)
    lines += ["", "Loss scale during each scaled run (step: scale used):", ""]
    for name, r in results:
        if r["trace"] and r["final_scale"] != 1.0:
            lines.append(f"- {name}: " + ", ".join(f"{i}: {s:g}" for i, s in r["trace"]))
    lines += [
        "",
        "Reading the table: without scaling, gradient elements that fp32 keeps flush to",
        "zero in the fp16 backward pass (\"lost at step 0\"); dynamic and static scaling keep",
        "them. This model is small and its gradients are large (mean loss over 128",
        "positions, weights of order 0.1-1), so the lost fraction is small and training",
        "without scaling still converges here; the effect grows with model size and",
        "smaller losses. The planted step's fp16 gradients overflow: the update is skipped",
        "in the graph, the scale halves, and it grows again after 50 finite steps.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=REPO / "bench" / "training.md")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tiny_lm.onnx"
        onnx.save(tiny_lm.build(), str(path))
        results, ref = [], None
        for name, precision, scaling, planted in RUNS:
            print(f"== {name}", file=sys.stderr, flush=True)
            r = run(path, precision, scaling, planted, args.steps, ref, sys.stderr)
            if ref is None:
                ref = r["grads0"]
            results.append((name, r))
    text = report(results, args.steps)
    args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
