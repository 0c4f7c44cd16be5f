"""A small trainer over mp's training steps.

    from mp.training import Trainer
    t = Trainer("model.onnx", loss="loss", optimizer="adamw", lr=1e-3,
                precision="mixed", loss_scaling="mode=dynamic")
    history = t.train(lambda step: next_batch(), steps=300, log_every=50)

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
              log_every: int = 0, out: TextIO = sys.stderr,
              on_step: Callable[[int, StepResult], None] | None = None) -> list[StepResult]:
        """Runs ``steps`` steps on ``batches(i)``; prints a progress line
        every ``log_every`` steps (loss, scale, skipped steps, speed)."""
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
