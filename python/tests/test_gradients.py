"""Gradients of mp-build-training-step against finite differences.

Each case is a small ONNX graph whose initializers are the trained weights.
The loss is sum(op(...) * R) for a fixed random R, so every element of the
op's output matters. mp computes the gradients (optimizer=none, fp32); the
reference is the central difference of the same graph run by onnxruntime
in float64, or -- for the cases of FLOAT32_ONLY, whose ops onnxruntime has no
double kernel for -- in float32 with Richardson extrapolation. Which path each
case takes is asserted, and both are tight enough to tell exact from tanh GELU.
"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import mp  # noqa: E402

RNG = np.random.default_rng(7)


def rand(*shape, low=None):
    x = RNG.normal(size=shape)
    if low is not None:  # away from the domain edge (log, sqrt, 1/x)
        x = low + np.abs(x)
    return x.astype(np.float32)


def node(op, ins, **attrs):
    return helper.make_node(op, ins, ["y"], **attrs)


# name -> (nodes producing "y", {weight: array}, {input: array}, opset)
CASES = {
    "matmul": ([node("MatMul", ["a", "b"])], {"a": rand(3, 4), "b": rand(4, 5)}, {}, 17),
    "matmul_batch_x_matrix": ([node("MatMul", ["a", "b"])],
                              {"a": rand(2, 3, 4), "b": rand(4, 5)}, {}, 17),
    "matmul_batched_broadcast": ([node("MatMul", ["a", "b"])],
                                 {"a": rand(2, 3, 4), "b": rand(1, 4, 2)}, {}, 17),
    "gemm_transb": ([node("Gemm", ["a", "b", "c"], alpha=0.5, beta=2.0, transB=1)],
                    {"a": rand(3, 4), "b": rand(5, 4), "c": rand(5)}, {}, 17),
    "gemm_transa": ([node("Gemm", ["a", "b"], transA=1)],
                    {"a": rand(4, 3), "b": rand(4, 2)}, {}, 17),
    "add_broadcast": ([node("Add", ["a", "b"])], {"a": rand(3, 4), "b": rand(4)}, {}, 17),
    "sub_broadcast": ([node("Sub", ["a", "b"])], {"a": rand(3, 1), "b": rand(1, 4)}, {}, 17),
    "mul_broadcast": ([node("Mul", ["a", "b"])], {"a": rand(2, 3, 4), "b": rand(3, 1)}, {}, 17),
    "div_broadcast": ([node("Div", ["a", "b"])], {"a": rand(3, 4), "b": rand(4, low=1.0)}, {}, 17),
    "relu": ([node("Relu", ["a"])], {"a": rand(4, 5)}, {}, 17),
    "leaky_relu": ([node("LeakyRelu", ["a"], alpha=0.2)], {"a": rand(4, 5)}, {}, 17),
    "sigmoid": ([node("Sigmoid", ["a"])], {"a": rand(4, 5)}, {}, 17),
    "tanh": ([node("Tanh", ["a"])], {"a": rand(4, 5)}, {}, 17),
    "exp": ([node("Exp", ["a"])], {"a": rand(4, 5)}, {}, 17),
    "log": ([node("Log", ["a"])], {"a": rand(4, 5, low=0.5)}, {}, 17),
    "sqrt": ([node("Sqrt", ["a"])], {"a": rand(4, 5, low=0.5)}, {}, 17),
    "reciprocal": ([node("Reciprocal", ["a"])], {"a": rand(4, 5, low=0.5)}, {}, 17),
    "abs_neg": ([helper.make_node("Abs", ["a"], ["t"]), node("Neg", ["t"])],
                {"a": rand(4, 5)}, {}, 17),
    "erf": ([node("Erf", ["a"])], {"a": rand(4, 5)}, {}, 17),
    "gelu": ([node("Gelu", ["a"])], {"a": rand(4, 5)}, {}, 20),
    "gelu_tanh": ([node("Gelu", ["a"], approximate="tanh")], {"a": rand(4, 5)}, {}, 20),
    "pow2": ([node("Pow", ["a", "two"])], {"a": rand(4, 5)},
             {"two": np.array(2.0, np.float32)}, 17),
    "pow3": ([node("Pow", ["a", "three"])], {"a": rand(4, 5)},
             {"three": np.array(3.0, np.float32)}, 17),
    "softmax": ([node("Softmax", ["a"], axis=-1)], {"a": rand(2, 3, 4)}, {}, 17),
    "log_softmax_axis1": ([node("LogSoftmax", ["a"], axis=1)], {"a": rand(2, 3, 4)}, {}, 17),
    "layer_norm": ([node("LayerNormalization", ["a", "g", "b"], axis=-1, epsilon=1e-5)],
                   {"a": rand(3, 6), "g": rand(6), "b": rand(6)}, {}, 17),
    "layer_norm_axis1": ([node("LayerNormalization", ["a", "g"], axis=1)],
                         {"a": rand(2, 3, 4), "g": rand(3, 4)}, {}, 17),
    "rms_norm": ([node("RMSNormalization", ["a", "g"], axis=-1, epsilon=1e-5)],
                 {"a": rand(3, 6), "g": rand(6)}, {}, 23),
    "rotary_embedding": ([node("RotaryEmbedding", ["a", "cos", "sin", "pos"])],
                         {"a": rand(1, 2, 3, 4)},
                         {"cos": np.cos(np.arange(8)[:, None] * [1.0, 0.3]).astype(np.float32),
                          "sin": np.sin(np.arange(8)[:, None] * [1.0, 0.3]).astype(np.float32),
                          "pos": np.array([[2, 5, 7]], np.int64)}, 23),
    "reduce_sum": ([node("ReduceSum", ["a", "axes"], keepdims=0)], {"a": rand(2, 3, 4)},
                   {"axes": np.array([1], np.int64)}, 17),
    "reduce_mean_all": ([node("ReduceMean", ["a"], keepdims=1)], {"a": rand(2, 3, 4)}, {}, 17),
    "reshape_transpose": ([helper.make_node("Reshape", ["a", "shape"], ["t"]),
                           node("Transpose", ["t"], perm=[2, 0, 1])],
                          {"a": rand(6, 4)}, {"shape": np.array([2, 3, 4], np.int64)}, 17),
    "flatten_unsqueeze_squeeze": ([helper.make_node("Flatten", ["a"], ["f"], axis=2),
                                   helper.make_node("Unsqueeze", ["f", "ax"], ["u"]),
                                   node("Squeeze", ["u", "ax"])],
                                  {"a": rand(2, 3, 4)}, {"ax": np.array([0], np.int64)}, 17),
    "expand": ([node("Expand", ["a", "shape"])], {"a": rand(3, 1)},
               {"shape": np.array([2, 3, 4], np.int64)}, 17),
    "concat": ([node("Concat", ["a", "b"], axis=1)], {"a": rand(2, 3), "b": rand(2, 5)}, {}, 17),
    "slice": ([node("Slice", ["a", "starts", "ends", "axes"])], {"a": rand(4, 6)},
              {"starts": np.array([-5], np.int64), "ends": np.array([4], np.int64),
               "axes": np.array([1], np.int64)}, 17),
    "gather_embedding": ([node("Gather", ["w", "ids"], axis=0)], {"w": rand(6, 4)},
                         {"ids": np.array([[0, 3, 3], [5, -1, 2]], np.int64)}, 17),
    "where": ([node("Where", ["cond", "a", "b"])], {"a": rand(3, 4), "b": rand(4)},
              {"cond": RNG.random((3, 4)) > 0.5}, 17),
    "conv1d": ([node("Conv", ["x", "w", "b"], pads=[1, 2], strides=[2], dilations=[2])],
               {"w": rand(4, 3, 3), "b": rand(4)}, {"x": rand(2, 3, 11)}, 17),
    "conv1d_input_grad": ([node("Conv", ["x", "w"], kernel_shape=[3])],
                          {"x": rand(1, 2, 7), "w": rand(3, 2, 3)}, {}, 17),
    "conv_transpose1d": ([node("ConvTranspose", ["x", "w", "b"], strides=[3], pads=[1, 2],
                               output_padding=[1], dilations=[2])],
                         {"x": rand(2, 3, 5), "w": rand(3, 4, 3), "b": rand(4)}, {}, 17),
    "conv_transpose1d_upsample": ([node("ConvTranspose", ["x", "w"], strides=[4], pads=[2, 2])],
                                  {"x": rand(1, 2, 6), "w": rand(2, 3, 8)}, {}, 17),
    "attention_causal": ([node("Attention", ["q", "k", "v"], is_causal=1)],
                         {"q": rand(1, 2, 3, 4), "k": rand(1, 2, 3, 4), "v": rand(1, 2, 3, 4)},
                         {}, 23),
    "attention_gqa_3d_mask_past": (
        [helper.make_node("Attention", ["q", "k", "v", "mask", "pk", "pv"],
                          ["y", "present_k", "present_v"], q_num_heads=4, kv_num_heads=2,
                          scale=0.3)],
        {"q": rand(2, 3, 8), "k": rand(2, 3, 4), "v": rand(2, 3, 4)},
        {"mask": rand(3, 5), "pk": rand(2, 2, 2, 2), "pv": rand(2, 2, 2, 2)}, 23),
    "softmax_cross_entropy": ([node("SoftmaxCrossEntropyLoss", ["s", "labels", "w"],
                                    ignore_index=2)],
                              {"s": rand(4, 3, 2)},
                              {"labels": np.array([[0, 1], [2, 2], [1, 0], [2, 1]], np.int64),
                               "w": np.array([0.5, 1.0, 2.0], np.float32)}, 13),
    "nll_sum": ([node("NegativeLogLikelihoodLoss", ["p", "labels"], reduction="sum")],
                {"p": rand(3, 4)}, {"labels": np.array([3, 0, 3], np.int64)}, 13),
    "mlp_shared_weight": (
        [helper.make_node("MatMul", ["x", "w"], ["h"]),
         helper.make_node("Tanh", ["h"], ["a"]),
         helper.make_node("MatMul", ["a", "w"], ["z"]),  # w used twice
         node("Add", ["z", "h"])],
        {"w": rand(4, 4)}, {"x": rand(3, 4)}, 17),
}


def float_inputs(consts):
    return {k: v for k, v in consts.items() if v.dtype == np.float32 and v.ndim > 0}


def build(nodes, weights, consts, opset, dtype, r_shape=None):
    """The case's graph with loss = sum(y * r); weights as initializers,
    everything else as graph inputs. Without `r_shape`: the graph of y."""
    np_type = np.float64 if dtype == TensorProto.DOUBLE else np.float32
    inits = [numpy_helper.from_array(v.astype(np_type), k) for k, v in weights.items()]
    # Integer and bool constants (shapes, axes, ids, conditions) and float
    # scalars (exponents) are initializers that are not trained; other float
    # constants are inputs.
    inits += [numpy_helper.from_array(v.astype(np_type) if v.dtype == np.float32 else v, k)
              for k, v in consts.items() if k not in float_inputs(consts)]
    inputs = []
    for k, v in float_inputs(consts).items():
        inputs.append(helper.make_tensor_value_info(k, dtype, list(v.shape)))
    if r_shape is None:
        loss_nodes, output = [], helper.make_tensor_value_info("y", dtype, None)
    else:
        inputs.append(helper.make_tensor_value_info("r", dtype, list(r_shape)))
        loss_nodes = [helper.make_node("Mul", ["y", "r"], ["yr"]),
                      helper.make_node("ReduceSum", ["yr"], ["loss"], keepdims=0)]
        output = helper.make_tensor_value_info("loss", dtype, [])
    graph = helper.make_graph(list(nodes) + loss_nodes, "case", inputs, [output], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def output_shape(nodes, weights, consts, opset, tmp_path):
    model = build(nodes, weights, consts, opset, TensorProto.FLOAT)
    path = tmp_path / "shape.onnx"
    onnx.save(model, str(path))
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, float_inputs(consts))[0].shape


# Cases whose ops onnxruntime's CPU provider has no float64 kernel for (Conv,
# ConvTranspose, Erf; RotaryEmbedding is float-only in its schema). Their
# reference is float32 differences with Richardson extrapolation; every other
# case must get a float64 session (test_float64_sessions_are_the_expected_ones).
FLOAT32_ONLY = {"conv1d", "conv1d_input_grad", "conv_transpose1d", "conv_transpose1d_upsample",
                "erf", "gelu", "rotary_embedding"}
# float64 central differences: step and tolerance (relative to the largest
# reference gradient, at least 1): mp computes in float32.
# Measured: below 1.2e-6.
H64, TOL64 = 1e-6, 1e-5
# float32: (4 D(h/2) - D(h)) / 3 cancels the h^2 error term; a step this large
# keeps float32 rounding of the loss small against the difference. Measured
# errors: below 4e-5 of the gradients' scale (the convolutions, whose loss
# rounds at |loss| ~ 10), 3e-6 for GELU, whose exact and tanh forms differ by
# 2.4e-4 (test_float32_differences_tell_exact_from_tanh_gelu).
H32, TOL32 = 3e-2, 8e-5


def _loss(base, name, value, np_type, feeds):
    """The loss with weight `name` set to `value` (the other weights as in `base`)."""
    model = onnx.ModelProto()
    model.CopyFrom(base)
    for t in model.graph.initializer:
        if t.name == name:
            t.CopyFrom(numpy_helper.from_array(value.astype(np_type), name))
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return float(s.run(None, feeds)[0])


def _session_dtype(case, nodes, weights, consts, opset, r_shape):
    """float64 when onnxruntime can run the case in double, float32 for FLOAT32_ONLY;
    any other session failure is an error."""
    model = build(nodes, weights, consts, opset, TensorProto.DOUBLE, r_shape)
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except (ort.capi.onnxruntime_pybind11_state.NotImplemented,
            ort.capi.onnxruntime_pybind11_state.InvalidGraph) as e:
        assert case in FLOAT32_ONLY, f"{case}: no float64 session: {e}"
        return TensorProto.FLOAT
    assert case not in FLOAT32_ONLY, f"{case} runs in float64 now: drop it from FLOAT32_ONLY"
    return TensorProto.DOUBLE


def finite_differences(case, nodes, weights, consts, opset, r):
    """d loss / d weight by central differences in onnxruntime, and the
    precision they were taken in ("float64" or "float32")."""
    dtype = _session_dtype(case, nodes, weights, consts, opset, r.shape)
    np_type = np.float64 if dtype == TensorProto.DOUBLE else np.float32
    model = build(nodes, weights, consts, opset, dtype, r.shape)
    feeds = {k: v.astype(np_type) for k, v in float_inputs(consts).items()}
    feeds["r"] = r.astype(np_type)

    def central(name, w, i, h):
        # Divide by the step actually taken: w +- h rounds in float32.
        up, down = w.astype(np.float64), w.astype(np.float64)
        up[i] += h
        down[i] -= h
        step = float(up.astype(np_type)[i]) - float(down.astype(np_type)[i])
        return (_loss(model, name, up, np_type, feeds) - _loss(model, name, down, np_type, feeds)) / step

    grads = {}
    for name, w in weights.items():
        g = np.zeros(w.shape, np.float64)
        for i in np.ndindex(w.shape):
            if dtype == TensorProto.DOUBLE:
                g[i] = central(name, w, i, H64)
            else:
                g[i] = (4 * central(name, w, i, H32 / 2) - central(name, w, i, H32)) / 3
        grads[name] = g
    return grads, ("float64" if dtype == TensorProto.DOUBLE else "float32")


def assert_gradients_close(got, want, path, what):
    tol = (TOL64 if path == "float64" else TOL32) * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol,
                               err_msg=f"{what} (differences in {path}, atol {tol:.2g})")


def trained_gradients(nodes, weights, consts, opset, r, tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save(build(nodes, weights, consts, opset, TensorProto.FLOAT, r.shape), str(path))
    step = mp.compile(path, training="loss=loss optimizer=none")
    names = [i.name for i in step.inputs]
    assert set(weights) <= set(names), f"weights not trained: {names}"
    out = step.run({**weights, **float_inputs(consts), "r": r})
    return {name: out[f"{name}.grad"] for name in weights}


def case_loss_weights(case, tmp_path):
    nodes, weights, consts, opset = CASES[case]
    rng = np.random.default_rng(sorted(CASES).index(case))
    r = rng.normal(size=output_shape(nodes, weights, consts, opset, tmp_path)).astype(np.float32)
    return nodes, weights, consts, opset, r


@pytest.fixture
def built():
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_matches_finite_differences(case, tmp_path, built):
    nodes, weights, consts, opset, r = case_loss_weights(case, tmp_path)
    got = trained_gradients(nodes, weights, consts, opset, r, tmp_path)
    want, path = finite_differences(case, nodes, weights, consts, opset, r)
    assert path == ("float32" if case in FLOAT32_ONLY else "float64")
    for name in weights:
        assert got[name].shape == weights[name].shape
        assert_gradients_close(got[name], want[name], path, f"{case}: d loss / d {name}")


def test_float32_differences_tell_exact_from_tanh_gelu(tmp_path, built):
    """The float32 reference is tight enough to reject the tanh approximation's
    gradients as those of exact GELU."""
    nodes, weights, consts, opset, r = case_loss_weights("gelu", tmp_path)
    want, path = finite_differences("gelu", nodes, weights, consts, opset, r)
    assert path == "float32"
    tanh_nodes = CASES["gelu_tanh"][0]
    got = trained_gradients(tanh_nodes, weights, consts, opset, r, tmp_path)
    with pytest.raises(AssertionError):
        assert_gradients_close(got["a"], want["a"], path, "tanh GELU vs exact")
