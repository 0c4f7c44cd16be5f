"""RandomNormal(Like) and RandomUniform(Like) run through ``mp-run``.

mp's generator is counter-based (splitmix64 of the seed and the element's
index, docs/ops.md "Random numbers"), so these checks are deterministic: the
sample statistics of 1e5 values are fixed numbers, and the bounds below
(about 6 standard errors) say they are what the distributions give. Also
checked: uniform values stay in [low, high), two runs give the same values,
a different seed gives different ones, dynamic shapes give the same values
as static ones, and ``RandomNormalLike(x) * 0`` is exactly zero (Box-Muller
never takes the log of 0, so no NaN).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from mp.tools import build_tool

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

MP_RUN = build_tool("mp-run")
N = 100_000
ROWS, COLS = 250, 400  # N elements


@pytest.fixture(autouse=True)
def _needs_mp_run():
    if not MP_RUN.is_file():
        pytest.skip(f"mp-run is not built ({MP_RUN} missing; set MP_BUILD_DIR or build mp)")


def _model(node, inputs, output, elem=TensorProto.FLOAT, shape=(ROWS, COLS), extra=()):
    """A one-output model around `node` (and `extra` nodes after it)."""
    graph = helper.make_graph(
        [node, *extra], "random",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, dims) for name, dims in inputs],
        [helper.make_tensor_value_info(output, elem, list(shape))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(tmp_path: Path, model, feeds=None, extra_args=(), tag="run"):
    """Runs `model` with mp-run; returns {output name: array}."""
    work = tmp_path / tag
    work.mkdir()
    path = work / "model.onnx"
    onnx.save(model, path)
    args = [str(MP_RUN), str(path), "--output-dir", str(work / "out"), *extra_args]
    for name, value in (feeds or {}).items():
        np.save(work / f"{name}.npy", value)
        args += ["--input", f"{name}={work / f'{name}.npy'}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {p.stem: np.load(p) for p in (work / "out").glob("*.npy")}


def _x(rows=ROWS, cols=COLS):
    return np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)


def _normal(seed=None, mean=0.0, scale=1.0, like=True, **attrs):
    if seed is not None:
        attrs["seed"] = seed
    if like:
        node = helper.make_node("RandomNormalLike", ["x"], ["y"], mean=mean, scale=scale, **attrs)
    else:
        node = helper.make_node("RandomNormal", [], ["y"], mean=mean, scale=scale,
                                shape=[ROWS, COLS], **attrs)
    return node


def _uniform(seed=None, low=0.0, high=1.0, like=True, **attrs):
    if seed is not None:
        attrs["seed"] = seed
    if like:
        return helper.make_node("RandomUniformLike", ["x"], ["y"], low=low, high=high, **attrs)
    return helper.make_node("RandomUniform", [], ["y"], low=low, high=high, shape=[ROWS, COLS],
                            **attrs)


def test_normal_statistics(tmp_path):
    mean, scale = 1.5, 2.0
    y = _run(tmp_path, _model(_normal(seed=3.0, mean=mean, scale=scale), [("x", [ROWS, COLS])],
                              "y"), {"x": _x()})["y"]
    assert y.shape == (ROWS, COLS) and y.dtype == np.float32
    assert np.isfinite(y).all()
    z = (y.astype(np.float64) - mean) / scale
    # Standard errors over 1e5 samples: mean 0.0032, std 0.0022.
    assert abs(z.mean()) < 0.02, z.mean()
    assert abs(z.std() - 1.0) < 0.015, z.std()
    # Shape of the distribution: within 1 and 2 sigma, and symmetric.
    assert abs(np.mean(np.abs(z) < 1.0) - 0.6827) < 0.01
    assert abs(np.mean(np.abs(z) < 2.0) - 0.9545) < 0.006
    assert abs(np.mean(z > 0) - 0.5) < 0.01
    # Uncorrelated neighbours (row-major order, what the counter steps over).
    flat = z.ravel()
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < 0.02


def test_normal_without_input_and_default_seed(tmp_path):
    """RandomNormal (shape attribute, no seed: the default seed 0.0)."""
    model = _model(_normal(like=False), [], "y")
    y = _run(tmp_path, model)["y"].astype(np.float64)
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1.0) < 0.015
    # No seed is seed 0.0.
    seeded = _run(tmp_path, _model(_normal(seed=0.0, like=False), [], "y"), tag="seeded")["y"]
    np.testing.assert_array_equal(y.astype(np.float32), seeded)


@pytest.mark.parametrize("elem,np_type", [(TensorProto.FLOAT, np.float32),
                                          (TensorProto.FLOAT16, np.float16)])
def test_uniform_range_and_statistics(tmp_path, elem, np_type):
    low, high = -2.0, 3.0
    model = _model(_uniform(seed=11.0, low=low, high=high, like=False, dtype=elem), [], "y",
                   elem=elem)
    y = _run(tmp_path, model)["y"]
    assert y.dtype == np_type
    assert y.min() >= low and y.max() < high, (y.min(), y.max())
    # Both ends are reached (within 1e-3 of the span over 1e5 samples).
    assert y.min() < low + 5e-3 and y.max() > high - 5e-3
    u = (y.astype(np.float64) - low) / (high - low)
    # Standard errors: mean 0.0009, std 0.0006 (uniform std is 1/sqrt(12)).
    assert abs(u.mean() - 0.5) < 0.006, u.mean()
    assert abs(u.std() - 12 ** -0.5) < 0.004, u.std()
    # Flat: every tenth of the range holds about a tenth of the values.
    counts = np.histogram(u, bins=10, range=(0, 1))[0] / u.size
    assert np.abs(counts - 0.1).max() < 0.006, counts


def test_deterministic_and_seeded(tmp_path):
    feeds = {"x": _x()}
    inputs = [("x", [ROWS, COLS])]
    first = _run(tmp_path, _model(_uniform(seed=5.0), inputs, "y"), feeds, tag="a")["y"]
    again = _run(tmp_path, _model(_uniform(seed=5.0), inputs, "y"), feeds, tag="b")["y"]
    other = _run(tmp_path, _model(_uniform(seed=6.0), inputs, "y"), feeds, tag="c")["y"]
    np.testing.assert_array_equal(first, again)
    # Another seed: another stream, not a shifted or partly equal one.
    assert np.mean(first == other) < 1e-3
    assert abs(np.corrcoef(first.ravel(), other.ravel())[0, 1]) < 0.02
    # The input's values are not read, only its shape.
    moved = _run(tmp_path, _model(_uniform(seed=5.0), inputs, "y"), {"x": feeds["x"] + 1},
                 tag="d")["y"]
    np.testing.assert_array_equal(first, moved)
    normal = _run(tmp_path, _model(_normal(seed=5.0), inputs, "y"), feeds, tag="e")["y"]
    normal_other = _run(tmp_path, _model(_normal(seed=6.0), inputs, "y"), feeds, tag="f")["y"]
    assert np.mean(normal == normal_other) < 1e-3


def test_zero_scaled_noise_is_exactly_zero(tmp_path):
    """RandomNormalLike(x) * 0, what torch exports of VITS compute with
    noise_scale = 0: every value is 0.0, none NaN (log never sees 0)."""
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    graph = helper.make_graph(
        [helper.make_node("RandomNormalLike", ["x"], ["noise"]),
         helper.make_node("Mul", ["noise", "zero"], ["y"])],
        "zero_noise", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, COLS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [ROWS, COLS])], [zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    y = _run(tmp_path, model, {"x": _x()})["y"]
    assert not np.isnan(y).any()
    assert (y == 0.0).all()


def test_dynamic_shapes_match_static(tmp_path):
    """mp-run --dynamic-shapes: the element at a row-major index is the same
    whatever the shape is known as (and a longer tensor extends a shorter
    one's stream)."""
    node = _normal(seed=9.0)
    dynamic = _model(node, [("x", ["batch", "length"])], "y", shape=["batch", "length"])
    static = _model(node, [("x", [ROWS, COLS])], "y")
    x = _x()
    dyn = _run(tmp_path, dynamic, {"x": x}, ["--dynamic-shapes"], tag="dyn")["y"]
    sta = _run(tmp_path, static, {"x": x}, tag="static")["y"]
    np.testing.assert_array_equal(dyn, sta)
    small = _run(tmp_path, dynamic, {"x": x[:3, :7]}, ["--dynamic-shapes"], tag="small")["y"]
    assert small.shape == (3, 7)
    np.testing.assert_array_equal(small.ravel(), sta.ravel()[:21])
