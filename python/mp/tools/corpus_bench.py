"""mp on the real-exporter corpus: one row per model, every way mp can run it.

The models: ``../shared/corpus/{decoders,speech}/*/model.onnx`` (torch.onnx
exports, TorchScript and dynamo, with ``test_data_set_0`` and ``_1`` holding
onnxruntime's outputs) and ``../shared/models/*/model.onnx`` (same layout,
sometimes only ``test_data_set_0``). Per model, each step in a child process
with a timeout (``timeout`` is recorded instead of waiting):

* **import** -- ``mp-opt MODEL --no-output``: ``ok`` or its first error line;
* **fp32 set 0 / set 1** -- ``mp-run MODEL --compare test_data_set_K`` at
  mp-run's default tolerances (fp32 outputs rtol 1e-4 / atol 1e-5, fp16
  outputs rtol 1e-2 / atol 1e-2 x max|ref| in [1e-3, 1]): PASS/FAIL with the worst max abs error over the
  outputs, or the error (classified by :func:`mp.tools.conformance.classify`);
  set 0 runs with ``--repeat N``, which gives the JIT compile and run times;
  An fp16 export whose onnxruntime comparison FAILs and that has PyTorch's
  own fp16 outputs in ``bench/refs/torch_fp16/<model>/test_data_set_K`` (written
  by ``scripts/corpus/add_torch_fp16_reference.py``) is compared with those too:
  onnxruntime's CPU provider computes many fp16 nodes in fp32, so where a
  value decides a shape (VITS durations -> output length) its reference is
  not the fp16 model as written. The cell then reads ``PASS ... vs torch
  fp16`` and keeps onnxruntime's result beside it;
* **mixed** -- ``mp-run MODEL --compare test_data_set_0 --precision mixed
  --output-dir D`` (built-in policy, mp-run's mixed tolerances): max abs error,
  the number of non-finite values in the outputs (always written, 0
  included), argmax agreement (last axis) for logits outputs, SNR in dB for
  audio outputs (names containing ``audio`` or ``wav``: ``audio_values``,
  ``waveform``);
* **CPU library** -- ``mp-compile MODEL -o libX.so --input-shape NAME=AxB ...``
  with test_data_set_0's shapes, then ``mp-run libX.so --compare
  test_data_set_0``. When pinning the shapes is not enough (an input whose
  value decides shapes, e.g. silero's ``sr``), the compile is retried with
  ``--shapes-from test_data_set_0`` and the cell says so;
* **dynamic library** -- for models with dynamic input dims: ``mp-compile
  MODEL -o libX.so --dynamic-shapes``, compiled once, then run against every
  test set (``2/2 PASS``); ``n/a`` for models whose inputs are all static.
  When the compile stops at an If whose branches differ in rank, the first
  input whose pinned shape folds it is pinned with ``--input-shape`` per
  test set (the other inputs stay dynamic) and the notes say so;
* **CUDA build** -- ``mp-compile MODEL --target cuda -o libX.so --input-shape
  ...`` (same ``--shapes-from`` fallback): does it build (no GPU needed);
* **emulator fp32 / mixed** -- the CUDA library built as PTX (``--gpu
  compute_80``, set 0's shapes, ``--precision fp32`` or ``mixed``) run by
  ``python -m mp.emu LIB test_data_set_0`` on the PTX emulator
  (docs/emulator.md): every kernel executed from its PTX, each output
  compared with onnxruntime's at mp-run's tolerances; PASS/FAIL with the
  worst max abs error (failing outputs named);
* **timing** -- mp-run's ``time: compile ... ms; run mean ... ms, min ... ms``
  line (``--repeat N`` on set 0, the JIT in-process, one thread) next to
  onnxruntime (CPU provider, ``intra_op_num_threads=1``,
  ``inter_op_num_threads=1``, default graph optimizations) on the same
  inputs: one warm-up run, then N timed runs, median and min; ratio = mp min
  / onnxruntime min (the minimum is the least disturbed by other load).

Usage::

    python -m mp.tools.corpus_bench [--only SUBSTR]... [--skip-cuda] [--skip-library]
        [--jobs 1] [--timeout 600] [--repeat 20] [--out bench/corpus.md]

(``bench/corpus.py`` runs it with ``--out bench/corpus.md``.)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import onnx

from . import REPO, build_tool, conformance, report

CORPUS = REPO.parent / "shared" / "corpus"
CORPUS_GROUPS = ("decoders", "speech")
SHARED_MODELS = conformance.SHARED_MODELS
TIMEOUT_S = 600.0
REPEAT = 20
DATA_SETS = ("test_data_set_0", "test_data_set_1")

AUDIO_OUT = re.compile(r"audio|wav", re.I)
_TIME = re.compile(r"time:\s*(?:compile\s+(?P<compile>[\d.]+)\s*ms(?:\s*\((?:compiled|cached)\))?;\s*)?run mean\s+(?P<mean>[\d.]+)\s*ms,"
                   r"\s*min\s+(?P<min>[\d.]+)\s*ms")
# The binaries may be relinked while the sweep runs: wait this long, this many times.
BUSY_WAIT_S, BUSY_TRIES = 30.0, 6

# Cell statuses besides conformance's (passed, failed, error, unsupported, crashed, timeout).
OK, NA, SKIPPED = "ok", "n/a", "skipped"


# --------------------------------------------------------------------------- processes


def run_cmd(cmd: list[str], timeout: float, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> conformance.Run:
    """``cmd`` in a child process, as :func:`conformance.run_mp_run` runs mp-run (same
    :class:`conformance.Run`, the comparison table parsed), for any arguments. A
    binary that is missing or busy (being relinked) is waited for."""
    for attempt in range(BUSY_TRIES):
        start = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                               timeout=timeout, cwd=cwd, env=env)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            return conformance.Run(None, out, err, time.monotonic() - start, timed_out=True)
        except OSError as e:  # ENOENT / ETXTBSY while the other build relinks
            if attempt + 1 < BUSY_TRIES:
                time.sleep(BUSY_WAIT_S)
                continue
            return conformance.Run(127, "", f"error: cannot start {cmd[0]}: {e}", 0.0)
        if p.returncode == 127 and "error while loading shared libraries" in p.stderr \
                and attempt + 1 < BUSY_TRIES:
            time.sleep(BUSY_WAIT_S)
            continue
        run = conformance.Run(p.returncode, p.stdout, p.stderr, time.monotonic() - start)
        run.rows = conformance.parse_table(p.stdout)
        return run
    raise AssertionError("unreachable")


# --------------------------------------------------------------------------- models


def model_dirs(corpus: Path = CORPUS, shared: Path | None = SHARED_MODELS) -> list[Path]:
    dirs = []
    for g in CORPUS_GROUPS:
        if (corpus / g).is_dir():
            dirs += sorted(p.parent for p in (corpus / g).glob("*/model.onnx"))
    if shared is not None and shared.is_dir():
        dirs += sorted(p.parent for p in shared.glob("*/model.onnx"))
    return dirs


def label(model_dir: Path) -> str:
    """``decoders/gpt2_ts``, ``speech/vits_ts``, ``models/silero_vad_op18_ifless``."""
    return f"{model_dir.parent.name}/{model_dir.name}"


def select(dirs: list[Path], only: list[str] | None) -> list[Path]:
    if not only:
        return dirs
    return [d for d in dirs if any(s in label(d) for s in only)]


def graph_inputs(model: Path) -> list[onnx.ValueInfoProto]:
    """The model's real inputs (graph inputs that are not initializers)."""
    m = onnx.load(str(model), load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return [i for i in m.graph.input if i.name not in inits]


def has_dynamic_inputs(model: Path) -> bool:
    for i in graph_inputs(model):
        if not i.type.HasField("tensor_type"):
            continue
        t = i.type.tensor_type
        if not t.HasField("shape"):
            return True
        if any(not d.HasField("dim_value") for d in t.shape.dim):
            return True
    return False


def data_set_inputs(model: Path, data_dir: Path) -> list[tuple[str, list[int]]]:
    """(input name, shape) of a test data set's ``input_N.pb``; unnamed tensors take
    the name of the N-th graph input."""
    names = [i.name for i in graph_inputs(model)]
    out = []
    k = 0
    while (p := data_dir / f"input_{k}.pb").exists():
        t = onnx.load_tensor(str(p))
        out.append((t.name or (names[k] if k < len(names) else f"input_{k}"), list(t.dims)))
        k += 1
    return out


def shape_args(model: Path, data_dir: Path) -> list[str]:
    return [f"--input-shape={n}={'x'.join(map(str, s)) if s else 'scalar'}"
            for n, s in data_set_inputs(model, data_dir)]


# --------------------------------------------------------------------------- results


@dataclasses.dataclass
class Cell:
    """One step's outcome: a status and what to show with it (max abs error, first error line)."""
    status: str
    detail: str = ""
    seconds: float = 0.0

    def text(self, limit: int = 140) -> str:
        word = {conformance.PASSED: "PASS", conformance.FAILED: "FAIL"}.get(self.status, self.status)
        d = self.detail if len(self.detail) <= limit else self.detail[:limit - 1] + "…"
        if not d:
            return word
        if d.lower().startswith(word.lower()):  # "error: node ...", not "error error: node ..."
            return d
        return f"{word} {d}"


@dataclasses.dataclass
class OutputDetail:
    name: str
    type: str = ""
    fp32: dict[str, str] = dataclasses.field(default_factory=dict)  # data set -> "PASS 1e-7"
    mixed_abs: float | None = None
    argmax: float | None = None
    snr_db: float | None = None
    nonfinite: int | None = None


@dataclasses.dataclass
class ModelResult:
    name: str
    path: Path
    import_: Cell = dataclasses.field(default_factory=lambda: Cell(SKIPPED))
    fp32: dict[str, Cell] = dataclasses.field(default_factory=dict)
    mixed: Cell = dataclasses.field(default_factory=lambda: Cell(SKIPPED))
    mixed_nonfinite: int | None = None
    mixed_argmax: list[str] = dataclasses.field(default_factory=list)  # "logits 100.0%"
    mixed_snr: list[str] = dataclasses.field(default_factory=list)  # "waveform 42.1"
    library: Cell = dataclasses.field(default_factory=lambda: Cell(SKIPPED))
    dynamic: Cell = dataclasses.field(default_factory=lambda: Cell(SKIPPED))
    cuda: Cell = dataclasses.field(default_factory=lambda: Cell(SKIPPED))
    emulator: dict[str, Cell] = dataclasses.field(default_factory=dict)  # precision -> cell
    compile_ms: float | None = None
    mp_mean_ms: float | None = None
    mp_min_ms: float | None = None
    ort_median_ms: float | None = None
    ort_min_ms: float | None = None
    ort_error: str = ""
    outputs: dict[str, OutputDetail] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)  # full error lines, fallbacks
    elapsed_s: float = 0.0

    def output(self, name: str, type_: str = "") -> OutputDetail:
        d = self.outputs.setdefault(name, OutputDetail(name))
        d.type = d.type or type_
        return d


def _max_abs(rows: list[conformance.OutputRow]) -> float | None:
    vals = [r.max_abs for r in rows if r.max_abs is not None]
    return max(vals, default=None)


def _tol(x: float) -> str:
    """1e-4, not 0.0001."""
    return f"{x:.0e}".replace("e-0", "e-").replace("e+0", "e")


def _g(x: float | None, fmt: str = ".3g") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return format(x, fmt)


def compare_cell(run: conformance.Run, model: Path, mp_opt: Path | None) -> Cell:
    """PASS/FAIL with the worst max abs error (and the failing outputs), or the error."""
    v = conformance.classify(run, model, mp_opt)
    if v.status in (conformance.PASSED, conformance.FAILED):
        detail = _g(_max_abs(run.rows))
        # An output with no error figure failed on its shape: say so, not "FAIL  (x)".
        bad = [r.name if r.max_abs is not None else f"{r.name}: {r.detail or 'shape differs'}"
               for r in run.rows if r.passed is False]
        if bad:
            detail += f" ({', '.join(bad[:3])}{', …' if len(bad) > 3 else ''})"
            detail = detail.strip()
        return Cell(v.status, detail, run.elapsed_s)
    # unsupported: what is missing ("import: RandomNormalLike", "not lowered: mp.x"); the
    # import column and the notes have the full line.
    why = "; ".join(v.reasons) if v.reasons else v.error
    return Cell(v.status, why or v.error, run.elapsed_s)


# PyTorch's own outputs of the fp16 exports, by model label, written by
# scripts/corpus/add_torch_fp16_reference.py (torch is not needed to read them).
TORCH_FP16_REFS = REPO / "bench" / "refs" / "torch_fp16"


def against_torch_fp16(cell: Cell, cmd: list[str], model: Path, model_dir: Path,
                       data_set: str, mp_opt: Path | None, timeout: float) -> Cell:
    """`cell`, or -- when it FAILs and PyTorch's fp16 outputs for `data_set` are in
    :data:`TORCH_FP16_REFS` -- the comparison with those, marked as such, with onnxruntime's
    result kept."""
    alt = TORCH_FP16_REFS / label(model_dir) / data_set
    if cell.status != conformance.FAILED or not alt.is_dir():
        return cell
    c = compare_cell(run_cmd([*cmd, "--compare", str(alt)], timeout), model, mp_opt)
    if c.status != conformance.PASSED:
        return cell
    return Cell(conformance.PASSED, f"{c.detail} vs torch fp16 (onnxruntime: {cell.text()})",
                cell.seconds + c.seconds)


def _error_cell(run: conformance.Run, model: Path, what: str) -> Cell:
    if run.timed_out:
        return Cell(conformance.TIMEOUT, what, run.elapsed_s)
    if conformance.is_crash(run.returncode):
        from . import node_tests
        return Cell(conformance.CRASHED, node_tests.describe_exit(run.returncode) + ": "
                    + conformance.first_error(run.stderr, model), run.elapsed_s)
    return Cell(conformance.ERROR, conformance.first_error(run.stderr, model), run.elapsed_s)


# --------------------------------------------------------------------------- steps


@dataclasses.dataclass
class Tools:
    mp_run: Path
    mp_opt: Path
    mp_compile: Path

    @classmethod
    def default(cls) -> "Tools":
        return cls(build_tool("mp-run"), build_tool("mp-opt"), build_tool("mp-compile"))


def step_import(t: Tools, r: ModelResult, timeout: float) -> None:
    model = r.path / "model.onnx"
    run = run_cmd([str(t.mp_opt), str(model), "--no-output"], timeout)
    if run.returncode == 0:
        r.import_ = Cell(OK, seconds=run.elapsed_s)
    else:
        r.import_ = _error_cell(run, model, "mp-opt --no-output")


def step_fp32(t: Tools, r: ModelResult, data_set: str, timeout: float, repeat: int = 0) -> None:
    model = r.path / "model.onnx"
    data_dir = r.path / data_set
    if not data_dir.is_dir():
        r.fp32[data_set] = Cell(NA, "no such test set")
        return
    cmd = [str(t.mp_run), str(model), "--compare", str(data_dir), "--precision", "fp32"]
    if repeat:
        # The compile time column is a real compile, not a compile cache hit.
        cmd += ["--repeat", str(repeat), "--no-cache"]
    run = run_cmd(cmd, timeout)
    r.fp32[data_set] = against_torch_fp16(
        compare_cell(run, model, t.mp_opt), [str(t.mp_run), str(model), "--precision", "fp32"],
        model, r.path, data_set, t.mp_opt, timeout)
    for row in run.rows:
        res = "" if row.passed is None else ("PASS" if row.passed else "FAIL")
        r.output(row.name, row.type).fp32[data_set] = f"{res} {_g(row.max_abs)}".strip()
    if repeat and (m := _TIME.search(run.stdout + run.stderr)):
        r.compile_ms = float(m["compile"]) if m["compile"] else None
        r.mp_mean_ms, r.mp_min_ms = float(m["mean"]), float(m["min"])


def is_audio_output(name: str) -> bool:
    return bool(AUDIO_OUT.search(name))


def step_mixed(t: Tools, r: ModelResult, timeout: float, tmp: Path) -> None:
    model = r.path / "model.onnx"
    data_dir = r.path / DATA_SETS[0]
    out_dir = tmp / f"{r.path.name}-mixed"
    run = conformance.run_mp_run(t.mp_run, model, data_dir, precision="mixed",
                                 output_dir=out_dir, timeout=timeout)
    r.mixed = compare_cell(run, model, t.mp_opt)
    if not run.rows:
        return
    try:
        expected = conformance.expected_outputs(data_dir)
    except Exception as e:  # noqa: BLE001 - a reference onnx cannot read
        r.notes.append(f"mixed: reference unreadable: {type(e).__name__}: {e}")
        expected = []
    nonfinite = 0
    counted = True
    for row, a, e in zip(run.rows, conformance.read_outputs(out_dir, run.rows),
                         expected + [None] * (len(run.rows) - len(expected))):
        d = r.output(row.name, row.type)
        if a is None:
            counted = False
            r.notes.append(f"mixed: output {row.name} not written or unreadable")
            continue
        nf = int(np.sum(~np.isfinite(a))) if np.issubdtype(a.dtype, np.floating) else 0
        d.nonfinite = nf
        nonfinite += nf
        if e is None or a.shape != e.shape:
            continue
        m = conformance.output_metrics(row.name, a, e, is_audio_output(row.name))
        d.mixed_abs, d.argmax, d.snr_db = m.max_abs, m.argmax, m.snr_db
        if m.argmax is not None and not math.isnan(m.argmax):
            r.mixed_argmax.append(f"{row.name} {100 * m.argmax:.1f}%")
        if m.snr_db is not None:
            r.mixed_snr.append(f"{row.name} {m.snr_db:.1f}")
    r.mixed_nonfinite = nonfinite if counted else None
    shutil.rmtree(out_dir, ignore_errors=True)


def _compile(t: Tools, model: Path, data_dir: Path, lib: Path, extra: list[str],
             timeout: float) -> tuple[conformance.Run, str]:
    """mp-compile with test_data_set_0's shapes pinned; when that is refused, again with
    ``--shapes-from``. Returns the last run and "" or the note of the fallback."""
    # --no-cache: the seconds are those of a real compile, not of a compile cache hit.
    base = [str(t.mp_compile), str(model), "-o", str(lib), *extra, "--no-cache"]
    run = run_cmd(base + shape_args(model, data_dir), timeout)
    if run.returncode == 0 or run.timed_out or conformance.is_crash(run.returncode):
        return run, ""
    first = conformance.first_error(run.stderr, model)
    retry = run_cmd(base + ["--shapes-from", str(data_dir)], timeout)
    retry.elapsed_s += run.elapsed_s
    return retry, f"--input-shape refused ({first}); --shapes-from used"


def library_data_dir(lib: Path, model: Path, data_dir: Path, scratch: Path) -> Path:
    """``data_dir``, or when the library takes fewer inputs than the test set holds (inputs
    compiled in by ``--shapes-from``), a copy of it in ``scratch`` (links) with only the
    library's inputs, renumbered, and every expected output."""
    try:
        lib_inputs = [i["name"] for i in json.loads(lib.with_suffix(".json").read_text())["inputs"]]
    except (OSError, ValueError, KeyError, TypeError):
        return data_dir
    given = data_set_inputs(model, data_dir)
    if [n for n, _ in given] == lib_inputs or not set(lib_inputs) <= {n for n, _ in given}:
        return data_dir
    scratch.mkdir(parents=True, exist_ok=True)
    k = 0
    for i, (name, _) in enumerate(given):
        if name in lib_inputs:
            (scratch / f"input_{k}.pb").symlink_to(data_dir / f"input_{i}.pb")
            k += 1
    for out in data_dir.glob("output_*.pb"):
        (scratch / out.name).symlink_to(out)
    return scratch


def step_library(t: Tools, r: ModelResult, timeout: float, tmp: Path) -> None:
    model = r.path / "model.onnx"
    data_dir = r.path / DATA_SETS[0]
    lib = tmp / f"lib{r.path.name}.so"
    run, note = _compile(t, model, data_dir, lib, [], timeout)
    if note:
        r.notes.append(f"CPU library: {note}")
    if run.returncode != 0:
        c = _error_cell(run, model, "mp-compile")
        r.library = Cell(c.status, "compile: " + c.detail, c.seconds)
        return
    run_dir = library_data_dir(lib, model, data_dir, tmp / f"{r.path.name}-lib-data")
    if run_dir != data_dir:
        r.notes.append("CPU library: inputs compiled in by --shapes-from left out of the run "
                       "(the library does not take them; mp-run --compare refuses extra inputs)")
    run2 = run_cmd([str(t.mp_run), str(lib), "--compare", str(run_dir)], timeout)
    c = compare_cell(run2, lib, None)
    if c.status not in (conformance.PASSED, conformance.FAILED):
        c.detail = "run: " + c.detail
    if note:
        c.detail = (c.detail + " (--shapes-from)").strip()
    c.seconds += run.elapsed_s
    r.library = c


# What mp-compile --dynamic-shapes says of an If whose branches differ in rank.
IF_NEEDS_PIN = "fix the dims it reads with mp-compile --input-shape"


def _pin_arg(model: Path, data_dir: Path, name: str) -> str:
    shape = dict(data_set_inputs(model, data_dir))[name]
    return f"--input-shape={name}={'x'.join(map(str, shape)) if shape else 'scalar'}"


def _input_deciding_if(t: Tools, model: Path, data_dir: Path, lib: Path,
                       timeout: float) -> str | None:
    """The first input (of ``data_dir``'s) whose pinned shape lets the
    dynamic-shape compile fold the If, or None."""
    for name, _ in data_set_inputs(model, data_dir):
        run = run_cmd([str(t.mp_compile), str(model), "-o", str(lib), "--dynamic-shapes",
                       _pin_arg(model, data_dir, name)], timeout)
        if run.returncode == 0:
            return name
    return None


def step_dynamic(t: Tools, r: ModelResult, timeout: float, tmp: Path) -> None:
    model = r.path / "model.onnx"
    if not has_dynamic_inputs(model):
        r.dynamic = Cell(NA, "static inputs")
        return
    lib = tmp / f"lib{r.path.name}_dyn.so"
    run = run_cmd([str(t.mp_compile), str(model), "-o", str(lib), "--dynamic-shapes",
                   "--no-cache"], timeout)
    sets = sorted(p for p in r.path.glob("test_data_set_*") if p.is_dir())
    pin = None
    if run.returncode != 0 and IF_NEEDS_PIN in run.stderr:
        pin = _input_deciding_if(t, model, sets[0], lib, timeout)
    if run.returncode != 0 and pin is None:
        c = _error_cell(run, model, "mp-compile --dynamic-shapes")
        r.dynamic = Cell(c.status, "compile: " + c.detail, c.seconds)
        return
    if pin is None:
        cells = [against_torch_fp16(
            compare_cell(run_cmd([str(t.mp_run), str(lib), "--compare", str(s)], timeout), lib,
                         None), [str(t.mp_run), str(lib)], lib, r.path, s.name, None, timeout)
            for s in sets]
    else:
        # The If's condition reads `pin`'s dims: one library per set with it pinned.
        r.notes.append(f"dynamic library: an If of different branch ranks reads the dims of "
                       f"'{pin}', pinned per test set with --input-shape; the other inputs "
                       "stay dynamic")
        cells = []
        for s in sets:
            built = run_cmd([str(t.mp_compile), str(model), "-o", str(lib), "--dynamic-shapes",
                             _pin_arg(model, s, pin)], timeout)
            cells.append(compare_cell(run_cmd([str(t.mp_run), str(lib), "--compare", str(s)],
                                              timeout), lib, None) if built.returncode == 0
                         else _error_cell(built, model, "mp-compile --dynamic-shapes"))
    passed = sum(c.status == conformance.PASSED for c in cells)
    bad = [f"set {s.name.removeprefix('test_data_set_')}: {c.text()}"
           for s, c in zip(sets, cells) if c.status != conformance.PASSED]
    if passed == len(cells):
        status = conformance.PASSED
    elif passed or any(c.status == conformance.FAILED for c in cells):
        status = conformance.FAILED
    else:
        status = cells[0].status
    r.dynamic = Cell(status, f"{passed}/{len(sets)}" + (f" ({'; '.join(bad)})" if bad else ""),
                     run.elapsed_s + sum(c.seconds for c in cells))


def step_cuda(t: Tools, r: ModelResult, timeout: float, tmp: Path) -> None:
    model = r.path / "model.onnx"
    lib = tmp / f"lib{r.path.name}_cuda.so"
    run, note = _compile(t, model, r.path / DATA_SETS[0], lib, ["--target", "cuda"], timeout)
    if note:
        r.notes.append(f"CUDA build: {note}")
    if run.returncode == 0:
        r.cuda = Cell(OK, "(--shapes-from)" if note else "", run.elapsed_s)
    else:
        r.cuda = _error_cell(run, model, "mp-compile --target cuda")


EMULATOR_PRECISIONS = ("fp32", "mixed")
# python -m mp.emu's verdict against the test set's outputs.
_EMU_VERDICT = re.compile(r"^(PASS|FAIL) (.+?) vs expected: max abs err (\S+?)(?:,|$)", re.M)


def emulator_cell(run: conformance.Run, model: Path) -> Cell:
    """PASS/FAIL with the worst max abs error over the outputs (failing ones named), or
    the error of a ``python -m mp.emu`` run."""
    verdicts = _EMU_VERDICT.findall(run.stdout)
    if run.timed_out or run.returncode not in (0, 1) or not verdicts:
        return _error_cell(run, model, "python -m mp.emu")
    worst = max((float(e) for _, _, e in verdicts), default=0.0)
    bad = [name for word, name, _ in verdicts if word == "FAIL"]
    # Exit status 1 with every output passing: a verdict against something else failed.
    status = conformance.FAILED if bad or run.returncode else conformance.PASSED
    detail = _g(worst) + (f" ({', '.join(bad[:3])}{', …' if len(bad) > 3 else ''})" if bad else "")
    return Cell(status, detail, run.elapsed_s)


def step_emulator(t: Tools, r: ModelResult, timeout: float, tmp: Path) -> None:
    model = r.path / "model.onnx"
    data_dir = r.path / DATA_SETS[0]
    env = {**os.environ, "PYTHONPATH": str(REPO / "python"),
           "MP_BUILD_DIR": str(t.mp_compile.parent.parent)}
    for precision in EMULATOR_PRECISIONS:
        lib = tmp / f"lib{r.path.name}_emu_{precision}.so"
        run, note = _compile(t, model, data_dir, lib, ["--target", "cuda", "--gpu", "compute_80",
                                                       "--precision", precision], timeout)
        if run.returncode != 0:
            c = _error_cell(run, model, "mp-compile --target cuda --gpu compute_80")
            r.emulator[precision] = Cell(c.status, "compile: " + c.detail, c.seconds)
            continue
        emu = run_cmd([sys.executable, "-m", "mp.emu", str(lib), str(data_dir)], timeout, env=env)
        c = emulator_cell(emu, model)
        if note:
            c.detail = (c.detail + " (--shapes-from)").strip()
        r.emulator[precision] = c


# --------------------------------------------------------------------------- onnxruntime


def ort_time(model: Path, data_dir: Path, repeat: int) -> dict:
    """onnxruntime CPU, one thread: {"median_ms", "min_ms", "runs"} or {"error"}."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    try:
        sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        return {"error": f"session: {str(e).splitlines()[0][:300]}"}
    names = [i.name for i in sess.get_inputs()]
    feeds = {}
    k = 0
    while (p := data_dir / f"input_{k}.pb").exists():
        t = onnx.load_tensor(str(p))
        feeds[t.name or names[k]] = conformance.load_pb(p)
        k += 1
    try:
        sess.run(None, feeds)  # warm-up
        times = []
        for _ in range(max(repeat, 1)):
            start = time.perf_counter()
            sess.run(None, feeds)
            times.append(1e3 * (time.perf_counter() - start))
    except Exception as e:  # noqa: BLE001
        return {"error": f"run: {str(e).splitlines()[0][:300]}"}
    return {"median_ms": statistics.median(times), "min_ms": min(times), "runs": len(times)}


def step_ort(r: ModelResult, timeout: float, repeat: int) -> None:
    """:func:`ort_time` in a child process (a crash or a hang costs one cell)."""
    cmd = [sys.executable, "-m", "mp.tools.corpus_bench", "--ort-child",
           str(r.path / "model.onnx"), str(r.path / DATA_SETS[0]), str(repeat)]
    env_py = str(REPO / "python")
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                           env={**os.environ, "PYTHONPATH": env_py + os.pathsep
                                + os.environ.get("PYTHONPATH", "")})
    except subprocess.TimeoutExpired:
        r.ort_error = f"timeout after {time.monotonic() - start:.0f} s"
        return
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        r.ort_error = f"child failed: {tail[:300]}"
        return
    if "error" in res:
        r.ort_error = res["error"]
    else:
        r.ort_median_ms, r.ort_min_ms = res["median_ms"], res["min_ms"]


# --------------------------------------------------------------------------- sweep

ALL_STEPS = ("import", "fp32", "mixed", "library", "dynamic", "cuda", "emulator", "timing")


def bench_model(model_dir: Path, tools: Tools | None = None, *, steps: tuple[str, ...] = ALL_STEPS,
                timeout: float = TIMEOUT_S, repeat: int = REPEAT) -> ModelResult:
    tools = tools or Tools.default()
    r = ModelResult(label(model_dir), model_dir)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mp-corpus-") as tmp_:
        tmp = Path(tmp_)
        if "import" in steps:
            step_import(tools, r, timeout)
        if "fp32" in steps:
            for i, s in enumerate(DATA_SETS):
                step_fp32(tools, r, s, timeout, repeat=repeat if i == 0 and "timing" in steps else 0)
        if "mixed" in steps:
            step_mixed(tools, r, timeout, tmp)
        if "library" in steps:
            step_library(tools, r, timeout, tmp)
        if "dynamic" in steps:
            step_dynamic(tools, r, timeout, tmp)
        if "cuda" in steps:
            step_cuda(tools, r, timeout, tmp)
        if "emulator" in steps:
            step_emulator(tools, r, timeout, tmp)
        if "timing" in steps:
            step_ort(r, timeout, repeat)
    r.elapsed_s = time.monotonic() - start
    return r


def sweep(dirs: list[Path], tools: Tools | None = None, *, steps: tuple[str, ...] = ALL_STEPS,
          timeout: float = TIMEOUT_S, repeat: int = REPEAT, jobs: int = 1,
          progress: bool = False, on_result=None) -> list[ModelResult]:
    """Benches every model of `dirs`; returns their results in the order of `dirs`.

    `on_result(done)`, when given, is called after each model with the results so far (in
    the order of `dirs`), so that a long sweep can write what it has."""
    tools = tools or Tools.default()
    done: dict[Path, ModelResult] = {}
    lock = threading.Lock()

    def one(d: Path) -> ModelResult:
        r = bench_model(d, tools, steps=steps, timeout=timeout, repeat=repeat)
        if progress:
            print(f"{r.name}: import {r.import_.text(60)}; fp32 "
                  + ", ".join(c.text(60) for c in r.fp32.values())
                  + f"; mixed {r.mixed.text(60)}; lib {r.library.text(60)}; dyn {r.dynamic.text(60)}; "
                  f"cuda {r.cuda.text(60)}; emulator "
                  + ", ".join(f"{p} {c.text(60)}" for p, c in r.emulator.items())
                  + f" ({r.elapsed_s:.0f} s)", file=sys.stderr, flush=True)
        if on_result is not None:
            with lock:
                done[d] = r
                on_result([done[x] for x in dirs if x in done])
        return r

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        return list(pool.map(one, dirs))


# --------------------------------------------------------------------------- report

COLUMNS = ["model", "import", "fp32 set 0", "fp32 set 1", "mixed (set 0)", "mixed non-finite",
           "mixed argmax (logits)", "mixed SNR dB (audio)", "CPU library", "dynamic library",
           "CUDA build", "emulator fp32", "emulator mixed", "JIT compile ms", "mp run ms mean/min", "ort run ms median/min",
           "mp/ort (min)"]


def _ms(a: float | None, b: float | None) -> str:
    if a is None:
        return ""
    return f"{a:.3g} / {b:.3g}" if b is not None else f"{a:.3g}"


def row_cells(r: ModelResult) -> list[str]:
    """The main table's cells for one model; no cell is empty ("—" when there is nothing)."""
    dash = "—"
    fp32 = [r.fp32.get(s, Cell(SKIPPED)).text() for s in DATA_SETS]
    mixed_ran = r.mixed.status in (conformance.PASSED, conformance.FAILED)
    nonfinite = (str(r.mixed_nonfinite) if r.mixed_nonfinite is not None
                 else ("?" if mixed_ran else dash))
    if r.mp_min_ms is None and not r.ort_error and r.ort_min_ms is None:
        timing = [dash, dash, dash, dash]
    else:
        ort = _ms(r.ort_median_ms, r.ort_min_ms) or (f"error: {r.ort_error}" if r.ort_error else dash)
        ratio = (f"{r.mp_min_ms / r.ort_min_ms:.2f}" if r.mp_min_ms and r.ort_min_ms else dash)
        timing = [_g(r.compile_ms, ".0f") or dash, _ms(r.mp_mean_ms, r.mp_min_ms) or dash, ort, ratio]
    return [r.name, r.import_.text(), *fp32, r.mixed.text(), nonfinite,
            ", ".join(r.mixed_argmax) or dash, ", ".join(r.mixed_snr) or dash,
            r.library.text(), r.dynamic.text(), r.cuda.text(),
            *(r.emulator.get(p, Cell(SKIPPED)).text() for p in EMULATOR_PRECISIONS), *timing]


def _count(results: list[ModelResult], get) -> str:
    from collections import Counter
    c = Counter(get(r).status for r in results)
    order = [OK, conformance.PASSED, conformance.FAILED, conformance.ERROR, conformance.UNSUPPORTED,
             conformance.CRASHED, conformance.TIMEOUT, NA, SKIPPED]
    word = {conformance.PASSED: "PASS", conformance.FAILED: "FAIL"}
    return ", ".join(f"{c[s]} {word.get(s, s)}" for s in order if c[s])


def _affinity() -> str:
    """Which cores the sweep may use: a run pinned with `taskset` says so in its report."""
    total = os.cpu_count() or 0
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) == total:
        return f"CPU: all {total} cores"
    return f"CPU: pinned to core{'s' if len(cores) > 1 else ''} {', '.join(map(str, cores))} of {total}"


def render(results: list[ModelResult], *, command: str, elapsed_s: float, tools: Tools,
           timeout: float, repeat: int, measured: str | None = None, pending: int = 0) -> str:
    """The markdown report; `pending` > 0 marks a partial report written while models still run."""
    import importlib.metadata as md

    vers = []
    for pkg in ("onnx", "onnxruntime", "numpy"):
        try:
            vers.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            vers.append(f"{pkg} (not installed)")
    nvcc = shutil.which("nvcc")
    out = report.begin(
        "mp on the real-exporter corpus",
        "One row per model of `../shared/corpus/{decoders,speech}` (torch.onnx exports, TorchScript "
        "`_ts` and dynamo `_dynamo`) and `../shared/models`. References are the stored "
        "onnxruntime outputs (`test_data_set_K/output_N.pb`). Columns: "
        "**import** = `mp-opt MODEL --no-output` (`ok` or its first error line); "
        "**fp32 set K** = `mp-run MODEL --compare test_data_set_K` at mp-run's default tolerances "
        f"(rtol {_tol(conformance.FP32_RTOL)} / atol {_tol(conformance.FP32_ATOL)} for fp32 outputs, "
        f"{conformance.MIXED_TOLERANCES} for fp16 outputs): PASS/FAIL and the "
        "worst max abs error over the outputs (failing outputs named), or the error; an fp16 export "
        "that FAILs against onnxruntime and has PyTorch's own fp16 outputs "
        "(`bench/refs/torch_fp16/MODEL/test_data_set_K`, from `scripts/corpus/add_torch_fp16_reference.py`) "
        "is compared "
        "with those too and reads `PASS … vs torch fp16 (onnxruntime: FAIL …)`: onnxruntime's CPU "
        "provider computes many fp16 nodes in fp32, so where a value decides a shape its reference is "
        "not the fp16 model as written; "
        "**mixed** = the same on set 0 with `--precision mixed` (built-in policy, "
        f"{conformance.MIXED_TOLERANCES}), with the number of non-finite values "
        "in mp's outputs (0 included), argmax agreement over the last axis for `logits` outputs and "
        "SNR = 10 log10(Σref² / Σ(out − ref)²) for audio outputs (names containing `audio` or `wav`); "
        "**CPU library** = `mp-compile MODEL -o libX.so --input-shape NAME=AxB ...` (set 0's shapes), "
        "then `mp-run libX.so --compare test_data_set_0` (`(--shapes-from)`: pinning shapes was "
        "refused, e.g. an input whose value decides shapes, and `--shapes-from test_data_set_0` was "
        "used instead, and the inputs it compiled in are left out of the run, see the notes); **dynamic library** = `mp-compile MODEL -o libX.so "
        "--dynamic-shapes` compiled once and run against every test set (passing sets / sets; "
        "`n/a` when every input dim is static; when an If whose branches differ in rank needs "
        "an input's dims, that input is pinned with `--input-shape` per test set, see the "
        "notes); **CUDA build** = `mp-compile MODEL --target cuda "
        "-o libX.so --input-shape ...` builds (default `--gpu sm_80,sm_90`; nothing runs on a GPU); "
        "**emulator fp32 / mixed** = the CUDA library built as PTX (`--gpu compute_80`, set 0's "
        "shapes, that precision) run on the PTX emulator (`python -m mp.emu LIB test_data_set_0`, "
        "docs/emulator.md: every kernel executed from its PTX on the CPU), each output compared with "
        "onnxruntime's at mp-run's tolerances: PASS/FAIL and the worst max abs error; "
        f"**timing** = mp-run's JIT compile time and run time (`--repeat {repeat}` on set 0; the "
        "JIT runs in-process) vs onnxruntime's CPU provider with `intra_op_num_threads=1`, "
        f"`inter_op_num_threads=1`, default graph optimizations, one warm-up then {repeat} runs "
        "(median / min); mp/ort = mp min / ort min (below 1: mp faster). "
        f"Each step runs in a child process with a {timeout:g} s timeout (`timeout` when exceeded). "
        "Statuses: PASS, FAIL (ran, wrong numbers), error (imported but could not compile or run), "
        "unsupported (the importer rejects it or an op has no CPU lowering), crashed, timeout.",
        command=command, measured=measured,
        extra=[f"mp-run: `{report.rel(tools.mp_run)}` ({report.built(tools.mp_run)}), mp-compile: "
               f"`{report.rel(tools.mp_compile)}` ({report.built(tools.mp_compile)}), mp-opt: "
               f"`{report.rel(tools.mp_opt)}` ({report.built(tools.mp_opt)})",
               ", ".join(vers) + (f", nvcc `{nvcc}`" if nvcc else ", no nvcc on PATH"),
               _affinity(),
               (f"Models: {len(results)}; total time {elapsed_s:.0f} s" if not pending else
                f"**In progress**: {len(results)} models done, {pending} still running or "
                f"queued; {elapsed_s:.0f} s so far")])
    w = out.append
    w("")
    w("## Summary")
    w("")
    summary = [("import", _count(results, lambda r: r.import_))]
    for s in DATA_SETS:
        summary.append((f"fp32 {s}", _count(results, lambda r, s=s: r.fp32.get(s, Cell(SKIPPED)))))
    summary += [("mixed (set 0)", _count(results, lambda r: r.mixed)),
                ("CPU library", _count(results, lambda r: r.library)),
                ("dynamic library", _count(results, lambda r: r.dynamic)),
                ("CUDA build", _count(results, lambda r: r.cuda))]
    summary += [(f"emulator {p} (set 0)", _count(results, lambda r, p=p: r.emulator.get(p, Cell(SKIPPED))))
                for p in EMULATOR_PRECISIONS]
    nf = [r.name for r in results if r.mixed_nonfinite]
    summary.append(("mixed non-finite outputs", ", ".join(nf) if nf else "none"))
    out += report.table(["step", "models"], summary)
    w("")
    w("## Models")
    w("")
    out += report.table(COLUMNS, (row_cells(r) for r in results), "lllllllllllllrrrr")
    w("")
    w("## Per output")
    w("")
    w("fp32 result and max abs error per test set, and the mixed-precision (set 0) max abs error, "
      "argmax agreement (logits), SNR dB (audio) and non-finite count of each output.")
    w("")
    rows = []
    for r in results:
        for d in r.outputs.values():
            rows.append([r.name, d.name, d.type, *(d.fp32.get(s, "") for s in DATA_SETS),
                         _g(d.mixed_abs), "" if d.argmax is None or math.isnan(d.argmax)
                         else f"{100 * d.argmax:.1f}%", "" if d.snr_db is None else f"{d.snr_db:.1f}",
                         "" if d.nonfinite is None else str(d.nonfinite)])
    out += report.table(["model", "output", "type", "fp32 set 0", "fp32 set 1", "mixed max abs",
                         "mixed argmax", "mixed SNR dB", "mixed non-finite"], rows, "lllllrrrr",
                        empty="No outputs (nothing ran).")
    w("")
    w("## Errors and notes")
    w("")
    w("Every cell that is not PASS/ok, with its full first error line, and the `--shapes-from` "
      "fallbacks.")
    w("")
    rows = []
    for r in results:
        cells = [("import", r.import_), *((f"fp32 {s}", c) for s, c in r.fp32.items()),
                 ("mixed", r.mixed), ("CPU library", r.library), ("dynamic library", r.dynamic),
                 ("CUDA build", r.cuda),
                 *((f"emulator {p}", c) for p, c in r.emulator.items())]
        for what, c in cells:
            if c.status not in (OK, conformance.PASSED, NA, SKIPPED):
                rows.append([r.name, what, c.text(limit=10_000)])
        if r.ort_error:
            rows.append([r.name, "onnxruntime", r.ort_error])
        for n in r.notes:
            rows.append([r.name, "note", n])
    out += report.table(["model", "step", "what"], rows, empty="None.")
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--ort-child"]:
        print(json.dumps(ort_time(Path(argv[1]), Path(argv[2]), int(argv[3]))))
        return 0
    ap = argparse.ArgumentParser(prog="python -m mp.tools.corpus_bench",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", default=[], metavar="SUBSTR",
                    help="only models whose name (e.g. speech/vits_ts) contains SUBSTR; repeatable")
    ap.add_argument("--skip-cuda", action="store_true",
                    help="no --target cuda build (and no emulator run)")
    ap.add_argument("--skip-library", action="store_true",
                    help="no mp-compile CPU libraries (pinned or --dynamic-shapes)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="models in parallel (default 1; timings are only meaningful at 1)")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per step")
    ap.add_argument("--repeat", type=int, default=REPEAT, help="timed runs (mp-run --repeat, onnxruntime)")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--models", type=Path, default=SHARED_MODELS, help="shared models folder")
    ap.add_argument("--build", type=Path, default=None, help="build folder (default $MP_BUILD_DIR or build/)")
    ap.add_argument("--out", type=Path, default=None, help="markdown report (default: stdout)")
    ap.add_argument("--command", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    tools = Tools.default()
    if args.build is not None:
        b = args.build / "bin"
        tools = Tools(b / "mp-run", b / "mp-opt", b / "mp-compile")
    for p in (tools.mp_run, tools.mp_opt, tools.mp_compile):
        if not p.is_file():
            print(f"error: {p} not found (build mp or pass --build)", file=sys.stderr)
            return 2
    dirs = select(model_dirs(args.corpus, args.models), args.only)
    if not dirs:
        print("error: no models selected", file=sys.stderr)
        return 2
    steps = tuple(s for s in ALL_STEPS
                  if not (args.skip_cuda and s in ("cuda", "emulator"))
                  and not (args.skip_library and s in ("library", "dynamic")))
    start = time.monotonic()
    measured = report.commit()  # the binaries measured are this commit's, not HEAD's at the end
    command = args.command or ("python -m mp.tools.corpus_bench " + " ".join(argv)).strip()

    def write_partial(done: list[ModelResult]) -> None:
        # A sweep takes over an hour: the report on disk always holds what has finished.
        if args.out and len(done) < len(dirs):
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(render(done, command=command, elapsed_s=time.monotonic() - start,
                                       tools=tools, timeout=args.timeout, repeat=args.repeat,
                                       measured=measured, pending=len(dirs) - len(done)))

    results = sweep(dirs, tools, steps=steps, timeout=args.timeout, repeat=args.repeat,
                    jobs=args.jobs, progress=True, on_result=write_partial)
    text = render(results, command=command, elapsed_s=time.monotonic() - start, tools=tools,
                  timeout=args.timeout, repeat=args.repeat, measured=measured)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
