"""MP_TEST_NO_SKIP=1 (scripts/test.sh after a build) turns a "not built" skip into a failure."""

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _run(tmp_path, no_skip: bool) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text(
        "from strict_skips import pytest_runtest_makereport  # noqa: F401\n")
    (tmp_path / "test_a.py").write_text(
        "import pytest\n\n"
        "def test_skips():\n    pytest.skip('mp-run is not built (build/bin/mp-run)')\n\n"
        "@pytest.mark.skipif(True, reason='libMPCAPI.so is not built')\ndef test_marked():\n    pass\n\n"
        "def test_no_toolkit():\n    pytest.skip('no CUDA toolkit on this machine')\n\n"
        "@pytest.mark.xfail(strict=True)\ndef test_xfail():\n    assert False\n")
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    env.pop("MP_TEST_NO_SKIP", None)
    if no_skip:
        env["MP_TEST_NO_SKIP"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_skips_pass_by_default(tmp_path):
    proc = _run(tmp_path, no_skip=False)
    assert proc.returncode == 0, proc.stdout
    assert "3 skipped, 1 xfailed" in proc.stdout


def test_not_built_skips_fail_after_a_build(tmp_path):
    proc = _run(tmp_path, no_skip=True)
    assert proc.returncode == 1, proc.stdout
    # A skip in the test fails it; one in setup (a skipif mark) errors it. What the
    # machine lacks (the toolkit) stays a skip.
    assert "1 failed, 1 skipped, 1 xfailed, 1 error" in proc.stdout, proc.stdout
    assert "skipped after a build (MP_TEST_NO_SKIP=1): Skipped: mp-run is not built" in proc.stdout
