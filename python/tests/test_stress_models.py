"""The fp16 overflow stress cases of mp.models stay stress cases.

Each case must be fine in fp32 (onnxruntime's reference is finite and well
conditioned) and must break when the marked nodes compute in fp16. The fp16
side is emulated with numpy the way mp's mixed build computes: fp16 operands,
fp32 accumulation for MatMul/Conv, results stored in fp16. What breaks are
intermediate activations, never constants: every constant fits fp16.
"""

from pathlib import Path

import numpy as np
import onnx
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper, numpy_helper

import mp.models
from mp.models import (attention_overflow, large_logit_softmax, tiny_variance_norm,
                       vocoder_overflow)

STRESS_CASES = mp.models.STRESS
FP16_MAX = float(np.finfo(np.float16).max)  # 65504
FP16_MIN_NORMAL = float(np.finfo(np.float16).tiny)  # 6.1e-5
FP16_MIN_SUBNORMAL = float(np.finfo(np.float16).smallest_subnormal)  # 6e-8


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stress")
    return {name: mp.models.write_example(name, root / name / "model.onnx")
            for name in STRESS_CASES}


def _f16(a: np.ndarray) -> np.ndarray:
    """Rounds to fp16 (inf beyond its range), back in an fp32 array."""
    with np.errstate(over="ignore"):
        return np.asarray(a, np.float32).astype(np.float16).astype(np.float32)


def _matmul_f16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """fp16 operands, fp32 accumulation, fp16 result."""
    return _f16(_f16(a) @ _f16(b))


def _conv1d_f16(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    """Conv1d (stride 1, batch 1) with fp16 operands, fp32 accumulation, fp16 result."""
    with np.errstate(invalid="ignore"):  # inf * 0 and inf - inf are the point
        return _f16(_conv1d(_f16(x), _f16(w), _f16(b), pad))


def _conv1d(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    windows = sliding_window_view(np.pad(x[0], ((0, 0), (pad, pad))), w.shape[-1], axis=1)
    return (np.einsum("ctk,ock->ot", windows, w) + b[:, None])[None]


def _softmax(a: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def _layer_norm(h: np.ndarray, eps: float) -> np.ndarray:
    mean = h.mean(axis=-1, keepdims=True)
    var = ((h - mean) ** 2).mean(axis=-1, keepdims=True)
    return (h - mean) / np.sqrt(var + eps)


class _Case:
    """A written example: its model, reference data and onnxruntime intermediates."""

    def __init__(self, path: Path) -> None:
        self.model = onnx.load(path)
        self.inputs, self.expected = mp.models.load_test_data(path.parent / "test_data_set_0")
        self.nodes = {n.name: n for n in self.model.graph.node}
        self.weights = {t.name: numpy_helper.to_array(t) for t in self.model.graph.initializer}

    def node(self, name: str) -> onnx.NodeProto:
        return self.nodes[name]

    def consumer(self, node: onnx.NodeProto) -> onnx.NodeProto:
        """The (first) node that reads ``node``'s output."""
        return next(n for n in self.model.graph.node if node.output[0] in n.input)

    def weight(self, node: str, i: int) -> np.ndarray:
        return self.weights[self.nodes[node].input[i]]

    def values(self, *names: str) -> list[np.ndarray]:
        """fp32 values of intermediate tensors, from onnxruntime."""
        model = onnx.ModelProto()
        model.CopyFrom(self.model)
        del model.graph.output[:]
        model.graph.output.extend(helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                                  for n in names)
        out = mp.models.run_onnxruntime(model, self.inputs)
        return [out[n] for n in names]


@pytest.mark.parametrize("name", STRESS_CASES)
def test_fp32_reference_is_finite(examples, name):
    path = examples[name]
    case = _Case(path)
    assert [o.name for o in case.model.graph.output] == list(case.expected)
    actual = mp.models.run_onnxruntime(path, case.inputs)
    for k, want in case.expected.items():
        assert np.isfinite(actual[k]).all(), k
        np.testing.assert_array_equal(actual[k], want, err_msg=k)


@pytest.mark.parametrize("name", STRESS_CASES)
def test_constants_fit_fp16(examples, name):
    """The overflow is not in the constants: none is beyond fp16's range, and
    (mp's own constant rule) no more than 1 % of a tensor's nonzeros round to 0."""
    case = _Case(examples[name])
    consts = dict(case.weights)
    for n in case.model.graph.node:
        if n.op_type == "Constant":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    for k, a in consts.items():
        if not np.issubdtype(a.dtype, np.floating) or not a.any():
            continue
        assert np.abs(a).max() < FP16_MAX, k
        nonzero = np.abs(a[a != 0])
        assert (nonzero < FP16_MIN_SUBNORMAL / 2).mean() <= 0.01, k


def test_attention_scores_overflow_fp16(examples):
    m = attention_overflow
    case = _Case(examples["attention_overflow"])
    k_proj, score_mm = case.node(m.KEY_PROJ), case.node(m.SCORES)
    k_add, div = case.consumer(k_proj), case.consumer(score_mm)
    h, q, k, scores, scaled = case.values(k_proj.input[0], score_mm.input[0], k_add.output[0],
                                          score_mm.output[0], div.output[0])
    # fp32: k is ~1e4, the scores beyond fp16; the Softmax is exactly one-hot
    # (the two largest scaled scores of every row far apart), so well conditioned.
    assert 1e4 < np.abs(k).max() < FP16_MAX
    assert np.abs(scores).max() > 2 * FP16_MAX and np.isfinite(scores).all()
    top2 = np.sort(scaled, axis=-1)[..., -2:]
    assert (top2[..., 1] - top2[..., 0]).min() > 100

    # fp16: the k projection (+ bias) fits, the score MatMul overflows, Softmax -> NaN.
    k16 = _f16(_matmul_f16(h, case.weight(m.KEY_PROJ, 1)) + _f16(case.weight(k_add.name, 1)))
    assert np.isfinite(k16).all()
    k16 = k16.reshape(1, m.SEQ, m.HEADS, m.HEAD_DIM).transpose(0, 2, 3, 1)
    scores16 = _matmul_f16(q, k16)
    assert np.isinf(scores16).mean() > 0.05
    probs16 = _softmax(_f16(scores16 / _f16(np.sqrt(m.HEAD_DIM))))
    assert np.isnan(probs16).any()


def test_large_logits_overflow_fp16(examples):
    m = large_logit_softmax
    case = _Case(examples["large_logit_softmax"])
    head = case.node(m.HEAD)
    bias_add = case.consumer(head)
    h, logits = case.values(head.input[0], bias_add.output[0])
    assert np.isfinite(logits).all()
    assert (logits.max(axis=-1) > FP16_MAX).all()  # every row
    np.testing.assert_array_equal(case.expected["logits_argmax"], logits.argmax(axis=-1))

    logits16 = _f16(_matmul_f16(h, case.weight(m.HEAD, 1)) + _f16(case.weight(bias_add.name, 1)))
    assert (logits16.max(axis=-1) == np.inf).all()
    assert np.isnan(_softmax(logits16)).any(axis=-1).all()  # every row's probs are NaN


def test_tiny_activations_lose_the_signal_in_fp16(examples):
    m = tiny_variance_norm
    case = _Case(examples["tiny_variance_norm"])
    mul = case.node(m.PRODUCT)
    norm = next(n for n in case.model.graph.node if n.op_type == "LayerNormalization")
    eps = next(a.f for a in norm.attribute if a.name == "epsilon")
    v, h = case.values(mul.input[0], mul.output[0])
    scale = case.weights[mul.input[1]]
    y = case.expected["y"]
    assert FP16_MIN_NORMAL < np.abs(scale).min()  # the constant is a normal fp16 number
    assert (np.abs(h) < FP16_MIN_NORMAL).mean() > 0.99  # the activations are not
    # fp32 keeps the signal (onnxruntime agrees with a float64 LayerNorm) ...
    np.testing.assert_allclose(_layer_norm(h.astype(np.float64), eps), y, rtol=1e-4, atol=1e-5)
    # ... fp16 subnormals do not: errors of several % of the output's scale.
    y16 = _layer_norm(_f16(_f16(v) * _f16(scale)).astype(np.float64), eps)
    err = np.abs(y16 - y)
    assert np.sqrt((err ** 2).mean()) > 0.03 * y.std()
    atol = 1e-2 * np.clip(np.abs(y).max(), 1e-3, 1.0)  # mp-run's mixed tolerances
    assert (err > atol + 1e-2 * np.abs(y)).mean() > 0.25


def test_vocoder_conv_overflows_fp16(examples):
    m = vocoder_overflow
    case = _Case(examples["vocoder_overflow"])
    conv = case.node(m.OVERFLOW_CONV)
    post = case.consumer(case.consumer(conv))  # LeakyRelu, then conv_post
    assert post.op_type == "Conv"
    x, pre = case.values(conv.input[0], conv.output[0])
    w, b = case.weight(conv.name, 1), case.weight(conv.name, 2)
    pad = m.KERNEL // 2
    np.testing.assert_allclose(_conv1d(x, w, b, pad), pre, rtol=1e-4, atol=1.0)  # emulation check
    assert np.abs(pre).max() > 2 * FP16_MAX and np.isfinite(pre).all()
    assert (np.abs(case.expected["audio"]) <= 1).all()  # fp32: Tanh saturates, finite

    pre16 = _conv1d_f16(x, w, b, pad)
    assert np.isinf(pre16).mean() > 0.02
    act16 = np.where(pre16 >= 0, pre16, _f16(m.LEAKY_SLOPE * pre16))  # keeps the infs
    with np.errstate(invalid="ignore"):
        audio16 = np.tanh(_conv1d_f16(act16, case.weight(post.name, 1),
                                      case.weight(post.name, 2), pad))
    assert np.isnan(audio16).mean() > 0.5
