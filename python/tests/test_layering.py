"""The layers form one line: scripts/check-layering.py passes on the tree and
fails on a planted upward include, an upward link and a runtime cycle."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-layering.py"


def run_check(root):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True
    )


def test_the_tree_is_layered():
    result = run_check(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    # The graph it checked is printed: the line of layers and real edges.
    assert "Support -> Dialect -> Import | Precision -> Transforms" in result.stdout
    assert "Pipelines       -> Codegen/CUDA" in result.stdout
    assert "0 error(s)" in result.stdout


@pytest.fixture
def tree_copy(tmp_path):
    for top in ("lib", "include", "tools", "runtime"):
        shutil.copytree(ROOT / top, tmp_path / top)
    return tmp_path


def plant(path, text, after_line_starting="#include"):
    """Adds `text` after the first line of `path` that starts so."""
    lines = path.read_text().split("\n")
    i = next(i for i, line in enumerate(lines) if line.startswith(after_line_starting))
    lines.insert(i + 1, text)
    path.write_text("\n".join(lines))


def test_an_upward_include_fails(tree_copy):
    fused = tree_copy / "lib" / "Transforms" / "FuseAttention.cpp"
    plant(fused, '#include "mp/Pipelines/Pipelines.h"')
    result = run_check(tree_copy)
    assert result.returncode == 1
    assert (
        "lib/Transforms/FuseAttention.cpp" in result.stdout
        and "Transforms uses Pipelines, which is above it" in result.stdout
    ), result.stdout


def test_a_sideways_include_fails(tree_copy):
    cpu = tree_copy / "lib" / "Codegen" / "CPU" / "OutlineKernels.cpp"
    plant(cpu, '#include "mp/Codegen/CUDA/Passes.h"')
    result = run_check(tree_copy)
    assert result.returncode == 1
    assert "Codegen/CPU uses Codegen/CUDA, which is beside it" in result.stdout, result.stdout


def test_an_upward_link_fails(tree_copy):
    cmake = tree_copy / "lib" / "Conversion" / "MpToLinalg" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text().replace("  MPPrecision\n", "  MPPrecision\n  MPExecution\n"))
    result = run_check(tree_copy)
    assert result.returncode == 1
    assert "links MPExecution: Conversion uses Execution, which is above it" in result.stdout, (
        result.stdout
    )


def test_the_runtime_uses_no_compiler_and_no_cycle(tree_copy):
    lib = tree_copy / "runtime" / "lib"
    plant(lib / "BufferPool.cpp", '#include "mp/Support/HostTensor.h"')
    plant(lib / "Errors.cpp", '#include "Library.h"')
    plant(lib / "Library.cpp", '#include "Errors.h"')
    result = run_check(tree_copy)
    assert result.returncode == 1
    assert "the runtime uses the compiler's Support" in result.stdout, result.stdout
    assert "runtime/lib include cycle: Errors -> Library -> Errors" in result.stdout or (
        "runtime/lib include cycle: Library -> Errors -> Library" in result.stdout
    ), result.stdout
