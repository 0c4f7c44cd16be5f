"""mp-run --compare's default tolerances fit the size of each output.

In mixed precision (and for fp16 outputs) the absolute tolerance is
1e-2 x the reference's largest |value|, clamped to [1e-3, 1]: an output of
size 0.004 (openWakeWord's scores are that small) is judged at 4e-5, not at
an absolute 1e-2 that would pass any answer. References are matched to the
outputs by name (test/Execution/mp-run.mlir has the lit cases).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from conftest import BUILD, require_built

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

MP_RUN = BUILD / "bin" / "mp-run"


def _case(tmp_path, scale: float, error: float):
    """y = x * scale for x in [-1, 1): a test set whose reference for y is
    exact but for one element, off by `error`."""
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    s = numpy_helper.from_array(np.array(scale, np.float32), "s")
    graph = helper.make_graph([helper.make_node("Mul", ["x", "s"], ["y"], name="scale")],
                              "scaled", [x_info], [y_info], [s])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "model.onnx")
    x = np.random.default_rng(0).uniform(-1, 1, (4, 8)).astype(np.float32)
    y = x * np.float32(scale)
    y[1, 2] += error
    data = tmp_path / "test_data_set_0"
    data.mkdir()
    (data / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    (data / "output_0.pb").write_bytes(numpy_helper.from_array(y, "y").SerializeToString())
    return tmp_path / "model.onnx", data


def _compare(model, data, *args):
    return subprocess.run([str(MP_RUN), str(model), "--compare", str(data), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("scale, error, passes", [
    # 0.004-sized output: fp16 keeps ~2e-6 here; an error of 1e-3 is 25% of the
    # signal and fails (an absolute 1e-2 let it pass).
    (0.004, 1e-3, False),
    (0.004, 2e-5, True),
    # Outputs of size >= 1 keep the absolute 1e-2 (plus rtol 1e-2).
    (4.0, 5e-3, True),
    (4.0, 8e-2, False),
])
def test_mixed_tolerance_scales_with_the_output(tmp_path, scale, error, passes):
    require_built(MP_RUN)
    model, data = _case(tmp_path, scale, error)
    proc = _compare(model, data, "--precision", "mixed")
    assert (proc.returncode == 0) == passes, proc.stdout + proc.stderr
    if not passes:
        atol = 1e-2 * min(max(abs(scale) * 1.0, 1e-3), 1.0)
        assert "FAIL" in proc.stdout
        assert "1 elements beyond" in proc.stdout, proc.stdout
        # The message names the tolerance used, which follows the output's size.
        got = float(proc.stdout.split("atol=")[1].split(")")[0])
        assert got == pytest.approx(atol, rel=0.3), proc.stdout


def test_explicit_atol_wins(tmp_path):
    require_built(MP_RUN)
    model, data = _case(tmp_path, 0.004, 1e-3)
    assert _compare(model, data, "--precision", "mixed", "--atol", "2e-3").returncode == 0
