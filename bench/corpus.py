#!/usr/bin/env python3
"""Regenerates bench/corpus.md: mp on the real-exporter corpus, one row per model.

    .venv/bin/python bench/corpus.py [--only SUBSTR]... [--skip-cuda] [--skip-library]
                                     [--jobs 1] [--timeout 600] [--repeat 20] [--out bench/corpus.md]

The models are ../shared/corpus/{decoders,speech}/* and ../shared/models/*. What each
column measures is in mp.tools.corpus_bench's docstring and at the top of the report;
this script only runs it from the repository (60-80 minutes for all; the report is rewritten after each model).
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from mp.tools import corpus_bench  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    command = " ".join([".venv/bin/python bench/corpus.py", *args])
    if "--out" not in args:
        args = ["--out", str(REPO / "bench" / "corpus.md"), *args]
    sys.exit(corpus_bench.main(["--command", command, *args]))
