"""The user docs name every ONNX op the importer supports (docs match code)."""

import re
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD

ROOT = Path(__file__).resolve().parents[2]
MP_OPT = BUILD / "bin" / "mp-opt"


@pytest.mark.skipif(not MP_OPT.exists(), reason=f"{MP_OPT} is not built")
def test_ops_doc_lists_every_supported_op():
    listing = subprocess.run(
        [str(MP_OPT), "--list-onnx-ops"], check=True, capture_output=True, text=True
    ).stdout.split("\n")
    doc = (ROOT / "docs" / "ops.md").read_text()
    default_part, ms_part = doc.split("`com.microsoft` (onnxruntime contrib ops")
    missing = []
    for line in filter(None, listing):
        domain, op, _ = line.split()
        part = ms_part if domain == "com.microsoft" else default_part
        if not re.search(rf"\b{re.escape(op)}\b", part):
            missing.append(f"{domain}::{op}")
    assert not missing, f"docs/ops.md does not mention: {', '.join(missing)}"


@pytest.mark.skipif(not MP_OPT.exists(), reason=f"{MP_OPT} is not built")
def test_precision_doc_has_the_builtin_policy():
    table = subprocess.run(
        [str(MP_OPT), "--print-precision-policy"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    doc = (ROOT / "docs" / "precision.md").read_text()
    missing = [row for row in table.splitlines() if row not in doc]
    assert not missing, "docs/precision.md is out of date; regenerate the table " \
        "with `mp-opt --print-precision-policy`. Missing rows:\n" + "\n".join(missing)
