"""mp's compile-time f32 -> f16 weight conversion against numpy, bit for bit.

The values cover every rounding regime of binary16: normal numbers with
ties to even, the largest finite values, subnormals, the smallest values
that still round up, signed zeros, plus random values across the fp16
range. mp converts a constant that an op forced to f16 reads
(--mp-mixed-precision with a node override), and the converted constant is
printed as hex.
"""

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import BUILD

ROOT = Path(__file__).resolve().parents[2]
MP_OPT = BUILD / "bin" / "mp-opt"


def _values():
    rng = np.random.default_rng(0)
    one_ulp = np.float32(2.0**-10)
    special = np.array(
        [
            0.0, -0.0, 1.0, -1.0,
            1.0 + one_ulp / 2,          # tie: rounds to even (1.0)
            1.0 + 3 * one_ulp / 2,      # tie: rounds to even (1 + 2 ulp)
            65504.0, -65504.0, 65519.0,  # largest finite and just below inf
            2.0**-14, 2.0**-14 * 1.5,    # smallest normal
            2.0**-24, 2.0**-24 * 1.5, 2.0**-24 * 2.5,  # subnormals, ties
            2.0**-25 * 1.0001,           # just above half the smallest: rounds up
            0.1, 1.0 / 3.0, np.pi, 6.1e-5, 3.0e-5,
        ],
        dtype=np.float32,
    )
    scales = [1e-4, 1e-2, 1.0, 1e2, 1e4]
    randoms = np.concatenate(
        [rng.standard_normal(400).astype(np.float32) * s for s in scales]
    )
    randoms = randoms[np.abs(randoms) < 65000]
    return np.concatenate([special, randoms]).astype(np.float32)


@pytest.mark.skipif(not MP_OPT.exists(), reason=f"{MP_OPT} is not built")
def test_weight_conversion_matches_numpy(tmp_path):
    values = _values()
    n = values.size
    hexdata = "0x" + values.tobytes().hex().upper()
    (tmp_path / "policy.json").write_text('{"nodes": {"add0": {"compute": "f16"}}}')
    (tmp_path / "t.mlir").write_text(
        f"""func.func @f(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %c = mp.constant dense<"{hexdata}"> : tensor<{n}xf32>
  %0 = mp.add %x, %c : (tensor<{n}xf32>, tensor<{n}xf32>) -> tensor<{n}xf32> loc("add0")
  return %0 : tensor<{n}xf32>
}}
"""
    )
    out = subprocess.run(
        [
            str(MP_OPT),
            str(tmp_path / "t.mlir"),
            f"--mp-mixed-precision=policy={tmp_path / 'policy.json'}",
            "--mlir-print-elementsattrs-with-hex-if-larger=1",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    match = re.search(r'mp\.constant dense<"0x([0-9A-F]+)"> : tensor<(\d+)xf16>', out)
    assert match, "no f16 constant in:\n" + out
    got = np.frombuffer(bytes.fromhex(match.group(1)), dtype=np.uint16)
    want = values.astype(np.float16).view(np.uint16)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, "\n".join(
        f"{values[i]!r}: mp 0x{got[i]:04x}, numpy 0x{want[i]:04x}" for i in bad[:20]
    )
