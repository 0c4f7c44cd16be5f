"""Loop, Scan and the sequence ops, unrolled at import, against onnxruntime.

mp unrolls Loop and Scan when it imports a model with its input shapes (and
the values of small integer inputs): the trip counts exporters write follow
from those. Sequences become lists of tensors. These models cover what the
ONNX node tests do not: a trip count from an input's shape, a condition the
body computes (early exit), ``repeat_interleave`` by counts read from the data
(a real TorchScript export: a Loop over SequenceInsert whose sizes are known
only at run time), reversed Scan directions and axes, and the errors when a loop cannot
be unrolled.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mp

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


@pytest.fixture(autouse=True)
def _needs_capi():
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")


def _const(name, dtype, dims, values):
    return helper.make_node("Constant", [], [name],
                            value=helper.make_tensor(name + "_v", dtype, dims, values))


def _save(tmp_path, nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    return path


def _check(path, feeds, **compile_args):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    expected = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    ours = mp.compile(path, "fp32", **compile_args).run(feeds)
    assert sorted(ours) == sorted(expected)
    for name, want in expected.items():
        assert ours[name].shape == want.shape, name
        np.testing.assert_allclose(ours[name], want, rtol=1e-6, atol=1e-6, err_msg=name)
    return ours


def _prefix_sum_loop(tmp_path):
    """y = running sum over the rows of x, trip count = x.shape[0]: the
    carried sum and every partial sum (a scan output)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
         helper.make_node("Add", ["acc_in", "row"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["partial"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond_in", B, []),
         helper.make_tensor_value_info("acc_in", F, [3])],
        [helper.make_tensor_value_info("cond_out", B, []),
         helper.make_tensor_value_info("acc_out", F, [3]),
         helper.make_tensor_value_info("partial", F, [3])])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        _const("zero", I64, [], [0]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        _const("init", F, [3], [0.5, -1.0, 2.0]),
        helper.make_node("Loop", ["n", "", "init"], ["total", "partials"],
                         name="rows", body=body),
    ]
    return _save(tmp_path, nodes,
                 [helper.make_tensor_value_info("x", F, ["n", 3])],
                 [helper.make_tensor_value_info("total", F, [3]),
                  helper.make_tensor_value_info("partials", F, ["n", 3])])


@pytest.mark.parametrize("rows", [4, 1, 0])
def test_trip_count_from_an_input_shape(tmp_path, rows):
    x = np.random.default_rng(0).standard_normal((rows, 3)).astype(np.float32)
    _check(_prefix_sum_loop(tmp_path), {"x": x})


def test_condition_computed_by_the_body_stops_early(tmp_path):
    """A while loop: M is huge, the body stops once the value exceeds the
    limit (given as a small integer input, compiled in)."""
    body = helper.make_graph(
        [_const("two", I64, [], [2]),
         helper.make_node("Mul", ["v_in", "two"], ["v_out"]),
         helper.make_node("Less", ["v_out", "limit"], ["cond_out"]),
         helper.make_node("Identity", ["v_out"], ["trace"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("cond_in", B, []),
         helper.make_tensor_value_info("v_in", I64, [])],
        [helper.make_tensor_value_info("cond_out", B, []),
         helper.make_tensor_value_info("v_out", I64, []),
         helper.make_tensor_value_info("trace", I64, [])])
    nodes = [
        _const("m", I64, [], [1 << 40]),
        _const("go", B, [], [True]),
        helper.make_node("Loop", ["m", "go", "start"], ["v", "trace"], body=body),
    ]
    path = _save(tmp_path, nodes,
                 [helper.make_tensor_value_info("start", I64, []),
                  helper.make_tensor_value_info("limit", I64, [])],
                 [helper.make_tensor_value_info("v", I64, []),
                  helper.make_tensor_value_info("trace", I64, ["k"])])
    ours = _check(path, {"start": np.array(3, np.int64), "limit": np.array(100, np.int64)})
    assert ours["trace"].tolist() == [6, 12, 24, 48, 96, 192]


EXPORTS = Path(__file__).resolve().parents[2] / "test" / "Inputs" / "exports"
# torch.repeat_interleave(x, counts, dim=0) as the TorchScript exporter writes
# it (test/Inputs/exports/make_exports.py): SplitToSequence of the counts and
# rows, a Loop over them that inserts Expand(row, [1, count, 4]) reshaped to
# [count, 4] into a sequence, then ConcatFromSequence. The counts are data:
# the result's length is known only at run time.
REPEAT_INTERLEAVE = EXPORTS / "repeat_interleave_ts.onnx"


@pytest.mark.parametrize("counts", [[2, 0, 3], [1, 1, 1], [0, 0, 5]])
def test_repeat_interleave_by_counts_from_the_data(tmp_path, counts):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    ours = _check(REPEAT_INTERLEAVE, {"x": x, "counts": np.array(counts, np.int64)})
    assert ours["y"].shape == (sum(counts), 4)


def test_negative_count_stops_the_run():
    """A negative computed size (Expand to [1, -2, 4]; torch's export maps
    -1 to 1) stops the run with an error naming the node instead of
    allocating 2^64 elements."""
    model = mp.compile(REPEAT_INTERLEAVE, "fp32")
    x = np.ones((2, 4), np.float32)
    with pytest.raises(mp.Error, match=r"Expand \(node '/Expand_1'\): entry 1 of the "
                                       r"shape is negative or does not broadcast"):
        model.run({"x": x, "counts": np.array([1, -2], np.int64)})


def test_script_loop_stacks_running_sums():
    """A torch.jit.script for-loop over x.size(0) (Loop whose scan is a
    sequence, ConcatFromSequence with new_axis)."""
    x = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
    ours = _check(EXPORTS / "script_loop_ts.onnx", {"x": x})
    np.testing.assert_allclose(ours["y"], np.cumsum(x, axis=0), rtol=1e-6, atol=1e-6)


def _scan(tmp_path, opset, a_shape, out_shapes, **attrs):
    """A Scan with two scanned inputs: running max of a over its rows (or
    columns) and a reversed pass over b; scan outputs stacked on the axes."""
    body = helper.make_graph(
        [helper.make_node("Max", ["m_in", "a_t"], ["m_out"]),
         helper.make_node("Add", ["m_out", "b_t"], ["out1"]),
         helper.make_node("Mul", ["m_out", "b_t"], ["out2"])],
        "body",
        [helper.make_tensor_value_info("m_in", F, [2]),
         helper.make_tensor_value_info("a_t", F, [2]),
         helper.make_tensor_value_info("b_t", F, [2])],
        [helper.make_tensor_value_info("m_out", F, [2]),
         helper.make_tensor_value_info("out1", F, [2]),
         helper.make_tensor_value_info("out2", F, [2])])
    scan = helper.make_node("Scan", ["m0", "a", "b"], ["m", "o1", "o2"],
                            num_scan_inputs=2, body=body, **attrs)
    return _save(tmp_path, [scan],
                 [helper.make_tensor_value_info("m0", F, [2]),
                  helper.make_tensor_value_info("a", F, list(a_shape)),
                  helper.make_tensor_value_info("b", F, [5, 2])],
                 [helper.make_tensor_value_info("m", F, [2]),
                  helper.make_tensor_value_info("o1", F, out_shapes[0]),
                  helper.make_tensor_value_info("o2", F, out_shapes[1])], opset=opset)


@pytest.mark.parametrize("attrs,a_shape,out_shapes", [
    ({}, (5, 2), ([5, 2], [5, 2])),
    ({"scan_input_axes": [1, 0], "scan_input_directions": [0, 1]}, (2, 5),
     ([5, 2], [5, 2])),
    ({"scan_input_axes": [-1, 0], "scan_output_axes": [1, -2],
      "scan_output_directions": [1, 0]}, (2, 5), ([2, 5], [5, 2])),
])
def test_scan_axes_and_directions(tmp_path, attrs, a_shape, out_shapes):
    rng = np.random.default_rng(3)
    feeds = {"m0": np.full(2, -1.0, np.float32),
             "a": rng.standard_normal(a_shape).astype(np.float32),
             "b": rng.standard_normal((5, 2)).astype(np.float32)}
    _check(_scan(tmp_path, 16, a_shape, out_shapes, **attrs), feeds)


def test_split_to_sequence_and_the_sequence_ops(tmp_path):
    """SplitToSequence with sizes, then Insert/Erase/At/Length and a
    ConcatFromSequence on a new axis."""
    nodes = [
        _const("sizes", I64, [3], [1, 1, 2]),
        helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=1),
        _const("first", I64, [], [0]),
        helper.make_node("SequenceAt", ["parts", "first"], ["p0"]),
        _const("last", I64, [], [-1]),
        helper.make_node("SequenceErase", ["parts", "last"], ["two"]),
        helper.make_node("Neg", ["p0"], ["n0"]),
        helper.make_node("SequenceInsert", ["two", "n0", "first"], ["three"]),
        helper.make_node("SequenceLength", ["three"], ["count"]),
        helper.make_node("ConcatFromSequence", ["three"], ["stacked"], axis=-1,
                         new_axis=1),
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        helper.make_node("ConcatFromSequence", ["rows"], ["flat"], axis=0),
    ]
    path = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", F, [3, 4])],
                 [helper.make_tensor_value_info("count", I64, []),
                  helper.make_tensor_value_info("stacked", F, [3, 1, 3]),
                  helper.make_tensor_value_info("flat", F, [12])])
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    ours = _check(path, {"x": x})
    assert ours["count"] == 3 and ours["stacked"].shape == (3, 1, 3)


def test_loop_over_a_dynamic_dim_names_the_node(tmp_path):
    """With --dynamic-shapes the trip count is not known at import: the
    error names the node and says what works."""
    with pytest.raises(mp.Error) as err:
        mp.compile(_prefix_sum_loop(tmp_path), "fp32", dynamic_shapes=True).run(
            {"x": np.ones((2, 3), np.float32)})
    message = str(err.value)
    assert "node 'rows'" in message and "trip count is not known at import" in message
