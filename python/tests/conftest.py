import importlib.util
import os
import sys
from pathlib import Path

import pytest

# Make `import mp.models` work without PYTHONPATH=python (scripts/test.sh sets it).
PYTHON_DIR = Path(__file__).resolve().parents[1]
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))

from mp.tools import REPO, build_dir  # noqa: E402,F401  (REPO: for the tests)

# The build every test uses: $MP_BUILD_DIR, relative to the repository (not to the
# working directory), else build/. Exported absolute so that mp.library_path() and
# child processes agree with it.
BUILD = build_dir()
os.environ["MP_BUILD_DIR"] = str(BUILD)

# MP_TEST_NO_SKIP=1 (scripts/test.sh after a build): "not built" skips fail.
from strict_skips import pytest_runtest_makereport  # noqa: E402,F401


@pytest.fixture(scope="session")
def conv_vocoder(tmp_path_factory):
    """The folder of the generated conv_vocoder example (model.onnx and
    test_data_set_0), written for this session: a copy that `python -m
    mp.models` left in examples/ (git-ignored) may be stale."""
    import mp.models
    return mp.models.write_example(
        "conv_vocoder", tmp_path_factory.mktemp("conv_vocoder") / "model.onnx").parent


def load_bench(name):
    """bench/NAME.py as a module (the benchmarks are scripts, not a package)."""
    path = PYTHON_DIR.parent / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_mp_and_onnxruntime(tmp_path, model, feeds):
    """Saves `model`, runs it with mp (fp32) and onnxruntime's CPU provider on
    `feeds`; returns (mp's {name: array}, onnxruntime's {name: array}). Skips
    when libMPCAPI.so or onnxruntime is missing."""
    import onnx
    import pytest

    import mp
    ort = pytest.importorskip("onnxruntime")
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    got = mp.compile(path).run(feeds)
    return got, ort_outputs(path, feeds)


def ort_outputs(path, feeds):
    """onnxruntime's CPU outputs of the model at `path` on `feeds`, by name."""
    import pytest
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def assert_outputs_close(got, want, rtol, atol, where=""):
    """`got` and `want` ({name: array}) have the same outputs, each with the
    same shape and within `rtol`/`atol`; an output on one side only fails."""
    import numpy as np
    assert set(got) == set(want), f"{where}: outputs {sorted(got)} != {sorted(want)}"
    for name, w in want.items():
        g = np.asarray(got[name])
        assert g.shape == w.shape, f"{where}: {name} has shape {g.shape}, expected {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{where}: {name}")


def compile_with_dims(tmp_path, model, dims=None):
    """Compiles `model` with mp. With `dims` ({input name: {axis: dim
    name}}), those input dims are named instead of fixed first and the model
    compiles once for every shape (`dynamic_shapes`); without, per shape."""
    import onnx

    import mp
    for vi in model.graph.input:
        for axis, name in (dims or {}).get(vi.name, {}).items():
            vi.type.tensor_type.shape.dim[axis].dim_param = name
    path = tmp_path / "compiled.onnx"
    onnx.save(model, str(path))
    return mp.compile(path, dynamic_shapes=bool(dims))



def require_built(*paths):
    """Skips unless every file of mp's build in `paths` exists (a failure under
    MP_TEST_NO_SKIP=1, see strict_skips.py)."""
    for p in map(Path, paths):
        if not p.is_file():
            pytest.skip(f"{p.name} is not built ({p})")


def require_present(*paths):
    """Skips unless every input in `paths` (../shared, node-test data) exists:
    what a machine may lack stays a skip."""
    for p in map(Path, paths):
        if not p.exists():
            pytest.skip(f"{p} is absent on this machine")
