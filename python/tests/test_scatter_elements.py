"""ScatterElements through ``mp-run`` against ONNX's reference implementation.

The ONNX node tests (test_scatter_elements_*) cover the reductions at fixed
shapes; these add what they do not: int32 and negative indices along a
middle axis, repeated indices (updates apply in row-major order), run-time
sizes (``--dynamic-shapes``), and an index out of range, which must stop
the run with a message naming the node rather than write out of bounds.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from mp.tools import build_tool

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

MP_RUN = build_tool("mp-run")


@pytest.fixture(autouse=True)
def _needs_mp_run():
    if not MP_RUN.is_file():
        pytest.skip(f"mp-run is not built ({MP_RUN} missing; set MP_BUILD_DIR or build mp)")


def _model(data_shape, index_shape, index_type, opset=18, **attrs):
    node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"],
                            name="scatter", **attrs)
    graph = helper.make_graph(
        [node], "scatter_elements",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, data_shape),
         helper.make_tensor_value_info("indices", index_type, index_shape),
         helper.make_tensor_value_info("updates", TensorProto.FLOAT, index_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, data_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(tmp_path: Path, model, feeds, extra_args=()):
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    args = [str(MP_RUN), str(path), "--output-dir", str(tmp_path / "out"), *extra_args]
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def _feeds(rng, data_shape, index_shape, axis, index_dtype):
    size = data_shape[axis]
    return {
        "data": rng.standard_normal(data_shape).astype(np.float32),
        # Negative ones count from the end; repeats exercise the order.
        "indices": rng.integers(-size, size, index_shape).astype(index_dtype),
        "updates": rng.standard_normal(index_shape).astype(np.float32),
    }


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_matches_reference(tmp_path, reduction, dynamic):
    rng = np.random.default_rng(1)
    data_shape, index_shape, axis = [3, 5, 4], [3, 7, 2], 1
    feeds = _feeds(rng, data_shape, index_shape, axis, np.int32)
    shapes = (["a", 5, "c"], ["a", "b", "d"]) if dynamic else (data_shape, index_shape)
    model = _model(*shapes, TensorProto.INT32, axis=-2, reduction=reduction)
    proc = _run(tmp_path, model, feeds, ["--dynamic-shapes"] if dynamic else [])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (want,) = ReferenceEvaluator(_model(data_shape, index_shape, TensorProto.INT32, axis=-2,
                                        reduction=reduction)).run(None, feeds)
    got = np.load(tmp_path / "out" / "y.npy")
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_out_of_range_index_stops_the_run(tmp_path):
    feeds = {"data": np.zeros((4, 3), np.float32),
             "indices": np.array([[0, 4, 1]], np.int64),
             "updates": np.ones((1, 3), np.float32)}
    proc = _run(tmp_path, _model([4, 3], [1, 3], TensorProto.INT64), feeds)
    assert proc.returncode != 0
    assert ("ScatterElements (node 'scatter'): an index is out of range [-d, d) for the "
            "data's size d along axis 0") in proc.stdout + proc.stderr
    assert not (tmp_path / "out" / "y.npy").exists()
