"""Forms that real exporters write (issue: run what real exporters produce),
each checked against onnxruntime on the same model and inputs.

* Results whose sizes depend on tensor values: NonZero, boolean-mask
  indexing as torch exports it (NonZero -> Transpose -> GatherND /
  ScatterND) and lengths computed from the data. With the inputs' shapes
  pinned (the default), what the input shapes decide is static and what the
  values decide stays dynamic automatically; outputs of run-time size come
  back in the size the run produced.
* TorchScript's If whose branches differ in rank (squeeze if dim is 1).
* onnxruntime's default-domain LayerNormalization below opset 17.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mp

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402


@pytest.fixture(autouse=True)
def _needs_capi():
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")


def _save(tmp_path, nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    return path


def _check(path, feeds, **compile_args):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    expected = dict(zip([o.name for o in sess.get_outputs()],
                        sess.run(None, feeds)))
    ours = mp.compile(path, "fp32", **compile_args).run(feeds)
    assert sorted(ours) == sorted(expected)
    for name, want in expected.items():
        assert ours[name].shape == want.shape, name
        np.testing.assert_allclose(ours[name], want, rtol=1e-6, atol=0,
                                   err_msg=name)


def _masked_model(tmp_path):
    """y[x > 0] = x[x > 0] * 2 and the selected values, as torch exports
    boolean-mask indexing."""
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [
        helper.make_node("Constant", [], ["z"], value=zero),
        helper.make_node("Constant", [], ["c2"], value=two),
        helper.make_node("Greater", ["x", "z"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "idx"], ["picked"]),
        helper.make_node("Mul", ["picked", "c2"], ["doubled"]),
        helper.make_node("ScatterND", ["x", "idx", "doubled"], ["y"]),
    ]
    return _save(
        tmp_path, nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t"])],
        [helper.make_tensor_value_info("nz", TensorProto.INT64, None),
         helper.make_tensor_value_info("picked", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "t"])])


@pytest.mark.parametrize("shape,positives", [((3, 5), 7), ((2, 4), 0),
                                             ((1, 6), 6)])
def test_boolean_mask_indexing(tmp_path, shape, positives):
    """NonZero's count (none, some, all) sizes GatherND's result; ScatterND
    writes the doubled values back: all three outputs match onnxruntime."""
    rng = np.random.default_rng(positives)
    x = -rng.uniform(0.5, 2.0, size=shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, positives, replace=False)] *= -1
    _check(_masked_model(tmp_path), {"x": x})


def test_nonzero_nan_and_ints(tmp_path):
    """NaN is not zero (numpy and onnxruntime agree); integer and rank-3
    inputs give one coordinate row per dim."""
    path = _save(
        tmp_path,
        [helper.make_node("NonZero", ["f"], ["fi"]),
         helper.make_node("NonZero", ["i"], ["ii"])],
        [helper.make_tensor_value_info("f", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("i", TensorProto.INT32, [2, 2, 3])],
        [helper.make_tensor_value_info("fi", TensorProto.INT64, None),
         helper.make_tensor_value_info("ii", TensorProto.INT64, None)])
    f = np.array([[0, np.nan, 0], [-0.0, 1e-30, 0]], np.float32)
    i = np.array([[[0, 3, 0], [0, 0, 0]], [[-1, 0, 0], [0, 0, 7]]], np.int32)
    _check(path, {"f": f, "i": i})


def test_length_from_values(tmp_path):
    """A length regulator in miniature (VITS): durations -> ReduceSum ->
    Range -> ConstantOfShape-free expansion; the output length is the sum of
    the durations, known only from their values."""
    nodes = [
        helper.make_node("ReduceSum", ["d"], ["total"], keepdims=0),
        helper.make_node("Range", ["zero", "total", "one"], ["frames"]),
        helper.make_node("CumSum", ["d", "axis"], ["ends"]),
        helper.make_node("Unsqueeze", ["frames", "ax1"], ["f2"]),
        helper.make_node("GreaterOrEqual", ["f2", "ends"], ["past"]),
        helper.make_node("Cast", ["past"], ["pasti"], to=TensorProto.INT64),
        helper.make_node("ReduceSum", ["pasti", "ax1"], ["token"], keepdims=0),
    ]
    inits = [helper.make_tensor("zero", TensorProto.INT64, [], [0]),
             helper.make_tensor("one", TensorProto.INT64, [], [1]),
             helper.make_tensor("axis", TensorProto.INT64, [], [0]),
             helper.make_tensor("ax1", TensorProto.INT64, [1], [1])]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("d", TensorProto.INT64, ["n"])],
        [helper.make_tensor_value_info("token", TensorProto.INT64, None)],
        inits)
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph,
                                opset_imports=[helper.make_opsetid("", 17)]),
              path)
    for d in ([2, 0, 3, 1], [5], [1, 1, 1, 1, 1, 1]):
        _check(path, {"d": np.array(d, np.int64)})


def test_if_branches_of_different_rank(tmp_path):
    """TorchScript's squeeze-if-dim-is-1 If (speecht5_decoder_step_ts): the
    branches differ in rank, the condition follows from the input shape, so
    each compiled variant imports the branch it takes."""
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    one = helper.make_tensor("one", TensorProto.INT64, [], [1])
    then_branch = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "axes"], ["s"])], "then", [],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, ["b", 4])],
        [axes])
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["i"])], "else", [],
        [helper.make_tensor_value_info("i", TensorProto.FLOAT, ["b", "n", 4])])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["dim"], axis=0),
        helper.make_node("Equal", ["dim", "one"], ["is_one"]),
        helper.make_node("If", ["is_one"], ["y"], then_branch=then_branch,
                         else_branch=else_branch),
        helper.make_node("ReduceSum", ["y"], ["total"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "n", 4])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [])],
        [one])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph,
                                opset_imports=[helper.make_opsetid("", 17)]),
              path)
    rng = np.random.default_rng(1)
    for n in (1, 3):
        _check(path, {"x": rng.standard_normal((2, n, 4)).astype(np.float32)})


def test_layer_norm_below_opset_17(tmp_path):
    """onnxruntime's default-domain LayerNormalization at opset 13 (what its
    transformers optimizer writes) runs like onnxruntime."""
    path = _save(
        tmp_path,
        [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"],
                          axis=-1, epsilon=1e-5)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 8]),
         helper.make_tensor_value_info("g", TensorProto.FLOAT, [8]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 8])],
        opset=13)
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((2, 5, 8)).astype(np.float32),
             "g": rng.standard_normal(8).astype(np.float32),
             "b": rng.standard_normal(8).astype(np.float32)}
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)[0]
    got = mp.compile(path, "fp32").run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


EXPORTS = Path(__file__).resolve().parents[2] / "test" / "Inputs" / "exports"


@pytest.mark.parametrize("name,feeds", [
    # A bidirectional batch_first GRU front end (TorchScript wraps it in
    # Transposes and a ConstantOfShape initial state; dynamo does not).
    ("gru_ts.onnx", {"x": (2, 7, 8)}),
    ("gru_dynamo.onnx", {"x": (2, 7, 8)}),
    ("topk_ts.onnx", {"logits": (2, 50)}),
])
def test_torch_exports(name, feeds):
    """Small real torch exports (test/Inputs/exports/make_exports.py)."""
    rng = np.random.default_rng(0)
    arrays = {k: rng.standard_normal(shape).astype(np.float32) for k, shape in feeds.items()}
    path = EXPORTS / name
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    expected = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, arrays)))
    ours = mp.compile(path, "fp32").run(arrays)
    assert sorted(ours) == sorted(expected)
    for out, want in expected.items():
        assert ours[out].shape == want.shape, out
        np.testing.assert_allclose(ours[out], want, rtol=1e-5, atol=1e-6, err_msg=out)


def test_reshape_merging_dynamic_dims(tmp_path):
    """x.view(-1, x.size(-1)) with batch and sequence dynamic (GPT-2's
    Conv1D): the run-time shape merges the first two dims, which the static
    types alone cannot tell from merging the last two."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], start=-1),
        helper.make_node("Constant", [], ["minus_one"],
                         value=helper.make_tensor("m", TensorProto.INT64, [1], [-1])),
        helper.make_node("Concat", ["minus_one", "shape"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    path = _save(tmp_path, nodes,
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s", 8])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])])
    x = np.random.default_rng(0).standard_normal((1, 4, 8)).astype(np.float32)
    _check(path, {"x": x}, dynamic_shapes=True)
