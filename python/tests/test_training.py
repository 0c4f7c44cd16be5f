"""Training steps end to end: optimizer math, loss scaling, the trainer.

The optimizer updates are checked against PyTorch's published update rules
(SGD with momentum, AdamW) applied in numpy to the gradients mp returns.
The demonstration on mp.models.tiny_lm is the one bench/training.py records.
"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import mp  # noqa: E402
from mp.training import Trainer  # noqa: E402
from mp.models import tiny_lm  # noqa: E402

pytestmark = pytest.mark.skipif(not mp.library_path().is_file(),
                                reason="libMPCAPI.so is not built")


def mlp(path):
    """loss = mean((tanh(x @ w1 + b1) @ w2 - t)^2), weights as initializers."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.normal(size=s).astype(np.float32) * 0.5, n)
             for n, s in (("w1", (4, 8)), ("b1", (8,)), ("w2", (8, 2)))]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["h1"]),
             helper.make_node("Tanh", ["h1"], ["a"]),
             helper.make_node("MatMul", ["a", "w2"], ["y"]),
             helper.make_node("Sub", ["y", "t"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["d2"]),
             helper.make_node("ReduceMean", ["d2"], ["loss"], keepdims=0)]
    inits.append(numpy_helper.from_array(np.array(2.0, np.float32), "two"))
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 4]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [5, 2])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 2])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    data = {"x": rng.normal(size=(5, 4)).astype(np.float32),
            "t": rng.normal(size=(5, 2)).astype(np.float32)}
    return path, data


def test_step_signature(tmp_path):
    path, _ = mlp(tmp_path / "mlp.onnx")
    step = mp.compile(path, "mixed", training="loss=loss optimizer=adamw",
                      loss_scaling="mode=dynamic")
    assert [i.name for i in step.inputs] == [
        "x", "t", "w1", "b1", "w2", "adamw.step", "w1.exp_avg", "w1.exp_avg_sq",
        "b1.exp_avg", "b1.exp_avg_sq", "w2.exp_avg", "w2.exp_avg_sq",
        "loss_scale", "loss_scale.good_steps"]
    assert [o.name for o in step.outputs] == [
        "loss", "w1.next", "b1.next", "w2.next", "adamw.step.next",
        "w1.exp_avg.next", "w1.exp_avg_sq.next", "b1.exp_avg.next",
        "b1.exp_avg_sq.next", "w2.exp_avg.next", "w2.exp_avg_sq.next",
        "loss_scale.next", "loss_scale.good_steps.next", "found_inf"]
    # Master weights and state stay fp32 although the forward runs in fp16.
    assert all(i.dtype == np.float32 for i in step.inputs[2:13])


@pytest.mark.parametrize("optimizer,options", [
    ("sgd", "momentum=0.9 weight-decay=0.01"),
    ("adamw", "beta1=0.8 beta2=0.99 eps=1e-6 weight-decay=0.1"),
])
def test_optimizer_matches_pytorch_update_rule(tmp_path, optimizer, options):
    path, data = mlp(tmp_path / "mlp.onnx")
    lr = 0.05
    trainer = Trainer(path, optimizer=optimizer, lr=lr, options=options, gradients=True)
    opts = dict(o.split("=") for o in options.split())
    wd = float(opts["weight-decay"])
    w = {n: trainer.state[n].astype(np.float64) for n in trainer.weights}
    m = {n: np.zeros_like(v) for n, v in w.items()}
    v2 = {n: np.zeros_like(v) for n, v in w.items()}
    for t in range(1, 4):
        r = trainer.step(data)
        for n in w:
            g = r.grads[n].astype(np.float64)
            if optimizer == "sgd":  # torch.optim.SGD, dampening 0
                g = g + wd * w[n]
                m[n] = float(opts["momentum"]) * m[n] + g
                w[n] = w[n] - lr * m[n]
            else:  # torch.optim.AdamW
                b1, b2, eps = float(opts["beta1"]), float(opts["beta2"]), float(opts["eps"])
                w[n] = w[n] * (1 - lr * wd)
                m[n] = b1 * m[n] + (1 - b1) * g
                v2[n] = b2 * v2[n] + (1 - b2) * g * g
                mhat, vhat = m[n] / (1 - b1 ** t), v2[n] / (1 - b2 ** t)
                w[n] = w[n] - lr * mhat / (np.sqrt(vhat) + eps)
            np.testing.assert_allclose(trainer.state[n], w[n], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{optimizer} step {t}: {n}")
    if optimizer == "adamw":
        assert float(trainer.state["adamw.step"]) == 3.0


def test_bad_training_options_are_reported(tmp_path):
    path, _ = mlp(tmp_path / "mlp.onnx")
    with pytest.raises(mp.Error, match="no output named 'nope'.*'loss', 'y'"):
        mp.compile(path, training="loss=nope")
    with pytest.raises(mp.Error, match="the loss 'y' must be one float element"):
        mp.compile(path, training="loss=y")
    with pytest.raises(mp.Error, match="unknown optimizer 'lamb'"):
        mp.compile(path, training="loss=loss optimizer=lamb")
    with pytest.raises(mp.Error, match="'x' is not a float initializer"):
        mp.compile(path, training="loss=loss weights=x")
    with pytest.raises(mp.Error, match="unknown mode 'auto'"):
        mp.compile(path, training="loss=loss", loss_scaling="mode=auto")
    with pytest.raises(mp.Error, match="loss scaling only applies to a training step"):
        mp.compile(path, loss_scaling="mode=dynamic")
    with pytest.raises(mp.Error, match="mp-build-training-step.*no-such-option"):
        mp.compile(path, training="loss=loss no-such-option=1")


@pytest.fixture(scope="module")
def lm_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny_lm") / "model.onnx"
    onnx.save(tiny_lm.build(), str(path))
    return path


@pytest.fixture(scope="module")
def lm(lm_path):
    """Compiled once per configuration (a JIT compile takes ~20 s here);
    tests call reset()."""
    cache = {}
    def get(precision, loss_scaling=None):
        key = (precision, loss_scaling)
        if key not in cache:
            cache[key] = Trainer(lm_path, lr=3e-3, precision=precision,
                                 loss_scaling=loss_scaling, gradients=True)
        cache[key].reset()
        return cache[key]
    return get


def batches(seed):
    rng = np.random.default_rng(seed)
    return lambda i: tiny_lm.batch(rng)


@pytest.mark.slow  # 300 steps in two precisions; the optimizer and overflow tests stay fast
def test_mixed_dynamic_scaling_trains_like_fp32(lm):
    steps = 300
    fp32 = lm("fp32").train(batches(0), steps)
    mixed = lm("mixed", "mode=dynamic").train(batches(0), steps)
    first = fp32[0].loss
    end32 = np.mean([r.loss for r in fp32[-10:]])
    end16 = np.mean([r.loss for r in mixed[-10:]])
    assert end32 < 0.3 * first, "fp32 did not learn the task"
    assert abs(end16 - end32) < 0.1 * end32 + 0.02, (end16, end32)


def test_no_scaling_underflows_gradients(lm):
    """Same weights, same batch: elements whose fp32 gradient is non-zero but
    whose fp16 backward (no scaling) flushed them to zero, vs dynamic
    scaling, which keeps them."""
    batch = batches(1)(0)
    ref = lm("fp32").step(batch).grads
    def lost(trainer):
        g = trainer.step(batch).grads
        return sum(int(((ref[n] != 0) & (g[n] == 0)).sum()) for n in ref)
    unscaled = lost(lm("mixed"))
    scaled = lost(lm("mixed", "mode=dynamic"))
    assert unscaled > 0
    assert scaled < unscaled / 10


def test_planted_overflow_is_skipped_then_scale_grows(lm):
    trainer = lm("mixed", "mode=dynamic init=1024 interval=4")
    get = batches(2)
    results, weights_before = [], None
    for i in range(12):
        batch = get(i)
        if i == 3:  # a loss weight that overflows fp16 in the backward pass
            batch["loss_weight"] = np.array(1e6, np.float32)
            weights_before = {n: trainer.state[n].copy() for n in trainer.weights}
        results.append(trainer.step(batch))
        if i == 3:
            for n in trainer.weights:  # the update was skipped
                np.testing.assert_array_equal(trainer.state[n], weights_before[n])
    skipped = [r.skipped for r in results]
    scales = [r.scale for r in results]
    assert skipped == [False] * 3 + [True] + [False] * 8
    # 1024 for steps 0-2; growth after 4 finite steps (the 4th is step 3's
    # overflow, so no): backoff to 512 at step 4, then 4 finite steps
    # (4-7) grow it back to 1024 at step 8.
    assert scales[:4] == [1024.0] * 4
    assert scales[4:8] == [512.0] * 4
    assert scales[8] == 1024.0
    assert trainer.skipped == 1


def test_shared_model_trains_with_an_mse_head(tmp_path):
    """openwakeword_hello_deepa (a real exported classifier head: Flatten,
    Gemm, LayerNorm spelled out with ReduceMean/Pow/Sqrt/Div, Relu, Sigmoid)
    with MSE against a target appended: its gradients match finite
    differences of onnxruntime, and a few steps fit the target in fp32 and
    in mixed precision with dynamic loss scaling."""
    from mp.tools.conformance import SHARED_MODELS
    ort = pytest.importorskip("onnxruntime")
    src = SHARED_MODELS / "openwakeword_hello_deepa" / "model.onnx"
    if not src.is_file():
        pytest.skip(f"{src} is missing")
    model = onnx.load(str(src))
    out = model.graph.output[0].name
    model.graph.input.append(helper.make_tensor_value_info("target", TensorProto.FLOAT, [1, 1]))
    model.graph.node.extend([
        helper.make_node("Sub", [out, "target"], ["err"]),
        helper.make_node("Mul", ["err", "err"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0)])
    model.graph.output.append(helper.make_tensor_value_info("loss", TensorProto.FLOAT, []))
    path = tmp_path / "oww_mse.onnx"
    onnx.save(model, str(path))
    x = np.random.default_rng(5).normal(size=(1, 25, 96)).astype(np.float32)
    data = {model.graph.input[0].name: x, "target": np.array([[0.9]], np.float32)}

    grads = Trainer(path, optimizer="sgd", gradients=True).step(data).grads
    model_inits = {t.name for t in model.graph.initializer}
    assert set(grads) == model_inits  # 3 Gemms and 2 LayerNorms: all trained
    # Central differences of onnxruntime on a few elements of each weight.
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    rng = np.random.default_rng(6)
    for name, g in grads.items():
        for _ in range(2):
            i = tuple(int(rng.integers(0, d)) for d in g.shape)
            vals = []
            for sign in (1, -1):
                moved = model.__deepcopy__()
                w = inits[name].astype(np.float64).copy()
                w[i] += sign * 1e-3
                for t in moved.graph.initializer:
                    if t.name == name:
                        t.CopyFrom(numpy_helper.from_array(w.astype(np.float32), name))
                sess = ort.InferenceSession(moved.SerializeToString(),
                                            providers=["CPUExecutionProvider"])
                vals.append(float(sess.run(["loss"], data)[0]))
            fd = (vals[0] - vals[1]) / 2e-3
            assert abs(g[i] - fd) <= 2e-3 + 2e-2 * abs(fd), (name, i, g[i], fd)

    for precision, scaling in (("fp32", None), ("mixed", "mode=dynamic")):
        trainer = Trainer(path, optimizer="sgd", lr=0.5, precision=precision,
                          loss_scaling=scaling)
        losses = [r.loss for r in trainer.train(lambda i: data, 10)]
        assert all(np.isfinite(losses)) and losses[-1] < 0.2 * losses[0], (precision, losses)


def test_conv_vocoder_trains(conv_vocoder, tmp_path):
    """The generated conv TTS vocoder (Conv, ConvTranspose upsampling,
    LeakyRelu, residual Adds, Tanh) with an MSE head against a target
    waveform: the loss falls more than tenfold in 30 AdamW steps in fp32 and
    in mixed precision with dynamic scaling, to within 5 % of the starting
    loss of each other."""
    from mp.models import load_test_data
    inputs, outputs = load_test_data(conv_vocoder / "test_data_set_0")
    mel = next(iter(inputs.values()))
    model = onnx.load(str(conv_vocoder / "model.onnx"))
    for dim, size in zip(model.graph.input[0].type.tensor_type.shape.dim, mel.shape):
        dim.dim_value = size  # a training step is built for one shape
    audio = model.graph.output[0].name
    shape = next(iter(outputs.values())).shape
    model.graph.input.append(helper.make_tensor_value_info("target", TensorProto.FLOAT,
                                                           list(shape)))
    model.graph.node.extend([
        helper.make_node("Sub", [audio, "target"], ["err"]),
        helper.make_node("Mul", ["err", "err"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0)])
    model.graph.output.append(helper.make_tensor_value_info("loss", TensorProto.FLOAT, []))
    path = tmp_path / "vocoder_mse.onnx"
    onnx.save(model, str(path))
    t = np.sin(np.linspace(0, 60, int(np.prod(shape)))).reshape(shape).astype(np.float32) * 0.5
    data = {model.graph.input[0].name: mel, "target": t}
    final = {}
    for precision, scaling in (("fp32", None), ("mixed", "mode=dynamic")):
        trainer = Trainer(path, optimizer="adamw", lr=5e-4, precision=precision,
                          loss_scaling=scaling)
        assert len(trainer.weights) == len(model.graph.initializer)
        losses = [r.loss for r in trainer.train(lambda i: data, 30)]
        assert all(np.isfinite(losses)) and losses[-1] < 0.1 * losses[0], (precision, losses)
        final[precision] = (losses[0], losses[-1])
    # Both fit the target; near zero their trajectories differ, so compare
    # on the scale of the starting loss.
    assert abs(final["mixed"][1] - final["fp32"][1]) < 0.05 * final["fp32"][0], final


def test_training_cli_writes_a_trained_model(tmp_path, capsys):
    """python -m mp.training on a data folder: progress lines, and a trained
    model whose loss onnxruntime measures lower than the original's."""
    ort = pytest.importorskip("onnxruntime")
    from mp.training import main
    path, data = mlp(tmp_path / "mlp.onnx")
    folder = tmp_path / "batch0"
    folder.mkdir()
    for name, value in data.items():
        np.save(folder / f"{name}.npy", value)
    out = tmp_path / "trained.onnx"
    rc = main([str(path), "--loss", "loss", "--data", str(folder), "--steps", "20",
               "--log-every", "10", "--optimizer", "sgd", "--lr", "0.1",
               "--precision", "mixed", "--loss-scaling", "mode=dynamic", "--output", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "step    10/20" in err and "scale 65536" in err and "skipped 0" in err
    def ort_loss(p):
        s = ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
        return float(s.run(["loss"], data)[0])
    assert ort_loss(out) < 0.5 * ort_loss(path)
    # Bad input is a message and exit code 1, not a traceback.
    assert main([str(path), "--loss", "nope", "--data", str(folder)]) == 1
    assert "no output named 'nope'" in capsys.readouterr().err


def test_training_step_library_matches_the_jit(tmp_path):
    """mp-compile --training writes an ahead-of-time library of the step
    (run by the runtime alone); one step of it gives the JIT's outputs."""
    import subprocess
    from mp.tools.conformance import default_mp_run
    mp_compile = default_mp_run().parent / "mp-compile"
    if not mp_compile.is_file():
        pytest.skip(f"{mp_compile} is not built")
    path, data = mlp(tmp_path / "mlp.onnx")
    options = ("loss=loss optimizer=adamw lr=0.01", "mode=dynamic init=256")
    lib_path = tmp_path / "lib" / "libstep.so"
    subprocess.run([str(mp_compile), str(path), "--training", options[0],
                    "--loss-scaling", options[1], "--precision", "mixed",
                    "-o", str(lib_path)], check=True, capture_output=True)
    trainer = Trainer(path, optimizer="adamw", lr=0.01, precision="mixed",
                      loss_scaling=options[1])
    feeds = {**data, **trainer.state}
    want = trainer.step_fn.run(feeds)
    got = mp.load(lib_path).run(feeds)
    assert list(got) == list(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-7,
                                   err_msg=name)
