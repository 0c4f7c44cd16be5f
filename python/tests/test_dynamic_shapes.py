"""Dynamic shapes in the JIT (``mp.compile(..., dynamic_shapes=True)``,
``mp-run --dynamic-shapes``; issue: lower mp to linalg and run on the CPU).

With dynamic shapes the model's dynamic dims stay dynamic through the
lowering, so one compiled variant serves every input shape: sizes are read
at run time, numpy broadcasting of dims known only at run time is decided at
run time, and outputs come back in the shapes the run produced. Checks
compare with onnxruntime on the same model and inputs, except where the test
says otherwise: Resize to sizes and TensorScatter against the ONNX reference
(onnx.reference), crop-and-resize against mp's specialized variants.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import BUILD, compiled_library, require_built, require_present

import mp

REPO = Path(__file__).resolve().parents[2]
MP_RUN = BUILD / "bin" / "mp-run"
DECODER = REPO / "examples" / "tts_decoder" / "model.onnx"

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


@pytest.fixture(autouse=True)
def _needs_capi():
    if not mp.library_path().is_file():
        pytest.skip(f"libMPCAPI.so is not built ({mp.library_path()})")


def _ort(path, feeds):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def _assert_matches_ort(ours, path, feeds, tol, where):
    """mp's outputs `ours` equal onnxruntime's on `feeds`: shapes, and values
    to `tol` (relative and absolute)."""
    for name, expected in _ort(path, feeds).items():
        assert ours[name].shape == expected.shape, (name, where)
        np.testing.assert_allclose(ours[name], expected, rtol=tol, atol=tol,
                                   err_msg=f"{name} at {where}")


def _decoder_inputs(rng, batch, enc_len, past):
    feeds = {"mel_frame": rng.standard_normal((batch, 1, 80)),
             "encoder_out": rng.standard_normal((batch, enc_len, 128))}
    for layer in range(2):
        for kind in ("key", "value"):
            feeds[f"past_{kind}_{layer}"] = rng.standard_normal((batch, 4, past, 32))
    return {k: v.astype(np.float32) for k, v in feeds.items()}


SHAPES = [(2, 10, 5), (1, 3, 0), (3, 17, 12), (1, 1, 1)]


# mixed (~30 s) in the full tier; the library test below keeps a mixed dynamic run fast.
@pytest.mark.parametrize("precision", ["fp32", pytest.param("mixed", marks=pytest.mark.slow)])
def test_decoder_one_variant_for_every_shape(precision):
    """The bundled TTS decoder, compiled once, runs batch 1-3, encoder
    lengths 1-17 and KV caches of 0-12 positions like onnxruntime (fp32 to
    1e-4; mixed within 2e-2 of fp32, as the precision tables allow)."""
    rng = np.random.default_rng(0)
    model = mp.compile(DECODER, precision, dynamic_shapes=True)
    for batch, enc_len, past in SHAPES:
        feeds = _decoder_inputs(rng, batch, enc_len, past)
        _assert_matches_ort(model.run(feeds), DECODER, feeds,
                            1e-4 if precision == "fp32" else 2e-2,
                            (batch, enc_len, past))
    assert model.num_variants == 1


def test_fused_attention_dynamic_cache_length():
    """With mp-fuse-attention, the decoder's attention is one op whose past
    (Concat-ed) cache has a run-time length: one variant for every length,
    like onnxruntime. The keys stream in blocks of 256 with an online
    softmax; the lengths cover no whole block, exactly one whole block and
    an empty rest (255 + 1 keys), and two whole blocks and a rest."""
    rng = np.random.default_rng(9)
    model = mp.compile(DECODER, dynamic_shapes=True, fuse_attention=True)
    for batch, enc_len, past in [(2, 10, 5), (1, 4, 0), (1, 7, 31), (1, 3, 255),
                                 (2, 5, 600)]:
        feeds = _decoder_inputs(rng, batch, enc_len, past)
        _assert_matches_ort(model.run(feeds), DECODER, feeds, 1e-4,
                            (batch, enc_len, past))
    assert model.num_variants == 1


def test_decoder_dynamic_matches_specialized():
    """The dynamic variant computes what the per-shape one computes."""
    rng = np.random.default_rng(1)
    feeds = _decoder_inputs(rng, 2, 9, 4)
    dynamic = mp.compile(DECODER, dynamic_shapes=True).run(feeds)
    static = mp.compile(DECODER).run(feeds)
    for name in static:
        np.testing.assert_allclose(dynamic[name], static[name], rtol=1e-6, atol=1e-6)


def _save(tmp_path, graph, opset=17):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    return path


def test_broadcast_decided_at_run_time(tmp_path):
    """Dims known only at run time may be 1 there and broadcast: Add of
    [a, 4] and [b, 4] with a or b equal to 1, and MatMul batch dims the
    same way."""
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["sum"]),
         helper.make_node("MatMul", ["p", "q"], ["prod"])],
        "broadcast",
        [helper.make_tensor_value_info("x", f, ["a", 4]),
         helper.make_tensor_value_info("y", f, ["b", 4]),
         helper.make_tensor_value_info("p", f, ["c", 2, 3]),
         helper.make_tensor_value_info("q", f, ["d", 3, 5])],
        [helper.make_tensor_value_info("sum", f, None),
         helper.make_tensor_value_info("prod", f, None)])
    path = _save(tmp_path, graph)
    model = mp.compile(path, dynamic_shapes=True)
    rng = np.random.default_rng(2)
    for a, b, c, d in [(3, 3, 2, 2), (1, 5, 1, 4), (6, 1, 3, 1), (1, 1, 1, 1)]:
        feeds = {"x": rng.standard_normal((a, 4)), "y": rng.standard_normal((b, 4)),
                 "p": rng.standard_normal((c, 2, 3)), "q": rng.standard_normal((d, 3, 5))}
        feeds = {k: v.astype(np.float32) for k, v in feeds.items()}
        _assert_matches_ort(model.run(feeds), path, feeds, 1e-5, (a, b, c, d))
    assert model.num_variants == 1


def test_shape_computations_at_run_time(tmp_path):
    """Shape -> Gather -> Concat -> Reshape chains, Reshape with 0 and -1,
    Flatten, Unsqueeze/Squeeze, Transpose, Softmax, ReduceMean and
    LayerNormalization over dims known only at run time."""
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    const = lambda name, values: helper.make_node(  # noqa: E731
        "Constant", [], [name],
        value=helper.make_tensor(name, i64, [len(values)], values))
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        const("idx0", [0]),
        helper.make_node("Gather", ["shape", "idx0"], ["batch"], axis=0),
        const("rest", [-1, 4]),
        helper.make_node("Concat", ["batch", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Softmax", ["t"], ["s"], axis=-1),
        const("axes", [1]),
        helper.make_node("Unsqueeze", ["s", "axes"], ["u"]),
        helper.make_node("Squeeze", ["u", "axes"], ["sq"]),
        helper.make_node("ReduceMean", ["sq", "axes"], ["m"], keepdims=1),
        const("split", [0, 0, 2, -1]),
        helper.make_node("Reshape", ["x", "split"], ["heads"]),
        helper.make_node("Flatten", ["heads"], ["flat"], axis=2),
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["ln"],
                         axis=-1, epsilon=1e-5),
    ]
    gamma = helper.make_tensor("gamma", f, [8], np.linspace(0.5, 1.5, 8).tolist())
    beta = helper.make_tensor("beta", f, [8], np.linspace(-1, 1, 8).tolist())
    graph = helper.make_graph(
        nodes, "shapes", [helper.make_tensor_value_info("x", f, ["batch", "seq", 8])],
        [helper.make_tensor_value_info(n, f, None)
         for n in ("s", "m", "flat", "ln")], initializer=[gamma, beta])
    path = _save(tmp_path, graph, opset=18)
    model = mp.compile(path, dynamic_shapes=True)
    rng = np.random.default_rng(3)
    for batch, seq in [(2, 3), (1, 1), (4, 6), (3, 5)]:
        feeds = {"x": rng.standard_normal((batch, seq, 8)).astype(np.float32)}
        _assert_matches_ort(model.run(feeds), path, feeds, 1e-5, (batch, seq))
    assert model.num_variants == 1


def test_named_dims_must_agree():
    """Inputs whose dims the model names alike ("batch") must agree at run
    time: the error names both inputs and the dim."""
    rng = np.random.default_rng(4)
    feeds = _decoder_inputs(rng, 2, 5, 3)
    feeds["encoder_out"] = feeds["encoder_out"][:1]
    model = mp.compile(DECODER, dynamic_shapes=True)
    with pytest.raises(mp.Error, match=r"input 'encoder_out' has batch = 1 "
                                       r"\(dim 0\), input 'mel_frame' has batch = 2"):
        model.run(feeds)


def test_rank_and_static_dims_still_checked():
    rng = np.random.default_rng(5)
    feeds = _decoder_inputs(rng, 2, 5, 3)
    feeds["mel_frame"] = np.zeros((2, 1, 81), np.float32)
    model = mp.compile(DECODER, dynamic_shapes=True)
    with pytest.raises(mp.Error, match=r"input 'mel_frame' is f32\[2, 1, 81\], "
                                       r"the model expects 'tensor<\?x1x80xf32>'"):
        model.run(feeds)


def test_op_without_dynamic_lowering_is_named(tmp_path):
    """An op in a form that has no dynamic-shape lowering (a Conv whose
    weight, a graph input, has a run-time number of filters) is named with
    its node, and the error says how to pin the shapes."""
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="the_conv")],
        "conv", [helper.make_tensor_value_info("x", f, [1, 2, "t"]),
                 helper.make_tensor_value_info("w", f, ["m", 2, 3])],
        [helper.make_tensor_value_info("y", f, None)])
    path = _save(tmp_path, graph)
    rng = np.random.default_rng(7)
    feeds = {"x": rng.standard_normal((1, 2, 5)).astype(np.float32),
             "w": rng.standard_normal((3, 2, 3)).astype(np.float32)}
    model = mp.compile(path, dynamic_shapes=True)
    with pytest.raises(mp.Error, match=r"cannot lower 'mp.conv' \(node 'the_conv'\): "
                                       r"its shapes are dynamic and it has no "
                                       r"dynamic-shape lowering yet"):
        model.run(feeds)
    # Without dynamic shapes the same model runs (specialized per shape).
    _assert_matches_ort(mp.compile(path).run(feeds), path, feeds, 1e-5, "specialized")


def test_conv_channels_from_the_weight(tmp_path):
    """A Conv whose input channels are known only at run time (behind a Pad
    with computed pads, in real exports) takes them from the weight, checked
    at run time: it runs with dynamic shapes and matches onnxruntime; a
    wrong channel count stops the run naming the node."""
    f = TensorProto.FLOAT
    w = numpy_helper.from_array(
        np.random.default_rng(5).standard_normal((3, 2, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="the_conv")],
        "conv", [helper.make_tensor_value_info("x", f, [1, "c", "t"])],
        [helper.make_tensor_value_info("y", f, None)], initializer=[w])
    path = _save(tmp_path, graph)
    model = mp.compile(path, dynamic_shapes=True)
    feeds = {"x": np.random.default_rng(7).standard_normal((1, 2, 5)).astype(np.float32)}
    _assert_matches_ort(model.run(feeds), path, feeds, 1e-5, "dynamic")
    with pytest.raises(mp.Error, match=r"Conv \(node 'the_conv'\): input dim 1 is not 2"):
        model.run({"x": np.zeros((1, 3, 5), np.float32)})


def test_mp_run_dynamic_shapes_flag():
    if not MP_RUN.is_file():
        pytest.skip("mp-run is not built")
    proc = subprocess.run([str(MP_RUN), str(DECODER), "--dynamic-shapes", "--compare",
                           str(DECODER.parent / "test_data_set_0")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("PASS") == 6, proc.stdout


MP_COMPILE = BUILD / "bin" / "mp-compile"


@pytest.fixture(scope="module")
def dynamic_libs():
    """The decoder compiled ahead of time with --dynamic-shapes (from the
    run's cache: test_ptx_emulator.py's reference is the fp32 one,
    test_gpu_bench.py's dynamic check uses both)."""
    if not MP_COMPILE.is_file():
        pytest.skip("mp-compile is not built")
    return {precision: compiled_library(DECODER, "--dynamic-shapes", "--precision", precision,
                                        name="libdec.so")
            for precision in ("fp32", "mixed")}


@pytest.mark.parametrize("precision", ["fp32", "mixed"])
def test_library_with_dynamic_shapes(dynamic_libs, precision):
    """One library runs every shape through the runtime alone (mp.load:
    mp_library_run_shaped), like onnxruntime; the description says which
    dims are fixed at run time."""
    import json
    lib = mp.load(dynamic_libs[precision])
    assert lib.dynamic_shapes
    assert dict((n, s) for n, _, s in lib.inputs)["encoder_out"] == (-1, -1, 128)
    desc = json.loads(dynamic_libs[precision].with_suffix(".json").read_text())
    assert desc["entry"] == "mp_model_run_shaped"
    assert desc["outputs"][2]["shape"] == [None, 4, None, 32]
    assert desc["outputs"][2]["bytes"] is None
    rng = np.random.default_rng(6)
    for batch, enc_len, past in SHAPES:
        feeds = _decoder_inputs(rng, batch, enc_len, past)
        _assert_matches_ort(lib.run(feeds), DECODER, feeds,
                            1e-4 if precision == "fp32" else 2e-2,
                            (batch, enc_len, past))


def test_library_named_dims_must_agree(dynamic_libs):
    rng = np.random.default_rng(7)
    feeds = _decoder_inputs(rng, 2, 5, 3)
    feeds["past_key_1"] = feeds["past_key_1"][:, :, :2]
    lib = mp.load(dynamic_libs["fp32"])
    with pytest.raises(mp.Error, match=r"input 'past_key_1' has past_len = 2 "
                                       r"\(dim 2\), input 'past_key_0' has past_len = 3"):
        lib.run(feeds)
    with pytest.raises(mp.Error, match=r"input 'mel_frame' is float32\[2, 1, 3\]"):
        lib.run({**feeds, "mel_frame": np.zeros((2, 1, 3), np.float32)})


def test_conv_pad_slice_expand_range_at_run_time(tmp_path):
    """Conv1d over a run-time length (a vocoder's), Pad, Slice with clamped
    bounds, Expand to a run-time shape, Range and ConstantOfShape sized at
    run time."""
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    rng = np.random.default_rng(8)
    init = [
        helper.make_tensor("w", f, [4, 2, 3], rng.standard_normal(24).tolist()),
        helper.make_tensor("b", f, [4], rng.standard_normal(4).tolist()),
        helper.make_tensor("pads", i64, [6], [0, 0, 2, 0, 0, 1]),
        helper.make_tensor("starts", i64, [2], [1, -4]),
        helper.make_tensor("ends", i64, [2], [1 << 40, -1]),
        helper.make_tensor("axes", i64, [2], [1, 2]),
        helper.make_tensor("zero", i64, [], [0]),
        helper.make_tensor("one", i64, [], [1]),
        helper.make_tensor("i2", i64, [1], [2]),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1], strides=[2]),
        helper.make_node("Pad", ["conv", "pads"], ["pad"], mode="reflect"),
        helper.make_node("Slice", ["pad", "starts", "ends", "axes"], ["slice"]),
        helper.make_node("Shape", ["conv"], ["cshape"]),
        helper.make_node("Gather", ["cshape", "i2"], ["len1"], axis=0),
        helper.make_node("Squeeze", ["len1"], ["len"]),
        helper.make_node("Range", ["zero", "len", "one"], ["range"]),
        helper.make_node("ConstantOfShape", ["cshape"], ["ones"],
                         value=helper.make_tensor("v", f, [1], [1.5])),
        helper.make_node("Expand", ["b3", "cshape"], ["expanded"]),
    ]
    init.append(helper.make_tensor("b3", f, [4, 1], rng.standard_normal(4).tolist()))
    graph = helper.make_graph(
        nodes, "nn", [helper.make_tensor_value_info("x", f, ["n", 2, "t"])],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         (("conv", f), ("pad", f), ("slice", f), ("range", i64), ("ones", f),
          ("expanded", f))], initializer=init)
    path = _save(tmp_path, graph)
    model = mp.compile(path, dynamic_shapes=True)
    for n, t in [(1, 9), (2, 16), (3, 5)]:
        feeds = {"x": rng.standard_normal((n, 2, t)).astype(np.float32)}
        _assert_matches_ort(model.run(feeds), path, feeds, 1e-5, (n, t))
    assert model.num_variants == 1



def test_vocoder_ops_over_runtime_lengths(tmp_path):
    """The ops of convolutional vocoders over run-time batch and length,
    compiled once: ConvTranspose (stride, padding, output_padding, groups),
    MaxPool with indices, AveragePool with and without counting pads, both
    in ceil mode,
    GlobalAveragePool, Instance-, Group- and BatchNormalization, Tile and
    Trilu."""
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    rng = np.random.default_rng(9)

    def t(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    init = [t("wt", (4, 3, 4)), t("bt", (3,)), t("wg", (4, 1, 3)),
            t("s6", (6,)), t("b6", (6,)), t("s2", (2,)), t("b2", (2,)),
            numpy_helper.from_array(rng.uniform(0.5, 2, 6).astype(np.float32), "var"),
            t("mean", (6,)),
            helper.make_tensor("reps", i64, [3], [1, 2, 1]),
            helper.make_tensor("k", i64, [], [1])]
    nodes = [
        helper.make_node("ConvTranspose", ["x", "wt", "bt"], ["up"], strides=[3],
                         pads=[1, 2], output_padding=[1]),
        helper.make_node("ConvTranspose", ["x", "wg"], ["upg"], strides=[2], group=2,
                         pads=[1, 1]),
        helper.make_node("MaxPool", ["x"], ["mp", "mpi"], kernel_shape=[3], strides=[2],
                         pads=[1, 1]),
        helper.make_node("AveragePool", ["x"], ["ap"], kernel_shape=[3], pads=[1, 1]),
        helper.make_node("AveragePool", ["x"], ["api"], kernel_shape=[2], strides=[2],
                         pads=[1, 0], count_include_pad=1),
        helper.make_node("MaxPool", ["x"], ["mpc"], kernel_shape=[3], strides=[2],
                         ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["apc"], kernel_shape=[3], strides=[3],
                         pads=[1, 1], ceil_mode=1),
        helper.make_node("GlobalAveragePool", ["x"], ["gap"]),
        helper.make_node("Concat", ["up", "up"], ["up6"], axis=1),
        helper.make_node("InstanceNormalization", ["up6", "s6", "b6"], ["inorm"]),
        helper.make_node("GroupNormalization", ["up6", "s2", "b2"], ["gnorm"],
                         num_groups=2),
        helper.make_node("BatchNormalization", ["up6", "s6", "b6", "mean", "var"], ["bnorm"]),
        helper.make_node("Tile", ["x", "reps"], ["tiled"]),
        helper.make_node("Trilu", ["x", "k"], ["tri"], upper=0),
    ]
    outs = ["up", "upg", "mp", "mpi", "ap", "api", "mpc", "apc", "gap", "inorm", "gnorm",
            "bnorm", "tiled", "tri"]
    graph = helper.make_graph(
        nodes, "vocoder", [helper.make_tensor_value_info("x", f, ["n", 4, "t"])],
        [helper.make_tensor_value_info(n, i64 if n == "mpi" else f, None) for n in outs],
        initializer=init)
    path = _save(tmp_path, graph, opset=18)
    model = mp.compile(path, dynamic_shapes=True)
    for n, length in [(1, 9), (2, 16), (3, 4), (1, 5)]:
        feeds = {"x": rng.standard_normal((n, 4, length)).astype(np.float32)}
        _assert_matches_ort(model.run(feeds), path, feeds, 1e-4, (n, length))
    assert model.num_variants == 1



def test_generator_ops_over_runtime_lengths(tmp_path):
    """Upsampling and token-selection ops over run-time batch and length,
    compiled once: Resize by constant scales along the length (nearest,
    linear; half_pixel, align_corners, pytorch_half_pixel,
    half_pixel_symmetric coordinates), Einsum with a broadcast ellipsis dim that is 1 at run
    time, ArgMax, CumSum, GatherElements, GatherND and ScatterND (with
    add)."""
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    rng = np.random.default_rng(10)
    init = [helper.make_tensor("scales", f, [3], [1.0, 1.0, 2.0]),
            helper.make_tensor("scales_lin", f, [3], [1.0, 1.0, 1.5]),

            helper.make_tensor("axis", i64, [], [2])]
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["up_nearest"], mode="nearest"),
        helper.make_node("Resize", ["x", "", "scales_lin"], ["up_linear"], mode="linear"),
        helper.make_node("Resize", ["x", "", "scales"], ["up_corners"], mode="linear",
                         coordinate_transformation_mode="align_corners"),
        helper.make_node("Resize", ["x", "", "scales_lin"], ["up_pytorch"], mode="linear",
                         coordinate_transformation_mode="pytorch_half_pixel"),
        helper.make_node("Resize", ["x", "", "scales_lin"], ["up_symmetric"], mode="linear",
                         coordinate_transformation_mode="half_pixel_symmetric"),

        helper.make_node("Einsum", ["x", "w"], ["mixed"], equation="...ij,...jk->...ik"),
        helper.make_node("ArgMax", ["x"], ["best"], axis=2, keepdims=1),
        helper.make_node("CumSum", ["x", "axis"], ["running"]),
        helper.make_node("GatherElements", ["x", "idx"], ["picked"], axis=2),
        helper.make_node("GatherND", ["x", "rows"], ["rows_out"]),
        helper.make_node("ScatterND", ["x", "rows", "rows_out"], ["scattered"],
                         reduction="add"),
    ]
    graph = helper.make_graph(
        nodes, "generator",
        [helper.make_tensor_value_info("x", f, ["n", 4, "t"]),
         helper.make_tensor_value_info("w", f, ["m", "t", 3]),
         helper.make_tensor_value_info("idx", i64, ["n", 4, "k"]),
         helper.make_tensor_value_info("rows", i64, ["p", 2])],
        [helper.make_tensor_value_info(n, i64 if n == "best" else f, None)
         for n in ("up_nearest", "up_linear", "up_corners", "up_pytorch", "up_symmetric",
                   "mixed", "best", "running", "picked", "rows_out", "scattered")],
        initializer=init)
    path = _save(tmp_path, graph, opset=18)
    model = mp.compile(path, dynamic_shapes=True)
    for n, m, length, k in [(1, 3, 9, 2), (2, 1, 16, 5), (3, 3, 5, 1)]:
        feeds = {"x": rng.standard_normal((n, 4, length)).astype(np.float32),
                 "w": rng.standard_normal((m, length, 3)).astype(np.float32),
                 "idx": rng.integers(-length, length, (n, 4, k)).astype(np.int64),
                 "rows": np.array([[0, 1], [n - 1, -1], [0, 2]][:k], np.int64)}
        _assert_matches_ort(model.run(feeds), path, feeds, 1e-5, (n, m, length, k))
    assert model.num_variants == 1



def test_resize_to_sizes_over_runtime_lengths(tmp_path):
    """Resize to a constant output length from a run-time input length,
    compiled once: the scale (size / length) is a run-time value, in
    nearest, linear and cubic modes and several coordinate transformations,
    antialiased (downsampling then widens the filter over a run-time window
    of taps), and keeping the aspect ratio (the output sizes are then
    run-time values), for lengths below, at and above the output size."""
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    init = [helper.make_tensor("sizes", i64, [4], [1, 1, 4, 12]),
            helper.make_tensor("sizes_axis", i64, [1], [12]),
            helper.make_tensor("sizes_hw", i64, [2], [6, 12])]
    cases = {  # output: (mode, coordinate transformation, sizes, extra attributes)
        "nearest": ("nearest", "half_pixel", "sizes", {}),
        "linear": ("linear", "half_pixel", "sizes", {}),
        "corners": ("linear", "align_corners", "sizes", {}),
        "asymmetric": ("linear", "asymmetric", "sizes", {}),
        "cubic": ("cubic", "pytorch_half_pixel", "sizes_axis", {"axes": [3]}),
        "antialias": ("linear", "half_pixel", "sizes_axis", {"axes": [3], "antialias": 1}),
        "antialias_cubic_excluded": ("cubic", "half_pixel", "sizes_axis",
                                     {"axes": [3], "antialias": 1, "exclude_outside": 1}),
        "not_larger": ("linear", "half_pixel", "sizes_hw",
                       {"axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"}),
        "not_smaller": ("nearest", "asymmetric", "sizes_hw",
                        {"axes": [2, 3], "keep_aspect_ratio_policy": "not_smaller"}),
    }
    nodes = [helper.make_node("Resize", ["x", "", "", sizes], [name], mode=mode,
                              coordinate_transformation_mode=ctm, **attrs)
             for name, (mode, ctm, sizes, attrs) in cases.items()]
    graph = helper.make_graph(
        nodes, "resize_sizes", [helper.make_tensor_value_info("x", f, [1, 1, 4, "t"])],
        [helper.make_tensor_value_info(n, f, None) for n in cases], initializer=init)
    path = _save(tmp_path, graph, opset=19)
    model = mp.compile(path, dynamic_shapes=True)
    from onnx.reference import ReferenceEvaluator
    reference = ReferenceEvaluator(onnx.load(str(path)))
    rng = np.random.default_rng(14)
    for length in (1, 5, 12, 30, 77):
        feeds = {"x": rng.standard_normal((1, 1, 4, length)).astype(np.float32)}
        got = model.run(feeds)
        for name, want in zip(cases, reference.run(None, feeds)):
            assert got[name].shape == want.shape, (name, length)
            np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name} at length {length}")
    assert model.num_variants == 1


def test_reverse_slices_over_runtime_lengths(tmp_path):
    """Slice with negative steps on run-time dims (a time reversal, every
    other frame backwards from the end, out-of-range bounds clamped the
    ONNX way) next to a forward step on another axis."""
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    cases = {  # output: (starts, ends, axes, steps)
        "flipped": ([-1], [-(1 << 62)], [2], [-1]),
        "every_other_back": ([-2, 0], [0, 4], [2, 1], [-2, 2]),
        "clamped": ([1 << 40, 1], [-100, 3], [2, 0], [-3, 1]),
    }
    nodes, init = [], []
    for name, (starts, ends, axes, steps) in cases.items():
        for part, values in zip(("starts", "ends", "axes", "steps"), (starts, ends, axes, steps)):
            init.append(helper.make_tensor(f"{name}_{part}", i64, [len(values)], values))
        nodes.append(helper.make_node("Slice", ["x"] + [f"{name}_{p}" for p in
                                                         ("starts", "ends", "axes", "steps")],
                                      [name]))
    graph = helper.make_graph(
        nodes, "reverse", [helper.make_tensor_value_info("x", f, ["n", 4, "t"])],
        [helper.make_tensor_value_info(n, f, None) for n in cases], initializer=init)
    path = _save(tmp_path, graph)
    model = mp.compile(path, dynamic_shapes=True)
    rng = np.random.default_rng(12)
    for n, length in [(1, 1), (2, 7), (3, 12)]:
        feeds = {"x": rng.standard_normal((n, 4, length)).astype(np.float32)}
        _assert_matches_ort(model.run(feeds), path, feeds, 0, (n, length))
    assert model.num_variants == 1



def test_crop_and_resize_over_runtime_lengths(tmp_path):
    """Resize with tf_crop_and_resize coordinates along a run-time length
    gives what the same model specialized to each shape gives (the ONNX
    node tests check that one). onnxruntime is no reference here: it sizes
    the crop by the integer output length where the ONNX reference takes
    scale * length, and skips resizing when every scale is 1."""
    f = TensorProto.FLOAT
    init = [helper.make_tensor("scales", f, [3], [1.0, 1.0, 0.6]),
            helper.make_tensor("roi", f, [6], [0, 0, -0.2, 1, 1, 0.9])]
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "roi", "scales"], ["crop"], mode="linear",
                          coordinate_transformation_mode="tf_crop_and_resize",
                          extrapolation_value=-2.0)],
        "crop", [helper.make_tensor_value_info("x", f, [1, 4, "t"])],
        [helper.make_tensor_value_info("crop", f, None)], initializer=init)
    path = _save(tmp_path, graph, opset=18)
    dynamic, specialized = mp.compile(path, dynamic_shapes=True), mp.compile(path)
    rng = np.random.default_rng(13)
    for length in (1, 2, 9, 16):
        feeds = {"x": rng.standard_normal((1, 4, length)).astype(np.float32)}
        got, want = dynamic.run(feeds)["crop"], specialized.run(feeds)["crop"]
        assert got.shape == want.shape, length
        np.testing.assert_array_equal(got, want, err_msg=f"length {length}")
    assert dynamic.num_variants == 1



@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter_over_runtime_lengths(tmp_path, mode):
    """TensorScatter-24 (a KV cache written at per-batch positions) over
    run-time batch, cache and update lengths, an empty update included,
    against the ONNX reference implementation."""
    from onnx.reference import ReferenceEvaluator
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    graph = helper.make_graph(
        [helper.make_node("TensorScatter", ["cache", "update", "at"], ["out"], axis=-2,
                          mode=mode)],
        "scatter", [helper.make_tensor_value_info("cache", f, ["b", 2, "p", 4]),
                    helper.make_tensor_value_info("update", f, ["b", 2, "s", 4]),
                    helper.make_tensor_value_info("at", i64, ["b"])],
        [helper.make_tensor_value_info("out", f, None)])
    path = _save(tmp_path, graph, opset=24)
    model = mp.compile(path, dynamic_shapes=True)
    reference = ReferenceEvaluator(str(path))
    rng = np.random.default_rng(14)
    for batch, cache, seq, at in [(1, 8, 1, [3]), (2, 6, 3, [0, 2]), (3, 5, 0, [1, 4, 0]),
                                  (2, 7, 2, [6, 5])]:
        if mode == "linear":
            at = [min(a, cache - seq) for a in at]
        feeds = {"cache": rng.standard_normal((batch, 2, cache, 4)).astype(np.float32),
                 "update": rng.standard_normal((batch, 2, seq, 4)).astype(np.float32),
                 "at": np.array(at, np.int64)}
        want = reference.run(None, feeds)[0]
        np.testing.assert_array_equal(model.run(feeds)["out"], want,
                                      err_msg=f"{mode} {batch}x{cache}x{seq} at {at}")
    assert model.num_variants == 1


@pytest.mark.parametrize("case", ["test_tensorscatter", "test_tensorscatter_3d",
                                  "test_tensorscatter_circular"])
def test_tensor_scatter_node_tests_with_dynamic_shapes(tmp_path, case):
    """The ONNX backend's TensorScatter node tests under --dynamic-shapes,
    through mp-run's JIT and a library. The JIT once crashed here: the cache
    was marked as updated in place, so the step returned no descriptor for
    it while the run read one per output."""
    node = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node" / case
    require_built(MP_RUN, MP_COMPILE)
    require_present(node)
    data = node / "test_data_set_0"
    jit = subprocess.run([str(MP_RUN), str(node / "model.onnx"), "--compare", str(data),
                          "--dynamic-shapes"], capture_output=True, text=True, timeout=300)
    assert jit.returncode == 0 and "PASS" in jit.stdout, jit.stdout + jit.stderr
    lib = tmp_path / "libscatter.so"
    built = subprocess.run([str(MP_COMPILE), str(node / "model.onnx"), "-o", str(lib),
                            "--dynamic-shapes"], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    run = subprocess.run([str(MP_RUN), str(lib), "--compare", str(data)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "PASS" in run.stdout, run.stdout + run.stderr


def _squeeze_if_model(tmp_path):
    """TorchScript's `squeeze(1)` where dim 1 may be 1: an If on
    Shape(x)[1] == 1 whose branches return [b, 4] and [b, n, 4] (trimmed
    from speecht5_decoder_step_ts), then a sum over the last axis; `y`
    keeps its own dynamic length."""
    f = TensorProto.FLOAT
    then_branch = helper.make_graph(
        [helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(
            np.array([1], np.int64))),
         helper.make_node("Squeeze", ["x", "one"], ["squeezed"])],
        "then", [], [helper.make_tensor_value_info("squeezed", f, ["b", 4])])
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["kept"])],
        "else", [], [helper.make_tensor_value_info("kept", f, ["b", "n", 4])])
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Gather", ["shape", "axis1"], ["n"]),
         helper.make_node("Equal", ["n", "one_i"], ["is_one"]),
         helper.make_node("If", ["is_one"], ["picked"], then_branch=then_branch,
                          else_branch=else_branch),
         helper.make_node("ReduceSum", ["picked", "last"], ["sum"], keepdims=0),
         helper.make_node("Add", ["y", "y"], ["twice"])],
        "squeeze_if",
        [helper.make_tensor_value_info("x", f, ["b", "n", 4]),
         helper.make_tensor_value_info("y", f, ["m"])],
        [helper.make_tensor_value_info("sum", f, None),
         helper.make_tensor_value_info("twice", f, ["m"])],
        initializer=[numpy_helper.from_array(np.array(1, np.int64), "axis1"),
                     numpy_helper.from_array(np.array(1, np.int64), "one_i"),
                     numpy_helper.from_array(np.array([-1], np.int64), "last")])
    return _save(tmp_path, graph)


def test_if_of_different_ranks_with_dynamic_shapes(tmp_path):
    """An If whose branches differ in rank cannot be one dynamic-shape
    library: mp-compile --dynamic-shapes names the If and both branch types
    and says to fix the dims its condition reads. With x's shape given by
    --input-shape the If folds, and y stays dynamic (checked against
    onnxruntime at several lengths of y)."""
    require_built(MP_RUN, MP_COMPILE)
    path = _squeeze_if_model(tmp_path)
    lib = tmp_path / "libsqueeze.so"
    refused = subprocess.run([str(MP_COMPILE), str(path), "-o", str(lib), "--dynamic-shapes"],
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0
    assert "then_branch" in refused.stderr and "else_branch" in refused.stderr, refused.stderr
    assert "--input-shape" in refused.stderr, refused.stderr
    for n in (1, 3):
        built = subprocess.run([str(MP_COMPILE), str(path), "-o", str(lib), "--dynamic-shapes",
                                "--input-shape", f"x=2x{n}x4"],
                               capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, built.stderr
        rng = np.random.default_rng(n)
        for m in (1, 5, 9):
            feeds = {"x": rng.standard_normal((2, n, 4)).astype(np.float32),
                     "y": rng.standard_normal(m).astype(np.float32)}
            data = tmp_path / f"set_{n}_{m}"
            data.mkdir()
            for i, name in enumerate(("x", "y")):
                (data / f"input_{i}.pb").write_bytes(
                    numpy_helper.from_array(feeds[name], name).SerializeToString())
            want = _ort(path, feeds)
            for i, name in enumerate(("sum", "twice")):
                (data / f"output_{i}.pb").write_bytes(
                    numpy_helper.from_array(want[name], name).SerializeToString())
            run = subprocess.run([str(MP_RUN), str(lib), "--compare", str(data)],
                                 capture_output=True, text=True, timeout=300)
            assert run.returncode == 0, run.stdout + run.stderr
            rows = {line.split()[0]: line for line in run.stdout.splitlines() if line.strip()}
            assert rows["sum"].endswith("PASS") and rows["twice"].endswith("PASS"), run.stdout


def test_if_on_a_run_time_value(tmp_path):
    """silero VAD picks its 16 kHz or 8 kHz subgraph with an If on the
    sample-rate input. With dynamic shapes the condition is a run-time
    value (scf.if), so one library and one JIT variant serve both rates and
    any batch and chunk length; checked against onnxruntime."""
    model = REPO.parent / "shared" / "models" / "silero_vad_op18_ifless" / "model.onnx"
    require_built(MP_COMPILE)
    require_present(model)
    lib_path = tmp_path / "libvad.so"
    built = subprocess.run([str(MP_COMPILE), str(model), "-o", str(lib_path), "--dynamic-shapes"],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    lib = mp.load(lib_path)
    assert "sr" in [name for name, _, _ in lib.inputs]
    jit = mp.compile(model, dynamic_shapes=True)
    rng = np.random.default_rng(16)
    for sr, batch, length in ((16000, 2, 512), (8000, 2, 256), (16000, 1, 1024), (8000, 3, 512)):
        feeds = {"input": (0.1 * rng.standard_normal((batch, length))).astype(np.float32),
                 "sr": np.array(sr, np.int64),
                 "state": (0.1 * rng.standard_normal((2, batch, 128))).astype(np.float32)}
        for ours, where in ((lib.run(feeds), "library"), (jit.run(feeds), "JIT")):
            _assert_matches_ort(ours, model, feeds, 1e-4, f"{where} sr={sr} {batch}x{length}")
    assert jit.num_variants == 1


SHARED_MODELS = REPO.parent / "shared" / "models"


@pytest.mark.slow  # a sweep of ../shared/models; the decoder tests keep each path in the fast tier
def test_shared_models_with_dynamic_shapes():
    """The shared models compiled once with their dynamic dims kept match
    onnxruntime's stored outputs (every test_data_set): gpt2's contrib
    Attention with past, llama's contrib MultiHeadAttention, RotaryEmbedding
    and Tile-built causal mask, silero's If and Conv over run-time lengths,
    and the Attention-23 models."""
    require_built(MP_RUN)
    require_present(SHARED_MODELS)
    proc = subprocess.run([str(MP_RUN), "--test-dir", str(SHARED_MODELS), "--dynamic-shapes"],
                          capture_output=True, text=True, timeout=1800)
    lines = {line.split()[1].rstrip(":"): line for line in proc.stdout.splitlines()
             if line.startswith(("PASS ", "FAIL ", "SKIP "))}
    for name in ("genai_gpt2_fp32_contrib_attention_past", "genai_llama_fp16_mha_extdata",
                 "silero_vad_op18_ifless", "openwakeword_hello_deepa", "local_attn23_kv",
                 "local_attn23_gqa_fp16"):
        assert lines[name].startswith("PASS"), lines[name]


def _load_test_set(model_dir, data_set):
    """The inputs (by graph-input name) and expected outputs of one
    test_data_set folder."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(model_dir / "model.onnx"), load_external_data=False).graph
    def read(path):
        t = onnx.TensorProto()
        t.ParseFromString(path.read_bytes())
        return numpy_helper.to_array(t)
    feeds = {i.name: read(data_set / f"input_{n}.pb") for n, i in enumerate(graph.input)}
    expected = {o.name: read(data_set / f"output_{n}.pb") for n, o in enumerate(graph.output)
                if (data_set / f"output_{n}.pb").is_file()}
    return feeds, expected


def test_llama_one_variant_for_prefill_and_decode():
    """llama (contrib MultiHeadAttention, RotaryEmbedding, a causal mask
    built in the graph from attention_mask) compiled once with dynamic
    shapes runs its prefill on empty caches and its decode steps, and
    matches onnxruntime's stored outputs at fp16 tolerances: the mask and
    shape inputs stay run-time values instead of being compiled in."""
    model_dir = SHARED_MODELS / "genai_llama_fp16_mha_extdata"
    if not model_dir.is_dir():
        pytest.skip("../shared/models is missing")
    model = mp.compile(model_dir / "model.onnx", dynamic_shapes=True)
    for data_set in sorted(model_dir.glob("test_data_set_*")):
        feeds, expected = _load_test_set(model_dir, data_set)
        got = model.run(feeds)
        for name, want in expected.items():
            assert got[name].shape == want.shape, (data_set.name, name)
            np.testing.assert_allclose(got[name].astype(np.float32), want.astype(np.float32),
                                       rtol=1e-2, atol=1e-2, err_msg=f"{data_set.name}: {name}")
    assert model.num_variants == 1


@pytest.mark.slow  # a sweep of ../shared/models; the decoder tests keep each path in the fast tier
def test_shared_models_through_the_cuda_kernel_mapping():
    """MP_JIT_GPU_MAPPING=1: the JIT lowers as the CUDA target does (attention
    with materialized scores, every op one generic kernel of mp-map-to-gpu)
    and runs the kernels' block and thread loops on the CPU, so their index
    arithmetic meets onnxruntime's stored outputs without a GPU; with dynamic
    shapes their grids are sized at run time, as a CUDA library with
    --dynamic-shapes sizes them. llama computes shapes on tensors, which on
    the CUDA target live in device memory: the host reads the sizes back."""
    require_built(MP_RUN)
    require_present(SHARED_MODELS)
    env = dict(os.environ, MP_JIT_GPU_MAPPING="1")
    for dynamic in ([], ["--dynamic-shapes"]):
        lines = {}
        for tree in (SHARED_MODELS, REPO / "examples"):
            proc = subprocess.run([str(MP_RUN), "--test-dir", str(tree), *dynamic],
                                  capture_output=True, text=True, timeout=1800, env=env)
            lines.update({line.split()[1].rstrip(":"): line for line in proc.stdout.splitlines()
                          if line.startswith(("PASS ", "FAIL ", "SKIP "))})
        for name in ("genai_gpt2_fp32_contrib_attention_past", "silero_vad_op18_ifless",
                     "openwakeword_hello_deepa", "local_attn23_kv", "local_attn23_gqa_fp16",
                     "tts_decoder", "genai_llama_fp16_mha_extdata"):
            assert lines[name].startswith("PASS"), (dynamic, lines[name])


def _has_ptxas() -> bool:
    import shutil
    roots = [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    return bool(shutil.which("ptxas")) or any(r and (Path(r) / "bin" / "ptxas").is_file() for r in roots)


CUDA_SHAPES_SCRIPT = """
import sys
import numpy as np
import mp
lib = mp.load(sys.argv[1])
rng = np.random.default_rng(0)
for batch, enc_len, past in [(1, 3, 0), (3, 17, 5)]:
    feeds = {"mel_frame": rng.standard_normal((batch, 1, 80)).astype(np.float32),
             "encoder_out": rng.standard_normal((batch, enc_len, 128)).astype(np.float32)}
    for name, dtype, shape in lib.inputs:
        if name.startswith("past_"):
            feeds[name] = np.zeros((batch, 4, past, 32), dtype)
    outs = lib.run(feeds)
    print("shapes", batch, enc_len, past, {n: list(a.shape) for n, a in outs.items()}, flush=True)
"""


def test_cuda_library_with_dynamic_shapes(dynamic_libs, tmp_path):
    """--target cuda --dynamic-shapes: the decoder's library builds (ptxas on
    every kernel) and, on the fake driver (test/Runtime/Inputs/fake_cuda.c,
    whose kernels do nothing), its generated wrapper uploads the inputs and
    returns every output in the shape the CPU library gives at the same
    sizes: the host code sizes buffers and grids at run time."""
    import json
    import shutil
    import sys
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not _has_ptxas() or not cc:
        pytest.skip("no CUDA toolkit (ptxas) or C compiler on this machine")
    lib = tmp_path / "libdec.so"
    proc = subprocess.run([str(MP_COMPILE), str(DECODER), "-o", str(lib), "--dynamic-shapes",
                           "--target", "cuda", "--gpu", "sm_80"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    desc = json.loads(lib.with_suffix(".json").read_text())
    assert desc["target"] == "cuda" and desc["entry"] == "mp_model_run_shaped"
    fake = tmp_path / "fake_cuda.so"
    subprocess.run([cc, "-shared", "-fPIC", str(REPO / "test/Runtime/Inputs/fake_cuda.c"),
                    "-o", str(fake)], check=True)
    script = tmp_path / "shapes.py"
    script.write_text(CUDA_SHAPES_SCRIPT)
    env = dict(os.environ, MP_CUDA_DRIVER=str(fake), FAKE_CUDA_ANY_KERNEL="1",
               PYTHONPATH=str(REPO / "python"))
    cuda = subprocess.run([sys.executable, str(script), str(lib)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert cuda.returncode == 0, cuda.stdout[-2000:] + cuda.stderr
    cpu = subprocess.run([sys.executable, str(script), str(dynamic_libs["fp32"])],
                         env=dict(os.environ, PYTHONPATH=str(REPO / "python")),
                         capture_output=True, text=True, timeout=300)
    assert cpu.returncode == 0, cpu.stderr
    shapes = lambda out: [l for l in out.splitlines() if l.startswith("shapes")]  # noqa: E731
    assert len(shapes(cpu.stdout)) == 2
    assert shapes(cuda.stdout) == shapes(cpu.stdout)
