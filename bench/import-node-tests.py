#!/usr/bin/env python3
"""Regenerates bench/import-node-tests.md: the ONNX backend node tests through mp-opt's importer.

    .venv/bin/python bench/import-node-tests.py [--mp-opt PATH] [--jobs N]

A thin wrapper around `python -m mp.tools.node_tests --out bench/import-node-tests.md`;
extra arguments are passed through (`--out` overrides the destination).
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from mp.tools import node_tests  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args = ["--out", str(REPO / "bench" / "import-node-tests.md"), *args]
    sys.exit(node_tests.main(args))
