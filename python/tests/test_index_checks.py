"""Indices read from data are checked: Gather, GatherElements, GatherND and
ScatterND through ``mp-run`` and an ``mp-compile`` library.

An index outside [-d, d) (d the data's size along the indexed axis) must
stop the run with a message naming the node, the op and the range, never
read or write out of bounds; constant indices out of range stop the
compile. Negative indices in range count from the end, as onnxruntime
does, at fixed and at run-time sizes (``--dynamic-shapes``). A library
returns the failed check as the run's error (``mp.Error``, ``mp-run``'s
exit status 2) instead of aborting the process.
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
MP_COMPILE = build_tool("mp-compile")


@pytest.fixture(autouse=True)
def _needs_mp_run():
    if not MP_RUN.is_file():
        pytest.skip(f"mp-run is not built ({MP_RUN} missing; set MP_BUILD_DIR or build mp)")


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(op, inputs, out_shape, initializers=(), opset=18, **attrs):
    """One `op` node named after it in lower case, over `inputs`
    [(name, elem, shape)], with float output y."""
    node = helper.make_node(op, [n for n, _, _ in inputs], ["y"], name=op.lower(), **attrs)
    inits = list(initializers)
    init_names = {t.name for t in inits}
    graph = helper.make_graph(
        [node], op.lower(),
        [_info(n, e, s) for n, e, s in inputs if n not in init_names],
        [_info("y", TensorProto.FLOAT, out_shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(tmp_path: Path, model, feeds, extra_args=()):
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    args = [str(MP_RUN), str(path), "--output-dir", str(tmp_path / "out"), *extra_args]
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def _reference(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


F, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32
RNG = np.random.default_rng(3)


# Each case: the op, its inputs, output shape and attributes; feeds with
# negative indices in range; the same feeds with one index out of range; and
# the message a failed check gives (static sizes).
def _gather():
    data = RNG.standard_normal((4, 50)).astype(np.float32)
    good = np.array([[-50, 49, -1], [0, -2, 7]], np.int64)
    bad = good.copy()
    bad[1, 2] = 50
    return dict(op="Gather", inputs=[("data", F, [4, 50]), ("indices", I64, [2, 3])],
                dyn=[("data", F, ["n", "m"]), ("indices", I64, ["a", "b"])],
                out=[4, 2, 3], attrs=dict(axis=1),
                good={"data": data, "indices": good}, bad={"data": data, "indices": bad},
                message="Gather (node 'gather'): an index is out of range [-50, 50) "
                        "for axis 1 of the data, of size 50",
                dyn_message="Gather (node 'gather'): an index is out of range [-d, d) "
                            "for axis 1 of the data, of size d (known at run time)")


def _gather_elements():
    data = RNG.standard_normal((3, 5)).astype(np.float32)
    good = np.array([[-5, 4], [-1, 0], [2, -3]], np.int32)
    bad = good.copy()
    bad[2, 0] = -6
    return dict(op="GatherElements", inputs=[("data", F, [3, 5]), ("indices", I32, [3, 2])],
                dyn=[("data", F, ["n", "m"]), ("indices", I32, ["n", "k"])],
                out=[3, 2], attrs=dict(axis=-1),
                good={"data": data, "indices": good}, bad={"data": data, "indices": bad},
                message="GatherElements (node 'gatherelements'): an index is out of range "
                        "[-5, 5) for axis 1 of the data, of size 5",
                dyn_message="GatherElements (node 'gatherelements'): an index is out of "
                            "range [-d, d) for axis 1 of the data")


def _gather_nd():
    data = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    good = np.array([[[-3, -4], [2, 3], [0, -1]], [[1, 0], [-1, 2], [-2, -2]]], np.int64)
    bad = good.copy()
    bad[1, 1, 1] = 4  # the second entry indexes axis 2, of size 4
    return dict(op="GatherND", inputs=[("data", F, [2, 3, 4, 5]), ("indices", I64, [2, 3, 2])],
                dyn=[("data", F, ["b", "n", "m", 5]), ("indices", I64, ["b", "k", 2])],
                out=[2, 3, 5], attrs=dict(batch_dims=1),
                good={"data": data, "indices": good}, bad={"data": data, "indices": bad},
                message="GatherND (node 'gathernd'): an index tuple is out of range: its "
                        "entry j must lie in [-d_j, d_j) for the data's axes 1..2 of sizes "
                        "d_j = (3, 4)",
                dyn_message="GatherND (node 'gathernd'): an index tuple is out of range")


def _scatter_nd():
    data = RNG.standard_normal((6, 3)).astype(np.float32)
    updates = RNG.standard_normal((2, 3)).astype(np.float32)
    good = np.array([[-6], [4]], np.int64)
    bad = np.array([[-7], [4]], np.int64)
    return dict(op="ScatterND", inputs=[("data", F, [6, 3]), ("indices", I64, [2, 1]),
                                        ("updates", F, [2, 3])],
                dyn=[("data", F, ["n", 3]), ("indices", I64, ["k", 1]), ("updates", F, ["k", 3])],
                out=[6, 3], attrs={},
                good={"data": data, "indices": good, "updates": updates},
                bad={"data": data, "indices": bad, "updates": updates},
                message="ScatterND (node 'scatternd'): an index is out of range [-6, 6) "
                        "for axis 0 of the data, of size 6",
                dyn_message="ScatterND (node 'scatternd'): an index is out of range [-d, d) "
                            "for axis 0 of the data")


CASES = {"gather": _gather, "gather_elements": _gather_elements, "gather_nd": _gather_nd,
         "scatter_nd": _scatter_nd}


def _case_model(case, dynamic=False):
    inputs = case["dyn"] if dynamic else case["inputs"]
    out = None if dynamic else case["out"]
    return _model(case["op"], inputs, out, **case["attrs"])


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", CASES)
def test_negative_indices_match_onnxruntime(tmp_path, name, dynamic):
    case = CASES[name]()
    model = _case_model(case, dynamic)
    proc = _run(tmp_path, model, case["good"], ["--dynamic-shapes"] if dynamic else [])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    want = _reference(_case_model(case), case["good"])
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), want)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", CASES)
def test_out_of_range_index_stops_the_run(tmp_path, name, dynamic):
    case = CASES[name]()
    proc = _run(tmp_path, _case_model(case, dynamic), case["bad"],
                ["--dynamic-shapes"] if dynamic else [])
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert proc.returncode > 0, f"the process died of signal {-proc.returncode}: {output}"
    assert case["dyn_message" if dynamic else "message"] in output
    assert not (tmp_path / "out" / "y.npy").exists()


@pytest.mark.parametrize("name", CASES)
def test_constant_index_out_of_range_stops_the_compile(tmp_path, name):
    case = CASES[name]()
    indices = case["bad"]["indices"]
    init = helper.make_tensor("indices", I64 if indices.dtype == np.int64 else I32,
                              indices.shape, indices.flatten().tolist())
    model = _model(case["op"], case["inputs"], case["out"], [init], **case["attrs"])
    feeds = {k: v for k, v in case["bad"].items() if k != "indices"}
    proc = _run(tmp_path, model, feeds)
    output = proc.stdout + proc.stderr
    assert proc.returncode > 0, output
    assert case["message"] in output
    assert "constant index" in output


@pytest.mark.parametrize("name,dynamic", [("gather", False), ("scatter_nd", True)],
                         ids=["gather-static", "scatter_nd-dynamic"])
def test_library_returns_the_failed_check(tmp_path, name, dynamic):
    """A failed check in an mp-compile library is the run's error, not an
    abort: the process goes on and the next run with good indices works
    (mp_model_run, and mp_model_run_shaped for dims fixed at run time)."""
    import mp

    if not MP_COMPILE.is_file() or not mp.library_path().is_file():
        pytest.skip("mp-compile or libMPCAPI.so is not built")
    case = CASES[name]()
    onnx.save(_case_model(case, dynamic), tmp_path / "model.onnx")
    lib = tmp_path / "libmodel.so"
    proc = subprocess.run([str(MP_COMPILE), str(tmp_path / "model.onnx"), "-o", str(lib),
                           *(["--dynamic-shapes"] if dynamic else [])],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    message = case["dyn_message" if dynamic else "message"]
    with mp.load(lib) as model:
        with pytest.raises(mp.Error) as error:
            model.run(case["bad"])
        assert message in str(error.value)
        got = model.run(case["good"])
    np.testing.assert_array_equal(got["y"], _reference(_case_model(case), case["good"]))
    # mp-run on the library: exit status 2 (MP_ERROR_INVALID), the message.
    for name, value in case["bad"].items():
        np.save(tmp_path / f"{name}.npy", value)
    proc = subprocess.run([str(MP_RUN), str(lib),
                           *[a for n in case["bad"] for a in ("--input", f"{n}={tmp_path / n}.npy")]],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stdout + proc.stderr


@pytest.mark.parametrize("bad_position", [8, -1])
def test_rotary_position_out_of_range_stops_the_run(tmp_path, bad_position):
    """RotaryEmbedding-23: position ids index the rows of the cos and sin
    caches and must lie in [0, max_pos) (no counting from the end)."""
    x = RNG.standard_normal((1, 2, 4, 16)).astype(np.float32)
    cos = RNG.standard_normal((8, 8)).astype(np.float32)
    sin = RNG.standard_normal((8, 8)).astype(np.float32)
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], name="rope")
    graph = helper.make_graph(
        [node], "rope",
        [_info("x", F, [1, 2, 4, 16]), _info("cos", F, [8, 8]), _info("sin", F, [8, 8]),
         _info("pos", I64, [1, 4])],
        [_info("y", F, [1, 2, 4, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    good = np.array([[0, 3, 5, 7]], np.int64)
    proc = _run(tmp_path, model, {"x": x, "cos": cos, "sin": sin, "pos": good})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = good.copy()
    bad[0, 2] = bad_position
    (tmp_path / "out" / "y.npy").unlink()
    proc = _run(tmp_path, model, {"x": x, "cos": cos, "sin": sin, "pos": bad})
    output = proc.stdout + proc.stderr
    assert proc.returncode > 0, output
    assert ("RotaryEmbedding (node 'rope'): a position id is out of range [0, 8): the cos "
            "and sin caches have 8 rows") in output
    assert not (tmp_path / "out" / "y.npy").exists()
