"""mp.tools.report.commit marks a modified tree, except for rewritten bench
pages (what bench/regenerate.sh writes one after another)."""

import subprocess

from mp.tools import report


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_bench_pages_are_outputs_code_is_not(tmp_path):
    (tmp_path / "bench" / "sub").mkdir(parents=True)
    (tmp_path / "lib").mkdir()
    for f in ("bench/x.md", "bench/x.py", "bench/sub/y.md", "lib/a.cpp"):
        (tmp_path / f).write_text("0\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    assert not report.commit(tmp_path).endswith("(working tree modified)")
    (tmp_path / "bench" / "x.md").write_text("1\n")
    assert not report.commit(tmp_path).endswith("(working tree modified)")
    for f in ("bench/x.py", "bench/sub/y.md", "lib/a.cpp"):
        (tmp_path / f).write_text("1\n")
        assert report.commit(tmp_path).endswith("(working tree modified)"), f
        _git(tmp_path, "checkout", "-q", "--", f)
