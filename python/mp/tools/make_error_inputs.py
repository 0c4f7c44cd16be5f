"""Generate the small malformed models of test/Inputs/errors.

Deterministic: running it twice gives byte-identical files. Every file is a
few hundred bytes (each must stay < 20 KB). Each model exercises one error
path of the ONNX importer; test/Import/errors-files.mlir checks the message
and python/tests/test_import_errors.py checks the exit code is exactly 1.

    python -m mp.tools.make_error_inputs [-o test/Inputs/errors]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from . import REPO

DEFAULT_OUT = REPO / "test" / "Inputs" / "errors"
OPSET = [helper.make_opsetid("", 18)]


def _model(nodes, inputs, outputs, initializers=(), opset=None, ir_version=8):
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs),
                              initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=opset or OPSET,
                          producer_name="mp-error-inputs")
    m.ir_version = ir_version
    return m


def _add_model(init: onnx.TensorProto, shape=(4, 4)):
    """y = x + W where W is `init` (named "W")."""
    return _model(
        [helper.make_node("Add", ["x", "W"], ["y"], name="add")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        [init])


def _external_init(location: str, length: int = 64, offset: int = 0):
    t = onnx.TensorProto()
    t.name = "W"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([4, 4])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)),
                 ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def _valid_model():
    """A small valid model (~2 KB) used as the base of the truncation case."""
    w = np.arange(16 * 16, dtype=np.float32).reshape(16, 16) / 7.0
    init = onnx.numpy_helper.from_array(w, "W")
    return _model(
        [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
         helper.make_node("Relu", ["h"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])],
        [init])


def _unary(op, attrs=None, in_type=TensorProto.FLOAT, out_type=TensorProto.FLOAT,
           shape=(2, 3), domain="", opset=None, raw_attrs=()):
    node = helper.make_node(op, ["x"], ["y"], name=op.lower(), domain=domain,
                            **(attrs or {}))
    node.attribute.extend(raw_attrs)
    return _model(
        [node],
        [helper.make_tensor_value_info("x", in_type, list(shape))],
        [helper.make_tensor_value_info("y", out_type, list(shape))],
        opset=opset)


def build(out: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}

    # (a) random bytes
    rng = random.Random(1234)
    files["random_bytes.onnx"] = bytes(rng.randrange(256) for _ in range(512))

    # (b) a valid model cut in half
    valid = _valid_model().SerializeToString()
    files["truncated.onnx"] = valid[: len(valid) // 2]

    # (c) empty file
    files["empty.onnx"] = b""

    # (d) external data whose file does not exist
    files["extdata_missing.onnx"] = _add_model(
        _external_init("extdata_missing.bin")).SerializeToString()

    # (e) external data file shorter than offset + length
    files["extdata_short.onnx"] = _add_model(
        _external_init("extdata_short.bin", length=64)).SerializeToString()
    files["extdata_short.bin"] = bytes(range(16))  # 16 of the 64 bytes
    # (e') external data without a length: the tensor needs 64 bytes, the
    # file holds 16.
    t = _external_init("extdata_short.bin")
    del t.external_data[2]  # drop "length"
    files["extdata_short_nolength.onnx"] = _add_model(t).SerializeToString()
    # (e'') offset beyond the end of the file
    files["extdata_offset_past_end.onnx"] = _add_model(
        _external_init("extdata_target.bin", length=64, offset=4096)
    ).SerializeToString()

    # (f) locations escaping the model directory. The escaping target exists
    # and is long enough, so the only reason to refuse is the location itself.
    files["extdata_target.bin"] = np.zeros(16, np.float32).tobytes()
    files["extdata_escape.onnx"] = _add_model(
        _external_init("../errors/extdata_target.bin")).SerializeToString()
    files["extdata_absolute.onnx"] = _add_model(
        _external_init("/etc/passwd", length=64)).SerializeToString()

    # (g) raw_data length does not match dims (4x4 floats = 64 bytes, 10 given)
    t = onnx.TensorProto()
    t.name, t.data_type = "W", TensorProto.FLOAT
    t.dims.extend([4, 4])
    t.raw_data = bytes(10)
    files["raw_data_mismatch.onnx"] = _add_model(t).SerializeToString()
    # (g') typed field with the wrong count (3 of 16 floats)
    t = onnx.TensorProto()
    t.name, t.data_type = "W", TensorProto.FLOAT
    t.dims.extend([4, 4])
    t.float_data.extend([1.0, 2.0, 3.0])
    files["float_data_mismatch.onnx"] = _add_model(t).SerializeToString()

    # (h) unsupported element types
    t = helper.make_tensor("W", TensorProto.STRING, [2], [b"a", b"b"])
    files["string_initializer.onnx"] = _model(
        [helper.make_node("Identity", ["W"], ["y"], name="id")], [],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [2])],
        [t]).SerializeToString()
    files["float8_input.onnx"] = _unary(
        "Identity", in_type=TensorProto.FLOAT8E4M3FN,
        out_type=TensorProto.FLOAT8E4M3FN).SerializeToString()

    # (i) graph input with no shape (unknown rank)
    files["input_no_shape.onnx"] = _model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    ).SerializeToString()

    # (j) attributes of the wrong type
    files["softmax_axis_float.onnx"] = _unary(
        "Softmax", attrs={"axis": 1.0}).SerializeToString()
    files["cast_to_string.onnx"] = _unary(
        "Cast", attrs={"to": "FLOAT16"},
        out_type=TensorProto.FLOAT16).SerializeToString()

    # (k) unsupported op; unknown domain
    files["unsupported_op.onnx"] = _unary(
        "Det", shape=(3, 3)).SerializeToString()
    files["unknown_domain.onnx"] = _unary(
        "Frobnicate", domain="com.example",
        opset=OPSET + [helper.make_opsetid("com.example", 1)]).SerializeToString()

    # (m) Constant with sparse_value
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("v", TensorProto.FLOAT, [2], [1.0, 2.0]),
        helper.make_tensor("i", TensorProto.INT64, [2], [0, 3]), [4])
    files["constant_sparse.onnx"] = _model(
        [helper.make_node("Constant", [], ["y"], name="c", sparse_value=sparse)],
        [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    ).SerializeToString()

    # Found by fuzz_import.py / by hand (see bench/fuzz-import.md):
    # a node with fewer inputs than the op requires (Add with one input)
    # crashes in result type inference (null operand).
    files["add_missing_input.onnx"] = _model(
        [helper.make_node("Add", ["x"], ["y"], name="add")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    ).SerializeToString()
    # an initializer whose element count * 4 overflows int64 to 0 bytes, with
    # no data: accepted as `dense<> : tensor<4611686018427387904x4xf32>`.
    t = onnx.TensorProto()
    t.name, t.data_type = "W", TensorProto.FLOAT
    t.dims.extend([1 << 62, 4])
    t.raw_data = b""
    files["init_numel_overflow.onnx"] = _model(
        [helper.make_node("Relu", ["W"], ["y"], name="relu")], [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 62, 4])],
        [t]).SerializeToString()

    # (n) ONNX text with a syntax error (missing closing brace, bad token)
    files["syntax_error.onnxtext"] = b"""<
  ir_version: 8,
  opset_import: ["" : 18]
>
g (float[2, 3] x) => (float[2, 3] y) {
  y = Relu(x
  z = = Add(y, y)
"""

    for name, data in files.items():
        assert len(data) < 20 * 1024, name
    out.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(files.items()):
        (out / name).write_bytes(data)
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    files = build(args.out)
    for name in sorted(files):
        print(f"{len(files[name]):6d}  {args.out / name}")


if __name__ == "__main__":
    main()
