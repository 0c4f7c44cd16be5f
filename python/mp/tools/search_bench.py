"""bench/precision-search.md: mp-tune's precision search next to onnxconverter-common's.

    .venv/bin/python bench/precision_search.py [--metric max-rel --budget 1e-3]
        [--models stress:tiny_variance_norm speech/hubert_ctc_dynamo ...]
        [--mp-tune build/bin/mp-tune] [--out bench/precision-search.md] [--json FILE]

Without --metric/--budget it runs the criteria and models of :data:`DEFAULT_CASES`
(--models replaces each case's models).

(bench/precision_search.py is a driver of :func:`main`; ``python -m
mp.tools.search_bench`` is the same.)

Both tools answer the same question: which nodes must stay in fp32 so that the
mixed-precision model meets an error budget on the user's data. For every model
(``stress:NAME`` = a model of :data:`mp.models.STRESS`, written with its
``test_data_set_0/`` into a temporary folder by :func:`mp.models.write_example`;
``GROUP/NAME`` = ``../shared/corpus/GROUP/NAME``), with one metric and budget for
all, on the inputs of ``test_data_set_0`` only:

* **mp-tune**: ``mp-tune MODEL --data test_data_set_0 --metric M --budget B
  --plan-out PLAN --report REPORT.json``; its report gives the evaluations (mixed
  builds compiled and run, the default build included; the fp32 reference run and
  the one sensitivity run are counted apart), the nodes it forces to fp32, the
  achieved score and the score of every evaluation (the first is mp's default
  mixed build);
* **occ**: onnxconverter-common's ``auto_mixed_precision.auto_convert_mixed_precision(
  model, feed_dict, validate_fn, rtol=None, atol=None, keep_io_types=True)`` with
  ``feed_dict`` = the inputs of ``test_data_set_0`` and ``validate_fn`` = :func:`score`
  of the same metric against the same budget. Its evaluations are the fp16 models
  it converts and runs (counted by wrapping ``float16.convert_float_to_float16``);
  ``validate_fn`` is called once more, first, on the fp32 outputs against
  themselves. Its fp32 set is the ``node_block_list`` of its last conversion, the
  model it returns.

Cross-checks, each with mp-run on the same inputs: mp-tune's plan rebuilt as a
policy (``mp-run --precision mixed --policy PLAN``) and scored against mp's fp32
build (must reproduce mp-tune's score); occ's fp32 set given to mp as a policy
(``{"nodes": {NAME: {"compute": "f32"}}}``) and scored the same way: does the set
the peer found, on a runtime that really computes in fp16, meet the budget?

Every model/tool step is in its own try/except: an error is a table cell, never an
abort.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import onnx

from ..models import STRESS, load_test_data, write_example
from . import REPO, build_tool, report
from .precision_bench import count_precision, name_nodes, node_records, quiet, shorten

CORPUS = REPO.parent / "shared" / "corpus"
METRICS = ("max-rel", "max-abs", "argmax", "snr")
HIGHER_IS_BETTER = {"argmax", "snr"}
# The default cases: one criterion each, the same for both tools on every model of
# the case. max-rel <= 1e-3: the four stress cases, three speech models whose plain
# fp16 conversion by onnxconverter-common misses it in onnxruntime (and mp's default
# build too), and a decoder (onnxruntime rejects every decoder of the corpus after
# onnxconverter-common's conversion; mp's default build misses 1e-3 on this one).
# snr >= 60 dB: the TorchScript exports of two of those speech models, where occ's
# plain conversion misses and its block list can still reach the budget (with every
# node blocked its error is that of the fp16-rounded weights, see METHOD), and the two
# stress cases that miss it.
DEFAULT_CASES = (
    ("max-rel", 1e-3, (*(f"stress:{n}" for n in STRESS),
                       "speech/hubert_ctc_dynamo", "speech/wav2vec2_ctc_dynamo",
                       "speech/speecht5_hifigan_dynamo", "decoders/qwen3_dynamo")),
    ("snr", 60.0, ("stress:large_logit_softmax", "stress:tiny_variance_norm",
                   "speech/hubert_ctc_ts", "speech/speecht5_hifigan_ts")),
)
# What auto_convert_mixed_precision raises when its final model misses the criterion.
FINAL_FAILED = "validation failed for final fp16 model"
TUNE_TIMEOUT = 1800
RUN_TIMEOUT = 600


# ----------------------------------------------------------------------------- the metric


def score_output(metric: str, got: np.ndarray, ref: np.ndarray) -> float | None:
    """The score of one output against its reference; None when the metric skips it.

    As mp-tune scores (lib/Execution/PrecisionSearch.cpp): elements where the
    reference is not finite are ignored; a non-finite value where the reference is
    finite gives the worst score (inf for max-rel/max-abs, -inf for snr, 0 for
    argmax); max-rel = max|d| / max|ref| (ref max floored at 1e-30); snr =
    10·log10(Σref² / Σd²) dB (inf when d = 0); argmax = the share of rows (last axis)
    whose argmax agrees, outputs whose last dim is < 2 skipped; integer and bool
    outputs must be equal (else the worst score); a shape mismatch is the worst score.
    """
    worst = worst_score(metric)
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.size != ref.size:
        return worst
    if ref.dtype.kind not in "fc":
        if metric == "argmax":
            return None if ref.ndim == 0 or ref.shape[-1] < 2 else (
                1.0 if np.array_equal(got.reshape(ref.shape), ref) else 0.0)
        if not np.array_equal(got.reshape(ref.shape), ref):
            return worst
        return math.inf if metric == "snr" else 0.0
    if metric == "argmax" and (ref.ndim == 0 or ref.shape[-1] < 2):
        return None
    g = got.reshape(ref.shape).astype(np.float64)
    r = ref.astype(np.float64)
    keep = np.isfinite(r)
    if not np.isfinite(g[keep]).all():
        return worst
    d = np.where(keep, g - r, 0.0)
    r0 = np.where(keep, r, 0.0)
    if metric == "max-abs":
        return float(np.abs(d).max()) if d.size else 0.0
    if metric == "max-rel":
        if not d.size:
            return 0.0
        return float(np.abs(d).max()) / max(float(np.abs(r0).max()), 1e-30)
    if metric == "snr":
        noise = float((d * d).sum())
        return math.inf if noise == 0 else 10 * math.log10(float((r0 * r0).sum()) / noise)
    if metric == "argmax":
        rows = r0.reshape(-1, ref.shape[-1])
        if not rows.shape[0]:
            return 1.0
        return float((g.reshape(rows.shape).argmax(-1) == rows.argmax(-1)).mean())
    raise ValueError(f"unknown metric {metric!r}")


def worst_score(metric: str) -> float:
    if metric == "argmax":
        return 0.0
    return -math.inf if metric in HIGHER_IS_BETTER else math.inf


def worse(metric: str, a: float, b: float) -> float:
    return min(a, b) if metric in HIGHER_IS_BETTER else max(a, b)


def score(metric: str, got, ref) -> float:
    """The worst score over the outputs: ``got`` and ``ref`` are lists in the same
    (graph output) order or dicts by name (a reference missing from ``got`` gives
    the worst score)."""
    if isinstance(ref, dict):
        pairs = [(got.get(name) if isinstance(got, dict) else None, r) for name, r in ref.items()]
    else:
        pairs = list(zip(got, ref))
        if len(got) != len(ref):
            return worst_score(metric)
    best = math.inf if metric in HIGHER_IS_BETTER else 0.0
    if metric == "argmax":
        best = 1.0
    total = best
    for g, r in pairs:
        s = worst_score(metric) if g is None else score_output(metric, g, r)
        if s is not None:
            total = worse(metric, total, s)
    return total


def meets(metric: str, value: float | None, budget: float) -> bool:
    if value is None or math.isnan(value):
        return False
    return value >= budget if metric in HIGHER_IS_BETTER else value <= budget


def fmt_score(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    if math.isnan(value) or (math.isinf(value) and (value > 0) != (metric in HIGHER_IS_BETTER)):
        return "fail"
    if math.isinf(value):
        return "exact"
    if metric == "snr":
        return f"{value:.1f} dB"
    if metric == "argmax":
        return f"{value:.4f}"
    return f"{value:.3g}"


# ----------------------------------------------------------------------------- models


def resolve_models(specs, workdir: Path, corpus: Path = CORPUS) -> list[dict]:
    """``stress:NAME`` (generated into ``workdir``) or ``GROUP/NAME`` of the corpus."""
    models = []
    for spec in specs:
        entry = {"name": spec.split(":", 1)[-1].split("/")[-1], "spec": spec}
        try:
            if spec.startswith("stress:"):
                name = spec.split(":", 1)[1]
                entry["source"] = "mp.models (stress)"
                path = write_example(name, workdir / "generated" / name / "model.onnx")
            else:
                entry["source"] = f"corpus/{spec.split('/')[0]}"
                path = corpus / spec / "model.onnx"
                if not path.is_file():
                    raise FileNotFoundError(f"{path} is absent")
            entry["original"] = path
            entry["data"] = path.parent / "test_data_set_0"
        except Exception as e:  # noqa: BLE001 - a row with the error
            entry["error"] = short_error(e)
        models.append(entry)
    return models


def prepare(entry: dict, workdir: Path) -> Path:
    """The model both tools get: the original with every node named (unnamed or
    duplicate names only; the tools name nodes by their ONNX names), saved in
    ``workdir``; the original path when nothing changed."""
    model = onnx.load(str(entry["original"]))
    before = [n.name for n in model.graph.node]
    name_nodes(model)
    if [n.name for n in model.graph.node] == before:
        return entry["original"]
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "model.onnx"
    onnx.save(model, str(path))
    return path


# ----------------------------------------------------------------------------- onnxconverter-common


def ort_session(model: onnx.ModelProto):
    import onnxruntime as ort
    ort.set_default_logger_severity(3)  # the sessions auto_convert_mixed_precision makes too
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def ort_outputs(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """onnxruntime CPU outputs in graph order, with onnxruntime's default session
    options (as auto_convert_mixed_precision runs its models)."""
    return ort_session(model).run(None, feeds)


def occ_plain(model: onnx.ModelProto, feeds: dict, metric: str) -> dict:
    """onnxconverter-common's ``convert_float_to_float16(keep_io_types=True)`` scored
    against the fp32 model, both in onnxruntime: ``default`` (nothing blocked) and
    ``all_blocked`` (every node auto_convert_mixed_precision may block, i.e. all but
    Loop/If/Scan, in ``node_block_list``: the best its search can reach)."""
    from onnxconverter_common import float16
    ref = ort_outputs(model, feeds)
    every = [n.name for n in model.graph.node if n.op_type not in ("Loop", "If", "Scan")]
    res = {}
    for key, block in (("default", []), ("all_blocked", every)):
        try:
            with quiet():
                fp16 = float16.convert_float_to_float16(
                    onnx.ModelProto.FromString(model.SerializeToString()), keep_io_types=True,
                    node_block_list=block)
            res[key] = score(metric, ort_outputs(fp16, feeds), ref)
        except Exception as e:  # noqa: BLE001 - reported
            res[key + "_error"] = short_error(e)
    return res


def run_occ_search(model: onnx.ModelProto, feeds: dict, metric: str, budget: float) -> dict:
    """``auto_convert_mixed_precision`` with ``validate_fn`` = this metric and budget.

    Returns evaluations (fp16 models converted; each is run in onnxruntime unless
    onnxruntime rejects it), validate_calls, fp32_nodes (the final node_block_list),
    achieved (the score validate_fn gave the final model), met, seconds, the
    returned model (``model``) or ``error``.
    """
    from onnxconverter_common import auto_mixed_precision, float16

    conversions: list[list[str]] = []
    scores: list[float] = []
    original = float16.convert_float_to_float16

    def convert(*args, **kwargs):
        conversions.append(list(kwargs.get("node_block_list") or []))
        return original(*args, **kwargs)

    def validate_fn(res1, res2):
        s = score(metric, res2, res1)
        scores.append(s)
        return meets(metric, s, budget)

    res: dict = {}
    model = onnx.ModelProto.FromString(model.SerializeToString())
    float16.convert_float_to_float16 = convert
    t0 = time.perf_counter()
    try:
        with quiet():
            res["model"] = auto_mixed_precision.auto_convert_mixed_precision(
                model, feeds, validate_fn, rtol=None, atol=None, keep_io_types=True)
    except Exception as e:  # noqa: BLE001 - reported
        res["error"] = short_error(e)
    finally:
        float16.convert_float_to_float16 = original
        res["seconds"] = time.perf_counter() - t0
    res["evaluations"] = len(conversions)
    res["validate_calls"] = len(scores)
    res["fp32_nodes"] = conversions[-1] if conversions else []
    # scores[0] is the fp32-vs-fp32 self check; scores[i] scores conversions[i-1]
    # (one fewer when onnxruntime rejected the last conversion).
    final_scored = len(scores) - 1 == len(conversions) and conversions
    res["achieved"] = scores[-1] if final_scored else None
    res["met"] = "model" in res and meets(metric, res["achieved"], budget)
    # Whether the bisection ran to its end (the last conversion is its answer, even
    # when that answer fails its final validation) rather than dying on the way
    # (onnxruntime rejecting a converted model).
    res["finished"] = "model" in res or FINAL_FAILED in res.get("error", "")
    res["history"] = [{"fp32_nodes": len(c), "score": s}
                      for c, s in zip(conversions, scores[1:])]
    return res


# ----------------------------------------------------------------------------- mp


def run_mp_tune(mp_tune: Path, model: Path, data: Path, metric: str, budget: float,
                workdir: Path, timeout: int = TUNE_TIMEOUT) -> dict:
    workdir.mkdir(parents=True, exist_ok=True)
    plan, rep = workdir / "tune-plan.json", workdir / "tune-report.json"
    cmd = [str(mp_tune), str(model), "--data", str(data), "--metric", metric,
           "--budget", repr(budget), "--plan-out", str(plan), "--report", str(rep)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    res: dict = {"seconds": time.perf_counter() - t0, "returncode": proc.returncode,
                 "stdout": proc.stdout[-4000:]}
    if proc.returncode not in (0, 2) or not rep.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"mp-tune exit {proc.returncode}: " + " / ".join(tail))
    r = json.loads(rep.read_text())
    res["report"] = r
    res["met"] = bool(r.get("met"))
    res["achieved"] = r.get("achieved")
    res["evaluations"] = r.get("evaluations")
    res["reference_runs"] = r.get("reference_runs")
    res["sensitivity_runs"] = r.get("sensitivity_runs")
    res["fp16_nodes_default"] = r.get("fp16_nodes_default")
    res["fp32_nodes"] = list(r.get("fp32_nodes") or [])
    hist = r.get("history") or []
    res["achieved"] = _finite_or(metric, r.get("achieved"), res["met"])
    res["default_score"] = (_finite_or(metric, hist[0].get("score"), bool(hist[0].get("met")))
                            if hist else None)
    res["plan"] = plan if plan.is_file() else None
    if res["plan"]:
        summary = json.loads(plan.read_text()).get("summary", {})
        res["nodes_f16"], res["nodes_total"] = summary.get("nodes_f16"), summary.get("nodes_total")
    return res


def _finite_or(metric: str, value, met: bool) -> float:
    """A score of mp-tune's report as a float: non-finite scores are the strings "inf",
    "-inf" and "nan" there; None (no score) is the best one when the budget was met,
    else the worst."""
    if value is not None:
        return float(value)
    if met:
        return math.inf if metric in HIGHER_IS_BETTER else 0.0
    return worst_score(metric)


def sanitize(name: str) -> str:
    """The file name mp-run --output-dir gives an output (lib/Execution/TestData.cpp)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def mp_run_outputs(mp_run: Path, model: Path, data: Path, workdir: Path, precision: str,
                   policy: Path | None = None, timeout: int = RUN_TIMEOUT) -> dict[str, np.ndarray]:
    """mp-run's outputs (by graph output name) on ``data``'s inputs."""
    out = workdir / f"out-{precision}-{policy.stem if policy else 'default'}"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(mp_run), str(model), "--precision", precision, "--output-dir", str(out)]
    if policy is not None:
        cmd += ["--policy", str(policy)]
    for f in sorted(data.glob("input_*.pb")):
        t = onnx.TensorProto()
        t.ParseFromString(f.read_bytes())
        cmd += ["--input", f"{t.name}={f}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-2:]
        raise RuntimeError(f"mp-run exit {proc.returncode}: " + " / ".join(tail))
    names = [o.name for o in onnx.load(str(model), load_external_data=False).graph.output]
    return {n: np.load(out / f"{sanitize(n)}.npy") for n in names if (out / f"{sanitize(n)}.npy").is_file()}


def occ_set_policy(nodes: list[str], path: Path) -> Path:
    path.write_text(json.dumps({"nodes": {n: {"compute": "f32", "rule": "occ's fp32 set"}
                                          for n in nodes}}, indent=1))
    return path


# ----------------------------------------------------------------------------- one model


def measure(entry: dict, metric: str, budget: float, mp_tune: Path, mp_run: Path,
            workdir: Path) -> dict:
    res = {k: entry[k] for k in ("name", "spec", "source")}
    res["occ"], res["mp"], res["checks"] = {}, {}, {}
    if entry.get("error"):
        res["error"] = entry["error"]
        return res
    t0 = time.perf_counter()
    path = prepare(entry, workdir / "model")
    data = entry["data"]
    model = onnx.load(str(path))
    res["nodes"] = len(model.graph.node)
    res["outputs"] = len(model.graph.output)
    feeds, _ = load_test_data(data)
    records = None

    def fp16_nodes(m: onnx.ModelProto) -> str:
        """f16/total float nodes of a converted model (precision_bench's counting)."""
        nonlocal records
        if records is None:
            records = node_records(model)
        c = count_precision(m, records)
        return f"{c['nodes_f16']} / {c['nodes_total']}"

    occ = res["occ"]
    try:
        occ["plain"] = occ_plain(model, feeds, metric)
    except Exception as e:  # noqa: BLE001
        occ["plain"] = {"default_error": short_error(e), "all_blocked_error": short_error(e)}
    try:
        occ.update(run_occ_search(model, feeds, metric, budget))
        if "model" in occ:
            try:
                occ["fp16_nodes"] = fp16_nodes(occ["model"])
            except Exception as e:  # noqa: BLE001
                occ["fp16_nodes"] = f"? ({short_error(e, 60)})"
            del occ["model"]
    except Exception as e:  # noqa: BLE001
        occ["error"] = short_error(e)

    mp = res["mp"]
    if not mp_tune.is_file():
        mp["error"] = f"{report.rel(mp_tune)} not built"
    else:
        try:
            mp.update(run_mp_tune(mp_tune, path, data, metric, budget, workdir / "mp"))
            if mp.get("nodes_total") is not None:
                mp["fp16_nodes"] = (f"{mp.get('fp16_nodes_default')} → {mp['nodes_f16']} "
                                    f"/ {mp['nodes_total']}")
        except Exception as e:  # noqa: BLE001
            mp["error"] = short_error(e)

    checks = res["checks"]
    if mp_run.is_file():
        try:
            ref = mp_run_outputs(mp_run, path, data, workdir / "mp", "fp32")
        except Exception as e:  # noqa: BLE001
            checks["error"] = short_error(e)
            ref = None
        if ref is not None and mp.get("plan"):
            try:
                got = mp_run_outputs(mp_run, path, data, workdir / "mp", "mixed", mp["plan"])
                checks["mp_plan"] = score(metric, got, ref)
            except Exception as e:  # noqa: BLE001
                checks["mp_plan_error"] = short_error(e)
        if ref is not None and occ.get("evaluations") and not occ.get("fp32_nodes") \
                and mp.get("default_score") is not None:
            checks["occ_set_in_mp"] = mp["default_score"]  # the empty set: mp's default build
        elif ref is not None and occ.get("fp32_nodes") and occ.get("finished"):
            try:
                pol = occ_set_policy(occ["fp32_nodes"], workdir / "mp" / "occ-set.json")
                got = mp_run_outputs(mp_run, path, data, workdir / "mp", "mixed", pol)
                checks["occ_set_in_mp"] = score(metric, got, ref)
            except Exception as e:  # noqa: BLE001
                checks["occ_set_in_mp_error"] = short_error(e)
    else:
        checks["error"] = f"{report.rel(mp_run)} not built"
    res["seconds"] = time.perf_counter() - t0
    return res


def short_error(e: BaseException, limit: int = 220) -> str:
    return shorten(f"{type(e).__name__}: {e}", limit)


# ----------------------------------------------------------------------------- report


def _met(metric: str, value, budget: float) -> str:
    if value is None:
        return "—"
    return fmt_score(metric, value) + ("" if meets(metric, value, budget) else " **(miss)**")


def _names(nodes: list[str], limit: int = 6) -> str:
    if not nodes:
        return "—"
    shown = ", ".join(f"`{n}`" for n in nodes[:limit])
    return shown + (f", … ({len(nodes) - limit} more)" if len(nodes) > limit else "")


def _plain(occ: dict, key: str, metric: str, budget: float) -> str:
    plain = occ.get("plain", {})
    if key in plain:
        return _met(metric, plain[key], budget)
    return f"error: {shorten(plain[key + '_error'], 100)}" if plain.get(key + "_error") else "—"


def search_rows(results: list[dict], metric: str, budget: float) -> list[list]:
    rows = []
    for r in results:
        if r.get("error"):
            rows.append([f"`{r['name']}`", r["source"], f"error: {r['error']}", *[""] * 10])
            continue
        occ, mp = r["occ"], r["mp"]
        mp_default = _met(metric, mp.get("default_score"), budget) if "default_score" in mp else "—"
        if occ.get("error") and not occ.get("evaluations"):
            occ_cells = [f"error: {shorten(occ['error'], 100)}", "", "", ""]
        else:
            n32 = len(occ.get("fp32_nodes", []))
            occ_cells = [
                f"{occ.get('evaluations')} ({occ.get('validate_calls')})",
                n32 if occ.get("finished", True) else f"({n32} in the last try)",
                (_met(metric, occ.get("achieved"), budget) if occ.get("finished", True)
                 else "none") + ("; raises: " + shorten(occ["error"], 100) if occ.get("error") else ""),
                f"{occ.get('seconds', 0):.1f}",
            ]
        if mp.get("error"):
            mp_cells = [f"error: {mp['error']}", "", "", ""]
        else:
            mp_cells = [f"{mp.get('evaluations')} (+{mp.get('reference_runs')}, "
                        f"+{mp.get('sensitivity_runs')})",
                        len(mp.get("fp32_nodes", [])),
                        _met(metric, mp.get("achieved"), budget), f"{mp.get('seconds', 0):.1f}"]
        rows.append([f"`{r['name']}`", r["source"], r.get("nodes", ""),
                     _plain(occ, "default", metric, budget), mp_default, *occ_cells, *mp_cells])
    return rows


def check_rows(results: list[dict], metric: str, budget: float) -> list[list]:
    rows = []
    for r in results:
        if r.get("error"):
            continue
        occ, mp, c = r["occ"], r["mp"], r["checks"]

        def check(key):
            if key in c:
                return _met(metric, c[key], budget)
            return f"error: {shorten(c[key + '_error'], 100)}" if c.get(key + "_error") else (
                f"error: {shorten(c['error'], 100)}" if c.get("error") else "—")

        rows.append([f"`{r['name']}`",
                     _met(metric, mp.get("achieved"), budget) if not mp.get("error") else "—",
                     check("mp_plan"), mp.get("fp16_nodes", "—"),
                     _met(metric, occ.get("achieved"), budget)
                     if occ.get("evaluations") and occ.get("finished", True) else "—",
                     _plain(occ, "all_blocked", metric, budget),
                     check("occ_set_in_mp"), occ.get("fp16_nodes", "—")])
    return rows


def observations(results: list[dict], metric: str, budget: float) -> list[str]:
    """Generated remarks: failures, a reported score its rebuilt plan does not
    reproduce, criteria one runtime meets and the other misses."""
    lines = []
    for r in results:
        n = f"`{r['name']}`"
        if r.get("error"):
            lines.append(f"- {n}: not measured: {r['error']}")
            continue
        occ, mp, c = r["occ"], r["mp"], r["checks"]
        plain = occ.get("plain", {})
        if occ.get("error"):
            lines.append(f"- {n} / occ: raises after {occ.get('evaluations', 0)} conversion(s)"
                         + ("" if occ.get("finished") else
                            f" (the last with {len(occ.get('fp32_nodes', []))} node(s) blocked)")
                         + f": {occ['error']}")
        tried = [h["score"] for h in occ.get("history", []) if h.get("score") is not None]
        if occ.get("finished") and not occ.get("met") and tried:
            best = max(tried) if metric in HIGHER_IS_BETTER else min(tried)
            lines.append(f"- {n} / occ: the best of its {len(tried)} scored conversions: "
                         f"{fmt_score(metric, best)}")
        if ("all_blocked" in plain and not meets(metric, plain["all_blocked"], budget)
                and occ.get("evaluations") and not occ.get("met")):
            lines.append(f"- {n} / occ: even with every node in `node_block_list` its model scores "
                         f"{fmt_score(metric, plain['all_blocked'])} in onnxruntime, over budget: "
                         "the weights are rounded to fp16 whatever the block list (see *Method*)")
        if mp.get("error"):
            lines.append(f"- {n} / mp-tune: {mp['error']}")
        elif not mp.get("met"):
            lines.append(f"- {n} / mp-tune: budget not met (exit 2), achieved "
                         f"{fmt_score(metric, mp.get('achieved'))}")
        if "mp_plan" in c and mp.get("achieved") is not None:
            a, b = mp["achieved"], c["mp_plan"]
            same = (a == b or (math.isfinite(a) and math.isfinite(b)
                               and abs(a - b) <= 1e-6 * max(1.0, abs(a))))
            if not same:
                lines.append(f"- {n}: mp-tune reported {fmt_score(metric, a)}, its plan rebuilt "
                             f"by mp-run scores {fmt_score(metric, b)}")
        for key in ("mp_plan_error", "occ_set_in_mp_error", "error"):
            if c.get(key):
                lines.append(f"- {n}: cross-check failed ({key}): {c[key]}")
        if "occ_set_in_mp" in c and occ.get("met") and not meets(metric, c["occ_set_in_mp"], budget):
            lines.append(f"- {n}: occ's fp32 set meets the budget in onnxruntime but not in mp's "
                         f"build ({fmt_score(metric, c['occ_set_in_mp'])}): onnxruntime's CPU "
                         "provider computes some fp16 ops in fp32")
        if "default" in plain and meets(metric, plain["default"], budget):
            lines.append(f"- {n}: onnxconverter-common's plain fp16 model already meets the budget "
                         "in onnxruntime")
        if mp.get("default_score") is not None and meets(metric, mp["default_score"], budget):
            lines.append(f"- {n}: mp's default mixed build already meets the budget "
                         f"({mp.get('evaluations')} evaluation)")
        if (mp.get("nodes_f16") is not None and mp.get("fp16_nodes_default") is not None
                and mp["fp16_nodes_default"] - mp["nodes_f16"] > len(mp.get("fp32_nodes", []))):
            lines.append(f"- {n} / mp-tune: {len(mp['fp32_nodes'])} node(s) forced to fp32 take "
                         f"the build from {mp['fp16_nodes_default']} to {mp['nodes_f16']} fp16 "
                         "nodes: fp32 spreads from a forced node to the infer/clear ops that "
                         "read it (docs/precision.md, *Propagation*)")
    return lines or ["- None."]


METHOD = """\
- **Same data, same criterion.** Both tools get the inputs of `test_data_set_0` only
  (onnxconverter-common's `auto_convert_mixed_precision` takes one `feed_dict`; mp-tune
  is given `--data test_data_set_0`, although it accepts several folders). The metric is
  scored per graph output and every output must meet it: max-rel = max|mixed − fp32| /
  max|fp32|, max-abs = max|mixed − fp32|, argmax = share of rows (last axis) whose
  argmax agrees (outputs with last dim ≥ 2), snr = 10·log10(Σfp32² / Σ(mixed − fp32)²)
  dB. A non-finite value where the reference is finite fails; elements where the
  reference is not finite are ignored; integer outputs (e.g. an ArgMax output) must be
  equal, as mp-tune scores them (lib/Execution/PrecisionSearch.cpp). The Python
  implementation (`score` in python/mp/tools/search_bench.py) is occ's `validate_fn` and
  scores the cross-checks.
- **Each against its own fp32.** mp-tune scores mp's mixed builds against mp's fp32
  build; occ scores its fp16 models against the original model, both run by onnxruntime
  (CPU provider, default session options, as `auto_convert_mixed_precision` runs them).
- **onnxruntime's CPU provider computes some fp16 ops in fp32**: it has no fp16 kernel
  for many ops and inserts casts to fp32 around them when it builds the session (and
  removes the fp32→fp16→fp32 pairs this creates), so occ's fp16 models are partly fp32
  arithmetic with fp16 weights and fp16 values in between. A criterion met in
  onnxruntime CPU can be missed by a backend that computes those ops in fp16 (mp does);
  the column *occ's set in mp* rebuilds mp with exactly occ's fp32 set to show it.
- **occ's block list keeps the ops, not the weights, in fp32.** In onnxconverter-common
  1.16, `convert_float_to_float16` first rewires every blocked node's inputs to new
  Cast nodes (`process_node_in_block_list`) and only then keeps the initializers that
  blocked nodes read in fp32 (`process_initializers`), which no longer sees them: every
  float initializer is rounded to fp16 and cast back. So with every node blocked the
  model is fp32 arithmetic on fp16-rounded weights (the column *occ, every node
  blocked*): no block list removes that error. When it misses the budget, occ's
  bisection blocks node after node (about two conversions per node; the observations
  give the best score of all its conversions) before `auto_convert_mixed_precision`
  raises `validation failed for final fp16 model`. mp keeps a forced-fp32 node's
  weights in fp32.
- **Evaluations.** mp-tune: mixed builds compiled and run, its default build included
  (its report's `evaluations`); in parentheses its fp32 reference run and its one
  sensitivity run (mp-shadow-fp16: every fp16 node's own error, measured in one run),
  counted apart. occ: fp16 models converted by `float16.convert_float_to_float16` and run
  in onnxruntime (the first converts everything; each later one converts a segment plus
  the segments that passed; the last rebuilds the result), counted by wrapping that
  function; in parentheses its `validate_fn` calls, one more: occ first validates the
  fp32 outputs against themselves. Neither count includes occ's preliminary onnxruntime
  runs (the fp32 reference, and `add_missing_dtypes_using_ort`, which runs the fp32
  model once per 100 intermediate values that shape inference left untyped).
- **fp32 set.** mp-tune: `fp32_nodes` of its report, the nodes it forces to fp32 on
  top of mp's default policy (which already keeps some nodes in fp32: Exp, Pow,
  static-bound overflows, ...). A forced node also takes the infer/clear ops that read
  it to fp32 (propagation, docs/precision.md), so the build can lose more fp16 nodes
  than it forces: the column *mp fp16 nodes* gives the plan's `nodes_f16` before (mp-tune's
  `fp16_nodes_default`) and after the search, over `nodes_total`. occ: the
  `node_block_list` of its last conversion, i.e. the size-1 segments its bisection
  marked bad (onnxconverter-common's own `DEFAULT_OP_BLOCK_LIST` — Resize, Range,
  CumSum, Min, Max, TopK, ... — stays in fp32 anyway and is not counted); its nodes may
  include nodes without float data (Shape, integer arithmetic), which occ bisects like
  any other. *occ fp16 nodes* counts the returned model as bench/precision.md does: the
  nodes of the original graph with float data that are entirely fp16.
- **Search strategies.** occ bisects the node list in graph order: it tries converting
  the largest untested segment (with the segments already known good), marks it good
  when the criterion holds, else splits it in half, down to single nodes, which it
  keeps in fp32; the number of attempts grows with the number of culprit nodes times
  log2(nodes). mp-tune orders the nodes its default build computes in fp16 by their own
  fp16 error (one sensitivity run) and bisects over how many of the worst to keep in
  fp32 (about log2(candidates) evaluations, assuming more fp32 never hurts; the score
  is not monotone in that count, so it returns the smallest count it saw meet the
  budget).
- **Wall time** is the whole call: occ's `auto_convert_mixed_precision` (conversions,
  onnxruntime sessions and runs, its preliminary runs) and mp-tune's process (import,
  JIT compilation of every build to native code, runs); onnxruntime only builds a
  session per model. One process at a time on the machine above.
- **Cross-checks.** *mp-tune's plan, rebuilt*: `mp-run MODEL --precision mixed --policy
  PLAN` (the plan mp-tune wrote is a policy) scored against `mp-run --precision fp32`;
  it should equal mp-tune's reported score. *occ's set in mp*: mp's mixed build with
  occ's final `node_block_list` forced to fp32 (`{"nodes": {NAME: {"compute": "f32"}}}`,
  on top of mp's default policy). *occ's model in onnxruntime* is the score its
  `validate_fn` gave the returned model.
"""

SEARCH_NOTE = (
    "*evals*: models built and run by the search (occ: fp16 models converted, in "
    "parentheses its `validate_fn` calls; mp-tune: mixed builds, in parentheses + its fp32 "
    "reference and sensitivity runs); *fp32 set*: the number of nodes the search forced to "
    "fp32; *achieved*: the final model's score (**(miss)**: over budget); *default*: the "
    "score before any search (occ: `convert_float_to_float16(keep_io_types=True)` in "
    "onnxruntime; mp: mp-tune's first evaluation, mp's default mixed build); *s*: wall "
    "seconds. *(N in the last try)*: occ's search died (onnxruntime rejected a converted "
    "model) while trying a block list of N nodes: no answer. *fail*: a non-finite value where the fp32 output is finite, or an integer "
    "output that differs; *exact*: snr of identical outputs.")
CHECK_NOTE = (
    "The final models scored again: mp-tune's plan rebuilt by mp-run against mp's fp32 "
    "build; occ's model as its `validate_fn` scored it; occ with every node blocked (the "
    "block list its search ends with when every node fails; not necessarily the best "
    "block list); occ's "
    "fp32 set forced in mp's build, against mp's fp32 (an empty set is mp's default build). "
    "*fp16 nodes*: nodes with float data computing in fp16 (mp: default → after the "
    "search / total; occ: in the returned model / total).")


def criterion(metric: str, budget: float) -> str:
    return f"{metric} {'≥' if metric in HIGHER_IS_BETTER else '≤'} {budget:g}" + (
        " dB" if metric == "snr" else "")


def render_case(case: dict) -> list[str]:
    metric, budget, results = case["metric"], case["budget"], case["results"]
    lines = [f"## {criterion(metric, budget)}", "", "### Search", ""]
    lines += report.table(
        ["model", "source", "nodes", "occ default", "mp default",
         "occ evals", "occ fp32 set", "occ achieved", "occ s",
         "mp-tune evals", "mp-tune fp32 set", "mp-tune achieved", "mp-tune s"],
        search_rows(results, metric, budget), align="llrllrrlrlrlr")
    lines += ["", "### Cross-checks", ""]
    lines += report.table(
        ["model", "mp-tune (reported)", "mp-tune's plan, rebuilt", "mp fp16 nodes",
         "occ's model in onnxruntime", "occ, every node blocked", "occ's set in mp",
         "occ fp16 nodes"],
        check_rows(results, metric, budget), align="llllllll", empty="None.")
    lines += ["", "### fp32 sets", ""]
    set_rows = [[f"`{r['name']}`", _names(r["mp"].get("fp32_nodes", [])),
                 _names(r["occ"].get("fp32_nodes", [])) if r["occ"].get("finished", True)
                 else "none (the search died)"]
                for r in results if not r.get("error")]
    lines += report.table(["model", "mp-tune (worst own fp16 error first)",
                           "occ (graph order)"], set_rows, empty="None.")
    lines += ["", "### Observations", "", *observations(results, metric, budget), ""]
    return lines


def render(cases: list[dict], meta: dict) -> str:
    crits = "; ".join(f"**{criterion(c['metric'], c['budget'])}**" for c in cases)
    lines = report.begin(
        "Precision search: mp-tune vs onnxconverter-common's auto_convert_mixed_precision",
        "Generated by `bench/precision_search.py` (python/mp/tools/search_bench.py); do not edit "
        "by hand. Both tools look for the nodes to keep in fp32 so that a mixed-precision model "
        f"meets a criterion ({crits}) on every output against its own fp32 model, on the inputs "
        "of `test_data_set_0` (both tools get that one input set: onnxconverter-common's "
        "`auto_convert_mixed_precision` takes a single `feed_dict`). mp-tune's builds run on "
        "mp's CPU JIT, onnxconverter-common's (occ) models on onnxruntime's CPU provider, which "
        "computes some fp16 ops in fp32 (see *Method*).",
        command=meta["command"],
        extra=[f"mp-tune: `{meta['mp_tune']}` ({meta['mp_tune_built']}); mp-run: `{meta['mp_run']}` "
               f"({meta['mp_run_built']})",
               f"Peers: {meta['versions']}",
               f"Total run time: {meta['seconds']:.0f} s"],
        measured=meta.get("commit"))
    lines += ["", SEARCH_NOTE, "", CHECK_NOTE, ""]
    for case in cases:
        lines += render_case(case)
    if meta.get("discussion"):
        lines += ["## Discussion", "", meta["discussion"].rstrip(), ""]
    lines += ["## Method", "", METHOD.rstrip()]
    return "\n".join(lines).rstrip("\n") + "\n"


DISCUSSION = """\
What the tables show, and why (the mechanisms are in *Method*; the numbers above are
this run's):

- **Stress cases**: both searches are small (0–3 nodes), and where they differ the
  runtimes differ. mp's static bounds already keep `large_logit_softmax`'s head in fp32
  (one evaluation) while occ bisects to `lm_head/MatMul`; `vocoder_overflow` overflows
  in mp's fp16 convolutions but not in onnxruntime CPU, so occ needs nothing and mp-tune
  three nodes; on `tiny_variance_norm` occ's one node (the LayerNorm) suffices in
  onnxruntime, whose session runs the MatMul, Add and Mul before it in fp32 (fused into
  a Gemm, with the casts between dropped), but not in mp, where the fp16 Mul's product
  (~3e-7) is an fp16 subnormal: mp-tune keeps both.
- **Real models, tight budget** (max-rel 1e-3): occ cannot reach it. Its block list
  does not keep weights in fp32, and fp16-rounded weights alone already miss the budget
  (*occ, every node blocked*); its bisection then marks every node bad, about two
  conversions per node, and `auto_convert_mixed_precision` raises. mp-tune meets the
  budget in 7–8 evaluations, whatever the model's size, because it bisects on a count
  over a sensitivity order instead of over the graph.
- **Real models, snr ≥ 60 dB**: here occ's block list could reach the budget (every
  node blocked scores above 60 dB), but its second conversion, with half the graph
  blocked, gives a model onnxruntime rejects (a TorchScript export's weight behind an
  Identity, a ConvTranspose between fp16 and fp32), so the search dies. Every decoder
  of the corpus is rejected already after the plain conversion (`qwen3_dynamo` above).
- **Cost per evaluation**: occ's is a conversion and an onnxruntime session (0.1–0.3 s
  here), mp-tune's a JIT compilation and run of the whole mixed build (about a second
  for a stress case, up to about 35 s for HiFi-GAN on this 2-core machine), so mp-tune's
  far fewer evaluations still take longer on the real models.
- **Size of mp-tune's sets** on the real models: 50–84 nodes forced, and with the
  propagation of fp32 to their readers the fp16 nodes drop to about a quarter of the
  default. These corpus models have random weights and a budget near fp16's own
  rounding (half an ulp is 4.9e-4 relative), and mp's default build starts further from
  it than occ's plain model (true fp16 arithmetic against onnxruntime's partly fp32
  arithmetic), so the error is spread over many nodes rather than a few culprits.
"""


def versions() -> str:
    parts = []
    for pkg in ("onnx", "onnxruntime", "onnxconverter-common", "numpy"):
        try:
            parts.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            parts.append(f"{pkg} (not installed)")
    return ", ".join(parts)


def run_all(specs, metric: str, budget: float, mp_tune: Path, mp_run: Path,
            log=None) -> list[dict]:
    """Measures every model of ``specs`` under one criterion."""
    tmp = Path(tempfile.mkdtemp(prefix="mp-search-bench-"))
    results = []
    try:
        for i, entry in enumerate(resolve_models(specs, tmp)):
            try:
                r = measure(entry, metric, budget, mp_tune, mp_run, tmp / "work" / str(i))
            except Exception as e:  # noqa: BLE001 - last resort, keep going
                r = {"name": entry["name"], "spec": entry["spec"], "source": entry.get("source", "?"),
                     "error": short_error(e), "trace": traceback.format_exc(),
                     "occ": {}, "mp": {}, "checks": {}}
            results.append(r)
            if log:
                log(r)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def _log(r: dict) -> None:
    occ, mp = r.get("occ", {}), r.get("mp", {})
    print(f"{r['name']}: {r.get('seconds', 0):.1f} s; occ {occ.get('evaluations')} evals, "
          f"{len(occ.get('fp32_nodes', []))} fp32, {occ.get('achieved')} {occ.get('error', '')}; "
          f"mp-tune {mp.get('evaluations')} evals, {len(mp.get('fp32_nodes', []))} fp32, "
          f"{mp.get('achieved')} {mp.get('error', '')}" + (f" error: {r['error']}" if r.get("error") else ""),
          file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metric", choices=METRICS,
                    help="one criterion (with --budget) instead of the default cases")
    ap.add_argument("--budget", type=float)
    ap.add_argument("--models", nargs="*",
                    help="stress:NAME (mp.models.STRESS) or GROUP/NAME of ../shared/corpus "
                         "(default: the models of the default cases)")
    ap.add_argument("--mp-tune", type=Path, default=build_tool("mp-tune"))
    ap.add_argument("--mp-run", type=Path, default=build_tool("mp-run"))
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "precision-search.md")
    ap.add_argument("--json", type=Path, help="also write the raw results")
    args = ap.parse_args(argv)
    if (args.metric is None) != (args.budget is None):
        ap.error("--metric and --budget go together")

    cmd = ".venv/bin/python bench/precision_search.py"
    if args.metric is not None:
        cases = [(args.metric, args.budget,
                  tuple(args.models or dict.fromkeys(m for c in DEFAULT_CASES for m in c[2])))]
        cmd += f" --metric {args.metric} --budget {args.budget:g}"
    else:
        cases = [(m, b, tuple(args.models) if args.models else models)
                 for m, b, models in DEFAULT_CASES]
    if args.models:
        cmd += " --models " + " ".join(args.models)

    commit = report.commit()
    t0 = time.perf_counter()
    done = []
    for metric, budget, models in cases:
        print(f"== {criterion(metric, budget)}", file=sys.stderr, flush=True)
        done.append({"metric": metric, "budget": budget,
                     "results": run_all(models, metric, budget, args.mp_tune, args.mp_run,
                                        log=_log)})
    meta = {"command": cmd, "commit": commit,
            "mp_tune": report.rel(args.mp_tune), "mp_tune_built": report.built(args.mp_tune),
            "mp_run": report.rel(args.mp_run), "mp_run_built": report.built(args.mp_run),
            "versions": versions(), "seconds": time.perf_counter() - t0,
            "discussion": DISCUSSION}
    report.publish(args.out, render(done, meta), args.json, {"meta": meta, "cases": done},
                   meta["seconds"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
