"""Run a CUDA library on a test data set and compare its outputs (the work
of ``python -m mp.emu``; the emulator must be installed first)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..tools.conformance import model_tolerances


def consistency_bound(precision: str, want: np.ndarray) -> float:
    """The max abs difference allowed between a CUDA library and the CPU library of
    the same graph and options, as a fraction of the output's max abs value. Both
    round the same ops to the same types and differ only in summation order:
    measured at most 1.4e-5 of the output on fp32 libraries (silero's LSTM state)
    and one f16 ulp of an intermediate on mixed ones (9.8e-4 on tts_decoder's
    mel_out, values up to 1.9)."""
    half = precision == "mixed" or want.dtype == np.float16 or want.dtype.name == "bfloat16"
    scale = float(np.max(np.abs(want.astype(np.float64)), initial=0.0))
    return (2 * 2.0**-10 if half else 4e-5) * scale


@dataclass
class Verdict:
    output: str
    against: str          # "expected" or the reference library's path
    passed: bool
    detail: str

    def __str__(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.output} vs {self.against}: {self.detail}"


@dataclass
class Report:
    library: str
    seconds: float = 0.0
    error: str = ""       # why the library could not run
    io_bytes: int = 0     # the run's inputs and outputs
    constant_bytes: int = 0  # weights on the device after the run
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.error and all(v.passed for v in self.verdicts)


def tensors(folder: Path, prefix: str) -> list[tuple[str, np.ndarray]]:
    """``PREFIX_N.pb`` of a test data folder in N order, as (name, array)."""
    from onnx import load_tensor, numpy_helper
    files = sorted(Path(folder).glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[-1]))
    return [(t.name, numpy_helper.to_array(t)) for t in (load_tensor(str(f)) for f in files)]


def feeds_for(lib, inputs: list[tuple[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The library's inputs by name, else in order (a library leaves out the
    inputs whose values it was compiled with)."""
    names = [n for n, _, _ in lib.inputs]
    by_name = {n: a for n, a in inputs if n}
    if all(n in by_name for n in names):
        return {n: by_name[n] for n in names}
    if len(inputs) < len(names):
        raise ValueError(f"the library takes {len(names)} inputs, the folder has {len(inputs)}")
    return dict(zip(names, (a for _, a in inputs)))


def compare(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> tuple[bool, str]:
    if got.shape != want.shape:
        return False, f"shape {list(got.shape)} != {list(want.shape)}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    err = np.abs(g - w)
    bad = ~(err <= atol + rtol * np.abs(w)) & ~(np.isnan(g) & np.isnan(w))
    detail = f"max abs err {err.max() if err.size else 0:.3g}"
    if bad.any():
        detail += f", {int(bad.sum())} of {bad.size} outside rtol {rtol:g} atol {atol:g}"
    return not bad.any(), detail


def check_library(library: str, data: Path, reference: str | None = None,
                  rtol: float | None = None, atol: float | None = None) -> Report:
    """Runs `library` on `data`'s inputs; compares with its outputs and with
    `reference` (the CPU library of the same graph) run on the same inputs.
    Tolerances default to mp-run's against the folder (1e-4/1e-5, or 1e-2/1e-2
    for mixed libraries and f16 outputs) and to :func:`consistency_bound`
    against `reference`; `rtol`/`atol` override both."""
    import mp
    from mp.library import memory_stats
    report = Report(str(library))
    try:
        with mp.load(library) as lib:
            if lib.target != "cuda":
                report.error = f"{library} is a {lib.target} library"
                return report
            feeds = feeds_for(lib, tensors(data, "input"))
            start = time.perf_counter()
            got = lib.run(feeds)
            report.seconds = time.perf_counter() - start
            report.io_bytes = sum(np.asarray(a).nbytes for a in (*feeds.values(), *got.values()))
            report.constant_bytes = memory_stats()["constant_bytes"]
            precision = lib.precision
    except (mp.Error, ValueError) as e:
        report.error = str(e)
        return report
    expected = tensors(data, "output")
    if all(n for n, _ in expected):
        expected_by_name = dict(expected)
    else:  # unnamed tensors: the library's outputs in order, and no more of them
        expected_by_name = dict(zip(got, (a for _, a in expected)))
        if len(expected) != len(got):
            report.verdicts.append(Verdict("(outputs)", "expected", False,
                                           f"{len(got)} outputs, the folder has {len(expected)}"))
    references = [("expected", expected_by_name)]
    if reference:
        with mp.load(reference) as ref:
            references.append((str(reference), ref.run({n: feeds[n] for n, _, _ in ref.inputs})))
    for label, outputs in references:
        # Compared by name: an output on one side only fails.
        for name in got:
            if name not in outputs:
                report.verdicts.append(Verdict(name, label, False, "no such reference output"))
        for name, want in outputs.items():
            if name not in got:
                report.verdicts.append(Verdict(name, label, False, "missing from the library's outputs"))
                continue
            if label == "expected":
                default_rtol, default_atol = model_tolerances(precision, want)
            else:
                default_rtol, default_atol = 0.0, consistency_bound(precision, want)
            r = rtol if rtol is not None else default_rtol
            a = atol if atol is not None else default_atol
            report.verdicts.append(Verdict(name, label, *compare(got[name], want, r, a)))
    return report
