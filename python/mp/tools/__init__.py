"""Tools around mp-opt: sweeps, reports and input makers (no MLIR dependency, only onnx).

Run them as ``python -m mp.tools.NAME``. Their defaults (models, the build,
report paths) are relative to the source checkout, :data:`REPO`;
:func:`build_tool` finds mp's executables.
"""

import os
from pathlib import Path

# The repository root of a source checkout (python/mp/tools/ is three below it).
REPO = Path(__file__).resolve().parents[3]


def build_dir() -> Path:
    """$MP_BUILD_DIR (relative to the repository), else the repository's build/."""
    build = Path(os.environ.get("MP_BUILD_DIR", "build"))
    return build if build.is_absolute() else REPO / build


def build_tool(name: str) -> Path:
    """mp-opt, mp-run or mp-compile of the build (:func:`build_dir`/bin)."""
    return build_dir() / "bin" / name
