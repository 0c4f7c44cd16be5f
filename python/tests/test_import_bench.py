"""bench/import.py at a tiny size: it generates both models, runs every
configuration and writes a report with the common header and one row of
numbers per configuration (bench/import.md is the same at --gb 1)."""

import re
import subprocess
import sys

from conftest import BUILD, REPO, require_built

MP_OPT = BUILD / "bin" / "mp-opt"
NUMBER = r"\d+(?:\.\d+)?"


def test_import_bench_writes_the_report(tmp_path):
    require_built(MP_OPT)
    out = tmp_path / "import.md"
    cmd = [sys.executable, str(REPO / "bench" / "import.py"), "--gb", "0.01", "--d-model", "64",
           "--vocab", "1000", "--repeat", "1", "--out", str(out), "--work", str(tmp_path / "work"),
           "--mp-opt", str(MP_OPT)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    text = out.read_text()
    assert text.startswith("# Import time and memory of a ")
    for head in ("- Date: ", "- Machine: ", "- mp commit: ", "- mp-opt: ",
                 "- Regenerate: `.venv/bin/python bench/import.py --gb 0.01 "):
        assert re.search("^" + re.escape(head), text, re.M), f"no {head!r} line:\n{text}"
    # The weight bytes are big_model's for these parameters.
    assert re.search(r"\*\*\d[\d ]* weight bytes", text)
    rows = {}
    for variant in ("A inline", "B external"):
        for run in ("(a) import only", "(b) + print (elided)", "(c) mixed precision"):
            m = re.search(rf"^\| {re.escape(variant)} \| {re.escape(run)} \| (.*) \|$", text, re.M)
            assert m, f"no row for {variant} {run}:\n{text}"
            cells = m.group(1).split(" | ")
            assert len(cells) == 7, cells
            wall, user, sys_, rss, ratio, anon, file = cells
            for c in (wall, user, sys_):
                assert re.fullmatch(rf"{NUMBER} s", c), c
            for c in (rss, anon, file):
                assert re.fullmatch(r"\d[\d ]* MiB", c), c
            assert float(ratio) > 0
            rows[variant, run] = int(rss[:-4].replace(" ", ""))
    assert all(rss > 0 for rss in rows.values())
    # Prose numbers are filled in, not left as placeholders.
    assert "### What the numbers mean" in text and "{" not in text
    # A second run reuses the generated models.
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "(reused)" in p.stdout and "were reused" in out.read_text()
