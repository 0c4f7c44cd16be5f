"""mp-opt on every malformed model of test/Inputs/errors: exit code exactly 1,
an "error:" line on stderr, and no crash (no stack dump, no bug-report banner).

The inputs come from python/mp/tools/make_error_inputs.py; the expected
messages are checked in test/Import/errors-files.mlir. MP_BUILD_DIR selects
the build directory (default: build/ of the repository).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD

REPO = Path(__file__).resolve().parents[2]
ERRORS = REPO / "test" / "Inputs" / "errors"
MP_OPT = BUILD / "bin" / "mp-opt"

# Inputs mp-opt wrongly accepts or crashes on today: name -> reason. xfail(strict) so a fix
# shows up as XPASS, to be moved into errors-files.mlir.
KNOWN_ACCEPTED: dict[str, str] = {}

MODEL_SUFFIXES = (".onnx", ".onnxtext")
CRASH_MARKERS = ("Stack dump", "PLEASE submit a bug report", "Segmentation fault",
                 "Assertion", "terminate called", "LLVM ERROR")


def _inputs():
    files = sorted(p.name for p in ERRORS.iterdir() if p.name.endswith(MODEL_SUFFIXES))
    files.append("does-not-exist.onnx")
    params = []
    for name in files:
        marks = []
        if name in KNOWN_ACCEPTED:
            marks.append(pytest.mark.xfail(reason=KNOWN_ACCEPTED[name], strict=True))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def _run(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(MP_OPT), str(path), "-o", os.devnull],
                          capture_output=True, text=True, errors="replace",
                          timeout=60)


@pytest.fixture(scope="module", autouse=True)
def _need_mp_opt():
    if not MP_OPT.exists():
        pytest.skip(f"{MP_OPT} not built")


def test_inputs_present():
    # The generator was run and its outputs are committed.
    names = {p.name for p in ERRORS.iterdir()}
    for expected in ("random_bytes.onnx", "truncated.onnx", "empty.onnx",
                     "extdata_missing.onnx", "extdata_short.onnx",
                     "extdata_escape.onnx", "extdata_absolute.onnx",
                     "raw_data_mismatch.onnx", "string_initializer.onnx",
                     "float8_input.onnx", "input_no_shape.onnx",
                     "softmax_axis_float.onnx", "cast_to_string.onnx",
                     "unsupported_op.onnx", "unknown_domain.onnx",
                     "constant_sparse.onnx", "syntax_error.onnxtext"):
        assert expected in names
    for p in ERRORS.iterdir():
        assert p.stat().st_size < 20 * 1024, p


@pytest.mark.parametrize("name", _inputs())
def test_clean_error(name):
    r = _run(ERRORS / name)
    for marker in CRASH_MARKERS:
        assert marker not in r.stderr, f"crash on {name}:\n{r.stderr}"
    assert r.returncode == 1, f"rc={r.returncode} on {name}:\n{r.stderr}"
    assert "error:" in r.stderr, r.stderr


def test_generator_is_deterministic(tmp_path):
    import sys
    sys.path.insert(0, str(REPO / "python"))
    from mp.tools import make_error_inputs

    files = make_error_inputs.build(tmp_path)
    for name, data in files.items():
        assert (ERRORS / name).read_bytes() == data, \
            f"{name} differs from the generator: rerun python -m mp.tools.make_error_inputs"
