#!/usr/bin/env python3
"""Regenerates bench/compile.md: front-end time and memory at 10k/20k/100k nodes beside
onnxconverter-common, and JIT compile + first run, cold and cached, of every corpus decoder
and the 12-layer decoder step (issue 27).

    .venv/bin/python bench/compile.py [--sizes 10000 20000 100000] [--repeat 3]
                                      [--models NAME ...] [--no-step] [--jit-repeat 1]
                                      [--no-occ] [--out bench/compile.md] [--json FILE]

The measurement and the report are mp.tools.compile_bench (its docstring says what is
measured and how); this script only runs it from the repository.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from mp.tools import compile_bench  # noqa: E402

if __name__ == "__main__":
    sys.exit(compile_bench.main())
