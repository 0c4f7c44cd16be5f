"""bench/gpu-model.md: a decode step of every corpus decoder, as the PTX
emulator counts it, against what the step must at least move.

For each decoder of ../shared/corpus/decoders and each (batch, cache
length), the bench writes a decode-step test set (one new token per row,
``cache`` positions already cached, random tokens and caches from a fixed
seed, onnxruntime's outputs), builds the mixed-precision CUDA library for
those shapes (``mp-compile --target cuda --gpu compute_80``), and runs it on
the emulator with ``--profile`` (mp.emu.profile). A row gives:

- launches per step and per layer (the embedding, final norm and head are
  in the step, so "per layer" is launches / layers, an upper bound), and
  the kernels of one layer: the run of launches that repeats once per layer
  (``layer_kernels``);
- modeled DRAM bytes over minimal bytes (weights + inputs + outputs once);
- coalesced: the bytes the lanes asked for over the 32-byte sectors moved;
- modeled H200 time of the step (launch cost included) and its roofline;
- whether every output matched onnxruntime at mp-run's mixed tolerances and
  how long the emulation took.

Everything but the last column is a model from the emulator's counts, not
a GPU measurement.

    python -m mp.tools.gpu_model_bench [--models NAME ...] [--configs 1x128 ...]
        [--decomposed-attention] [--baseline bench/gpu-model-baseline.json]
        [--out bench/gpu-model.md] [--json FILE]

The libraries are built as mp-compile builds for the CUDA target by
default: the export's attention fused into ``mp.attention`` and run by the
flash kernels. With ``--decomposed-attention`` they are built with
``mp-compile --fuse-attention=false``: attention as the export wrote it.
With ``--baseline`` (the ``--json`` of an earlier run), each row shows the
earlier launches per layer, bytes over minimal, coalescing and modeled time
beside the current ones.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import REPO, build_tool
from .report import begin, commit, publish, table

CORPUS = REPO.parent / "shared" / "corpus" / "decoders"
CONFIGS = ((1, 128), (8, 128), (1, 1024), (8, 1024))
_NP = {1: np.float32, 7: np.int64, 10: np.float16}


def decode_step_feeds(model, batch: int, cache: int, position: int,
                      seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs of a decode step for a corpus decoder's graph (its layout in
    ../shared/corpus/decoders/MANIFEST.md): one new token per row at
    `position` after `cache` cached positions, no padding."""
    rng = np.random.default_rng(seed)
    sizes = {"batch": batch, "seq": 1, "past_seq": cache, "total_seq": cache + 1}
    vocab = next(d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim[-1:])
    feeds = {}
    for value in model.graph.input:
        t = value.type.tensor_type
        shape = [d.dim_value if d.dim_value else sizes[d.dim_param] for d in t.shape.dim]
        dtype = _NP[t.elem_type]
        if value.name == "input_ids":
            feeds[value.name] = rng.integers(0, vocab or 32, shape).astype(dtype)
        elif value.name == "attention_mask":
            feeds[value.name] = np.ones(shape, dtype)
        elif value.name == "position_ids":
            feeds[value.name] = np.full(shape, position, dtype)
        else:
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def write_test_set(model_path: Path, folder: Path, batch: int, cache: int) -> tuple[int, int]:
    """Writes input_N.pb (the decode step's feeds) and output_N.pb
    (onnxruntime's outputs) to `folder`; returns the number of layers and the
    position of the new token: `cache`, or for a model with learned position
    embeddings shorter than that (gpt2's 256), the last one it has (the
    position changes no shape and so no traffic)."""
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper
    model = onnx.load(str(model_path), load_external_data=False)
    options = ort.SessionOptions()
    options.log_severity_level = 4  # the out-of-bounds probe below is expected
    session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
    position = cache
    while True:
        feeds = decode_step_feeds(model, batch, cache, position)
        try:
            outputs = session.run(None, feeds)
            break
        except ort.capi.onnxruntime_pybind11_state.InvalidArgument as e:
            # "indices element out of data bounds, idx=1024 must be within
            # the inclusive range [-256,255]"
            last = re.search(r"out of data bounds.*inclusive range \[-?\d+,(\d+)\]", str(e))
            if not last or position == int(last.group(1)):
                raise
            position = int(last.group(1))
    folder.mkdir(parents=True, exist_ok=True)
    for i, (name, value) in enumerate(feeds.items()):
        (folder / f"input_{i}.pb").write_bytes(numpy_helper.from_array(value, name).SerializeToString())
    for i, (spec, value) in enumerate(zip(session.get_outputs(), outputs)):
        (folder / f"output_{i}.pb").write_bytes(
            numpy_helper.from_array(value, spec.name).SerializeToString())
    return sum(1 for name in feeds if name.endswith(".key")), position


def layer_kernels(launches: list[dict], layers: int) -> int | None:
    """Kernels one layer launches: the longest run of launches that repeats
    `layers` times back to back, launch for launch with the same grid,
    block and FLOPs (layers of one shape launch the same kernels; bytes
    differ where the first layer reads the embedding). A third of a run
    may differ: mp-merge-launches can pair a kernel with a different
    neighbour in one layer, and the step's own small kernels (the rotary
    tables) join the first layer's launches. None when no run repeats."""
    sig = [(tuple(l["grid"]), tuple(l["block"]), l["tensor_flops"], l["core_flops"])
           for l in launches]
    for period in range(len(sig) // layers, 1, -1):
        for start in range(len(sig) - layers * period + 1):
            first = sig[start:start + period]
            if all(3 * sum(a == b for a, b in
                           zip(first, sig[start + i * period:start + (i + 1) * period]))
                   >= 2 * period for i in range(1, layers)):
                return period
    return None


def measure(model: Path, batch: int, cache: int, work: Path,
            flags: tuple[str, ...] = ()) -> dict:
    """One decoder at one shape: build (with mp-compile `flags` added),
    emulate with --profile, summarize."""
    data = work / "data"
    layers, position = write_test_set(model / "model.onnx", data, batch, cache)
    lib = work / "cuda.so"
    proc = subprocess.run([str(build_tool("mp-compile")), str(model / "model.onnx"), "-o", str(lib),
                           "--target", "cuda", "--gpu", "compute_80", "--precision", "mixed",
                           "--shapes-from", str(data), "--no-cache", *flags],
                          capture_output=True, text=True)
    result = {"model": model.name, "batch": batch, "cache": cache, "layers": layers,
              "position": position}
    if proc.returncode != 0:
        return {**result, "error": proc.stderr.strip().splitlines()[-1][:200]}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mp.emu", str(lib), str(data),
                           "--profile-json", str(work / "profile.json")],
                          capture_output=True, text=True, timeout=3600,
                          env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    seconds = time.perf_counter() - start
    verdicts = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    if proc.returncode == 2 or not verdicts:
        return {**result, "error": (proc.stderr.strip() or proc.stdout.strip())[-200:]}
    profile = json.loads((work / "profile.json").read_text())
    summary = profile["summary"]
    return {**result, **summary, "layer_kernels": layer_kernels(profile["launches"], layers),
            "outputs": len(verdicts),
            "matched": sum(v.startswith("PASS") for v in verdicts), "seconds": seconds}


_MEASURES = (  # column, format of one result
    ("per layer", lambda r: f"{r['launches'] / r['layers']:.1f}"),
    ("bytes / minimal", lambda r: f"{r['bytes_over_minimal']:.2f}"),
    ("coalesced", lambda r: f"{100 * r['coalesced']:.1f}%"),
    ("model us", lambda r: f"{1e6 * r['modeled_seconds']:.1f}"),
)


def _row(r: dict, before: dict | None = None) -> list:
    name = [r["model"], r["batch"], r["cache"]]
    width = len(_MEASURES) * (2 if before is not None else 1)
    if "error" in r:
        return [*name, "", "", *[""] * width, "", f"ERROR {r['error']}", ""]
    cells = []
    for _, fmt in _MEASURES:
        cells.append(fmt(r))
        if before is not None:
            cells.append(fmt(before[_key(r)]) if _key(r) in before and "error" not in
                         before[_key(r)] else "")
    kernels = r.get("layer_kernels")
    return [*name, r["launches"], "" if kernels is None else kernels, *cells,
            f"{1e6 * r['roofline_seconds']:.2f}",
            f"{r['matched']}/{r['outputs']}", f"{r['seconds']:.0f}"]


def _key(r: dict) -> tuple:
    return r["model"], r["batch"], r["cache"]


def _span(results: list[dict], f) -> str:
    values = [f(r) for r in results]
    return f"{min(values):.2f}–{max(values):.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", help="corpus decoder names (default: all)")
    ap.add_argument("--configs", nargs="*", help="BATCHxCACHE (default: 1x128 8x128 1x1024 8x1024)")
    ap.add_argument("--decomposed-attention", action="store_true",
                    help="build with mp-compile --fuse-attention=false")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "gpu-model.md")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--baseline", type=Path, help="an earlier run's --json, shown beside")
    args = ap.parse_args(argv)
    before = None
    if args.baseline:
        base = json.loads(args.baseline.read_text())
        before = {_key(r): r for r in base["results"]}
    models = sorted(p.parent for p in CORPUS.glob("*/model.onnx"))
    if args.models:
        models = [m for m in models if m.name in args.models]
    if not models:
        print(f"no corpus decoders under {CORPUS}", file=sys.stderr)
        return 2
    configs = [tuple(map(int, c.split("x"))) for c in args.configs] if args.configs else CONFIGS
    started = time.perf_counter()
    command = "bench/gpu_model.py" + (f" --models {' '.join(args.models)}" if args.models else "") + \
        (f" --configs {' '.join(args.configs)}" if args.configs else "") + \
        (" --decomposed-attention" if args.decomposed_attention else "") + \
        (f" --baseline {args.baseline}" if args.baseline else "") + \
        (f" --out {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}"
         if args.out != REPO / "bench" / "gpu-model.md" else "")
    flags = ("--fuse-attention=false",) if args.decomposed_attention else ()
    lines = begin(
        "A decode step on the PTX emulator: launches, traffic and a modeled H200 time"
        + (", attention decomposed" if args.decomposed_attention else ""),
        __doc__.split("\n\n", 1)[1].split("\n\n    python")[0],
        command=f".venv/bin/python {command}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            for batch, cache in configs:
                r = measure(model, batch, cache, Path(tmp) / f"{model.name}-{batch}-{cache}",
                            flags)
                results.append(r)
                print(" | ".join(map(str, _row(r, before))), file=sys.stderr, flush=True)
    ok = [r for r in results if "error" not in r]
    moved = sorted({f"{r['model']} (position {r['position']} at cache {r['cache']})"
                    for r in results if r["position"] != r["cache"]})
    if moved:
        lines += ["", "Learned position embeddings shorter than the cache: the new token "
                  "sits at the last position the model has, which changes no shape: "
                  + ", ".join(moved) + "."]
    columns = []
    for name, _ in _MEASURES:
        columns += [name] + ([f"{name} before"] if before is not None else [])
    if flags:
        lines += ["", f"Built with `mp-compile {' '.join(flags)}`: attention as the export "
                  "wrote it (Q·Kᵀ, masks and Softmax, ·V as separate kernels)."]
    if before is not None:
        built = (f"built with {base['flags']}" if base.get("flags") else
                 "built without flags" if "flags" in base else "")
        lines += ["", f"\"before\": {base.get('commit', 'an earlier run')} "
                  f"({args.baseline.name}{', ' + built if built else ''}), "
                  "same shapes, seeds and model."]
    lines += ["", *table(["model", "batch", "cache", "launches", "layer kernels", *columns,
                          "roofline us", "outputs vs ORT", "emu s"],
                         [_row(r, before) for r in results],
                         align="lrrrr" + "r" * (len(columns) + 3))]
    def summary(rs: list[dict]) -> str:
        kernels = [r["layer_kernels"] for r in rs if r.get("layer_kernels") is not None]
        return (f"launches per layer {_span(rs, lambda r: r['launches'] / r['layers'])}; "
                + (f"kernels of one layer {min(kernels)}–{max(kernels)}; " if kernels else "") +
                f"bytes / minimal {_span(rs, lambda r: r['bytes_over_minimal'])}; coalesced "
                f"{_span(rs, lambda r: 100 * r['coalesced'])}%; launch cost "
                f"{_span(rs, lambda r: 100 * r['launches'] * r['launch_seconds'] / r['modeled_seconds'])}"
                "% of the modeled time")
    if ok:
        lines += ["", f"Over {len(ok)} steps: {summary(ok)}."]
        if before is not None:
            earlier = [before[_key(r)] for r in ok if _key(r) in before and
                       "error" not in before[_key(r)]]
            if earlier:
                lines += ["", f"Before, over the same {len(earlier)} steps: {summary(earlier)}."]
    publish(args.out, lines, args.json,
            {"commit": commit(), "flags": " ".join(flags), "results": results},
            time.perf_counter() - started)
    failed = [r for r in results if "error" in r or r["matched"] != r["outputs"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
