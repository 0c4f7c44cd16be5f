"""A small trainer over mp's training steps.

    from mp.training import Trainer
    t = Trainer("model.onnx", loss="loss", optimizer="adamw", lr=1e-3,
                precision="mixed", loss_scaling="mode=dynamic")
    history = t.train(lambda step: next_batch(), steps=300, log_every=50)

From the command line: ``python -m mp.training MODEL --loss NAME --data DIR
--steps N [--precision mixed --loss-scaling mode=dynamic] [--output
trained.onnx]`` (see ``main``).

The model is compiled once as one training step (mp-build-training-step and,
with ``loss_scaling``, mp-insert-loss-scaling; see docs/training.md). The
trainer holds the state between steps: the fp32 master weights (initialized
from the model's initializers), the optimizer state (zeros) and the loss
scale. Every step's ``NAME.next`` outputs become its ``NAME`` inputs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from . import Model

# mp-insert-loss-scaling's default `init`.
DEFAULT_INIT_SCALE = 65536.0

STATE_SUFFIXES = (".momentum", ".exp_avg", ".exp_avg_sq")
STATE_NAMES = ("adamw.step", "loss_scale.good_steps")


def _options(options: str | None) -> dict[str, str]:
    """``"a=1 b=x"`` as ``{"a": "1", "b": "x"}``."""
    return dict(item.partition("=")[::2] for item in (options or "").split())


@dataclass
class StepResult:
    """What one step did: the loss, the scale it used, whether its gradients
    overflowed (the update was skipped) and, with ``gradients=True``, the
    unscaled fp32 gradients."""
    loss: float
    scale: float
    skipped: bool
    grads: dict[str, np.ndarray] = field(default_factory=dict)


class Trainer:
    """Runs training steps of an ONNX model whose output ``loss`` is a
    scalar. ``optimizer`` is "sgd" or "adamw"; ``options`` adds
    mp-build-training-step options ("momentum=0.9 weight-decay=0.01").
    ``loss_scaling`` is None (no scaling) or mp-insert-loss-scaling options
    ("mode=dynamic", "mode=static scale=512")."""

    def __init__(self, path: str | Path, loss: str = "loss", optimizer: str = "adamw",
                 lr: float = 1e-3, precision: str = "fp32", loss_scaling: str | None = None,
                 options: str = "", policy: str | Path | None = None,
                 gradients: bool = False) -> None:
        import onnx
        from onnx import numpy_helper

        training = f"loss={loss} optimizer={optimizer} lr={lr} {options}"
        if gradients:
            training += " gradients=1"
        self.step_fn = Model(path, precision, policy, training=training,
                             loss_scaling=loss_scaling)
        model = onnx.load(str(path), load_external_data=True)
        self.data_inputs = [i.name for i in model.graph.input]
        self._initializers = {t.name: numpy_helper.to_array(t)
                              for t in model.graph.initializer}
        self._scaling = _options(loss_scaling)
        self.static_scale = float(self._scaling.get("scale", 512.0)) \
            if self._scaling.get("mode") == "static" else None
        self.reset()

    def reset(self) -> None:
        """Back to the initial weights, zero optimizer state and the initial
        loss scale (the compiled step is kept)."""
        initializers = self._initializers
        self.state: dict[str, np.ndarray] = {}
        for spec in self.step_fn.inputs:
            name = spec.name
            if name in self.data_inputs:
                continue
            if name in initializers:
                self.state[name] = initializers[name].astype(np.float32)
            elif name == "loss_scale":
                self.state[name] = np.array(
                    float(self._scaling.get("init", DEFAULT_INIT_SCALE)), np.float32)
            elif name in STATE_NAMES or name.endswith(STATE_SUFFIXES):
                self.state[name] = np.zeros(spec.shape, spec.dtype)
            else:
                raise ValueError(f"training step input {name!r} is neither data, "
                                 "a weight nor optimizer state")
        self.weights = [n for n in self.state if n in initializers]
        self.steps_done = 0
        self.skipped = 0

    @property
    def scale(self) -> float:
        """The loss scale the next step uses (1 without scaling)."""
        if "loss_scale" in self.state:
            return float(self.state["loss_scale"])
        return self.static_scale or 1.0

    def step(self, batch: Mapping[str, np.ndarray]) -> StepResult:
        scale = self.scale
        out = self.step_fn.run({**batch, **self.state})
        for name, value in out.items():
            if name.endswith(".next"):
                self.state[name[: -len(".next")]] = value
        skipped = bool(out.get("found_inf", False))
        self.steps_done += 1
        self.skipped += skipped
        grads = {n[: -len(".grad")]: v for n, v in out.items() if n.endswith(".grad")}
        return StepResult(float(out["loss"]), scale, skipped, grads)

    def train(self, batches: Callable[[int], Mapping[str, np.ndarray]], steps: int,
              log_every: int = 0, out: TextIO | None = None,
              on_step: Callable[[int, StepResult], None] | None = None) -> list[StepResult]:
        """Runs ``steps`` steps on ``batches(i)``; prints a progress line
        every ``log_every`` steps (loss, scale, skipped steps, speed) to
        ``out`` (standard error by default)."""
        out = out or sys.stderr
        history = []
        start = time.perf_counter()
        for i in range(steps):
            r = self.step(batches(i))
            history.append(r)
            if on_step:
                on_step(i, r)
            if log_every and ((i + 1) % log_every == 0 or i + 1 == steps):
                rate = (i + 1) / (time.perf_counter() - start)
                print(f"step {i + 1:>5}/{steps}  loss {r.loss:.4f}  scale {r.scale:g}  "
                      f"skipped {self.skipped}  ({rate:.1f} steps/s)", file=out, flush=True)
        return history


def load_batch(folder: str | Path) -> dict[str, np.ndarray]:
    """One batch from a folder: ``input_N.pb`` TensorProtos (ONNX test-data
    layout, keyed by the tensor's name) or ``NAME.npy`` files."""
    import onnx
    from onnx import numpy_helper

    folder = Path(folder)
    batch: dict[str, np.ndarray] = {}
    for f in sorted(folder.glob("*.pb")):
        if f.stem.startswith("output"):
            continue
        t = onnx.TensorProto()
        t.ParseFromString(f.read_bytes())
        batch[t.name or f.stem] = numpy_helper.to_array(t)
    for f in sorted(folder.glob("*.npy")):
        batch[f.stem] = np.load(f)
    if not batch:
        raise ValueError(f"{folder}: no input_N.pb or NAME.npy files")
    return batch


def save_trained_model(trainer: Trainer, source: str | Path, out: str | Path) -> None:
    """Writes ``source`` with its trained initializers replaced by the
    trainer's weights (in each initializer's own element type)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(source), load_external_data=True)
    for t in model.graph.initializer:
        if t.name in trainer.weights:
            old = numpy_helper.to_array(t)
            t.CopyFrom(numpy_helper.from_array(trainer.state[t.name].astype(old.dtype), t.name))
    onnx.save(model, str(out))


def main(argv: list[str] | None = None) -> int:
    """``python -m mp.training MODEL --loss NAME --data DIR [DIR...] --steps N``:
    trains on the batches in the data folders (cycled), prints progress and
    writes the trained model with ``--output``."""
    import argparse

    from . import Error

    p = argparse.ArgumentParser(prog="python -m mp.training", description=main.__doc__)
    p.add_argument("model")
    p.add_argument("--loss", required=True, help="the scalar loss output")
    p.add_argument("--data", nargs="+", required=True,
                   help="folders of input_N.pb or NAME.npy files, one batch each (cycled)")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--optimizer", default="adamw", choices=["sgd", "adamw"])
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--options", default="", help="more mp-build-training-step options")
    p.add_argument("--precision", default="fp32", choices=["fp32", "mixed"])
    p.add_argument("--policy", help="precision policy JSON (mixed)")
    p.add_argument("--loss-scaling", help='mp-insert-loss-scaling options, e.g. "mode=dynamic"')
    p.add_argument("--output", help="write the trained model here")
    args = p.parse_args(argv)
    try:
        batches = [load_batch(d) for d in args.data]
        trainer = Trainer(args.model, loss=args.loss, optimizer=args.optimizer, lr=args.lr,
                          precision=args.precision, loss_scaling=args.loss_scaling,
                          options=args.options, policy=args.policy)
        print(f"training {len(trainer.weights)} weights of {args.model} "
              f"({args.precision}, {args.optimizer}, lr {args.lr:g}, "
              f"loss scaling: {args.loss_scaling or 'none'}) on {len(batches)} batch(es)",
              file=sys.stderr, flush=True)
        history = trainer.train(lambda i: batches[i % len(batches)], args.steps,
                                log_every=args.log_every)
    except (Error, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"loss {history[0].loss:.6g} -> {history[-1].loss:.6g} in {args.steps} steps, "
          f"{trainer.skipped} skipped", file=sys.stderr)
    if args.output:
        save_trained_model(trainer, args.model, args.output)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
