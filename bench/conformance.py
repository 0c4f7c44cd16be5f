#!/usr/bin/env python3
"""Regenerates bench/conformance.md: mp-run (CPU) against stored reference outputs.

    .venv/bin/python bench/conformance.py [--mp-run PATH] [--jobs N] [--subset] ...

A thin wrapper around `python -m mp.tools.conformance --generated --out
bench/conformance.md`: the shared models and examples/tts_decoder (fp32 and
mixed), the other mp.models examples (built with onnxruntime references), and
every ONNX backend node test of the onnx wheel and libonnx-testdata (fp32, ONNX
runner tolerances, 60 s timeout, 2 in parallel). Extra arguments are passed
through (`--out` overrides the destination).
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from mp.tools import conformance  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args = ["--out", str(REPO / "bench" / "conformance.md"), *args]
    if "--generated" not in args:
        args = ["--generated", *args]
    sys.exit(conformance.main(args))
