"""Deterministic ONNX model builders for mp's examples and tests.

Each builder module has ``build() -> onnx.ModelProto`` and
``example_inputs(rng) -> {input name: array}``. ``write_example`` saves a model
and one ``test_data_set_0/`` (ONNX backend-test layout) whose outputs come from
onnxruntime on CPU with graph optimizations disabled.

    python -m mp.models tts_decoder -o examples/tts_decoder/model.onnx
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
from onnx import numpy_helper

from . import (attention_overflow, conv_vocoder, large_logit_softmax, layernorm_overflow,
               tiny_variance_norm, tts_decoder, vocoder_overflow)

BUILDERS: dict[str, ModuleType] = {
    "tts_decoder": tts_decoder,
    "layernorm_overflow": layernorm_overflow,
    "conv_vocoder": conv_vocoder,
    "attention_overflow": attention_overflow,
    "large_logit_softmax": large_logit_softmax,
    "tiny_variance_norm": tiny_variance_norm,
    "vocoder_overflow": vocoder_overflow,
}

# The fp16 stress cases: fine in fp32, broken by fp16 intermediates that only
# values reveal (docs/precision.md, "Calibration").
STRESS = ("attention_overflow", "large_logit_softmax", "tiny_variance_norm",
          "vocoder_overflow")

# Seed of the example inputs (the weights have their own seed per builder).
DATA_SEED = 0

__all__ = ["BUILDERS", "STRESS", "build", "example_inputs", "run_onnxruntime", "write_example", "write_inputs",
           "load_test_data"]


def build(name: str) -> onnx.ModelProto:
    return _builder(name).build()


def example_inputs(name: str) -> dict[str, np.ndarray]:
    return _builder(name).example_inputs(np.random.default_rng(DATA_SEED))


def run_onnxruntime(model: onnx.ModelProto | str | os.PathLike,
                    inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Runs the model on onnxruntime's CPU provider, graph optimizations off."""
    import onnxruntime as ort

    if isinstance(model, onnx.ModelProto):
        model = model.SerializeToString()
    else:
        model = os.fspath(model)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def write_example(name: str, model_path: str | os.PathLike) -> Path:
    """Writes ``model_path`` and ``test_data_set_0/`` beside it; returns the model path."""
    model_path = Path(model_path)
    model_path.parent.mkdir(parents=True, exist_ok=True)
    model = build(name)
    onnx.save_model(model, model_path)

    inputs = example_inputs(name)
    outputs = run_onnxruntime(model, inputs)
    data_dir = model_path.parent / "test_data_set_0"
    write_inputs(model, inputs, data_dir)
    for i, vi in enumerate(model.graph.output):
        _save_tensor(outputs[vi.name], vi.name, data_dir / f"output_{i}.pb")
    return model_path


def write_inputs(model: onnx.ModelProto | str | os.PathLike, inputs: dict[str, np.ndarray],
                 data_dir: str | os.PathLike) -> Path:
    """Writes ``inputs`` as ``data_dir/input_N.pb`` in the model's graph-input order
    (an input set without references: calibration data, say). Stale tensors go."""
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(model, load_external_data=False)
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    for stale in list(data_dir.glob("input_*.pb")) + list(data_dir.glob("output_*.pb")):
        stale.unlink()
    for i, vi in enumerate(model.graph.input):
        _save_tensor(inputs[vi.name], vi.name, data_dir / f"input_{i}.pb")
    return data_dir


def load_test_data(data_dir: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Reads ``input_N.pb`` / ``output_N.pb`` of one test data set, keyed by tensor name."""
    data_dir = Path(data_dir)

    def read(prefix: str) -> dict[str, np.ndarray]:
        files = sorted(data_dir.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
        result = {}
        for f in files:
            t = onnx.TensorProto()
            t.ParseFromString(f.read_bytes())
            result[t.name] = numpy_helper.to_array(t)
        return result

    return read("input"), read("output")


def _save_tensor(array: np.ndarray, name: str, path: Path) -> None:
    path.write_bytes(numpy_helper.from_array(array, name).SerializeToString())


def _builder(name: str) -> ModuleType:
    try:
        return BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(BUILDERS)}") from None
