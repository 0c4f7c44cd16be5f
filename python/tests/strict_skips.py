"""A pytest hook (imported by conftest.py): with MP_TEST_NO_SKIP=1, a test that
skips because part of mp "is not built" fails instead.

scripts/test.sh sets it after building, when every tool and library exists: a
test that still finds one missing looks in the wrong place (an MP_BUILD_DIR it
does not honour, a path relative to the working directory), and must not pass
as a skip. Skips for what the machine lacks (../shared, the CUDA toolkit, a C
compiler) stay skips; their reasons do not say "not built".
"""

import os

import pytest

NOT_BUILT = "not built"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("MP_TEST_NO_SKIP") != "1" or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if NOT_BUILT in reason:
        report.outcome = "failed"
        report.longrepr = (f"skipped after a build (MP_TEST_NO_SKIP=1): {reason}\n"
                           f"(the test looks for mp outside MP_BUILD_DIR={os.environ.get('MP_BUILD_DIR')})")
