"""The tools' --help lists their own options, not LLVM's backend flags."""

import subprocess
from pathlib import Path

import pytest

from conftest import BUILD

ROOT = Path(__file__).resolve().parents[2]
BIN = BUILD / "bin"
# A flag every LLVM build registers at startup (the x86 backend's).
LLVM_FLAG = "--x86-asm-syntax"


def help_text(tool, flag="--help"):
    path = BIN / tool
    if not path.exists():
        pytest.skip(f"{path} is not built")
    return subprocess.run([str(path), flag], check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize(
    "tool, own_option, limit",
    [
        ("mp-run", "--precision=<string>", 100),
        ("mp-compile", "--target=<string>", 100),
        ("mp-tune", "--metric=<string>", 100),
        # mp-opt also lists every registered pass.
        ("mp-opt", "--list-onnx-ops", None),
    ],
)
def test_help_shows_the_tools_options(tool, own_option, limit):
    text = help_text(tool)
    assert own_option in text
    assert LLVM_FLAG not in text
    if limit is not None:
        assert len(text.splitlines()) < limit, text
    # Hidden, not removed: --help-hidden still lists LLVM's flags.
    assert LLVM_FLAG in help_text(tool, "--help-hidden")


def test_mp_opt_help_lists_the_passes_of_every_layer():
    text = help_text("mp-opt")
    for flag in (
        "--mp-fuse-attention",  # Transforms
        "--mp-lower-to-linalg",  # Conversion
        "--mp-plan-arena",  # Codegen/Common
        "--mp-outline-kernels",  # Codegen/CPU
        "--mp-map-to-gpu",  # Codegen/CUDA
        "--mp-lower-to-nvvm",  # Pipelines
    ):
        assert flag in text, flag
