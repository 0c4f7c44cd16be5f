"""Every Attention and FlexAttention node test of the onnx wheel (ONNX's own
references) passes with mp-fuse-attention applied first (`mp-run --test-dir
--fuse-attention`), as it does unfused: the `*_expanded` variants are the
decomposed graphs the pass rewrites into mp.attention."""

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MP_RUN = REPO / "build" / "bin" / "mp-run"
MP_OPT = REPO / "build" / "bin" / "mp-opt"


def _node_dir() -> Path:
    onnx = pytest.importorskip("onnx")
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"


def test_fused_attention_node_tests(tmp_path):
    if not MP_RUN.is_file() or not MP_OPT.is_file():
        pytest.skip("build/bin/mp-run or mp-opt is not built")
    tree = tmp_path / "tree"
    tree.mkdir()
    cases = sorted(_node_dir().glob("test_*attention*"))
    assert cases, "no attention node tests in the onnx wheel"
    for case in cases:
        (tree / case.name).symlink_to(case)
    # The decomposed FlexAttention graph is one that fuses.
    report = tmp_path / "fusion.json"
    subprocess.run([str(MP_OPT), str(tree / "test_flexattention_expanded_ver26" / "model.onnx"),
                    f"--mp-fuse-attention=report={report}", "-o", "/dev/null"],
                   check=True, capture_output=True)
    assert '"nodes"' in report.read_text()
    run = subprocess.run([str(MP_RUN), "--test-dir", str(tree), "--fuse-attention",
                          "--timeout", "120"], capture_output=True, text=True)
    totals = re.search(r"(\d+) passed, (\d+) failed, (\d+) skipped", run.stdout)
    assert totals, run.stdout[-2000:] + run.stderr[-2000:]
    passed, failed = int(totals.group(1)), int(totals.group(2))
    failures = [line for line in run.stdout.splitlines() if line.startswith("FAIL")]
    assert failed == 0, "\n".join(failures)
    assert passed >= 130, run.stdout[-2000:]  # 139 pass here; the rest are unsupported ops
