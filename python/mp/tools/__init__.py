"""Tools around mp-opt: sweeps, reports and input makers (no MLIR dependency, only onnx).

Run them as ``python -m mp.tools.NAME``. Their defaults (models, ``build/``,
report paths) are relative to the source checkout, :data:`REPO`.
"""

from pathlib import Path

# The repository root of a source checkout (python/mp/tools/ is three below it).
REPO = Path(__file__).resolve().parents[3]
