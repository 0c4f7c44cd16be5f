"""`pip install .` and the installed layout, without the 25-minute build.

1. pyproject.toml: the wheel's metadata through scikit-build-core's PEP 517
   hook (no CMake build), and the build requirement pinned as in
   python/requirements.txt.
2. The subpackages (mp.models, mp.tools, mp.emu, ...) import and their CLIs
   run without the native library.
3. cmake/Install.cmake: `cmake --install` of the configured build into a
   temporary site-packages/mp (the package's lib/ and include/ as pip lays
   them out; the tools land in its bin/): the copied package finds its own
   libMPCAPI.so there, the installed tools start, and the installed
   mp-compile links its libraries against the installed runtime, not the
   build's.

README.md ("pip install .") has the real install; it reuses the same rules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from mp.tools import build_dir

REPO = Path(__file__).resolve().parents[2]
# The environment of a process that sees only the installed copy.
CLEAN_ENV = {k: v for k, v in os.environ.items()
             if k not in ("MP_LIBRARY", "MP_BUILD_DIR", "MP_RUNTIME_LIBRARY", "PYTHONPATH")}


def test_build_requirements_are_pinned():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    requires = pyproject["build-system"]["requires"]
    assert requires and all("==" in r for r in requires), requires
    pins = {line.split("==")[0]: line for line in
            (REPO / "python" / "requirements.txt").read_text().splitlines() if "==" in line}
    for r in requires:
        assert pins.get(r.split("==")[0]) == r, f"{r} is not pinned so in python/requirements.txt"


def test_wheel_metadata(tmp_path, monkeypatch):
    backend = pytest.importorskip("scikit_build_core.build")
    monkeypatch.chdir(REPO)
    name = backend.prepare_metadata_for_build_wheel(str(tmp_path))
    meta = (tmp_path / name / "METADATA").read_text()
    assert name.startswith("mp-")
    assert "Name: mp\n" in meta
    assert "Requires-Dist: numpy" in meta and "Requires-Dist: onnx" in meta
    # The system's CMake and Ninja suffice: pip downloads neither.
    if shutil.which("cmake") and shutil.which("ninja"):
        assert backend.get_requires_for_build_wheel() == []


def test_subpackages_import_without_the_native_library(tmp_path):
    env = {**CLEAN_ENV, "PYTHONPATH": str(REPO / "python"),
           "MP_LIBRARY": str(tmp_path / "missing" / "libMPCAPI.so")}
    code = ("import mp, mp.models, mp.tools.conformance, mp.tools.report, mp.tools.precision_bench, "
            "mp.emu, mp.emu.check, mp.training, mp.library\nprint(mp._lib is None)")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr
    for module in ("mp.models", "mp.emu", "mp.tools.conformance", "mp.tools.node_tests",
                   "mp.tools.precision_bench"):
        proc = subprocess.run([sys.executable, "-m", module, "--help"], env=env,
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"python -m {module} --help: {proc.stderr[-2000:]}"
    proc = subprocess.run([sys.executable, "-c", "import mp; mp.version()"], env=env,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "cannot find the mp C library" in proc.stderr


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A site-packages with a copy of python/mp and `cmake --install` into it."""
    build = build_dir()
    if not (build / "cmake_install.cmake").is_file() or not (build / "bin" / "mp-compile").is_file():
        pytest.skip(f"mp is not built in {build}")
    site = tmp_path_factory.mktemp("site-packages")
    shutil.copytree(REPO / "python" / "mp", site / "mp",
                    ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run(["cmake", "--install", str(build), "--prefix", str(site / "mp"),
                           "--component", "Unspecified"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return site


def test_install_layout(site):
    mp_dir = site / "mp"
    for f in ("lib/libMPCAPI.so", "lib/libmp_runtime.so", "include/mp/runtime.h",
              "include/mp/mlir_abi.h", "bin/mp-opt", "bin/mp-run", "bin/mp-compile"):
        assert (mp_dir / f).is_file(), f"{f} is not installed ({sorted(mp_dir.rglob('*'))[:40]})"
    # Only what a user needs: no static libraries of the build.
    assert not list(mp_dir.rglob("*.a"))
    for tool in ("mp-opt", "mp-run", "mp-compile"):
        proc = subprocess.run([str(mp_dir / "bin" / tool), "--version"], env=CLEAN_ENV,
                              capture_output=True, text=True)
        assert proc.returncode == 0, f"installed {tool}: {proc.stderr[-2000:]}"


def test_installed_package_finds_its_library(site):
    env = {**CLEAN_ENV, "PYTHONPATH": str(site)}
    code = "import mp; print(mp.library_path()); print(mp.version())"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=site)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == str(site / "mp" / "lib" / "libMPCAPI.so")


def _runpath(library: Path) -> list[str]:
    readelf = shutil.which("readelf") or shutil.which("llvm-readelf-22")
    if readelf is None:
        pytest.skip("no readelf")
    out = subprocess.run([readelf, "-d", str(library)], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        if "(RUNPATH)" in line or "(RPATH)" in line:
            return line.split("[", 1)[1].rstrip("]").split(":")
    return []


def test_installed_mp_compile_uses_the_installed_runtime(site, tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])], "add", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "add.onnx"))
    library = tmp_path / "out" / "libadd.so"
    proc = subprocess.run([str(site / "mp" / "bin" / "mp-compile"), str(tmp_path / "add.onnx"),
                           "-o", str(library)], env=CLEAN_ENV, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runpath = _runpath(library)
    assert str(site / "mp" / "lib") in runpath, runpath
    assert str(build_dir() / "lib") not in runpath, runpath
    env = {**CLEAN_ENV, "PYTHONPATH": str(site)}
    code = ("import sys, numpy as np, mp\n"
            "lib = mp.load(sys.argv[1])\n"
            "x = np.arange(6, dtype=np.float32).reshape(2, 3)\n"
            "assert (lib.run({'x': x})['y'] == 2 * x).all()\n"
            "print(mp.library.runtime_path())")
    proc = subprocess.run([sys.executable, "-c", code, str(library)], env=env,
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == str(site / "mp" / "lib" / "libmp_runtime.so")
