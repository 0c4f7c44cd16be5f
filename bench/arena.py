"""Activation arena of every model's CUDA library, fp32 vs mixed precision.

    .venv/bin/python bench/arena.py [-o bench/arena.md]

For every model (a folder with model.onnx and test_data_set_0 under
../shared/models and examples/), `mp-compile --target cuda --emit ptx
--shapes-from DIR/test_data_set_0 [--precision mixed]` plans the temporaries
of one run into one arena at compile time (mp-plan-arena) and reports it.
The table compares the arena with what allocating every temporary on its
own would take and with the most bytes live at once (the arena's lower
bound), and the mixed-precision arena with the fp32 one. No GPU is needed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import REPO, binary_id, models, mp_compile  # noqa: E402

from mp.tools.report import header, table  # noqa: E402

LINE = re.compile(r"activation arena: (\d+) bytes for (\d+) temporaries \((\d+) bytes if each "
                  r"had its own buffer; at most (\d+) live at once\)")


def measure(model: Path, precision: str) -> dict:
    """The arena mp-compile reports for one model and precision."""
    cmd = [str(mp_compile()), str(model / "model.onnx"), "--shapes-from",
           str(model / "test_data_set_0"), "--target", "cuda", "--emit", "ptx",
           "--precision", precision, "-o", "/dev/null"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    m = LINE.search(p.stdout + p.stderr)
    if not m:
        return {"bytes": 0, "buffers": 0, "buffer_bytes": 0, "peak_bytes": 0}
    b, n, total, peak = map(int, m.groups())
    return {"bytes": b, "buffers": n, "buffer_bytes": total, "peak_bytes": peak}


def kib(n: int) -> str:
    return f"{n / 1024:.1f}"


def report(results: dict, mp_id: str) -> str:
    lines = [
        "# Activation arena: fp32 vs mixed precision",
        "",
        "Device memory for the temporaries of one run of each model's CUDA library,",
        "planned at compile time by `mp-plan-arena` (docs/compile.md): one allocation",
        "per run, buffers that are never live at the same time share bytes. *Separate*",
        "is what one allocation per temporary would hold at once if none were freed",
        "early; *peak live* is the most bytes live at any point, the lower bound for",
        "any plan. Offsets are 256-byte aligned, which dominates for the tiny test",
        "shapes of some models. Weights are not included (they are uploaded once).",
        "Shapes: each model's test_data_set_0.",
        "",
        "Casts read by several ops are recomputed in each (`mp-fuse-casts`), so a",
        "LayerNorm's input needs no f16 copy. Where mixed still needs more than fp32",
        "the extra buffers are f16 copies that feed ops fusion cannot join (a cast of",
        "a graph input before a reshape or transpose), next to the f32 accumulators",
        "of f16 contractions; the models stored in f16 (llama, GQA) are the same in",
        "both.",
        "",
        *header(".venv/bin/python bench/arena.py", f"mp-compile sha256 `{mp_id}`"),
        "",
    ]
    rows = []
    for model, per in results.items():
        for prec, r in per.items():
            ratio = f"{r['bytes'] / r['buffer_bytes']:.2f}" if r["buffer_bytes"] else "-"
            vs = "-"
            if prec == "mixed" and per.get("fp32", {}).get("bytes"):
                vs = f"{r['bytes'] / per['fp32']['bytes']:.2f}"
            rows.append((model, prec, r["buffers"], kib(r["bytes"]), kib(r["buffer_bytes"]),
                         kib(r["peak_bytes"]), ratio, vs))
    lines += table(["model", "precision", "temporaries", "arena KiB", "separate KiB",
                    "peak live KiB", "arena / separate", "mixed / fp32 arena"], rows, align="llrrrrrr")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path, default=REPO / "bench" / "arena.md")
    args = ap.parse_args(argv)
    if not mp_compile().is_file():
        print(f"need mp-compile ({mp_compile()})", file=sys.stderr)
        return 2
    mp_id = binary_id(mp_compile())
    results: dict = {}
    for model in models():
        for prec in ("fp32", "mixed"):
            r = measure(model, prec)
            results.setdefault(model.name, {})[prec] = r
            print(f"{model.name} {prec}: arena {r['bytes']} bytes for {r['buffers']} temporaries "
                  f"(separate {r['buffer_bytes']}, peak {r['peak_bytes']})", file=sys.stderr)
    if binary_id(mp_compile()) != mp_id:
        print("mp-compile changed during the run (rebuilt?); rerun", file=sys.stderr)
        return 1
    args.output.write_text(report(results, mp_id))
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
