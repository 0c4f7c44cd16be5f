import fcntl
import hashlib
import importlib.util
import os
import shutil
import subprocess
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


# --------------------------------------------------------------- compile cache
# Libraries that more than one test (or test file) needs, compiled once per
# pytest run: compiled_library() below. The cache lives in the run's base
# temporary folder, shared by the pytest-xdist workers of that run (each worker
# has basetemp/popen-gwN), so a rebuilt mp never meets an entry of an earlier
# run; the key holds the binary's hash anyway.
_COMPILE_CACHE: Path | None = None


@pytest.fixture(scope="session", autouse=True)
def _compile_cache_root(tmp_path_factory):
    global _COMPILE_CACHE
    base = tmp_path_factory.getbasetemp()
    # Under xdist the run's folder is the parent of this worker's.
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    _COMPILE_CACHE = root / "mp-compile-cache"
    _COMPILE_CACHE.mkdir(exist_ok=True)
    # mp's own compile cache (the JIT's variants): this run's, never the user's.
    os.environ["MP_CACHE_DIR"] = str(root / "mp-jit-cache")
    os.environ.setdefault("MP_CACHE_MAX_MB", "1024")
    yield _COMPILE_CACHE


_FILE_HASHES: dict[tuple, str] = {}


def _file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, remembered per (path, size, mtime, inode)."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if key not in _FILE_HASHES:
        _FILE_HASHES[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return _FILE_HASHES[key]


def _hash_path(h, path: Path) -> None:
    """Feeds a file's bytes, or every file under a folder (by relative
    name), into the hash `h`."""
    if path.is_dir():
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(f"\0file {f.relative_to(path)} {_file_sha256(f)}".encode())
    elif path.is_file():
        h.update(f"\0file {_file_sha256(path)}".encode())


def _external_data(model: Path) -> list[Path]:
    """The external data files `model` names (beside it), or every file
    beside it when the model does not parse."""
    try:
        import onnx
        from onnx.external_data_helper import _get_all_tensors, uses_external_data
        proto = onnx.load(str(model), load_external_data=False)
        names = {next(e.value for e in t.external_data if e.key == "location")
                 for t in _get_all_tensors(proto) if uses_external_data(t)}
        return [model.parent / n for n in sorted(names)]
    except Exception:
        return sorted(p for p in model.parent.iterdir() if p.is_file() and p != model)


def _compile_key(mp_compile: Path, model: Path, args: tuple[str, ...], name: str) -> str:
    """sha256 over everything that decides what mp-compile writes: the
    binary, the model's path (the library records it) and bytes with its
    external data, the arguments and the files or folders they name (e.g.
    --shapes-from), the output's file name (the header is named after it)
    and the environment mp-compile reads (the host compiler, CUDA toolkit)."""
    h = hashlib.sha256(b"mp-compile-cache 1")
    h.update(f"\0binary {mp_compile} {_file_sha256(mp_compile)}".encode())
    h.update(f"\0model {model}".encode())
    _hash_path(h, model)
    for data in _external_data(model):
        h.update(f"\0external {data.name}".encode())
        _hash_path(h, data)
    for arg in args:
        h.update(f"\0arg {arg}".encode())
        for value in {arg, arg.partition("=")[2]}:
            if value and os.path.exists(value):
                _hash_path(h, Path(value))
    h.update(f"\0name {name}".encode())
    for var in ("MP_CC", "CUDA_ROOT", "CUDA_HOME", "CUDA_PATH", "PATH"):
        h.update(f"\0env {var}={os.environ.get(var)}".encode())
    return h.hexdigest()[:32]


def compiled_library(model: str | os.PathLike, *args: str, name: str = "libmodel.so") -> Path:
    """`mp-compile MODEL -o NAME ARGS`, run once per pytest run: the path of
    NAME (libNAME.h and libNAME.json beside it) in a cache shared by every
    test and xdist worker of the run, keyed by _compile_key. For tests that
    only need the artifact; a test that checks what mp-compile prints
    compiles itself. The files are read-only: load them, never write beside
    them. A failed compile fails the caller and is not cached.

    Concurrent workers wait on a lock file per key; an entry is compiled in a
    folder of its own and renamed into place, so a partial one is never
    seen."""
    mp_compile = BUILD / "bin" / "mp-compile"
    require_built(mp_compile)
    model = Path(model).absolute()
    root = _COMPILE_CACHE
    assert root is not None, "compiled_library() runs inside a pytest session (_compile_cache_root)"
    key = _compile_key(mp_compile, model, args, name)
    entry = root / key
    if not entry.is_dir():
        with open(root / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not entry.is_dir():
                partial = root / f"{key}.partial"
                shutil.rmtree(partial, ignore_errors=True)
                partial.mkdir()
                cmd = [str(mp_compile), str(model), "-o", str(partial / name), *args]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0 or not (partial / name).is_file():
                    shutil.rmtree(partial, ignore_errors=True)
                    pytest.fail(f"{' '.join(cmd)}\nexited {proc.returncode}:\n{proc.stderr}")
                for f in partial.iterdir():
                    f.chmod(0o444)
                os.rename(partial, entry)
    return entry / name


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
    pytest.importorskip("onnxruntime")
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


# ONNX-24's own in-place KV cache form: TensorScatter of the step's K/V into
# fixed-capacity caches, then Attention with nonpad_kv_seqlen.
ONNX24_STEP = """
<
  ir_version: 10,
  opset_import: ["" : 24]
>
step (float[2, 4, 1, 8] q, float[2, 2, 1, 8] k, float[2, 2, 1, 8] v, float[2, 2, 16, 8] key_cache,
      float[2, 2, 16, 8] value_cache, int64[2] write_indices, int64[2] kv_len)
  => (float[2, 4, 1, 8] y, float[2, 2, 16, 8] key_cache_out, float[2, 2, 16, 8] value_cache_out)
{
  key_cache_out = TensorScatter(key_cache, k, write_indices)
  value_cache_out = TensorScatter(value_cache, v, write_indices)
  y = Attention(q, key_cache_out, value_cache_out, , , , kv_len)
}
"""


def onnx24_step_feeds(rng, t: int) -> dict:
    """ONNX24_STEP's inputs but the caches for step `t` of a decode loop: the
    two sequences are at fill levels t and t + 2."""
    import numpy as np
    return {"q": rng.standard_normal((2, 4, 1, 8)).astype(np.float32),
            "k": rng.standard_normal((2, 2, 1, 8)).astype(np.float32),
            "v": rng.standard_normal((2, 2, 1, 8)).astype(np.float32),
            "write_indices": np.array([t, t + 2], np.int64),
            "kv_len": np.array([t + 1, t + 3], np.int64)}
