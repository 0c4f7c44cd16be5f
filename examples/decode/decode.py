#!/usr/bin/env python3
"""Greedy decoding over the libraries of compile_decoder.py with mp.load:
the prompt in one prefill run, its presents copied into the KV cache
buffers, then one token per step, the caches updated in place.

    examples/decode/decode.py OUT_DIR --prompt 5,17,42,3,9,11,2,7 --steps 16 [--reference MODEL.onnx]

Prints the generated tokens and the decode rate. With ``--reference``,
onnxruntime decodes the original model greedily (Concat caches, the whole
past passed back each step) and the tokens must be equal (exit 1 if not).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import mp  # noqa: E402

CACHE = "past_key_values."


def present_name(cache: str) -> str:
    """past_key_values.{i}.key -> present.{i}.key"""
    return "present." + cache[len(CACHE):]


def decode_mp(out_dir: Path, prompt: list[int], steps: int) -> tuple[list[int], float]:
    """The generated tokens and the decode rate (tokens/s, prefill excluded)."""
    prefill = mp.load(out_dir / "libprefill.so")
    step = mp.load(out_dir / "libstep.so")
    specs = {name: (dtype, shape) for name, dtype, shape in step.inputs}
    capacity = specs["attention_mask"][1][1]
    if len(prompt) != prefill.inputs[0][2][1]:
        sys.exit(f"error: libprefill.so takes {prefill.inputs[0][2][1]} prompt tokens, "
                 f"got {len(prompt)}")
    if len(prompt) + steps > capacity:
        sys.exit(f"error: {len(prompt)} prompt tokens and {steps} steps exceed the "
                 f"{capacity} positions of the caches")
    n = len(prompt)
    positions = np.arange(n, dtype=np.int64)[None]
    feeds = {"input_ids": np.array([prompt], np.int64),
             "attention_mask": np.ones((1, n), np.int64), "position_ids": positions}
    for name, dtype, shape in prefill.inputs:
        if name.startswith(CACHE):
            feeds[name] = np.zeros(shape, dtype)
    feeds = {k: v for k, v in feeds.items() if k in {i[0] for i in prefill.inputs}}
    outs = prefill.run(feeds)
    # The step's caches: N positions, the prompt's K/V in the first n.
    caches = {}
    for name, (dtype, shape) in specs.items():
        if name.startswith(CACHE):
            caches[name] = np.zeros(shape, dtype)
            caches[name][:, :, :n] = outs[present_name(name)]
    tokens = [int(outs["logits"][0, -1].argmax())]
    mask = np.zeros((1, capacity), np.int64)
    start = time.perf_counter()
    for fill in range(n, n + steps - 1):
        mask[0, :fill + 1] = 1  # the filled slots and the new one
        feeds = {"input_ids": np.array([[tokens[-1]]], np.int64), "attention_mask": mask,
                 "position_ids": np.array([[fill]], np.int64),
                 "past_sequence_length": np.array(fill, np.int64), **caches}
        feeds = {k: v for k, v in feeds.items() if k in specs}
        outs = step.run(feeds, out={present_name(c): a for c, a in caches.items()})
        tokens.append(int(outs["logits"][0, -1].argmax()))
    elapsed = time.perf_counter() - start
    return tokens, (steps - 1) / elapsed if steps > 1 else 0.0


def decode_onnxruntime(model: Path, prompt: list[int], steps: int) -> tuple[list[int], float]:
    """Greedy tokens of the original model in onnxruntime (one thread, as
    mp's CPU libraries run), the caches concatenated by the graph and passed
    back each step, and its decode rate (tokens/s, prefill excluded)."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in sess.get_inputs()}
    dtype = np.float16 if "float16" in inputs[next(n for n in inputs if n.startswith(CACHE))].type \
        else np.float32
    n = len(prompt)
    feeds = {"input_ids": np.array([prompt], np.int64), "attention_mask": np.ones((1, n), np.int64),
             "position_ids": np.arange(n, dtype=np.int64)[None]}
    for name, i in inputs.items():
        if name.startswith(CACHE):
            feeds[name] = np.zeros((1, i.shape[1], 0, i.shape[3]), dtype)
    names = [o.name for o in sess.get_outputs()]
    tokens = []
    for step in range(steps):
        if step == 1:
            start = time.perf_counter()
        outs = dict(zip(names, sess.run(None, {k: v for k, v in feeds.items() if k in inputs})))
        tokens.append(int(outs["logits"][0, -1].argmax()))
        total = feeds["attention_mask"].shape[1] + 1
        feeds = {"input_ids": np.array([[tokens[-1]]], np.int64),
                 "attention_mask": np.ones((1, total), np.int64),
                 "position_ids": np.array([[total - 1]], np.int64),
                 **{c: outs[present_name(c)] for c in inputs if c.startswith(CACHE)}}
    rate = (steps - 1) / (time.perf_counter() - start) if steps > 1 else 0.0
    return tokens, rate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the folder compile_decoder.py wrote")
    ap.add_argument("--prompt", required=True, help="comma-separated token ids")
    ap.add_argument("--steps", type=int, default=16, help="tokens to generate (default 16)")
    ap.add_argument("--reference", type=Path, help="the ONNX model, to check against onnxruntime")
    args = ap.parse_args(argv)
    prompt = [int(t) for t in args.prompt.split(",")]
    if args.steps < 1:
        sys.exit("error: --steps must be at least 1")
    tokens, rate = decode_mp(args.out, prompt, args.steps)
    print("tokens:", " ".join(map(str, tokens)))
    print(f"decode: {rate:.1f} tokens/s ({args.steps - 1} steps after the prefill)")
    if args.reference:
        want, ort_rate = decode_onnxruntime(args.reference, prompt, args.steps)
        if want != tokens:
            print("onnxruntime:", " ".join(map(str, want)), "-- DIFFERENT", file=sys.stderr)
            return 1
        print(f"onnxruntime: the same tokens; {ort_rate:.1f} tokens/s (one thread, Concat "
              "caches)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
