"""Generate the small model and tensor files of test/Execution/Inputs.

Deterministic: running it twice gives byte-identical files (fixed seed, fixed
ONNX producer fields, no timestamps). Every file is a few hundred bytes.

The model (``add_matmul_softmax.onnx``, opset 18)::

    x: f32[2, 4]   w: f32[4, 3]
    s     = Add(x, b)            b: f32[4] initializer
    m     = MatMul(s, w)
    probs = Softmax(m, axis=-1)
    outputs: s (named "sum") and probs

The expected outputs are computed with numpy in float64 and rounded to
float32 -- never with mp -- and stored both as an ONNX test_data_set folder
(``test_data_set_0/input_N.pb``, ``output_N.pb``) and as ``.npy`` files.
``test/Execution/mp-run.mlir`` and ``test/Execution/mp-run-errors.mlir`` use
them, including the malformed inputs written here:

* ``x_int64.npy``   -- right shape, int64 dtype (the model wants float32);
* ``x_rank3.npy``   -- float32 of rank 3 (the model wants rank 2);
* ``garbage.npy``   -- bytes that are not a .npy file;
* ``truncated.npy`` -- a valid .npy header whose data is cut short;
* ``not_tensor.pb`` -- bytes that do not parse as an ONNX TensorProto;
* ``unsupported_op.onnx`` -- a model whose one node is an op ONNX does not
  have (``Foo``), for ``mp-run --test-dir``'s SKIP line.

    python -m mp.tools.make_run_inputs [-o test/Execution/Inputs]
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import REPO

DEFAULT_OUT = REPO / "test" / "Execution" / "Inputs"
MODEL = "add_matmul_softmax.onnx"


def make_model() -> onnx.ModelProto:
    b = np.array([0.5, -0.25, 1.0, 0.0], dtype=np.float32)
    nodes = [
        helper.make_node("Add", ["x", "b"], ["sum"], name="add"),
        helper.make_node("MatMul", ["sum", "w"], ["m"], name="matmul"),
        helper.make_node("Softmax", ["m"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "add_matmul_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info("sum", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("probs", TensorProto.FLOAT, [2, 3])],
        initializer=[numpy_helper.from_array(b, "b")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                          producer_name="mp-run-inputs", producer_version="1")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def make_unsupported_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Foo", ["x"], ["y"], name="foo")], "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="mp-run-inputs", producer_version="1")
    m.ir_version = 9
    return m


def make_tensors():
    rng = np.random.default_rng(20240611)
    x = rng.uniform(-2.0, 2.0, size=(2, 4)).astype(np.float32)
    w = rng.uniform(-1.0, 1.0, size=(4, 3)).astype(np.float32)
    b = np.array([0.5, -0.25, 1.0, 0.0], dtype=np.float64)
    s = x.astype(np.float64) + b
    m = s @ w.astype(np.float64)
    e = np.exp(m - m.max(axis=-1, keepdims=True))
    probs = e / e.sum(axis=-1, keepdims=True)
    return x, w, s.astype(np.float32), probs.astype(np.float32)


def _npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def _pb_bytes(a: np.ndarray, name: str) -> bytes:
    return numpy_helper.from_array(a, name).SerializeToString()


def files() -> dict[str, bytes]:
    x, w, s, probs = make_tensors()
    out = {
        MODEL: make_model().SerializeToString(),
        "unsupported_op.onnx": make_unsupported_model().SerializeToString(),
        "test_data_set_0/input_0.pb": _pb_bytes(x, "x"),
        "test_data_set_0/input_1.pb": _pb_bytes(w, "w"),
        "test_data_set_0/output_0.pb": _pb_bytes(s, "sum"),
        "test_data_set_0/output_1.pb": _pb_bytes(probs, "probs"),
        "x.npy": _npy_bytes(x),
        "w.npy": _npy_bytes(w),
        "x.pb": _pb_bytes(x, "x"),
        "expected_sum.npy": _npy_bytes(s),
        "expected_probs.npy": _npy_bytes(probs),
        "x_int64.npy": _npy_bytes(np.arange(8, dtype=np.int64).reshape(2, 4)),
        "x_rank3.npy": _npy_bytes(x.reshape(1, 2, 4)),
        "garbage.npy": b"this is not a numpy file\n",
        "truncated.npy": _npy_bytes(x)[:-8],
        # Field 1 (dims) as a length-delimited field with a length past the end.
        "not_tensor.pb": b"\x0a\xff\x01garbage",
    }
    # A wrong answer for --compare FAIL checks: probs off by 0.1 in one place.
    bad = probs.copy()
    bad[0, 0] += 0.1
    out["wrong_expected/input_0.pb"] = out["test_data_set_0/input_0.pb"]
    out["wrong_expected/input_1.pb"] = out["test_data_set_0/input_1.pb"]
    out["wrong_expected/output_0.pb"] = out["test_data_set_0/output_0.pb"]
    out["wrong_expected/output_1.pb"] = _pb_bytes(bad, "probs")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    for rel, data in files().items():
        p = args.out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    print(f"wrote {len(files())} files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
