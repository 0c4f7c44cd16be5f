#!/usr/bin/env python3
"""Regenerates bench/precision-search.md: mp-tune's precision search next to
onnxconverter-common's auto_convert_mixed_precision, same metric, budget and inputs.

    .venv/bin/python bench/precision_search.py [--metric max-rel --budget 1e-3]
        [--models stress:NAME GROUP/NAME ...] [--mp-tune build/bin/mp-tune]
        [--out bench/precision-search.md] [--json FILE]

The measurement and the report are mp.tools.search_bench (its docstring says what is
counted and how); this script only runs it from the repository.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from mp.tools import search_bench  # noqa: E402

if __name__ == "__main__":
    sys.exit(search_bench.main())
