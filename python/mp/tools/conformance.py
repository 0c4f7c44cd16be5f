"""Conformance of mp-run (the CPU JIT runner) against stored reference outputs.

Two sweeps, both through ``build/bin/mp-run MODEL --compare DIR`` (one process
per run, ``--output-dir`` so that every output is also checked here, in numpy):

* **models** -- every model folder of ``../shared/models`` and
  ``examples/tts_decoder`` (plus, with ``--generated``, the other
  ``python -m mp.models`` examples built into a temporary folder), every
  ``test_data_set_*``:

  - fp32 at mp-run's default fp32 tolerances (rtol 1e-4, atol 1e-5, the
    tolerances of issue 4);
  - mixed precision (``--precision mixed``, the built-in policy) with the
    error vs the stored onnxruntime reference recorded per output: max abs,
    max rel, argmax agreement over the last axis for logits-like outputs, SNR
    in dB for audio-like outputs.

* **node tests** -- the ONNX backend node tests from the onnx wheel
  (``<onnx>/backend/test/data/node/*``) and Debian's libonnx-testdata
  (``/usr/share/libonnx-testdata/data/node/*``), ``test_data_set_0`` only, fp32,
  at the ONNX backend test runner's default tolerances: ``rtol=1e-3``,
  ``atol=1e-7`` (``onnx/backend/test/loader/__init__.py``, ``load_model_tests``:
  ``rtol = 1e-3; atol = 1e-7`` unless the case's ``data.json`` overrides them;
  ``onnx/backend/test/runner/__init__.py``, ``assert_similar_outputs``, then
  checks shape, dtype and ``np.testing.assert_allclose(outputs[i],
  ref_outputs[i], rtol=rtol, atol=atol)``). 60 s timeout each, 2 in parallel.

Every run is classified as

* ``passed``      -- mp-run exits 0 and every output passes;
* ``failed``      -- mp-run ran the model and at least one output is wrong
                     (numbers recorded: that is a wrong result);
* ``error``       -- mp-run could import the model but not compile or run
                     it, for a reason other than a missing lowering (dynamic
                     shapes left after specialization, verifier errors in the
                     lowering, bad test data handling, ...);
* ``unsupported`` -- the importer rejects the model (unsupported op, element
                     type or opset), or an op has no CPU lowering yet
                     (``cannot lower 'mp.X' ...: this op has no CPU lowering
                     yet``: the op is named);
* ``crashed``     -- killed by a signal or exit code >= 128;
* ``timeout``     -- still running after the timeout.

Import errors are told from compile errors by running ``mp-opt MODEL -o
/dev/null`` on the runs that failed for a reason the messages do not name.

Independently of mp-run's own comparison, every output that mp-run wrote is
compared here with numpy the way the ONNX runner does (shape, dtype,
``assert_allclose``); runs where the two verdicts differ are listed.

Usage::

    python -m mp.tools.conformance [--out bench/conformance.md] [--jobs 2]
        [--timeout 60] [--subset] [--no-models] [--no-nodes] [--generated]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from . import REPO, build_tool, node_tests, report

SHARED_MODELS = REPO.parent / "shared" / "models"
EXAMPLE_MODELS = [REPO / "examples" / "tts_decoder"]

# mp-run's defaults (tools/mp-run/mp-run.cpp), the tolerances of issue 4.
FP32_RTOL, FP32_ATOL = 1e-4, 1e-5
# fp16 outputs and mixed runs: rtol 1e-2, atol 1e-2 x the reference's largest
# finite |value| clamped to MIXED_ATOL_SCALE (lib/Execution/TestData.cpp).
MIXED_RTOL, MIXED_ATOL = 1e-2, 1e-2
MIXED_ATOL_SCALE = (1e-3, 1.0)
MIXED_TOLERANCES = "rtol 1e-2 / atol 1e-2 × max\\|ref\\| clamped to [1e-3, 1]"
# The ONNX backend test runner's defaults (onnx/backend/test/loader/__init__.py).
ONNX_RTOL, ONNX_ATOL = 1e-3, 1e-7
TIMEOUT_S = 60.0
JOBS = 2
# The deterministic node-test subset: cases whose crc32("source/name") is 0
# modulo SUBSET_MODULUS (about 1 in 18 of the ~2700 cases, ~150).
SUBSET_MODULUS = 18

PASSED, FAILED, ERROR, UNSUPPORTED, CRASHED, TIMEOUT = (
    "passed", "failed", "error", "unsupported", "crashed", "timeout")
STATUSES = [PASSED, FAILED, ERROR, UNSUPPORTED, CRASHED, TIMEOUT]

# Wrong results already understood: case name -> explanation, shown next to the
# numbers in the report (the case still counts as failed).
KNOWN_FAILURES = {
    "test_cast_FLOAT_to_BFLOAT16":
        "libonnx-testdata's reference is typed UINT16 and truncates to bfloat16 (old ONNX "
        "semantics); mp rounds to nearest even like the current spec. Separately, mp-run writes "
        "bf16 outputs with an invalid .npy descr.",
}
# Bernoulli's expanded graphs draw from RandomUniformLike: the stored 0/1
# draws come from the reference implementation's numpy generator and mp's from
# its own (docs/ops.md), so they cannot agree (the op itself is unsupported).
_BERNOULLI_NOTE = ("random draws: the reference's 0/1 values come from numpy's generator in the ONNX "
                   "reference implementation, mp's from its own documented generator (docs/ops.md); "
                   "no other generator reproduces them")
KNOWN_FAILURES.update({name: _BERNOULLI_NOTE for name in (
    "test_bernoulli_expanded", "test_bernoulli_double_expanded", "test_bernoulli_seed_expanded")})
_CAUSAL_NOTE = ("is_causal with kv length != q length: the onnx 1.22 reference and test data align the "
                "causal mask top-left (offset = past length, onnx/reference/ops/op_attention.py "
                "_apply_causal); mp's output matches bottom-right alignment (offset = kv - q); checked on test_attention_4d_causal")
_QK_NOTE = ("qk_matmul_output (qk_matmul_output_mode 0) should be the scaled Q·Kᵀ before the mask; "
            "mp's equals Q·Kᵀ + attn_mask (checked on test_attention_4d_with_past_and_present_qk_matmul)")


def known_failure(name: str) -> str:
    if name in KNOWN_FAILURES:
        return KNOWN_FAILURES[name]
    if name.startswith("test_attention") and "causal" in name:
        return _CAUSAL_NOTE
    if name.startswith("test_attention") and name.endswith("_qk_matmul"):
        return _QK_NOTE
    return ""


AUDIO_NAME = re.compile(r"audio|wav|waveform|pcm|speech|samples|signal", re.I)
LOGITS_NAME = re.compile(r"logit", re.I)


# --------------------------------------------------------------------------- mp-run


def default_mp_run() -> Path:
    return build_tool("mp-run")


def default_mp_opt() -> Path:
    return build_tool("mp-opt")


@dataclasses.dataclass
class OutputRow:
    """One line of mp-run's comparison table."""
    name: str
    type: str
    max_abs: float | None = None
    max_rel: float | None = None
    argmax: float | None = None  # percent, as printed
    passed: bool | None = None  # None: nothing to compare
    detail: str = ""  # "(N elements beyond ...)", "FAIL: expected f32[..]"


@dataclasses.dataclass
class Run:
    returncode: int | None
    stdout: str
    stderr: str
    elapsed_s: float
    timed_out: bool = False
    rows: list[OutputRow] = dataclasses.field(default_factory=list)


_ROW = re.compile(
    r"^(?P<name>\S+)\s+(?P<type>\S+\[[^\]]*\])\s+(?P<abs>\S+)\s+(?P<rel>\S+)\s+"
    r"(?P<argmax>\S+)%\s+(?P<res>PASS|FAIL)(?P<detail>.*)$")
_ROW_SHAPE = re.compile(r"^(?P<name>\S+)\s+(?P<type>\S+\[[^\]]*\])\s+FAIL: (?P<detail>.*)$")
_ROW_BARE = re.compile(r"^(?P<name>\S+)\s+(?P<type>\S+\[[^\]]*\])\s*$")


def _float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return math.nan


def parse_table(stdout: str) -> list[OutputRow]:
    rows = []
    lines = stdout.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("output ") and "max abs err" in l), None)
    if start is None:
        return rows
    for line in lines[start + 1:]:
        if m := _ROW.match(line):
            rows.append(OutputRow(m["name"], m["type"], _float(m["abs"]), _float(m["rel"]),
                                  _float(m["argmax"]), m["res"] == "PASS", m["detail"].strip()))
        elif m := _ROW_SHAPE.match(line):
            rows.append(OutputRow(m["name"], m["type"], passed=False, detail=m["detail"].strip()))
        elif m := _ROW_BARE.match(line):
            rows.append(OutputRow(m["name"], m["type"]))
    return rows


def run_mp_run(mp_run: Path, model: Path, data_dir: Path, *, precision: str = "fp32",
               rtol: float | None = None, atol: float | None = None,
               output_dir: Path | None = None, timeout: float = TIMEOUT_S) -> Run:
    cmd = [str(mp_run), str(model), "--compare", str(data_dir), "--precision", precision]
    if rtol is not None:
        cmd += ["--rtol", repr(rtol)]
    if atol is not None:
        cmd += ["--atol", repr(atol)]
    if output_dir is not None:
        cmd += ["--output-dir", str(output_dir)]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Run(None, out, err, time.monotonic() - start, timed_out=True)
    run = Run(p.returncode, p.stdout, p.stderr, time.monotonic() - start)
    run.rows = parse_table(p.stdout)
    return run


# --------------------------------------------------------------------------- classification

_NOT_LOWERED = re.compile(r"cannot lower '([^']+)' \(node '.*?'\): this op has no CPU lowering yet")
_DYNAMIC = re.compile(r"cannot lower '([^']+)' \(node '.*?'\): its shapes are dynamic")
_UNSUPPORTED_OP = re.compile(r"unsupported op (\S+) \(domain (\S+?),")
_UNSUPPORTED_TYPE = re.compile(r"has unsupported element type (\S+)")
_LOC_PREFIX = re.compile(r"^\S*?:\d+:\d+:\s*")
_QUOTED = re.compile(r"'[^']*'")


def error_lines(stderr: str) -> list[str]:
    return [_LOC_PREFIX.sub("", l.strip()) for l in stderr.splitlines() if "error" in l.lower()]


def first_error(stderr: str, model: Path) -> str:
    lines = error_lines(stderr) or [l.strip() for l in stderr.splitlines() if l.strip()]
    line = lines[0] if lines else ""
    for p in (str(model.parent), str(model.parent.resolve())):
        line = line.replace(p + "/", "").replace(p, ".")
    return line


def category(error: str) -> str:
    """``error`` with quoted names blanked, for grouping."""
    return _QUOTED.sub("'…'", error)


def not_lowered_ops(stderr: str) -> list[str]:
    """The mp ops named by "no CPU lowering yet" errors, in order, deduplicated."""
    return list(dict.fromkeys(_NOT_LOWERED.findall(stderr)))


def is_crash(returncode: int | None) -> bool:
    return returncode is not None and (returncode < 0 or returncode >= 128)


@dataclasses.dataclass
class Verdict:
    status: str
    reasons: list[str] = dataclasses.field(default_factory=list)  # "not lowered: mp.x", "import: Op"
    error: str = ""  # the first error line (model path stripped)


def classify(run: Run, model: Path, mp_opt: Path | None = None) -> Verdict:
    if run.timed_out:
        return Verdict(TIMEOUT, error="timed out")
    if is_crash(run.returncode):
        return Verdict(CRASHED, error=node_tests.describe_exit(run.returncode)
                       + (f": {first_error(run.stderr, model)}" if run.stderr.strip() else ""))
    if run.returncode == 0 and run.rows and all(r.passed for r in run.rows):
        return Verdict(PASSED)
    if run.rows and any(r.passed is False for r in run.rows):
        return Verdict(FAILED)
    err = first_error(run.stderr, model)
    if run.returncode == 0:  # nothing compared: no expected outputs?
        return Verdict(ERROR, error="nothing compared (no output_N.pb?)")
    lowered = not_lowered_ops(run.stderr)
    if lowered:
        return Verdict(UNSUPPORTED, [f"not lowered: {op}" for op in lowered], err)
    if m := _UNSUPPORTED_TYPE.search(run.stderr):
        return Verdict(UNSUPPORTED, [f"test data type: {m[1]}"], err)
    ops = [f"import: {node_tests.op_label(d, o)}" for o, d in _UNSUPPORTED_OP.findall(run.stderr)]
    if ops:
        return Verdict(UNSUPPORTED, list(dict.fromkeys(ops)), err)
    # Anything else: an import error (the model is beyond the importer) or a
    # compile/run error (mp-run's own problem)? Ask the importer alone.
    if mp_opt is not None and mp_opt.is_file():
        try:
            p = subprocess.run([str(mp_opt), str(model), "-o", os.devnull],
                               capture_output=True, text=True, errors="replace", timeout=60)
            if p.returncode != 0 and not is_crash(p.returncode):
                return Verdict(UNSUPPORTED, [f"import: {category(first_error(p.stderr, model))}"], err)
        except subprocess.TimeoutExpired:
            pass
    return Verdict(ERROR, error=err)


# --------------------------------------------------------------------------- numpy checks


def sanitize(name: str) -> str:
    """mp-run's file name for an output (tools/mp-run/mp-run.cpp)."""
    return "".join(c if (c.isascii() and c.isalnum()) or c in ".-_" else "_" for c in name)


def load_pb(path: Path) -> np.ndarray:
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    a = numpy_helper.to_array(t)
    if t.data_type == onnx.TensorProto.BFLOAT16 and a.dtype == np.uint16:
        try:  # onnx hands bfloat16 back as its uint16 bits
            import ml_dtypes
            a = a.view(ml_dtypes.bfloat16)
        except ImportError:
            pass
    return a


def expected_outputs(data_dir: Path) -> list[np.ndarray]:
    out = []
    i = 0
    while (p := data_dir / f"output_{i}.pb").exists():
        out.append(load_pb(p))
        i += 1
    return out


def numpy_check(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> str:
    """'' when the ONNX runner would accept ``actual``, else why not."""
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != {expected.dtype}"
    try:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)
    except AssertionError:
        return "values differ"
    return ""


def snr_db(actual: np.ndarray, expected: np.ndarray) -> float:
    ref = expected.astype(np.float64)
    noise = actual.astype(np.float64) - ref
    p_sig, p_noise = float(np.sum(ref * ref)), float(np.sum(noise * noise))
    if p_noise == 0:
        return math.inf
    if p_sig == 0:
        return -math.inf
    return 10.0 * math.log10(p_sig / p_noise)


def argmax_agreement(actual: np.ndarray, expected: np.ndarray) -> float:
    if actual.ndim < 2 or actual.shape[-1] < 2:
        return math.nan
    return float(np.mean(np.argmax(actual, axis=-1) == np.argmax(expected, axis=-1)))


@dataclasses.dataclass
class OutputMetrics:
    name: str
    max_abs: float
    max_rel: float
    argmax: float | None = None  # fraction, logits-like outputs only
    snr_db: float | None = None  # audio-like outputs only
    nonfinite: int = 0


def output_metrics(name: str, actual: np.ndarray, expected: np.ndarray,
                   audio_like: bool) -> OutputMetrics:
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    diff = np.abs(a - e)
    both_nan = np.isnan(a) & np.isnan(e)
    diff = np.where(both_nan, 0.0, np.where(np.isnan(diff), np.inf, diff))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(e != 0, diff / np.abs(e), 0.0)
    m = OutputMetrics(name, float(diff.max(initial=0.0)), float(rel.max(initial=0.0)),
                      nonfinite=int(np.sum(~np.isfinite(a) & np.isfinite(e))))
    if (LOGITS_NAME.search(name) and np.issubdtype(expected.dtype, np.floating)
            and expected.ndim >= 2 and expected.shape[-1] >= 2):
        m.argmax = argmax_agreement(actual, expected)
    if audio_like and np.issubdtype(expected.dtype, np.floating):
        m.snr_db = snr_db(actual, expected)
    return m


def read_outputs(out_dir: Path, rows: list[OutputRow]) -> list[np.ndarray | None]:
    arrays = []
    for r in rows:
        p = out_dir / f"{sanitize(r.name)}.npy"
        try:
            arrays.append(np.load(p, allow_pickle=False))
        except (OSError, ValueError):
            arrays.append(None)
    return arrays


# --------------------------------------------------------------------------- models


@dataclasses.dataclass
class ModelRun:
    model: str  # folder name
    data_set: str
    precision: str
    verdict: Verdict
    rows: list[OutputRow]
    metrics: list[OutputMetrics]
    numpy_disagrees: list[str]  # outputs where numpy's verdict differs from mp-run's
    elapsed_s: float


def model_dirs(generated_root: Path | None = None) -> list[Path]:
    dirs = []
    if SHARED_MODELS.is_dir():
        dirs += sorted(p.parent for p in SHARED_MODELS.glob("*/model.onnx"))
    dirs += [d for d in EXAMPLE_MODELS if (d / "model.onnx").is_file()]
    if generated_root is not None:
        dirs += sorted(p.parent for p in generated_root.glob("*/model.onnx"))
    return dirs


def generate_examples(root: Path) -> None:
    """The mp.models examples other than the committed tts_decoder."""
    from ..models import BUILDERS, write_example  # onnxruntime computes the references

    for name in BUILDERS:
        if name != "tts_decoder":
            write_example(name, root / name / "model.onnx")


def model_tolerances(precision: str, want: np.ndarray) -> tuple[float, float]:
    """mp-run's default tolerances for an output checked against `want`
    (lib/Execution/TestData.cpp): fp32 1e-4/1e-5; fp16 (or bf16) outputs and
    mixed-precision runs rtol 1e-2 and atol 1e-2 x max|want| clamped to [1e-3, 1]."""
    dtype = want.dtype
    half = precision == "mixed" or dtype == np.float16 or dtype.name == "bfloat16"
    if not half:
        return FP32_RTOL, FP32_ATOL
    finite = np.abs(want[np.isfinite(want)].astype(np.float64)) if want.size else np.zeros(0)
    scale = float(np.clip(finite.max() if finite.size else 0.0, *MIXED_ATOL_SCALE))
    return MIXED_RTOL, MIXED_ATOL * scale


def is_audio_like(model_dir: Path, output_name: str) -> bool:
    return "vocoder" in model_dir.name or bool(AUDIO_NAME.search(output_name))


def run_model(mp_run: Path, mp_opt: Path, model_dir: Path, data_dir: Path, precision: str,
              timeout: float, tmp: Path) -> ModelRun:
    model = model_dir / "model.onnx"
    out_dir = tmp / f"{model_dir.name}-{data_dir.name}-{precision}"
    run = run_mp_run(mp_run, model, data_dir, precision=precision, output_dir=out_dir,
                     timeout=timeout)
    verdict = classify(run, model, mp_opt)
    metrics, disagree = [], []
    if run.rows:
        expected = expected_outputs(data_dir)
        for r, a, e in zip(run.rows, read_outputs(out_dir, run.rows), expected):
            if a is None:
                disagree.append(f"{r.name}: output .npy missing or unreadable by numpy")
                continue
            rtol, atol = model_tolerances(precision, e)
            ok = numpy_check(a, e, rtol, atol) == ""
            if r.passed is not None and ok != r.passed:
                disagree.append(f"{r.name}: mp-run {'PASS' if r.passed else 'FAIL'}, numpy "
                                f"{'PASS' if ok else 'FAIL (' + numpy_check(a, e, rtol, atol) + ')'}")
            if a.shape == e.shape:
                metrics.append(output_metrics(r.name, a, e, is_audio_like(model_dir, r.name)))
    return ModelRun(model_dir.name, data_dir.name, precision, verdict, run.rows, metrics,
                    disagree, run.elapsed_s)


def sweep_models(mp_run: Path, mp_opt: Path, dirs: list[Path], timeout: float = 300.0,
                 jobs: int = JOBS, precisions: tuple[str, ...] = ("fp32", "mixed"),
                 data_sets: set[tuple[str, str]] | None = None) -> list[ModelRun]:
    """Every (model folder, test_data_set_*, precision); ``data_sets`` keeps only
    the listed (folder name, data set name) pairs."""
    tasks = [(d, s, p) for d in dirs for s in sorted(d.glob("test_data_set_*"))
             if data_sets is None or (d.name, s.name) in data_sets
             for p in precisions]
    with tempfile.TemporaryDirectory(prefix="mp-conformance-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(
                lambda t: run_model(mp_run, mp_opt, t[0], t[1], t[2], timeout, Path(tmp)), tasks))


# --------------------------------------------------------------------------- node tests


@dataclasses.dataclass
class NodeCase:
    source: str
    name: str
    path: Path  # model.onnx
    rtol: float = ONNX_RTOL
    atol: float = ONNX_ATOL
    verdict: Verdict | None = None
    rows: list[OutputRow] = dataclasses.field(default_factory=list)
    numpy_disagrees: list[str] = dataclasses.field(default_factory=list)
    numpy_failures: list[str] = dataclasses.field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.source}/{self.name}"


def in_subset(source: str, name: str, modulus: int = SUBSET_MODULUS) -> bool:
    return zlib.crc32(f"{source}/{name}".encode()) % modulus == 0


def collect_node_cases(sources: dict[str, Path] | None = None, subset: bool = False,
                       name_filter: str | None = None) -> list[NodeCase]:
    import json

    sources = sources or node_tests.default_sources()
    cases = []
    for source, root in sources.items():
        if not root.is_dir():
            continue
        for model in sorted(root.glob("*/model.onnx")):
            name = model.parent.name
            if not (model.parent / "test_data_set_0").is_dir():
                continue
            if subset and not in_subset(source, name):
                continue
            if name_filter and name_filter not in name:
                continue
            case = NodeCase(source, name, model)
            data_json = model.parent / "data.json"  # per-case tolerances, as the ONNX loader
            if data_json.is_file():
                try:
                    data = json.loads(data_json.read_text())
                    case.rtol = data.get("rtol", case.rtol)
                    case.atol = data.get("atol", case.atol)
                except (OSError, ValueError):
                    pass
            cases.append(case)
    return cases


def run_node_case(mp_run: Path, mp_opt: Path, case: NodeCase, timeout: float, tmp: Path) -> NodeCase:
    data_dir = case.path.parent / "test_data_set_0"
    out_dir = tmp / f"{case.source}-{case.name}"
    run = run_mp_run(mp_run, case.path, data_dir, rtol=case.rtol, atol=case.atol,
                     output_dir=out_dir, timeout=timeout)
    case.elapsed_s = run.elapsed_s
    case.rows = run.rows
    case.verdict = classify(run, case.path, mp_opt)
    if run.rows and case.verdict.status in (PASSED, FAILED):
        try:
            expected = expected_outputs(data_dir)
        except Exception as e:  # noqa: BLE001 - a reference onnx itself cannot read
            expected = []
            case.numpy_failures.append(f"reference unreadable: {type(e).__name__}")
        for r, a, e in zip(run.rows, read_outputs(out_dir, run.rows), expected):
            why = "output .npy missing or unreadable by numpy" if a is None else \
                numpy_check(a, e, case.rtol, case.atol)
            if why:
                case.numpy_failures.append(f"{r.name}: {why}")
            if r.passed is not None and (why == "") != r.passed:
                case.numpy_disagrees.append(
                    f"{r.name}: mp-run {'PASS' if r.passed else 'FAIL'}, numpy "
                    f"{'PASS' if not why else 'FAIL (' + why + ')'}")
    return case


def sweep_nodes(mp_run: Path, mp_opt: Path, cases: list[NodeCase], timeout: float = TIMEOUT_S,
                jobs: int = JOBS) -> list[NodeCase]:
    with tempfile.TemporaryDirectory(prefix="mp-conformance-nodes-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda c: run_node_case(mp_run, mp_opt, c, timeout, Path(tmp)), cases))


def node_counts(cases: list[NodeCase]) -> Counter:
    return Counter(c.verdict.status for c in cases)


def not_lowered_table(cases: list[NodeCase]) -> list[tuple[str, int, int]]:
    """(mp op, cases it blocks, cases where it is the only missing lowering)."""
    any_, only = Counter(), Counter()
    for c in cases:
        ops = [r.removeprefix("not lowered: ") for r in c.verdict.reasons if r.startswith("not lowered: ")]
        any_.update(ops)
        if len(ops) == 1:
            only[ops[0]] += 1
    return sorted(((op, n, only[op]) for op, n in any_.items()), key=lambda t: (-t[1], -t[2], t[0]))


# --------------------------------------------------------------------------- report


def _g(x: float | None, fmt: str = ".3g") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return format(x, fmt)


def _model_row_cells(r: ModelRun) -> tuple[str, str, str, str, str]:
    abs_ = max((m.max_abs for m in r.metrics), default=None)
    rel = max((m.max_rel for m in r.metrics), default=None)
    argmax = [f"{m.name} {100 * m.argmax:.1f}%" for m in r.metrics if m.argmax is not None]
    snr = [f"{m.name} {m.snr_db:.1f}" for m in r.metrics if m.snr_db is not None]
    return _g(abs_), _g(rel), ", ".join(argmax), ", ".join(snr), str(sum(m.nonfinite for m in r.metrics) or "")


def render_models(runs: list[ModelRun], elapsed_s: float) -> list[str]:
    out: list[str] = []
    w = out.append
    w("## Models")
    w("")
    w(f"`mp-run MODEL --compare test_data_set_K`, fp32 at rtol {FP32_RTOL:g} / atol {FP32_ATOL:g} "
      f"(issue 4; mp-run uses {MIXED_TOLERANCES} for fp16 outputs) and `--precision mixed` (built-in policy) at {MIXED_TOLERANCES}; "
      "errors are vs the stored onnxruntime reference, the worst over the outputs (per output below). "
      "Argmax agreement (last axis) for logits outputs, SNR = 10 log10(sum ref^2 / sum (out - ref)^2) "
      f"for audio-like outputs. Sweep time {elapsed_s:.1f} s.")
    w("")
    rows = []
    for r in runs:
        a, rel, am, snr, nf = _model_row_cells(r)
        reason = "; ".join(r.verdict.reasons) if r.verdict.reasons else r.verdict.error
        if r.verdict.status == FAILED:
            bad = [f"{x.name} ({x.detail or 'FAIL'})" for x in r.rows if x.passed is False]
            reason = "wrong: " + ", ".join(bad)
        if r.numpy_disagrees:
            reason += ("; " if reason else "") + "numpy disagrees: " + ", ".join(r.numpy_disagrees)
        rows.append((r.model, r.data_set.removeprefix("test_data_set_"), r.precision, r.verdict.status,
                     a, rel, am, snr, nf, reason))
    out += report.table(["model", "set", "precision", "result", "max abs err", "max rel err",
                         "argmax (logits)", "SNR dB (audio)", "non-finite", "reason"], rows, "llllrrllr")
    w("")
    ran = [r for r in runs if r.metrics]
    if ran:
        w("Per output (runs that produced outputs):")
        w("")
        rows = []
        for r in ran:
            checked = {x.name: x for x in r.rows}
            for m in r.metrics:
                row = checked.get(m.name)
                res = "" if row is None or row.passed is None else ("PASS" if row.passed else "FAIL")
                am = "" if m.argmax is None else f"{100 * m.argmax:.1f}%"
                snr = "" if m.snr_db is None else f"{m.snr_db:.1f}"
                rows.append((r.model, r.data_set.removeprefix("test_data_set_"), r.precision, m.name,
                             _g(m.max_abs), _g(m.max_rel), am, snr, res))
        out += report.table(["model", "set", "precision", "output", "max abs err", "max rel err",
                             "argmax", "SNR dB", "mp-run"], rows, "llllrrrrl")
        w("")
    return out


def render_nodes(cases: list[NodeCase], elapsed_s: float, subset: bool, jobs: int,
                 timeout: float) -> list[str]:
    out: list[str] = []
    w = out.append
    sources = list(dict.fromkeys(c.source for c in cases))
    w("## ONNX backend node tests" + (" (subset)" if subset else ""))
    w("")
    w(f"`mp-run model.onnx --compare test_data_set_0 --rtol {ONNX_RTOL:g} --atol {ONNX_ATOL:g}` (fp32) on "
      + ("the deterministic subset (crc32 of `source/name` ≡ 0 mod "
         f"{SUBSET_MODULUS}) of " if subset else "every case of ")
      + "the node tests: tolerances are the ONNX backend runner's defaults "
      "(`onnx/backend/test/loader/__init__.py`: `rtol = 1e-3`, `atol = 1e-7`, overridable by a case's "
      "`data.json`; the runner's `assert_similar_outputs` checks shape, dtype and "
      "`np.testing.assert_allclose`). "
      f"{timeout:g} s timeout per case, {jobs} in parallel; sweep time {elapsed_s:.1f} s.")
    w("")
    w("*passed*: every output within tolerance; *failed*: ran, some output wrong (wrong result); "
      "*error*: imports but mp-run cannot compile or run it (not a missing lowering); "
      "*unsupported*: the importer rejects it, or an op has no CPU lowering yet; "
      "*crashed*: signal or exit code >= 128. *pass rate* = passed / (cases - unsupported).")
    w("")
    groups = [(s, [c for c in cases if c.source == s]) for s in sources]
    if len(sources) > 1:
        groups.append(("all", cases))
    rows = []
    for s, cs in groups:
        n = node_counts(cs)
        supported = len(cs) - n[UNSUPPORTED]
        rate = f"{100 * n[PASSED] / supported:.1f}%" if supported else ""
        rows.append((s, len(cs), n[PASSED], n[FAILED], n[ERROR], n[UNSUPPORTED], n[CRASHED],
                     n[TIMEOUT], rate))
    out += report.table(["source", "cases", "passed", "failed", "error", "unsupported", "crashed",
                         "timeout", "pass rate"], rows, "lrrrrrrrr")
    w("")

    w("### Missing CPU lowerings")
    w("")
    w("Cases stopped by `cannot lower 'mp.X' ...: this op has no CPU lowering yet`. *blocks*: cases "
      "that name the op; *only blocker*: cases where it is the only op without a lowering (lowering it "
      "lets the case run).")
    w("")
    out += report.table(["mp op", "blocks", "only blocker"], not_lowered_table(cases), "lrr",
                        empty="None.")
    w("")

    imp = Counter(r for c in cases if c.verdict.status == UNSUPPORTED for r in c.verdict.reasons
                  if not r.startswith("not lowered: "))
    w("### Unsupported at import (top 30)")
    w("")
    ranked = sorted(imp.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(ranked) > 30:
        ranked[30:] = [(f"({len(ranked) - 30} more reasons)", sum(n for _, n in ranked[30:]))]
    out += report.table(["reason", "cases"], ranked, "lr")
    w("")

    failed = [c for c in cases if c.verdict.status == FAILED]
    w("### Wrong results (failed)")
    w("")
    rows = []
    for c in failed:
        for r in c.rows:
            if r.passed is False:
                np_why = next((f.split(": ", 1)[1] for f in c.numpy_failures if f.startswith(r.name + ": ")), "agrees: PASS")
                rows.append((c.source, c.name, r.name, r.type, _g(r.max_abs), _g(r.max_rel), r.detail,
                             np_why, known_failure(c.name)))
    out += report.table(["source", "case", "output", "type", "max abs err", "max rel err", "mp-run detail",
                         "numpy (ONNX runner check)", "diagnosis"], rows, "llllrr", empty="None.")
    w("")

    errors = [c for c in cases if c.verdict.status in (ERROR, CRASHED, TIMEOUT)]
    w("### Errors, crashes and timeouts")
    w("")
    if errors:
        cats = Counter(category(c.verdict.error) for c in errors)
        example = {}
        for c in errors:
            example.setdefault(category(c.verdict.error), c.name)
        out += report.table(["error (names blanked)", "cases", "example"],
                            [(cat, n, example[cat])
                             for cat, n in sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))], "lrl")
        w("")
        w("<details><summary>every case</summary>")
        w("")
        out += report.table(["source", "case", "status", "first error line"],
                            [(c.source, c.name, c.verdict.status, c.verdict.error) for c in errors])
        w("")
        w("</details>")
    else:
        w("None.")
    w("")

    disagree = [c for c in cases if c.numpy_disagrees]
    w("### mp-run's comparison vs numpy's")
    w("")
    w("Cases where mp-run's PASS/FAIL differs from the ONNX runner's check (shape, dtype, "
      "`assert_allclose`) applied here to the `--output-dir` files.")
    w("")
    out += report.table(["source", "case", "outputs"],
                        [(c.source, c.name, "; ".join(c.numpy_disagrees)) for c in disagree],
                        empty="None.")
    w("")

    passed = [c for c in cases if c.verdict.status == PASSED]
    w("<details><summary>passed cases</summary>")
    w("")
    w(", ".join(f"{c.source}/{c.name}" for c in passed) or "None.")
    w("")
    w("</details>")
    w("")
    return out


def render_report(models: list[ModelRun] | None, models_s: float, nodes: list[NodeCase] | None,
                  nodes_s: float, mp_run: Path, *, subset: bool, jobs: int, timeout: float) -> str:
    out = report.begin(
        "Conformance of mp-run (CPU) against stored references",
        "Generated by `python -m mp.tools.conformance` (see `bench/conformance.py`).",
        extra=[f"mp-run: `{report.rel(mp_run)}` ({report.built(mp_run)})",
               f"onnx (reader of the references): {onnx.__version__}, numpy {np.__version__}"])
    w = out.append
    w("")
    if nodes is not None:
        n = node_counts(nodes)
        w(f"**Node tests:** {len(nodes)} cases: {n[PASSED]} passed, {n[FAILED]} failed (wrong result), "
          f"{n[ERROR]} error, {n[UNSUPPORTED]} unsupported, {n[CRASHED]} crashed, {n[TIMEOUT]} timeout.")
    if models is not None:
        mc = Counter((r.precision, r.verdict.status) for r in models)
        for p in ("fp32", "mixed"):
            total = sum(v for (pp, _), v in mc.items() if pp == p)
            w(f"**Models, {p}:** {total} runs: " + ", ".join(
                f"{mc[(p, s)]} {s}" for s in STATUSES if mc[(p, s)]) + ".")
    w("")
    if models is not None:
        out += render_models(models, models_s)
    if nodes is not None:
        out += render_nodes(nodes, nodes_s, subset, jobs, timeout)
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mp.tools.conformance",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--mp-run", type=Path, default=None, help="default: $MP_BUILD_DIR/bin/mp-run")
    ap.add_argument("--mp-opt", type=Path, default=None, help="default: $MP_BUILD_DIR/bin/mp-opt")
    ap.add_argument("--out", type=Path, default=None, help="markdown report (default: stdout)")
    ap.add_argument("--jobs", type=int, default=JOBS)
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per node test")
    ap.add_argument("--subset", action="store_true", help="only the deterministic node-test subset")
    ap.add_argument("--filter", default=None, help="only node tests whose name contains this")
    ap.add_argument("--no-models", action="store_true")
    ap.add_argument("--no-nodes", action="store_true")
    ap.add_argument("--generated", action="store_true",
                    help="also the other mp.models examples (conv_vocoder, layernorm_overflow), "
                    "built into a temporary folder with onnxruntime references")
    args = ap.parse_args(argv)
    mp_run = args.mp_run or default_mp_run()
    mp_opt = args.mp_opt or default_mp_opt()
    if not mp_run.is_file():
        print(f"error: mp-run not found at {mp_run} (build mp or pass --mp-run)", file=sys.stderr)
        return 2

    models = nodes = None
    models_s = nodes_s = 0.0
    if not args.no_models:
        with tempfile.TemporaryDirectory(prefix="mp-generated-") as gen:
            root = None
            if args.generated:
                root = Path(gen)
                generate_examples(root)
            start = time.monotonic()
            models = sweep_models(mp_run, mp_opt, model_dirs(root), jobs=args.jobs)
            models_s = time.monotonic() - start
            if root is not None:  # name them as generated
                for r in models:
                    if (root / r.model).is_dir():
                        r.model += " (generated)"
        mc = Counter((r.precision, r.verdict.status) for r in models)
        print(f"models: {dict(mc)} in {models_s:.1f} s", file=sys.stderr)
    if not args.no_nodes:
        cases = collect_node_cases(subset=args.subset, name_filter=args.filter)
        start = time.monotonic()
        nodes = sweep_nodes(mp_run, mp_opt, cases, timeout=args.timeout, jobs=args.jobs)
        nodes_s = time.monotonic() - start
        print(f"node tests: {len(nodes)} cases, {dict(node_counts(nodes))} in {nodes_s:.1f} s",
              file=sys.stderr)
    text = render_report(models, models_s, nodes, nodes_s, mp_run, subset=args.subset,
                         jobs=args.jobs, timeout=args.timeout)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    crashed = [c for c in (nodes or []) if c.verdict.status == CRASHED]
    crashed += [r for r in (models or []) if r.verdict.status == CRASHED]
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
