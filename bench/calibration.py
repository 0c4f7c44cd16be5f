#!/usr/bin/env python3
"""Regenerates bench/calibration.md: mp's mixed build with and without calibration, against mp's fp32 build.

    .venv/bin/python bench/calibration.py [--no-shared] [--no-stress] [--models NAME ...]
                                          [--no-autocast] [--autocast-python PY]
                                          [--out bench/calibration.md] [--json FILE]

The measurement and the report are mp.tools.calibration_bench (its docstring says what
is measured and how); this script only runs it from the repository.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from mp.tools import calibration_bench  # noqa: E402

if __name__ == "__main__":
    sys.exit(calibration_bench.main())
