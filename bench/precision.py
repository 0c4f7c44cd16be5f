#!/usr/bin/env python3
"""Regenerates bench/precision.md: mp's mixed-precision plan next to two peer fp16 converters.

    .venv/bin/python bench/precision.py [--mp-opt build/bin/mp-opt] [--models-dir ../shared/models]
                                        [--no-generated] [--out bench/precision.md] [--json FILE]

The measurement and the report are mp.tools.precision_bench (its docstring says what
is counted and how); this script only runs it from the repository.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from mp.tools import precision_bench  # noqa: E402

if __name__ == "__main__":
    sys.exit(precision_bench.main())
