"""TopK and OneHot through ``mp-run`` against onnxruntime.

The ONNX node tests (test_top_k*, test_onehot_*) cover one shape each; these
add what they do not: ties (the lower index first), NaN (above every number,
for largest and smallest alike), integer inputs, rows of thousands, a
negative axis, ``sorted = 0`` (mp returns the sorted order, which is the
reference's), k read at run time (``--dynamic-shapes``; by default mp-run
compiles a small k in), and k out of range, which must stop the compile or
the run with a message naming the node. OneHot: negative indices (counting
from depth), indices outside [-depth, depth) (all-off rows, not an error),
float indices and depth, int32 values, and a depth read at run time.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from mp.tools import build_tool

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

MP_RUN = build_tool("mp-run")


@pytest.fixture(autouse=True)
def _needs_mp_run():
    if not MP_RUN.is_file():
        pytest.skip(f"mp-run is not built ({MP_RUN} missing; set MP_BUILD_DIR or build mp)")


def _model(nodes, inputs, outputs, initializers=(), opset=11):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(tmp_path: Path, model, feeds, extra_args=()):
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    out = tmp_path / "out"
    args = [str(MP_RUN), str(path), "--output-dir", str(out), *extra_args]
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def _reference(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def _check(tmp_path, model, feeds, extra_args=(), reference=None):
    """Runs `model` with mp-run and compares every output exactly (NaN equal
    to NaN) with onnxruntime on `reference` (default: the same model)."""
    proc = _run(tmp_path, model, feeds, extra_args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    want = _reference(reference or model, feeds)
    for name, expected in want.items():
        got = np.load(tmp_path / "out" / f"{name}.npy")
        assert got.dtype == expected.dtype, name
        np.testing.assert_array_equal(got, expected, err_msg=name)


# ----------------------------------------------------------------------------
# TopK
# ----------------------------------------------------------------------------

def _topk(x_type, x_shape, k=None, opset=11, name="topk", **attrs):
    """TopK of input x; k a constant initializer when given, else input k."""
    inits = []
    if k is not None:
        inits.append(helper.make_tensor("k", TensorProto.INT64, [1], [k]))
    inputs = [helper.make_tensor_value_info("x", x_type, x_shape)]
    if k is None:
        inputs.append(helper.make_tensor_value_info("k", TensorProto.INT64, [1]))
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], name=name, **attrs)
    return _model([node], inputs,
                  [helper.make_tensor_value_info("values", x_type, None),
                   helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
                  inits, opset)


def _ties_and_nan():
    # Repeated values (ties), NaN twice, +-inf, and -0.0 next to 0.0.
    row = [1.0, np.nan, 3.0, np.nan, 3.0, -np.inf, 0.0, -0.0, 3.0, np.inf, 1.0, -2.0]
    x = np.array([row, row[::-1], [5.0] * len(row)], np.float32)
    return x


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("k", [0, 1, 5, 12])
def test_topk_ties_and_nan(tmp_path, largest, k):
    x = _ties_and_nan()
    _check(tmp_path, _topk(TensorProto.FLOAT, list(x.shape), k, axis=-1, largest=largest),
           {"x": x})


@pytest.mark.parametrize("largest", [1, 0])
def test_topk_unsorted_returns_the_reference_order(tmp_path, largest):
    """sorted = 0 allows any order; mp gives the sorted one, ONNX's reference
    order, which onnxruntime returns for sorted = 1."""
    x = _ties_and_nan()
    model = _topk(TensorProto.FLOAT, list(x.shape), 6, axis=1, largest=largest, sorted=0)
    reference = _topk(TensorProto.FLOAT, list(x.shape), 6, axis=1, largest=largest, sorted=1)
    _check(tmp_path, model, {"x": x}, reference=reference)


@pytest.mark.parametrize("axis", [0, -2, 2])
@pytest.mark.parametrize("x_type,dtype", [(TensorProto.INT32, np.int32),
                                          (TensorProto.INT64, np.int64),
                                          (TensorProto.DOUBLE, np.float64)])
def test_topk_axes_and_types(tmp_path, axis, x_type, dtype):
    rng = np.random.default_rng(axis + 7)
    x = rng.integers(-4, 4, size=(5, 6, 7)).astype(dtype)  # many ties
    _check(tmp_path, _topk(x_type, list(x.shape), 3, axis=axis, largest=axis != 2), {"x": x})


def test_topk_long_rows(tmp_path):
    """Rows of thousands with many ties: the sort must be exact and quick."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 50, size=(4, 5000)).astype(np.float32)
    x[1, ::7] = np.nan
    _check(tmp_path, _topk(TensorProto.FLOAT, list(x.shape), 300, axis=1), {"x": x})


def test_topk_opset10_and_1(tmp_path):
    x = _ties_and_nan()
    _check(tmp_path, _topk(TensorProto.FLOAT, list(x.shape), 2, opset=10, axis=0), {"x": x})
    node = helper.make_node("TopK", ["x"], ["values", "indices"], axis=1, k=3)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                   [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
                   opset=9)
    (tmp_path / "v1").mkdir()
    _check(tmp_path / "v1", model, {"x": x})


@pytest.mark.parametrize("dynamic", [False, True], ids=["compiled-in", "run-time"])
@pytest.mark.parametrize("k", [0, 2, 12])
def test_topk_k_from_graph_input(tmp_path, dynamic, k):
    """k as a graph input: compiled in by default (static results), read at
    run time with --dynamic-shapes (results allocated at the run's size)."""
    x = _ties_and_nan()
    model = _topk(TensorProto.FLOAT, ["n", 12] if dynamic else list(x.shape), axis=1)
    _check(tmp_path, model, {"x": x, "k": np.array([k], np.int64)},
           ["--dynamic-shapes"] if dynamic else [])


def test_topk_constant_k_too_large_is_a_compile_error(tmp_path):
    x = np.zeros((3, 4), np.float32)
    proc = _run(tmp_path, _topk(TensorProto.FLOAT, [3, 4], 5, axis=1), {"x": x})
    assert proc.returncode != 0
    assert ("node 'topk' (TopK, ai.onnx v11): k = 5 is larger than the input's size 4 "
            "along axis 1") in proc.stdout + proc.stderr
    assert not (tmp_path / "out" / "values.npy").exists()


@pytest.mark.parametrize("k", [5, -1])
def test_topk_run_time_k_out_of_range_stops_the_run(tmp_path, k):
    x = np.zeros((3, 4), np.float32)
    proc = _run(tmp_path, _topk(TensorProto.FLOAT, ["a", "b"], axis=-1),
                {"x": x, "k": np.array([k], np.int64)}, ["--dynamic-shapes"])
    assert proc.returncode != 0
    assert ("mp: TopK (node 'topk'): k is out of range [0, d] for the input's size d "
            "along axis 1") in proc.stdout + proc.stderr
    assert not (tmp_path / "out" / "values.npy").exists()


# ----------------------------------------------------------------------------
# OneHot
# ----------------------------------------------------------------------------

def _onehot(index_type, index_shape, depth_type, depth_shape, value_type, depth=None, axis=-1):
    """OneHot of inputs indices, values and depth (an initializer if given)."""
    inputs = [helper.make_tensor_value_info("indices", index_type, index_shape),
              helper.make_tensor_value_info("values", value_type, [2])]
    inits = []
    if depth is None:
        inputs.append(helper.make_tensor_value_info("depth", depth_type, depth_shape))
    else:
        inits.append(helper.make_tensor("depth", depth_type, depth_shape, [depth]))
    node = helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], axis=axis)
    return _model([node], inputs, [helper.make_tensor_value_info("y", value_type, None)], inits)


INDICES = np.array([[0, 3, -1, -4], [4, -5, 2, 9]])  # -5, 4, 9 are out of [-4, 4)


@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
def test_onehot_negative_and_out_of_range_indices(tmp_path, axis):
    model = _onehot(TensorProto.INT64, [2, 4], TensorProto.INT64, [], TensorProto.FLOAT,
                    depth=4, axis=axis)
    _check(tmp_path, model, {"indices": INDICES.astype(np.int64),
                             "values": np.array([-1.5, 2.5], np.float32)})


@pytest.mark.parametrize("index_type,dtype", [(TensorProto.INT32, np.int32),
                                              (TensorProto.FLOAT, np.float32)])
def test_onehot_index_and_depth_types(tmp_path, index_type, dtype):
    """Float indices are truncated (2.7 -> 2, -1.5 -> -1); a float depth of
    4.9 is 4."""
    indices = np.array([[0.0, 3.0, -1.5, 2.7], [4.0, -5.0, 2.0, 9.0]]).astype(dtype)
    model = _onehot(index_type, [2, 4], TensorProto.FLOAT, [1], TensorProto.FLOAT,
                    depth=4.9, axis=1)
    _check(tmp_path, model, {"indices": indices, "values": np.array([0, 1], np.float32)})


def test_onehot_int32_values(tmp_path):
    model = _onehot(TensorProto.INT64, [2, 4], TensorProto.FLOAT, [], TensorProto.INT32, depth=6)
    _check(tmp_path, model, {"indices": INDICES.astype(np.int64),
                             "values": np.array([7, -3], np.int32)})


@pytest.mark.parametrize("dynamic", [False, True], ids=["compiled-in", "run-time"])
def test_onehot_depth_from_graph_input(tmp_path, dynamic):
    model = _onehot(TensorProto.INT64, ["n", 4] if dynamic else [2, 4], TensorProto.INT64, [1],
                    TensorProto.FLOAT, axis=-2)
    feeds = {"indices": INDICES.astype(np.int64), "values": np.array([0, 1], np.float32),
             "depth": np.array([5], np.int64)}
    _check(tmp_path, model, feeds, ["--dynamic-shapes"] if dynamic else [])
