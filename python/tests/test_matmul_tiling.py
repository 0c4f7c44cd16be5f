"""MatMul shapes around mp-tile-and-vectorize's block sizes (4 x 16 output
blocks, smaller when a size does not divide, none when the columns have no
vector-sized divisor) against numpy: square blocks, single rows, odd sizes,
batches and broadcast batches, in fp32 and in mixed precision."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mp

# (lhs shape, rhs shape): each edge of the tile choice.
SHAPES = [
    ([4, 8], [8, 4]),          # 4 x 4 block: m and n tiles equal
    ([1, 2, 4, 8], [1, 2, 8, 4]),
    ([8, 8], [8, 8]),
    ([1, 16], [16, 32]),       # a decode-step row
    ([3, 5], [5, 24]),         # 3 rows: m tile 1; 24 columns: n tile 8
    ([6, 7], [7, 6]),          # 6 columns: not tiled
    ([2, 3, 12], [12, 20]),    # batch on the left only; n tile 4
    ([5, 64], [64, 48]),
]


def _model():
    rng = np.random.default_rng(3)
    nodes, inputs, outputs, feeds = [], [], [], {}
    for i, (sa, sb) in enumerate(SHAPES):
        a, b, y = f"a{i}", f"b{i}", f"y{i}"
        feeds[a] = rng.standard_normal(sa).astype(np.float32)
        feeds[b] = rng.standard_normal(sb).astype(np.float32)
        nodes.append(helper.make_node("MatMul", [a, b], [y], name=f"matmul{i}"))
        inputs += [helper.make_tensor_value_info(a, TensorProto.FLOAT, sa),
                   helper.make_tensor_value_info(b, TensorProto.FLOAT, sb)]
        outputs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "matmuls", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds


@pytest.mark.parametrize("precision,tol", [("fp32", 1e-5), ("mixed", 2e-2)])
def test_matmul_tiles_match_numpy(tmp_path, precision, tol):
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")
    model, feeds = _model()
    path = tmp_path / "matmuls.onnx"
    onnx.save(model, str(path))
    got = mp.compile(path, precision=precision).run(feeds)
    for i, (sa, sb) in enumerate(SHAPES):
        want = feeds[f"a{i}"].astype(np.float64) @ feeds[f"b{i}"].astype(np.float64)
        scale = np.abs(want).max()
        err = np.abs(got[f"y{i}"] - want).max() / scale
        assert err < tol, f"{precision} {sa} x {sb}: relative error {err:.3g}"
