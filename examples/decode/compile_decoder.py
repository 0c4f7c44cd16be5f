#!/usr/bin/env python3
"""Compiles a decoder step exported by torch.onnx into the two libraries of
a greedy decode loop with in-place KV caches (docs/decode.md):

* ``libprefill.so``: the prompt in one run (``--prompt-len`` tokens, empty
  past), the model as exported;
* ``libstep.so``: one token per run with ``--fuse-attention --max-seq-len N``:
  each ``past_key_values.{i}.key|value`` is a buffer of N positions that the
  step updates in place at the fill level ``past_sequence_length``.

    examples/decode/compile_decoder.py MODEL.onnx OUT_DIR --prompt-len 8 --max-seq-len 64

The model has the layout of optimum and onnxruntime-genai exports:
``input_ids`` [batch, seq], ``attention_mask`` [batch, past + seq],
optionally ``position_ids`` [batch, seq], ``past_key_values.{i}.key|value``
[batch, kv_heads, past, head_dim] -> ``logits``, ``present.{i}.key|value``.
Batch 1. The step's past is pinned to N - 1 positions and its mask to N, so
that the mask the graph builds spans the buffer (docs/compile.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import onnx

REPO = Path(__file__).resolve().parents[2]


def cache_inputs(model: Path) -> tuple[list[str], list[str], dict[str, tuple[int, int]]]:
    """The graph input names, the cache inputs among them and each cache's
    (kv_heads, head_dim)."""
    graph = onnx.load(str(model), load_external_data=False).graph
    names = [i.name for i in graph.input]
    caches, dims = [], {}
    for i in graph.input:
        if not i.name.startswith("past_key_values."):
            continue
        shape = [d.dim_value if d.HasField("dim_value") else None
                 for d in i.type.tensor_type.shape.dim]
        if len(shape) != 4 or shape[1] is None or shape[3] is None:
            sys.exit(f"error: cache input '{i.name}' is not [batch, kv_heads, past, head_dim] "
                     f"with static kv_heads and head_dim (declared {shape})")
        caches.append(i.name)
        dims[i.name] = (shape[1], shape[3])
    missing = {"input_ids", "attention_mask"} - set(names)
    if missing or not caches:
        sys.exit(f"error: {model} is not a decoder step with explicit caches "
                 f"(missing {sorted(missing) or 'past_key_values.* inputs'})")
    return names, caches, dims


def pins(names, caches, dims, seq: int, past: int) -> list[str]:
    args = [f"--input-shape=input_ids=1x{seq}", f"--input-shape=attention_mask=1x{past + seq}"]
    if "position_ids" in names:
        args.append(f"--input-shape=position_ids=1x{seq}")
    for c in caches:
        heads, head_dim = dims[c]
        args.append(f"--input-shape={c}=1x{heads}x{past}x{head_dim}")
    return args


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("out", type=Path, help="folder for libprefill.so and libstep.so")
    ap.add_argument("--prompt-len", type=int, default=8, help="prompt tokens (default 8)")
    ap.add_argument("--max-seq-len", type=int, default=64,
                    help="positions of the KV cache buffers (default 64)")
    ap.add_argument("--precision", choices=("fp32", "mixed"), default="fp32")
    ap.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--mp-compile", type=Path, default=REPO / "build" / "bin" / "mp-compile")
    args = ap.parse_args(argv)
    if not 0 < args.prompt_len < args.max_seq_len:
        sys.exit("error: --prompt-len must be at least 1 and below --max-seq-len")
    names, caches, dims = cache_inputs(args.model)
    args.out.mkdir(parents=True, exist_ok=True)
    common = [str(args.mp_compile), str(args.model), f"--precision={args.precision}",
              f"--target={args.target}"]
    builds = [
        ("libprefill.so", pins(names, caches, dims, args.prompt_len, 0)),
        ("libstep.so", ["--fuse-attention", f"--max-seq-len={args.max_seq_len}",
                        *pins(names, caches, dims, 1, args.max_seq_len - 1)]),
    ]
    for lib, extra in builds:
        cmd = [*common, "-o", str(args.out / lib), *extra]
        print("+", " ".join(cmd), flush=True)
        if subprocess.run(cmd).returncode != 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
