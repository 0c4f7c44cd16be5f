#!/usr/bin/env python3
"""Regenerates bench/gpu-model.md: every corpus decoder's decode step at batch 1 and 8,
cache 128 and 1024, on the PTX emulator with its traffic model (issue 25).

    .venv/bin/python bench/gpu_model.py [--models NAME ...] [--configs 1x128 ...]
                                        [--fuse-attention] [--baseline FILE]
                                        [--out bench/gpu-model.md] [--json FILE]

The measurement and the report are mp.tools.gpu_model_bench (its docstring says what is
counted and modeled); this script only runs it from the repository.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from mp.tools import gpu_model_bench  # noqa: E402

if __name__ == "__main__":
    sys.exit(gpu_model_bench.main())
