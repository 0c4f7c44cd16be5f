"""ConvTranspose against onnxruntime over the forms vocoders use.

A 1-D, ungrouped, undilated ConvTranspose of stride s > 1 is lowered as s
interleaved stride-1 convolutions (polyphase); other forms convolve the
zero-spread input. Each case runs with static shapes and with a run-time
batch and length (one compiled variant for every length), so both lowerings
meet kernels that the stride divides and kernels it does not, start and end
pads, output_padding, bias, groups and dilation.
"""

from __future__ import annotations

import numpy as np
import pytest

import mp

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


@pytest.fixture(autouse=True)
def _needs_capi():
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")


# (channels in, channels out, kernel, stride, pads, output_padding, group,
#  dilation, bias)
CASES = {
    "hifigan_up8": (8, 4, 16, 8, (4, 4), 0, 1, 1, True),
    "hifigan_up4": (4, 3, 8, 4, (2, 2), 0, 1, 1, True),
    "kernel_not_divided": (3, 2, 5, 2, (0, 0), 0, 1, 1, False),
    "kernel_below_stride": (3, 2, 2, 3, (0, 1), 0, 1, 1, True),
    "uneven_pads": (4, 2, 7, 3, (3, 1), 0, 1, 1, True),
    "output_padding": (2, 5, 4, 2, (1, 1), 1, 1, 1, True),
    "stride_1": (3, 4, 3, 1, (1, 1), 0, 1, 1, True),
    "groups_spread": (4, 4, 4, 2, (1, 1), 0, 2, 1, True),
    "dilation_spread": (3, 2, 3, 2, (1, 0), 0, 1, 2, False),
}


def _model(tmp_path, case):
    cin, cout, k, s, pads, out_pad, group, dil, bias = CASES[case]
    rng = np.random.default_rng(sum(map(ord, case)))
    weight = rng.standard_normal((cin, cout // group, k)).astype(np.float32)
    init = [numpy_helper.from_array(weight, "w")]
    inputs = ["x", "w"]
    if bias:
        init.append(numpy_helper.from_array(
            rng.standard_normal(cout).astype(np.float32), "b"))
        inputs.append("b")
    node = helper.make_node("ConvTranspose", inputs, ["y"], strides=[s],
                            pads=list(pads), output_padding=[out_pad],
                            group=group, dilations=[dil], kernel_shape=[k])
    graph = helper.make_graph(
        [node], case,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", cin, "t"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path = tmp_path / f"{case}.onnx"
    onnx.save(model, path)
    return path, cin, rng


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_conv_transpose_matches_onnxruntime(tmp_path, case, dynamic):
    path, cin, rng = _model(tmp_path, case)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model = mp.compile(path, dynamic_shapes=dynamic)
    for batch, length in [(1, 37), (2, 5), (1, 1)]:
        x = rng.standard_normal((batch, cin, length)).astype(np.float32)
        (want,) = sess.run(["y"], {"x": x})
        got = model.run({"x": x})
        assert set(got) == {"y"}
        assert got["y"].shape == want.shape, (batch, length)
        scale = float(np.abs(want).max())
        np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-5 * scale,
                                   err_msg=f"{case} at {(batch, length)}")
    if dynamic:
        assert model.num_variants == 1
