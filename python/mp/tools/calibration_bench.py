"""bench/calibration.md: mp's mixed build with and without calibration, against mp's own fp32 build.

    .venv/bin/python bench/calibration.py [--shared ../shared] [--no-shared] [--no-stress]
                                          [--models NAME ...] [--no-autocast]
                                          [--autocast-python /tmp/modelopt-venv/bin/python]
                                          [--out bench/calibration.md] [--json FILE]
    .venv/bin/python bench/calibration.py --render FILE.json   # the page again from a --json

(bench/calibration.py is a driver of :func:`main`; ``python -m mp.tools.calibration_bench``
is the same.)

Models: every folder with a ``model.onnx`` and a ``test_data_set_0/`` under
``SHARED/corpus/decoders``, ``SHARED/corpus/speech`` and ``SHARED/models`` (``SHARED``
defaults to ``../shared`` of the repository), and the four fp16 stress cases
``mp.models.STRESS``, written into a temporary folder with ``mp.models.write_example``
plus a calibration set from another seed (``builder.example_inputs(default_rng(100))``,
``mp.models.write_inputs``).

Per model, in sequence (mp-run, mp and AutoCast each in a child process with a timeout,
300 s):

1. **fp32**: ``mp-run MODEL --compare test_data_set_0 --output-dir OUT`` — the reference
   every mixed number is measured against (mp's own fp32 build, not onnxruntime's outputs);
2. **default**: ``mp-run MODEL --precision mixed --plan PLAN --compare test_data_set_0
   --output-dir OUT``;
3. **calibration**: ``mp-run MODEL --calibrate CALIB --ranges-out RANGES`` (timed: the
   *calibration s* column), with CALIB = ``test_data_set_1`` when the model has one (so the
   calibration data are not the evaluation data), else ``test_data_set_0``;
4. **calibrated**: the same as 2 with ``--ranges RANGES`` (docs/precision.md: the same
   plan as ``--calibrate CALIB`` in one go, which would measure the ranges again);
5. **FLOPs**: every contraction's FLOPs from run-time shapes (:func:`flop_info`: one
   onnxruntime run of the original on ``test_data_set_0`` with every node output exposed,
   shape inference where that gives nothing); mp's plans are recounted with them
   (:func:`recount`);
6. **AutoCast** (optional): NVIDIA ModelOpt's ``modelopt.onnx.autocast.convert_to_mixed_precision``
   run by a separate scratch virtual environment (never mp's .venv) in a child process,
   once with its default arguments and once with ``calibration_data`` = the same
   calibration inputs as mp's (an .npz), and its fp16 share of contraction FLOPs counted on
   the converted graph (:func:`count_share`) with the same FLOPs;
7. **output length** (models whose output length depends on computed values,
   :func:`length_hazard_nodes`): output shapes on 12 random 150-token inputs from
   onnxruntime fp32 (the reference), mp mixed and mp fp32 (Python API, one compile each,
   in a child process) and AutoCast's converted model (:func:`length_check`).

Every step is in its own try/except: an error becomes a table cell. METHOD (copied into
the page) says how each number is computed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
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
from onnx import helper

from .. import models as mp_models
from . import REPO, build_tool, conformance, precision_bench, report

SHARED_SUBDIRS = ("corpus/decoders", "corpus/speech", "models")
TIMEOUT_S = 300.0
CALIB_SEED = 100
AUTOCAST_PYTHON = Path("/tmp/modelopt-venv/bin/python")
# Outputs compared by argmax agreement over the last axis (besides the first output of a
# decoder of corpus/decoders).
LOGITS_NAME = re.compile(r"logit|scores|probs", re.I)
# Thresholds of the summary.
ARGMAX_OK = 0.99
SNR_OK_DB = 40.0
# com.microsoft attention ops, whose FLOPs mp's plan counts (lib/Precision/Plan.cpp,
# contractionFlops) and precision_bench.CONTRACTIONS does not.
MS_ATTENTION = {"Attention", "MultiHeadAttention", "GroupQueryAttention"}

METHOD = """\
- **Reference.** Every accuracy number compares a mixed build with **mp's own fp32 build**
  on the same inputs (`test_data_set_0`): `mp-run MODEL --compare test_data_set_0
  --output-dir OUT` for fp32 and with `--precision mixed` (default) or `--precision mixed
  --ranges RANGES` (calibrated), the outputs read from OUT's `.npy` files. The stored
  onnxruntime references are not used.
- **non-finite**: NaN/±inf values in the mixed build's float outputs where the fp32
  build's value is finite, summed over the outputs.
- **metric** (one per model, the worst over its outputs of the kind that applies):
  *argmax* = fraction of positions whose argmax over the last axis equals fp32's, for
  logits-like outputs (float, rank ≥ 2, last dim ≥ 2, and the name contains
  logit/scores/probs or it is the first output of a `corpus/decoders` model); otherwise
  *SNR* = 10·log10(Σref² / Σ(ref − x)²) dB for audio outputs (`conformance.is_audio_like`:
  the folder name contains `vocoder` or the output name audio/wav/waveform/pcm/speech/
  samples/signal); otherwise *rel* = max|x − ref| / max|ref| over all outputs (a
  non-finite difference counts as inf). After `·`: *rel* of the model's other outputs
  (KV caches, ...), the worst of them.
- **calib data**: the input set calibration measured ranges on: `test_data_set_1` when
  the model has it, else `test_data_set_0` itself (marked **= eval**: then calibration saw
  the evaluation inputs); the stress cases get a set from another seed
  (`example_inputs(default_rng(100))`).
- **fp32 nodes kept by calibration**: nodes of the calibrated plan that compute in fp32
  with a rule from calibration (`calibrated ...`, or `reads '...': calibrated ...` for
  a reader of such a value). In brackets, when different: how many nodes are f16 in the
  default plan and f32 in the calibrated one.
- **FLOP share** (every share column): the fp16 share of contraction FLOPs, counted by
  this script on the original graph for every build alike: MatMul, Gemm, Conv,
  ConvTranspose, ONNX Attention (precision_bench.contraction_flops) and com.microsoft
  Attention (packed QKV projection + attention), MultiHeadAttention and
  GroupQueryAttention (4·|out|·T, T the key length with the past), mp's convention
  (lib/Precision/Plan.cpp). Shapes are **run-time shapes**: the original model run once
  in onnxruntime (CPU, no graph optimizations) on `test_data_set_0` with every top-level
  node output added to the graph outputs; values that run does not give (subgraphs, or
  everything when onnxruntime cannot run the model so) come from onnx shape inference with
  the graph inputs fixed to `test_data_set_0`'s shapes (unknown dims = 1), and the cell
  says so. *Default* and *calibrated*: mp's plan decisions (plan JSON `nodes`, by node
  name, an unnamed node by mp's name for it, `OpType(first output)`: `compute` f16 or
  f32) weighed with these FLOPs, and `nodes_f16/nodes_total` of the plan. The Summary
  compares the calibrated share with AutoCast's unrounded, against every AutoCast
  conversion that succeeded. *mp plan's static estimate*: the plan's own `summary.contraction_flops_f16_share`,
  made before any run (dims that depend on computed values count as 1); the Summary
  compares it with the run-time count.
- **AutoCast**: `modelopt.onnx.autocast.convert_to_mixed_precision(MODEL)` with its
  default arguments (fp16, `data_max=512`, `init_max=65504`, `keep_io_types=False`,
  providers `['cpu']`, reference run on random inputs), and again with
  `calibration_data=CALIB.npz` (the same calibration inputs as mp's, other arguments
  default), in a child process of the scratch venv. Nodes are given unique names first
  (precision_bench.name_nodes) and external data are inlined. The share is counted with
  the same run-time FLOPs (nodes matched by name); a node is f16 when all its float
  inputs and outputs are float16 (precision_bench.count_precision).
- **index_guard exact** (models with an output-length hazard, below): the mixed build
  with the policy `{"index_guard": "exact"}` (docs/precision.md: the shape/index guard
  keeps every op a shape depends on, contractions included; the default stops at
  contractions), its run-time share counted as above.
- **Output length** (models with a Ceil/Floor/Round of a value computed from a graph
  input's values whose result reaches an operand that sets a shape or size: Range limits,
  Reshape/Expand/Tile/ConstantOfShape shapes, Slice bounds, Pad, Resize, NonZero, ...;
  both searches follow every node but Shape/Size, so a padding amount rounded from a
  shape does not count):
  12 inputs, seed s = 0..11: the token input (the graph input an embedding Gather of a
  float initializer indexes) = `default_rng(s).integers(1, vocab, size=(1, 150))`, vocab
  = that initializer's first dim; a `*mask*` input = ones. Builds: mp's Python API
  (`mp.compile(MODEL, precision="mixed")` and `"fp32"`, each compiled once and run on the
  12 inputs, in a child process) and AutoCast's default conversion in onnxruntime (CPU,
  default session options, as a user runs it; a count without graph optimizations is
  added where it differs). The reference is onnxruntime on the original model (default
  session options); where the original itself rounds an fp16 value (a model stored in
  fp16) that is no fp32 reference: the row is marked, left out of the summary, and the
  builds are also compared with mp fp32. A cell counts the inputs whose output shapes
  equal the reference's; *differ* lists the seeds and the difference in samples (last
  dim, build − reference).
"""


# ----------------------------------------------------------------------------- models


def discover(shared: Path | None, stress_root: Path | None, only: list[str] | None = None) -> list[dict]:
    """The models to measure: name, folder, eval and calibration data (stress cases are
    written into ``stress_root``)."""
    found = []
    if shared is not None:
        for sub in SHARED_SUBDIRS:
            root = shared / sub
            if not root.is_dir():
                continue
            for model in sorted(root.glob("*/model.onnx")):
                d = model.parent
                if not (d / "test_data_set_0").is_dir():
                    continue
                name = f"{sub.split('/')[-1]}/{d.name}"
                if only and not _selected(name, only):
                    continue
                has1 = (d / "test_data_set_1").is_dir()
                found.append({
                    "name": name, "source": sub, "dir": d, "model": model,
                    "eval": d / "test_data_set_0",
                    "calib": d / ("test_data_set_1" if has1 else "test_data_set_0"),
                    "calib_label": "test_data_set_1" if has1 else "test_data_set_0 (= eval)",
                    "calib_is_eval": not has1,
                })
    if stress_root is not None:
        for case in mp_models.STRESS:
            name = f"stress/{case}"
            if only and not _selected(name, only):
                continue
            entry = {"name": name, "source": "stress", "dir": stress_root / case,
                     "calib_label": f"seed {CALIB_SEED}", "calib_is_eval": False}
            try:
                model = mp_models.write_example(case, stress_root / case / "model.onnx")
                feeds = mp_models.BUILDERS[case].example_inputs(np.random.default_rng(CALIB_SEED))
                calib = mp_models.write_inputs(model, feeds, stress_root / case / "calibration")
                entry.update(model=model, eval=model.parent / "test_data_set_0", calib=calib)
            except Exception as e:  # noqa: BLE001 - a case that cannot be written is a row
                entry["error"] = f"writing the case: {precision_bench.short_error(e)}"
            found.append(entry)
    return found


def _selected(name: str, only: list[str]) -> bool:
    return any(o == name or o == name.split("/")[-1] or o in name for o in only)


# ----------------------------------------------------------------------------- mp-run


class StepError(Exception):
    """A step that produced no usable result; the message is the table cell."""


def run_tool(cmd: list[str], timeout: float) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise StepError(f"timeout ({timeout:.0f} s)") from None
    return proc, time.perf_counter() - t0


def _fail(proc: subprocess.CompletedProcess, model: Path, what: str) -> StepError:
    if conformance.is_crash(proc.returncode):
        how = f"crashed (exit {proc.returncode})"
    else:
        how = f"exit {proc.returncode}"
    err = conformance.first_error(proc.stderr, model) or proc.stdout.strip()[-200:]
    return StepError(f"{what}: {how}: {err}"[:300])


def output_names(model: Path) -> list[str]:
    return [o.name for o in onnx.load(str(model), load_external_data=False).graph.output]


def mp_run_outputs(mp_run: Path, model: Path, data: Path, out: Path, timeout: float,
                   extra: list[str] = (), what: str = "mp-run") -> dict:
    """Runs mp-run with --compare/--output-dir; returns the outputs, seconds and stderr notes.
    A comparison failure against the stored references (exit 1) is fine: the outputs
    are what counts here."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(mp_run), str(model), "--compare", str(data), "--output-dir", str(out), *extra]
    proc, seconds = run_tool(cmd, timeout)
    outputs = {}
    for name in output_names(model):
        p = out / f"{conformance.sanitize(name)}.npy"
        if p.is_file():
            outputs[name] = np.load(p, allow_pickle=False)
    if proc.returncode not in (0, 1) or not outputs:
        raise _fail(proc, model, what)
    return {"outputs": outputs, "seconds": seconds, "returncode": proc.returncode,
            "notes": [l for l in proc.stderr.splitlines() if "note:" in l or "warning" in l][:10]}


def calibrate(mp_run: Path, model: Path, calib: Path, ranges: Path, timeout: float) -> dict:
    proc, seconds = run_tool([str(mp_run), str(model), "--calibrate", str(calib),
                              "--ranges-out", str(ranges)], timeout)
    if proc.returncode != 0 or not ranges.is_file():
        raise _fail(proc, model, "calibration")
    return {"seconds": seconds,
            "notes": [l for l in proc.stderr.splitlines() if "note:" in l or "warning" in l][:10]}


# ----------------------------------------------------------------------------- metrics


def is_logits_like(name: str, ref: np.ndarray, source: str, first: bool) -> bool:
    return (np.issubdtype(ref.dtype, np.floating) and ref.ndim >= 2 and ref.shape[-1] >= 2
            and (bool(LOGITS_NAME.search(name)) or (source == "corpus/decoders" and first)))


def max_rel(x: np.ndarray, ref: np.ndarray) -> float:
    a, e = x.astype(np.float64), ref.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - e)
    d = np.where(np.isnan(a) & np.isnan(e), 0.0, np.where(np.isnan(d), np.inf, d))
    scale = float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0))
    dmax = float(d.max(initial=0.0))
    if scale == 0.0:
        return 0.0 if dmax == 0.0 else math.inf
    return dmax / scale


def compare(outputs: dict, refs: dict, model_dir: Path, source: str) -> dict:
    """Accuracy of a mixed build's outputs against the fp32 build's (see METHOD)."""
    per = []
    nonfinite = 0
    names = list(refs)
    for i, name in enumerate(names):
        ref = refs[name]
        x = outputs.get(name)
        rec = {"name": name, "shape": list(ref.shape), "dtype": str(ref.dtype)}
        if x is None or x.shape != ref.shape:
            rec["error"] = "missing" if x is None else f"shape {list(x.shape)} != {list(ref.shape)}"
            per.append(rec)
            continue
        if np.issubdtype(x.dtype, np.floating):
            nf = int(np.sum(~np.isfinite(x) & np.isfinite(ref)))
            rec["nonfinite"] = nf
            nonfinite += nf
        if is_logits_like(name, ref, source, i == 0):
            rec["kind"], rec["value"] = "argmax", conformance.argmax_agreement(x, ref)
        elif np.issubdtype(ref.dtype, np.floating) and conformance.is_audio_like(model_dir, name):
            rec["kind"], rec["value"] = "snr", conformance.snr_db(x, ref)
        else:
            rec["kind"], rec["value"] = "rel", max_rel(x, ref)
        per.append(rec)
    kinds = {r.get("kind") for r in per}
    primary = "argmax" if "argmax" in kinds else "snr" if "snr" in kinds else "rel"
    prim = [r["value"] for r in per if r.get("kind") == primary]
    others = [r for r in per if r.get("kind") != primary and "kind" in r]
    other_rel = [max_rel(outputs[r["name"]], refs[r["name"]]) for r in others]
    res = {
        "nonfinite": nonfinite, "kind": primary,
        # The worst: lowest argmax/SNR, highest relative error (NaN counts as worst).
        "value": (_worst(prim, low=primary != "rel") if prim else None),
        "other_rel": _worst(other_rel, low=False) if other_rel else None,
        "outputs": per,
        "missing": [r["name"] for r in per if "error" in r],
    }
    return res


def _worst(values: list[float], low: bool) -> float:
    if any(math.isnan(v) for v in values):
        return math.nan
    return min(values) if low else max(values)


# ----------------------------------------------------------------------------- plans


def plan_summary(plan_path: Path) -> dict:
    plan = json.loads(plan_path.read_text())
    s = plan["summary"]
    nodes = plan["nodes"]
    f32: dict[str, int] = {}
    for e in nodes.values():
        if e.get("compute") == "f32" and (e.get("op_type") in precision_bench.CONTRACTIONS
                                          or e.get("op_type") in MS_ATTENTION):
            key = f"{e.get('op_type')}: " + re.sub(r"'[^']*'", "…", e.get("rule", "?"))
            f32[key] = f32.get(key, 0) + 1
    return {"share": s["contraction_flops_f16_share"], "nodes_f16": s["nodes_f16"],
            "nodes_total": s["nodes_total"], "casts": s.get("casts"),
            "findings": s.get("findings", []), "nodes": nodes, "f32_contractions": f32,
            "problems": precision_bench.validate_plan(plan)}


def is_calibration_rule(rule: str) -> bool:
    return rule.startswith("calibrated") or (rule.startswith("reads '") and "calibrated" in rule)


def calibration_kept(default_nodes: dict, cal_nodes: dict) -> dict:
    kept = {n: e["rule"] for n, e in cal_nodes.items()
            if e.get("compute") == "f32" and is_calibration_rule(e.get("rule", ""))}
    flipped = sorted(n for n, e in cal_nodes.items() if e.get("compute") == "f32"
                     and default_nodes.get(n, {}).get("compute") == "f16")
    back = sorted(n for n, e in cal_nodes.items() if e.get("compute") == "f16"
                  and default_nodes.get(n, {}).get("compute") == "f32")
    return {"kept": kept, "flipped_to_f32": flipped, "flipped_to_f16": back}


# ----------------------------------------------------------------------------- FLOP counting


def load_full(model_path: Path) -> onnx.ModelProto:
    """The model with its external data (if any) loaded."""
    return onnx.load(str(model_path), load_external_data=True)


def with_input_shapes(model: onnx.ModelProto, shapes: dict[str, tuple[int, ...]]) -> onnx.ModelProto:
    """A copy whose graph inputs have the given concrete shapes."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in m.graph.input:
        if vi.name not in shapes or not vi.type.HasField("tensor_type"):
            continue
        shape = vi.type.tensor_type.shape
        shape.ClearField("dim")
        for d in shapes[vi.name]:
            shape.dim.add().dim_value = int(d)
    return m


def _ms_attention_flops(node: onnx.NodeProto, info: dict) -> float | None:
    """com.microsoft attention FLOPs with mp's convention (lib/Precision/Plan.cpp):
    4·|output|·T (T = the present key's length: past + new) plus, for Attention, the
    packed QKV projection 2·|input|·W[1]. None when a shape is unknown."""
    def shape(i):
        if i >= len(node.input) or not node.input[i] or node.input[i] not in info:
            return None
        return info[node.input[i]][1]

    q = shape(0)
    if q is None or len(q) != 3:
        return None
    b, s = q[0], q[1]
    if node.op_type == "Attention":  # input [B,S,H], weights [H, 3H], past [2,B,N,P,D]
        w = shape(1)
        if w is None:
            return None
        sizes = precision_bench._attr(node, "qkv_hidden_sizes")
        v_hidden = sizes[2] if sizes else w[1] // 3
        past = shape(4)
        t = s + (past[3] if past is not None and len(past) == 5 else 0)
        return 2.0 * b * s * q[2] * w[1] + 4.0 * b * s * v_hidden * t
    if node.op_type == "MultiHeadAttention":  # query [B,S,H]; key [B,L,H] or [B,N,L,D]; past [B,N,P,D]
        k, past = shape(1), shape(6)
        if k is None:
            return None
        t = (k[1] if len(k) == 3 else k[2]) + (past[2] if past is not None and len(past) == 4 else 0)
        return 4.0 * b * s * q[2] * t
    # GroupQueryAttention: query [B,S,Hq*D] (unpacked), key [B,L,Hkv*D], past [B,Nkv,P,D];
    # T = P + L (a shared past/present buffer would be max(P, total length), which needs
    # the value of total_sequence_length).
    k, past = shape(1), shape(3)
    if k is None:
        return None
    t = k[1] + (past[2] if past is not None and len(past) == 4 else 0)
    return 4.0 * b * s * q[2] * t


# Ops whose outputs are not tensors (onnxruntime returns lists/None for them): not added
# as graph outputs for the run-time shapes.
NON_TENSOR_OPS = {"SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase",
                  "SplitToSequence", "Optional", "OptionalGetElement", "ConcatFromSequence"}


def _ort_feeds(sess, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``feeds`` cast to the session's float input types (as precision_bench.run_ort)."""
    out = {}
    for i in sess.get_inputs():
        arr = feeds[i.name]
        want = precision_bench.ORT_NP.get(i.type)
        out[i.name] = arr.astype(want) if want is not None and arr.dtype != want else arr
    return out


def _ort_session(model: onnx.ModelProto | Path, optimize: bool = False):
    """An onnxruntime CPU session: without graph optimizations (every value as the graph
    computes it), or with onnxruntime's default ones (``optimize``: how a user runs it)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    src = str(model) if isinstance(model, Path) else model.SerializeToString()
    return ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"])


def runtime_shapes(model: onnx.ModelProto,
                   feeds: dict[str, np.ndarray]) -> dict[str, tuple[int, list[int]]]:
    """name -> (elem type, shape) of the graph inputs and of every tensor a top-level node
    outputs, from one onnxruntime CPU run of ``model`` on ``feeds`` with every node output
    appended to graph.output (a ValueInfoProto with only the name). Raises when
    onnxruntime cannot run it; values it returns no array for are left out."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output} | {i.name for i in m.graph.input}
    for node in m.graph.node:
        if node.op_type in NON_TENSOR_OPS:
            continue
        for name in node.output:
            if name and name not in have:
                have.add(name)
                m.graph.output.add().name = name
    sess = _ort_session(m)
    fed = _ort_feeds(sess, feeds)
    names = [o.name for o in sess.get_outputs()]
    shapes: dict[str, tuple[int, list[int]]] = {}
    for name, arr in [*fed.items(), *zip(names, sess.run(names, fed))]:
        if not isinstance(arr, np.ndarray):
            continue
        try:
            etype = helper.np_dtype_to_tensor_dtype(arr.dtype)
        except (KeyError, TypeError, ValueError):
            continue
        shapes[name] = (int(etype), [int(d) for d in arr.shape])
    return shapes


def flop_info(original: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """The ``info`` (name -> (elem type, shape)) that precision_bench.contraction_flops
    reads: the run-time shapes of :func:`runtime_shapes` over onnx shape inference with
    the graph inputs fixed to ``feeds``' shapes (unknown dims = 1), which fills in what
    the run does not give (subgraph values; everything when the run fails). Also says
    which source it used and the run-time names (``exact``)."""
    info = precision_bench.infer_types(
        with_input_shapes(original, {k: v.shape for k, v in feeds.items()}))
    try:
        rt = runtime_shapes(original, feeds)
    except Exception as e:  # noqa: BLE001 - an onnxruntime failure falls back to inference
        return info, {"source": "shape inference",
                      "why": "onnxruntime run with every node output: "
                             + precision_bench.short_error(e, 160), "exact": set()}
    weights = {t.name for g in precision_bench.walk_graphs(original.graph) for t in g.initializer}
    return {**info, **rt}, {"source": "run-time shapes", "values": len(rt),
                            "exact": set(rt) | weights}


def node_flops(original: onnx.ModelProto, info: dict, exact: set | None = None) -> dict[str, dict]:
    """Per node of ``original``: op type and contraction FLOPs (None: unknown shape) from
    ``info`` (:func:`flop_info`). With ``exact`` (the names with run-time shapes), a
    contraction some of whose operands or results are not in it is marked ``inferred``."""
    records = {}
    for node in precision_bench.all_nodes(original):
        rec = {"op_type": node.op_type, "flops": 0.0}
        outputs = [x for x in node.output if x]
        # Unnamed in the original (precision_bench.name_nodes gave it "OpType__bench<i>").
        if node.name.startswith(f"{node.op_type}__bench") and outputs:
            rec["mp_name"] = f"{node.op_type}({outputs[0]})"
        if node.domain in ("", "ai.onnx") and node.op_type in precision_bench.CONTRACTIONS:
            rec["flops"] = precision_bench.contraction_flops(node, info)
        elif node.domain == "com.microsoft" and node.op_type in MS_ATTENTION:
            rec["flops"] = _ms_attention_flops(node, info)
        if rec["flops"] and exact is not None:
            rec["inferred"] = any(x and x not in exact for x in [*node.input, *node.output])
        records[node.name] = rec
    return records


def count_share(converted: onnx.ModelProto, records: dict) -> dict:
    """fp16 contraction FLOP share of a converted model (precision_bench.count_precision)
    plus the contraction nodes of the original that the converted graph lacks."""
    res = precision_bench.count_precision(converted, records)
    names = {n.name for n in precision_bench.all_nodes(converted)}
    res["contractions_missing"] = sorted(n for n, r in records.items()
                                         if r["flops"] and n not in names)
    return res


def recount(plan_nodes: dict, records: dict) -> dict:
    """mp's plan decisions (``compute`` per node, matched to ``records`` by node name, or
    for nodes the original leaves unnamed by mp's name for them: :func:`_match_unnamed`)
    weighted with :func:`node_flops`' FLOPs: the fp16 share (None without contraction
    FLOPs), and the contractions of the plan the records lack (``unmatched``) and the
    ones with FLOPs that the plan lacks (``not_in_plan``)."""
    total = f16 = 0.0
    unmatched = []
    renamed = _match_unnamed(plan_nodes, records)
    for name, e in plan_nodes.items():
        rec = records.get(renamed.get(name, name))
        if rec is None:
            if e.get("op_type") in precision_bench.CONTRACTIONS or e.get("op_type") in MS_ATTENTION:
                unmatched.append(name)
            continue
        if not rec["flops"]:
            continue
        total += rec["flops"]
        f16 += rec["flops"] if e.get("compute") == "f16" else 0.0
    matched = set(plan_nodes) | set(renamed.values())
    not_in_plan = sorted(n for n, r in records.items() if r["flops"] and n not in matched)
    return {"share": f16 / total if total else None, "flops": total, "flops_f16": f16,
            "unmatched": sorted(unmatched), "not_in_plan": not_in_plan,
            "matched_by_name": dict(sorted(renamed.items()))}


def _match_unnamed(plan_nodes: dict, records: dict) -> dict[str, str]:
    """Plan key -> record name for nodes the original graph leaves unnamed: mp's importer
    names them "OpType(first output)" (GraphImporter's displayName), the bench
    "OpType__bench<i>" (precision_bench.name_nodes); records carry mp's name as
    ``mp_name``."""
    by_mp_name = {r["mp_name"]: name for name, r in records.items() if r.get("mp_name")}
    return {key: by_mp_name[key] for key in plan_nodes
            if key not in records and key in by_mp_name}


def recount_plan(plan_nodes: dict, records: dict) -> float | None:
    """The fp16 share of :func:`recount`."""
    return recount(plan_nodes, records)["share"]


# ----------------------------------------------------------------------------- AutoCast

# Runs convert_to_mixed_precision once per job (JSON list of [src, dst, calibration npz or
# ""]) in one process of the scratch venv (one import of modelopt and torch for both).
AUTOCAST_CHILD = r"""
import json, sys, time, traceback
for src, dst, calib in json.loads(sys.argv[1]):
    res = {}
    try:
        import importlib.metadata as md
        res["version"] = md.version("nvidia-modelopt")
        import onnx
        from modelopt.onnx.autocast import convert_to_mixed_precision
        kw = {"calibration_data": calib} if calib else {}
        t0 = time.perf_counter()
        model = convert_to_mixed_precision(src, **kw)
        res["seconds"] = time.perf_counter() - t0
        onnx.save(model, dst)
        res["ok"] = True
    except BaseException as e:
        res["ok"] = False
        res["error"] = (type(e).__name__ + ": " + str(e)).strip()
        res["trace"] = traceback.format_exc()[-3000:]
    print("AUTOCAST-RESULT " + json.dumps(res), flush=True)
"""

# Errors whose cause the exception does not say.
AUTOCAST_HINTS = {
    "name 'trt' is not defined": (
        "needs TensorRT: non-ONNX-domain ops go through trt_utils.get_custom_layers; "
        "tensorrt is not installed"),
}


def autocast_available(python: Path) -> tuple[bool, str]:
    """Whether ``python`` imports modelopt.onnx.autocast; the version or why not."""
    if not python.exists():
        return False, f"no scratch venv: {python} does not exist"
    try:
        p = subprocess.run([str(python), "-c",
                            "import importlib.metadata as md; "
                            "import modelopt.onnx.autocast; print(md.version('nvidia-modelopt'))"],
                           capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"{python}: {e}"
    if p.returncode != 0:
        lines = [l for l in p.stderr.strip().splitlines() if l.strip()]
        return False, f"import modelopt.onnx.autocast fails: {lines[-1] if lines else p.returncode}"
    return True, p.stdout.strip()


def run_autocast(python: Path, jobs: list[tuple[Path, Path, Path | None]],
                 timeout: float) -> list[dict]:
    """One child process converting each (src, dst, calibration npz) job; per job its
    result or the error (``ok`` False)."""
    arg = json.dumps([[str(a), str(b), str(c) if c else ""] for a, b, c in jobs])
    proc, seconds = run_tool([str(python), "-c", AUTOCAST_CHILD, arg], timeout * len(jobs))
    results = [json.loads(l.split(" ", 1)[1]) for l in proc.stdout.splitlines()
               if l.startswith("AUTOCAST-RESULT ")]
    if len(results) < len(jobs):
        tail = [l for l in (proc.stderr or "").splitlines() if l.strip()][-2:]
        results += [{"ok": False, "error": f"AutoCast child exit {proc.returncode}: "
                     + " / ".join(tail)}] * (len(jobs) - len(results))
    for res in results:
        res["child_wall_s"] = seconds
        if not res.get("ok"):
            res["error"] = short_autocast_error(res.get("error", "?"))
    return results


def short_autocast_error(err: str) -> str:
    first = err.splitlines()[0] if err else "?"
    for key, hint in AUTOCAST_HINTS.items():
        if key in first:
            return f"{first[:40]}: {hint}"
    return first[:240]


def write_npz(data_dir: Path, path: Path) -> Path:
    inputs, _ = mp_models.load_test_data(data_dir)
    np.savez(path, **inputs)
    return path


# ----------------------------------------------------------------------------- output length

# Models whose output length depends on computed values: a rounding op whose result
# reaches an operand that sets a shape or a size (:func:`length_hazard_nodes`).
ROUNDING_OPS = {"Ceil", "Floor", "Round"}
SHAPE_OPERANDS = {"Reshape": (1,), "Expand": (1,), "ConstantOfShape": (0,), "Range": (0, 1, 2),
                  "Tile": (1,), "Slice": (1, 2, 3, 4), "Pad": (1,), "Resize": (2, 3),
                  "Upsample": (1,), "TopK": (1,), "OneHot": (1,), "NonZero": (0,),
                  "Compress": (1,), "Unique": (0,), "Split": (1,), "CenterCropPad": (1,)}
# Ops whose outputs depend on their input's shape only, not on its values.
SHAPE_ONLY_OPS = {"Shape", "Size"}
LENGTH_INPUTS = 12        # random inputs per model, seeds 0 .. LENGTH_INPUTS - 1
LENGTH_TOKENS = 150       # tokens per input (batch 1)
DEFAULT_VOCAB = 40        # when no embedding Gather says the vocabulary size

# mp builds one model (mp.compile, one precision) and runs it on every input set of an
# .npz; one line per run, so that a crash midway keeps the runs before it.
MP_LENGTH_CHILD = r"""
import json, sys, time
import numpy as np
args = json.loads(sys.argv[1])
def emit(tag, obj):
    print(tag + " " + json.dumps(obj), flush=True)
try:
    import mp
    t0 = time.perf_counter()
    model = mp.compile(args["model"], precision=args["precision"], policy=args.get("policy"))
    emit("MP-META", {"compile_s": time.perf_counter() - t0})
except BaseException as e:
    emit("MP-META", {"error": (type(e).__name__ + ": " + str(e)).strip().splitlines()[0][:300]})
    sys.exit(0)
data = np.load(args["npz"])
for i in range(args["k"]):
    feeds = {name: data[f"s{i}_in{j}"] for j, name in enumerate(args["inputs"])}
    t0 = time.perf_counter()
    try:
        outs = model.run(feeds)
        emit("MP-RUN", {"i": i, "shapes": [list(v.shape) for v in outs.values()],
                        "seconds": time.perf_counter() - t0})
    except BaseException as e:
        emit("MP-RUN", {"i": i, "error": (type(e).__name__ + ": " + str(e)).strip().splitlines()[0][:300]})
emit("MP-META", {"variants": model.num_variants})
"""


def _reach(model: onnx.ModelProto, start: list[str]) -> set[str]:
    """The values of the top-level graph computed from ``start`` through any chain of
    nodes except Shape/Size (whose results depend on a shape, not on values); a node
    with subgraphs counts as one node."""
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in model.graph.node:
        for x in node.input:
            if x:
                consumers.setdefault(x, []).append(node)
    seen, todo = set(), list(start)
    while todo:
        value = todo.pop()
        if value in seen:
            continue
        seen.add(value)
        for node in consumers.get(value, []):
            if node.op_type not in SHAPE_ONLY_OPS:
                todo += [x for x in node.output if x]
    return seen


def length_hazard_nodes(model: onnx.ModelProto) -> list[str]:
    """The Ceil/Floor/Round nodes of the top-level graph whose input is computed from the
    values of a graph input and whose result reaches an operand that sets a shape or
    size (SHAPE_OPERANDS: Reshape's shape, Range's limits, Expand, ConstantOfShape,
    NonZero's input, ...); both through any chain of nodes except Shape/Size
    (:func:`_reach`). A rounding of sizes computed from shapes (a padding amount) is not
    one: its input depends on no input's values."""
    inits = {t.name for t in model.graph.initializer}
    from_data = _reach(model, [vi.name for vi in model.graph.input if vi.name not in inits])
    hits = []
    for start in model.graph.node:
        if start.op_type not in ROUNDING_OPS or not any(x in from_data for x in start.input):
            continue
        reached = _reach(model, [x for x in start.output if x])
        if any(i < len(node.input) and node.input[i] in reached
               for node in model.graph.node for i in SHAPE_OPERANDS.get(node.op_type, ())):
            hits.append(start.name or start.output[0])
    return hits


def token_inputs(model: onnx.ModelProto, k: int = LENGTH_INPUTS, tokens: int = LENGTH_TOKENS,
                 seeds: list[int] | None = None) -> dict:
    """``k`` random token inputs: for seed s (0..k-1) the token input is
    ``default_rng(s).integers(1, vocab, size=(1, tokens))``, a ``*mask*`` input is ones of
    the same shape. The token input is the graph input that an embedding Gather (data: a
    float initializer) indexes, vocab that initializer's first dim (else DEFAULT_VOCAB).
    Raises StepError for a graph input that is neither."""
    inits = {t.name: t for t in model.graph.initializer}
    names = [vi.name for vi in model.graph.input if vi.name not in inits]
    types = {vi.name: vi.type.tensor_type.elem_type for vi in model.graph.input}
    ids, vocab, how = None, None, None
    for node in model.graph.node:
        if (node.op_type == "Gather" and len(node.input) > 1 and node.input[1] in names
                and node.input[0] in inits
                and inits[node.input[0]].data_type in precision_bench.FLOAT_TYPES):
            ids, vocab = node.input[1], int(inits[node.input[0]].dims[0])
            how = f"first dim of `{node.input[0]}` (Gather `{node.name}`)"
            break
    if ids is None:
        cand = [n for n in names if "ids" in n.lower() or "token" in n.lower()]
        if not cand:
            raise StepError("no token input (no embedding Gather of a graph input)")
        ids, vocab, how = cand[0], DEFAULT_VOCAB, f"assumed {DEFAULT_VOCAB} (no embedding Gather)"
    others = [n for n in names if n != ids and "mask" not in n.lower()]
    if others:
        raise StepError("cannot make random values for input(s) " + ", ".join(others))
    sets = []
    for seed in (seeds if seeds is not None else range(k)):
        rng = np.random.default_rng(seed)
        feed = {}
        for n in names:
            dtype = helper.tensor_dtype_to_np_dtype(types[n]) if types[n] else np.int64
            if n == ids:
                feed[n] = rng.integers(1, vocab, size=(1, tokens)).astype(dtype)
            else:
                feed[n] = np.ones((1, tokens), dtype=dtype)
        sets.append(feed)
    return {"sets": sets, "inputs": names, "token_input": ids, "vocab": vocab, "vocab_from": how,
            "seeds": list(seeds if seeds is not None else range(k))}


def run_ort_shapes(model: Path, sets: list[dict], optimize: bool = True) -> list[dict]:
    """onnxruntime (CPU; default session options, or no graph optimizations) on each
    input set: per set the output shapes or the error."""
    try:
        sess = _ort_session(model, optimize)
    except Exception as e:  # noqa: BLE001 - every set fails the same way
        return [{"error": precision_bench.short_error(e, 200)}] * len(sets)
    out = []
    for feeds in sets:
        try:
            res = sess.run(None, _ort_feeds(sess, feeds))
            out.append({"shapes": [list(np.shape(v)) for v in res]})
        except Exception as e:  # noqa: BLE001 - a set that fails is a result
            out.append({"error": precision_bench.short_error(e, 200)})
    return out


def run_mp_shapes(mp_run: Path, model: Path, precision: str, inputs: list[str],
                  sets: list[dict], npz: Path, timeout: float, policy: Path | None = None) -> dict:
    """mp (Python API, ``mp.compile(model, precision, policy)`` once) on each input set, in a
    child process (MP_LENGTH_CHILD) with the library of ``mp_run``'s build."""
    np.savez(npz, **{f"s{i}_in{j}": feeds[n] for i, feeds in enumerate(sets)
                     for j, n in enumerate(inputs)})
    env = dict(os.environ)
    env["MP_BUILD_DIR"] = str(Path(mp_run).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([str(Path(mp_models.__file__).resolve().parents[2]),
                                         *filter(None, [env.get("PYTHONPATH")])])
    arg = json.dumps({"model": str(model), "precision": precision, "npz": str(npz),
                      "inputs": inputs, "k": len(sets),
                      "policy": str(policy) if policy else None})
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", MP_LENGTH_CHILD, arg], capture_output=True,
                              text=True, errors="replace", timeout=timeout, env=env)
        stdout, rc = proc.stdout, proc.returncode
        stderr = proc.stderr
    except subprocess.TimeoutExpired as e:
        stdout = (e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout) or ""
        rc, stderr = f"timeout ({timeout:.0f} s)", ""
    meta, runs = {}, [None] * len(sets)
    for line in stdout.splitlines():
        tag, _, body = line.partition(" ")
        if tag == "MP-META":
            meta.update(json.loads(body))
        elif tag == "MP-RUN":
            rec = json.loads(body)
            runs[rec.pop("i")] = rec
    if "error" in meta:
        raise StepError(f"mp.compile({precision}): {meta['error']}")
    if rc != 0:
        tail = [l for l in stderr.splitlines() if l.strip()][-1:]
        why = (f"child {'crashed' if conformance.is_crash(rc) else 'exit'} {rc}"
               if isinstance(rc, int) else rc) + (": " + tail[0][:200] if tail else "")
        runs = [r or {"error": why} for r in runs]
    runs = [r or {"error": "not run"} for r in runs]
    return {"runs": runs, "compile_s": meta.get("compile_s"), "variants": meta.get("variants"),
            "seconds": time.perf_counter() - t0}


def compare_lengths(ref: list[dict], got: list[dict], seeds: list[int] | None = None) -> dict:
    """Per input set, whether ``got``'s output shapes equal ``ref``'s (both lists of
    ``{"shapes": [...]}`` or ``{"error": ...}``). A set whose reference failed is not
    counted; one that failed in ``got`` counts as not equal (``failed``). ``diff``:
    per differing set, the difference in the last dim of the first output whose shape
    differs (got − ref)."""
    seeds = list(range(len(ref))) if seeds is None else seeds
    equal = total = 0
    differ, failed, diff = [], [], []
    for seed, r, g in zip(seeds, ref, got):
        if "shapes" not in r:
            continue
        total += 1
        if "shapes" not in g:
            failed.append(seed)
            continue
        if [list(x) for x in g["shapes"]] == [list(x) for x in r["shapes"]]:
            equal += 1
            continue
        differ.append(seed)
        d = None
        for a, b in zip(g["shapes"], r["shapes"]):
            if list(a) != list(b):
                d = (a[-1] - b[-1]) if a and b and len(a) == len(b) else None
                break
        diff.append(d)
    return {"equal": equal, "total": total, "differ": differ, "failed": failed, "diff": diff}


def _rounding_input_types(model: onnx.ModelProto, hazard: list[str]) -> dict[str, str]:
    """Element type each rounding node reads (FLOAT, FLOAT16, ...) in ``model``."""
    types = precision_bench.value_types(model)
    by_name = {n.name: n for n in precision_bench.all_nodes(model)}
    return {h: onnx.TensorProto.DataType.Name(types.get(by_name[h].input[0], 0))
            for h in hazard if h in by_name}


def length_check(model: Path, mp_run: Path, work: Path, timeout: float,
                 autocast_model: Path | None, hazard: list[str],
                 exact_policy: Path | None = None) -> dict:
    """Output shapes on LENGTH_INPUTS random token inputs: onnxruntime on the original
    (the reference), mp mixed, mp fp32 and, with ``exact_policy``, mp mixed under that
    policy (``mp_mixed_exact``; one compile each), AutoCast's converted model
    in onnxruntime (when given; with onnxruntime's default graph optimizations, and again
    without). Where the original itself rounds an fp16 value (``reference_fp16``: a
    model stored in fp16), the builds are also compared with mp fp32."""
    original = onnx.load(str(model), load_external_data=False)
    tok = token_inputs(original)
    sets = tok.pop("sets")
    res = {**tok, "hazard_nodes": hazard, "tokens": LENGTH_TOKENS}
    try:
        res["reference_rounding_types"] = _rounding_input_types(original, hazard)
    except Exception as e:  # noqa: BLE001 - optional detail
        res["reference_rounding_types_error"] = precision_bench.short_error(e)
    res["reference_fp16"] = "FLOAT16" in (res.get("reference_rounding_types") or {}).values()
    t0 = time.perf_counter()
    res["ort_reference"] = {"runs": run_ort_shapes(model, sets)}
    res["ort_reference"]["seconds"] = time.perf_counter() - t0
    ref = res["ort_reference"]["runs"]
    res["ref_lengths"] = [r["shapes"][0][-1] if "shapes" in r and r["shapes"] and r["shapes"][0]
                          else None for r in ref]
    builds = [("mp_mixed", "mixed", None), ("mp_fp32", "fp32", None)]
    if exact_policy is not None:
        builds.append(("mp_mixed_exact", "mixed", exact_policy))
    for key, precision, policy in builds:
        try:
            res[key] = run_mp_shapes(mp_run, model, precision, tok["inputs"], sets,
                                     work / f"length_{key}.npz", timeout, policy)
            res[key]["compare"] = compare_lengths(ref, res[key]["runs"], tok["seeds"])
        except StepError as e:
            res[key] = {"error": str(e)}
    if autocast_model is not None:
        t0 = time.perf_counter()
        runs = run_ort_shapes(autocast_model, sets)
        plain = run_ort_shapes(autocast_model, sets, optimize=False)
        res["autocast"] = {"runs": runs, "compare": compare_lengths(ref, runs, tok["seeds"]),
                           "runs_no_opt": plain,
                           "compare_no_opt": compare_lengths(ref, plain, tok["seeds"]),
                           "seconds": time.perf_counter() - t0}
        # Whether the rounding ops read fp16 in AutoCast's model (a measured fact for the page).
        try:
            res["autocast"]["rounding_input_types"] = _rounding_input_types(
                onnx.load(str(autocast_model)), hazard)
        except Exception as e:  # noqa: BLE001 - optional detail
            res["autocast"]["rounding_input_types_error"] = precision_bench.short_error(e)
    if res["reference_fp16"] and "runs" in res.get("mp_fp32", {}):
        alt = res["mp_fp32"]["runs"]
        for key in ("mp_mixed", "mp_mixed_exact", "autocast"):
            if "runs" in res.get(key, {}):
                res[key]["compare_mp_fp32"] = compare_lengths(alt, res[key]["runs"], tok["seeds"])
    return res


# ----------------------------------------------------------------------------- one model


def measure(m: dict, mp_run: Path, work: Path, timeout: float,
            autocast_python: Path | None) -> dict:
    r = {"name": m["name"], "source": m["source"], "calib_label": m["calib_label"],
         "calib_is_eval": m["calib_is_eval"], "steps": {}}
    if "error" in m:
        r["error"] = m["error"]
        return r
    work.mkdir(parents=True, exist_ok=True)
    model, eval_dir, calib_dir = m["model"], m["eval"], m["calib"]
    steps = r["steps"]
    t0 = time.perf_counter()

    def step(key, fn):
        try:
            steps[key] = {"ok": True, **fn()}
        except StepError as e:
            steps[key] = {"ok": False, "error": str(e)}
        except Exception as e:  # noqa: BLE001 - any failure is a cell
            steps[key] = {"ok": False, "error": precision_bench.short_error(e),
                          "trace": traceback.format_exc()}
        return steps[key]

    fp32 = step("fp32", lambda: mp_run_outputs(mp_run, model, eval_dir, work / "fp32", timeout,
                                               ["--precision", "fp32"], "fp32"))
    default = step("default", lambda: mp_run_outputs(
        mp_run, model, eval_dir, work / "default", timeout,
        ["--precision", "mixed", "--plan", str(work / "plan_default.json")], "mixed"))
    ranges = work / "ranges.json"
    cal = step("calibration", lambda: calibrate(mp_run, model, calib_dir, ranges, timeout))
    if cal["ok"]:
        calibrated = step("calibrated", lambda: mp_run_outputs(
            mp_run, model, eval_dir, work / "calibrated", timeout,
            ["--precision", "mixed", "--ranges", str(ranges),
             "--plan", str(work / "plan_calibrated.json")], "calibrated mixed"))
    else:
        calibrated = steps["calibrated"] = {"ok": False, "error": "no ranges (calibration failed)"}

    for key, run in (("default", default), ("calibrated", calibrated)):
        plan_path = work / f"plan_{key}.json"
        if run["ok"] or plan_path.is_file():
            step(f"plan_{key}", lambda p=plan_path: plan_summary(p))
        if run["ok"] and fp32["ok"]:
            step(f"metrics_{key}", lambda run=run: compare(run["outputs"], fp32["outputs"],
                                                          m["dir"], m["source"]))
    if steps.get("plan_default", {}).get("ok") and steps.get("plan_calibrated", {}).get("ok"):
        step("kept", lambda: calibration_kept(steps["plan_default"]["nodes"],
                                              steps["plan_calibrated"]["nodes"]))

    # FLOPs per node of the original: run-time shapes of test_data_set_0 (one onnxruntime
    # run with every node output exposed), shape inference where the run gives none; for
    # the share columns (recount of mp's plans) and AutoCast's.
    named = work / "named.onnx"

    def flops():
        original = load_full(model)
        precision_bench.name_nodes(original)
        onnx.save(original, str(named))
        inputs, _ = mp_models.load_test_data(eval_dir)
        info, src = flop_info(original, inputs)
        records = node_flops(original, info, src.pop("exact"))
        src["contractions_inferred"] = sorted(n for n, r in records.items() if r.get("inferred"))
        return {"records": records, **src}

    fl = step("flops", flops)
    if fl["ok"]:
        for key in ("default", "calibrated"):
            if steps.get(f"plan_{key}", {}).get("ok"):
                rc = recount(steps[f"plan_{key}"]["nodes"], fl["records"])
                steps[f"plan_{key}"]["recount"] = rc.pop("share")
                steps[f"plan_{key}"]["recount_detail"] = rc

    if autocast_python is not None and fl["ok"]:
        npz = work / "calibration.npz"
        keys = ("autocast", "autocast_calib")

        def convert_all():
            write_npz(calib_dir, npz)
            return {"results": run_autocast(autocast_python, [
                (named, work / f"{keys[0]}.onnx", None), (named, work / f"{keys[1]}.onnx", npz)],
                timeout)}

        conv = step("autocast_run", convert_all)
        for key, res in zip(keys, conv.get("results") or [{"ok": False, "error": conv.get("error")}] * 2):
            def ac(res=res, key=key):
                if not res.get("ok"):
                    raise StepError(res.get("error", "?"))
                return {**res, **count_share(onnx.load(str(work / f"{key}.onnx")), fl["records"])}
            step(key, ac)
        steps.pop("autocast_run", None)

    # Output length under fp16, on models whose output length depends on computed values.
    try:
        hazard = length_hazard_nodes(onnx.load(str(model), load_external_data=False))
    except Exception as e:  # noqa: BLE001 - an unreadable graph has no length check
        hazard = []
        r["length_hazard_error"] = precision_bench.short_error(e)
    r["length_hazard"] = hazard
    if hazard:
        ac_model = work / "autocast.onnx"
        ac_ok = steps.get("autocast", {}).get("ok") and ac_model.is_file()
        # The same mixed build with the shape/index guard reaching the contractions too
        # (docs/precision.md: index_guard "exact"): its plan, for the FLOP share.
        exact_policy = work / "policy_exact.json"
        exact_policy.write_text(json.dumps({"index_guard": "exact"}) + "\n")
        exact = step("exact", lambda: mp_run_outputs(
            mp_run, model, eval_dir, work / "exact", timeout,
            ["--precision", "mixed", "--policy", str(exact_policy),
             "--plan", str(work / "plan_exact.json")], "mixed (index_guard exact)"))
        if exact["ok"] or (work / "plan_exact.json").is_file():
            step("plan_exact", lambda: plan_summary(work / "plan_exact.json"))
        if fl["ok"] and steps.get("plan_exact", {}).get("ok"):
            rc = recount(steps["plan_exact"]["nodes"], fl["records"])
            steps["plan_exact"]["recount"] = rc.pop("share")
            steps["plan_exact"]["recount_detail"] = rc

        def lengths():
            res = length_check(model, mp_run, work, timeout, ac_model if ac_ok else None, hazard,
                               exact_policy)
            for key, plan_key in (("mp_rounding_compute", "plan_default"),
                                  ("mp_exact_rounding_compute", "plan_exact")):
                plan = steps.get(plan_key, {}).get("nodes") or {}
                res[key] = {h: (plan[h].get("compute"), plan[h].get("rule"))
                            for h in hazard if h in plan}
            if not ac_ok:
                res["autocast"] = {"error": ("not converted: " + steps["autocast"].get("error", "?"))
                                   if "autocast" in steps else "not run"}
            return res

        step("length", lengths)

    r["seconds"] = time.perf_counter() - t0
    # Drop what the JSON does not need (arrays, full plans, per-node FLOPs).
    for key in ("fp32", "default", "calibrated", "exact"):
        steps.get(key, {}).pop("outputs", None)
    for key in ("plan_default", "plan_calibrated", "plan_exact"):
        if key in steps:
            steps[key].pop("nodes", None)
    if "flops" in steps:
        recs = steps["flops"].pop("records", {}) or {}
        steps["flops"]["contraction_flops"] = sum(v["flops"] or 0.0 for v in recs.values())
        steps["flops"]["unknown"] = sorted(k for k, v in recs.items() if v["flops"] is None)
    return r


# ----------------------------------------------------------------------------- rendering


def _pct(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and math.isnan(x):
        return "NaN"
    return f"{100 * x:.{digits}f} %"


def fmt_metric(kind: str, value: float | None) -> str:
    if value is None:
        return "—"
    if kind == "argmax":
        return f"argmax {_pct(value)}"
    if kind == "snr":
        if math.isnan(value):
            return "SNR NaN"
        return f"SNR {value:.1f} dB" if math.isfinite(value) else f"SNR {value} dB"
    return f"rel {value:.2e}" if math.isfinite(value) else f"rel {value}"


def metric_cell(steps: dict, key: str) -> tuple[str, str]:
    """(non-finite, metric) cells of the default or calibrated build."""
    run = steps.get(key, {})
    if not run.get("ok"):
        return "error", report_short(run.get("error", "not run"), 200)
    if not steps.get("fp32", {}).get("ok"):
        return "—", report_short("no fp32 reference: " + steps.get("fp32", {}).get("error", "?"), 200)
    met = steps.get(f"metrics_{key}", {})
    if not met.get("ok"):
        return "error", report_short(met.get("error", "?"), 200)
    cell = fmt_metric(met["kind"], met["value"])
    if met.get("other_rel") is not None:
        cell += f" · rel {met['other_rel']:.1e}"
    if met.get("missing"):
        cell += " (missing: " + ", ".join(met["missing"]) + ")"
    return str(met["nonfinite"]), cell


def _flop_note(steps: dict) -> str:
    """What a FLOP share cell adds about its shapes: nothing when every contraction's
    shapes come from the run."""
    fl = steps.get("flops", {})
    if not fl.get("ok"):
        return ""
    if fl.get("source") != "run-time shapes":
        return " (inferred shapes)"
    n = len(fl.get("contractions_inferred") or [])
    return f" ({n} contractions from inferred shapes)" if n else ""


def share_cell(steps: dict, key: str) -> str:
    """The run-time count of mp's plan (:func:`recount`) and the plan's node counts."""
    p = steps.get(f"plan_{key}", {})
    if not p.get("ok"):
        return "error: " + p.get("error", steps.get(key, {}).get("error", "no plan"))
    nodes = f"({p['nodes_f16']}/{p['nodes_total']})"
    if p.get("recount") is None:
        fl = steps.get("flops", {})
        why = ("FLOP count failed: " + fl.get("error", "?")) if not fl.get("ok") else "no contraction FLOPs"
        return f"— {nodes} ({report_short(why, 80)})"
    cell = f"{_pct(p['recount'])} {nodes}"
    unmatched = (p.get("recount_detail") or {}).get("unmatched")
    if unmatched:
        cell += f", {len(unmatched)} plan contractions not in the graph"
    return cell + _flop_note(steps)


def static_cell(steps: dict) -> str:
    """The plans' own summary.contraction_flops_f16_share, default / calibrated."""
    cells = []
    for key in ("default", "calibrated"):
        p = steps.get(f"plan_{key}", {})
        cells.append(_pct(p["share"]) if p.get("ok") else "—")
    return " / ".join(cells)


def autocast_cell(steps: dict, key: str, reason: str | None) -> str:
    if reason is not None:
        return f"n/a ({reason})"
    a = steps.get(key)
    if a is None:
        fl = steps.get("flops", {})
        return "n/a (" + (fl.get("error", "not run") if not fl.get("ok", True) else "not run") + ")"
    if not a.get("ok"):
        return f"n/a ({report_short(a.get('error', '?'))})"
    cell = f"{_pct(a['contraction_flops_f16_share'])} ({a['nodes_f16']}/{a['nodes_total']})"
    if a.get("contractions_missing"):
        cell += f", {len(a['contractions_missing'])} contractions gone"
    return cell + _flop_note(steps)


def report_short(text: str, limit: int = 110) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def kept_cell(steps: dict) -> str:
    k = steps.get("kept")
    if not k or not k.get("ok"):
        return "—"
    cell = str(len(k["kept"]))
    if len(k["flipped_to_f32"]) != len(k["kept"]) or k["flipped_to_f16"]:
        cell += f" ({len(k['flipped_to_f32'])} f16→f32"
        cell += f", {len(k['flipped_to_f16'])} f32→f16)" if k["flipped_to_f16"] else ")"
    return cell


def calib_seconds_cell(steps: dict) -> str:
    c = steps.get("calibration", {})
    return f"{c['seconds']:.1f}" if c.get("ok") else "error: " + c.get("error", "?")


def summary_lines(results: list[dict]) -> list[str]:
    rows = [r for r in results if "error" not in r]

    def met(r, key):
        m = r["steps"].get(f"metrics_{key}", {})
        return m if m.get("ok") else None

    lines = []
    for key, label in (("calibrated", "calibrated"), ("default", "default")):
        measured = [r for r in rows if met(r, key)]
        zero = [r for r in measured if met(r, key)["nonfinite"] == 0]
        am = [r for r in measured if met(r, key)["kind"] == "argmax"]
        am_ok = [r for r in am if met(r, key)["value"] >= ARGMAX_OK]
        sn = [r for r in measured if met(r, key)["kind"] == "snr"]
        sn_ok = [r for r in sn if met(r, key)["value"] >= SNR_OK_DB]
        lines.append(
            f"- **{label}**: {len(measured)} of {len(results)} models measured; "
            f"0 non-finite: **{len(zero)}/{len(measured)}**; argmax ≥ {ARGMAX_OK:.0%}: "
            f"**{len(am_ok)}/{len(am)}** logits models; SNR ≥ {SNR_OK_DB:.0f} dB: "
            f"**{len(sn_ok)}/{len(sn)}** audio models")
        below = [r["name"] for r in am if r not in am_ok] + [r["name"] for r in sn if r not in sn_ok] \
            + [r["name"] for r in measured if r not in zero]
        if below:
            lines.append(f"  - below a threshold or non-finite ({label}): "
                         + ", ".join(f"`{n}`" for n in dict.fromkeys(below)))
    lines += share_summary_lines(rows)
    changed = [r for r in rows if r["steps"].get("kept", {}).get("ok")
               and r["steps"]["kept"]["kept"]]
    lines.append(f"- calibration kept nodes in fp32 on **{len(changed)}** models"
                 + (": " + ", ".join(f"`{r['name']}` ({len(r['steps']['kept']['kept'])})"
                                     for r in changed) if changed else ""))
    failed = [(r["name"], k, s.get("error")) for r in results for k, s in r.get("steps", {}).items()
              if not s.get("ok") and not k.startswith("autocast")]
    failed += [(r["name"], "setup", r["error"]) for r in results if "error" in r]
    lines.append(f"- steps that failed (mp): {len(failed)}"
                 + ("" if not failed else ": " + "; ".join(f"`{n}` {k}: {e}" for n, k, e in failed)))
    return lines


def share_summary_lines(rows: list[dict]) -> list[str]:
    """Whether the calibrated plan's fp16 FLOP share (run-time count, unrounded) is at least
    AutoCast's, against every AutoCast conversion that succeeded (defaults and with
    calibration data); models AutoCast converted neither way are listed apart."""
    compared, below, none = [], [], []
    for r in rows:
        s = r["steps"]
        mine = s.get("plan_calibrated", {}).get("recount")
        theirs = [s[k]["contraction_flops_f16_share"] for k in ("autocast", "autocast_calib")
                  if s.get(k, {}).get("ok") and s[k].get("contraction_flops_f16_share") is not None]
        if mine is None or not theirs:
            none.append(f"`{r['name']}`" + (f" ({_pct(mine)})" if mine is not None else ""))
            continue
        compared.append(r["name"])
        # 1e-9: the same FLOPs summed in another order.
        if mine < max(theirs) - 1e-9:
            below.append(f"`{r['name']}` ({_pct(mine, 2)} < {_pct(max(theirs), 2)})")
    line = (f"- fp16 FLOP share, calibrated ≥ AutoCast's (every conversion of it that "
            f"succeeded, defaults and with calibration data; unrounded run-time counts): "
            f"**{len(compared) - len(below)}/{len(compared)}** models")
    if below:
        line += "; below: " + ", ".join(below)
    if none:
        line += ("; not compared (AutoCast converted neither way, or no count; in brackets "
                 "mp's calibrated share): " + ", ".join(none))
    return [line]


def worse_lines(results: list[dict]) -> list[str]:
    """Models where the calibrated build is worse than the default one."""
    out = []
    for r in results:
        s = r.get("steps", {})
        d, c = s.get("metrics_default", {}), s.get("metrics_calibrated", {})
        if not (d.get("ok") and c.get("ok")):
            continue
        why = []
        if c["nonfinite"] > d["nonfinite"]:
            why.append(f"non-finite {d['nonfinite']} → {c['nonfinite']}")
        dv, cv = d["value"], c["value"]
        if dv is not None and cv is not None and d["kind"] == c["kind"]:
            if d["kind"] == "argmax" and cv < dv:
                why.append(f"argmax {_pct(dv, 2)} → {_pct(cv, 2)}")
            elif d["kind"] == "snr" and cv < dv - 0.5:
                why.append(f"SNR {dv:.1f} → {cv:.1f} dB")
            elif d["kind"] == "rel" and cv > 1.5 * dv and cv > 1e-6:
                why.append(f"rel {dv:.2e} → {cv:.2e}")
        do, co = d.get("other_rel"), c.get("other_rel")
        if do is not None and co is not None and co > 1.5 * do and co > 1e-6:
            why.append(f"other outputs rel {do:.2e} → {co:.2e}")
        pd, pc = s.get("plan_default", {}), s.get("plan_calibrated", {})
        if pd.get("ok") and pc.get("ok"):
            kind = "recount" if pd.get("recount") is not None and pc.get("recount") is not None else "share"
            if pc[kind] > pd[kind] + 1e-9:
                why.append(f"FLOP share {_pct(pd[kind])} → {_pct(pc[kind])} (more fp16)")
        if why:
            out.append(f"- `{r['name']}`: " + "; ".join(why))
    return out or ["- None: on no model is the calibrated build worse than the default one "
                   "(more non-finite values, lower argmax agreement, SNR lower by > 0.5 dB, "
                   "relative error more than 1.5× higher)."]


def kept_rules_lines(results: list[dict], limit: int = 8) -> list[str]:
    out = []
    for r in results:
        k = r.get("steps", {}).get("kept", {})
        if not k.get("ok") or not k["kept"]:
            continue
        groups: dict[str, int] = {}
        largest = []
        for rule in k["kept"].values():
            if m := re.search(r"\|x\| max ([0-9.e+-]+) >", rule):
                largest.append(float(m[1]))
            key = re.sub(r"'[^']*'", "…", rule)
            key = re.sub(r"(?<![A-Za-z0-9.])\d+(\.\d+)?(e[+-]?\d+)?", "N", key)
            groups[key] = groups.get(key, 0) + 1
        names = sorted(k["kept"])
        shown = ", ".join(f"`{n}`" for n in names[:limit]) + (" …" if len(names) > limit else "")
        big = f" (largest calibrated |x|: {max(largest):.3g})" if largest else ""
        out.append(f"- `{r['name']}`{big}: "
                   + "; ".join(f"{g} ×{n}" for g, n in sorted(groups.items())) + f" — {shown}")
    if not out:
        return ["- None."]
    # Calibrated |x| at a mask fill's magnitude in a plan that rewrites mask sentinels.
    masks = []
    for r in results:
        st = r.get("steps", {})
        k = st.get("kept", {})
        if not k.get("ok") or not k["kept"]:
            continue
        kinds = {f.get("kind") for f in st.get("plan_calibrated", {}).get("findings", [])}
        sizes = [float(m[1]) for rule in k["kept"].values()
                 if (m := re.search(r"\|x\| max ([0-9.e+-]+) >", rule))]
        if "mask" in kinds and sizes and max(sizes) >= 65504:
            masks.append(f"`{r['name']}` ({max(sizes):.3g})")
    if masks:
        out += ["", f"On {len(masks)} models the values calibration keeps in fp32 reach "
                "3.4e38 (`finfo(float32).min`) or 65504, the attention-mask fills, while the "
                "same plan's mask rule (finding `mask`: the sentinel is stored as -10000 in "
                "fp16) covers the mask constant: calibration measures the fill after a "
                "runtime `Where` and keeps the nodes listed above in fp32 (that `Where`, and the "
                "masked `Add` and `Softmax` where the graph has them), at no accuracy gain "
                "in the metric columns: " + ", ".join(masks) + "."]
    return out


def f32_contraction_lines(results: list[dict]) -> list[str]:
    """Models whose calibrated plan keeps contractions in fp32, by rule."""
    out = []
    for r in results:
        groups = r.get("steps", {}).get("plan_calibrated", {}).get("f32_contractions")
        if groups:
            out.append(f"- `{r['name']}`: " + "; ".join(f"{g} ×{n}" for g, n in sorted(groups.items())))
    return out


def flop_source_lines(results: list[dict]) -> list[str]:
    """Which shapes the FLOP counts came from, per model."""
    run, other = [], []
    for r in results:
        fl = r.get("steps", {}).get("flops")
        if not fl:
            continue
        if not fl.get("ok"):
            other.append(f"`{r['name']}` (FLOP count failed: {report_short(fl.get('error', '?'), 120)})")
        elif fl.get("source") == "run-time shapes":
            run.append(r)
        else:
            other.append(f"`{r['name']}` (shape inference: {report_short(fl.get('why', '?'), 160)})")
    partial = [f"`{r['name']}` ({len(r['steps']['flops']['contractions_inferred'])})" for r in run
               if r["steps"]["flops"].get("contractions_inferred")]
    line = (f"- FLOP counts (every share column): from **run-time shapes** on {len(run)} of "
            f"{len(run) + len(other)} models")
    if other:
        line += "; from shape inference (unknown dims = 1) on " + ", ".join(other)
    if partial:
        line += ("; contractions whose shapes the run did not give (subgraphs), counted from "
                 "shape inference: " + ", ".join(partial))
    return [line]


def recount_lines(results: list[dict]) -> list[str]:
    """The plans' static estimate against the run-time count of the same decisions."""
    agree, differ = 0, []
    for r in results:
        p = r.get("steps", {}).get("plan_calibrated", {})
        if not p.get("ok") or p.get("recount") is None:
            continue
        if abs(p["recount"] - p["share"]) <= 0.005:
            agree += 1
        else:
            differ.append(f"`{r['name']}` (static {_pct(p['share'])}, run-time {_pct(p['recount'])})")
    line = (f"- mp's static estimate (the calibrated plan's `contraction_flops_f16_share`, "
            f"data-dependent dims counted as 1) against the run-time count of the same plan "
            f"(the share column): agrees within 0.5 pp on {agree} models")
    if differ:
        line += ("; differs on " + ", ".join(differ) + ". There dims that depend on computed "
                 "values (predicted durations → the waveform's length) are unknown when the plan "
                 "is made, so the static figure weighs the contractions after them as if those "
                 "dims were 1; the share columns count them at their run-time size")
    return [line]


def _count(c: dict) -> str:
    return f"{c.get('equal', 0)}/{c.get('total', 0)}"


def _length_cell(entry: dict | None) -> str:
    """How many inputs keep the reference's output shapes; which differ, by how much."""
    if not entry:
        return "—"
    if "error" in entry:
        return "error: " + report_short(entry["error"], 120)
    c = entry.get("compare", {})
    notes = []
    if c.get("differ"):
        diffs = [d for d in c.get("diff", []) if d is not None]
        notes.append("differ: seeds " + ", ".join(map(str, c["differ"]))
                     + (f"; by {', '.join(f'{d:+d}' for d in diffs)} samples" if diffs else ""))
    if c.get("failed"):
        notes.append("failed: seeds " + ", ".join(map(str, c["failed"])))
    plain = entry.get("compare_no_opt")
    if plain and plain.get("equal") != c.get("equal"):
        notes.append(f"{_count(plain)} without onnxruntime's graph optimizations: differ "
                     "on seeds " + ", ".join(map(str, plain.get("differ", []))))
    if entry.get("variants") not in (None, 1):
        notes.append(f"{entry['variants']} compiled variants")
    return _count(c) + (f" ({'; '.join(notes)})" if notes else "")


def length_rows(results: list[dict]) -> list[dict]:
    return [r for r in results if r.get("length_hazard")]


def _fp32_reference(r: dict) -> bool:
    """The length check ran and its reference rounds an fp32 value (not an fp16 model)."""
    L = r["steps"].get("length", {})
    return bool(L.get("ok")) and not L.get("reference_fp16")


def length_summary_lines(results: list[dict]) -> list[str]:
    hz = length_rows(results)
    rows = [r for r in hz if _fp32_reference(r)]
    fp16 = [r for r in hz if r["steps"].get("length", {}).get("ok") and r not in rows]
    if not rows and not fp16:
        return []
    totals = {}
    for key in ("mp_mixed", "mp_mixed_exact", "mp_fp32", "autocast"):
        eq = tot = 0
        for r in rows:
            c = r["steps"]["length"].get(key, {}).get("compare")
            if c:
                eq, tot = eq + c["equal"], tot + c["total"]
        totals[key] = f"**{eq}/{tot}**" if tot else "n/a"
    line = (f"- Output length under fp16 ({LENGTH_INPUTS} random {LENGTH_TOKENS}-token inputs on "
            f"{len(rows)} models whose output length depends on computed values): equal to "
            f"onnxruntime fp32's on {totals['mp_mixed']} inputs for mp mixed, "
            f"{totals['mp_mixed_exact']} for mp mixed with `index_guard` exact, "
            f"{totals['mp_fp32']} for mp fp32, {totals['autocast']} for AutoCast (defaults)")
    if fp16:
        line += ("; not counted: " + ", ".join(f"`{r['name']}`" for r in fp16)
                 + ", whose original rounds an fp16 value (no fp32 reference)")
    return [line]


def length_lines(results: list[dict], meta: dict) -> list[str]:
    """The section on models whose output length depends on computed values."""
    hz = length_rows(results)
    if not hz:
        return ["No model measured here has a Ceil/Floor/Round of computed values whose "
                "result reaches a shape operand."]
    out = [f"Models whose graph has a Ceil/Floor/Round of computed values whose result "
           f"reaches an operand that sets a shape or size (Range limits, Reshape/Expand "
           f"shapes, ConstantOfShape, NonZero, ...). On each, {LENGTH_INPUTS} inputs of "
           f"{LENGTH_TOKENS} random tokens (`default_rng(seed).integers(1, vocab, size=(1, "
           f"{LENGTH_TOKENS}))`, seeds 0–{LENGTH_INPUTS - 1}, attention mask ones); per build, "
           f"on how many the output shapes equal those of onnxruntime on the original model "
           f"(fp32 unless marked). FLOP shares: the run-time count on `test_data_set_0` (the "
           f"columns above).", ""]
    cols = ["model", "mp mixed: lengths equal to fp32", "mp mixed, index_guard exact: equal",
            "mp fp32: equal", "AutoCast: equal", "AutoCast FLOP share", "mp mixed FLOP share",
            "mp mixed, index_guard exact: FLOP share", "reference length (onnxruntime)",
            "vocab", "seconds (mp mixed / exact / fp32: compile + runs)"]
    rows, notes = [], []
    reason = meta.get("autocast_reason")
    for r in hz:
        s = r["steps"]
        L = s.get("length", {})
        if not L.get("ok"):
            rows.append([f"`{r['name']}`", "error: " + report_short(L.get("error", "not run"), 150),
                         *[""] * (len(cols) - 2)])
            continue
        lens = [x for x in L.get("ref_lengths", []) if x is not None]
        ac = L.get("autocast")
        if reason:
            ac = {"error": f"n/a ({reason})"}
        secs = " / ".join(f"{L[k]['seconds']:.0f}" if "seconds" in L.get(k, {}) else "—"
                          for k in ("mp_mixed", "mp_mixed_exact", "mp_fp32"))
        name = f"`{r['name']}`" + (" (reference rounds fp16)" if L.get("reference_fp16") else "")
        rows.append([name, _length_cell(L.get("mp_mixed")), _length_cell(L.get("mp_mixed_exact")),
                     _length_cell(L.get("mp_fp32")), _length_cell(ac),
                     autocast_cell(s, "autocast", reason), share_cell(s, "default"),
                     share_cell(s, "exact") if "plan_exact" in s else "—",
                     f"{min(lens)}–{max(lens)}" if lens else "—",
                     str(L.get("vocab")), secs])
        notes.append(_length_note(r))
    out += report.table(cols, rows, align="llllllrrrrr")
    out += ["", *[n for n in notes if n]]
    para = _length_paragraph(hz)
    if para:
        out += ["", para]
    return out


def _length_note(r: dict) -> str:
    """Per model: where the rounding op computes in each build (measured)."""
    L = r["steps"]["length"]
    bits = []
    for h, t in (L.get("reference_rounding_types") or {}).items():
        if t == "FLOAT16":
            bits.append(f"the original model rounds an fp16 value (`{h}` reads {t}), so "
                        "onnxruntime on it is no fp32 reference")
    for h, (compute, rule) in (L.get("mp_rounding_compute") or {}).items():
        bits.append(f"mp's plan computes `{h}` in {compute} ({rule})")
    exact = L.get("mp_exact_rounding_compute") or {}
    if exact and exact != (L.get("mp_rounding_compute") or {}):
        bits += [f"with `index_guard` exact in {c} ({rule})" for c, rule in exact.values()]
    for h, t in (L.get("autocast", {}).get("rounding_input_types") or {}).items():
        bits.append(f"in AutoCast's model `{h}` reads {t}")
    alt = [f"{label} {_count(L[key]['compare_mp_fp32'])}" for key, label in
           (("mp_mixed", "mp mixed"), ("mp_mixed_exact", "mp mixed (exact)"),
            ("autocast", "AutoCast"))
           if "compare_mp_fp32" in L.get(key, {})]
    if alt:
        bits.append("lengths equal to mp fp32's instead: " + ", ".join(alt))
    return f"- `{r['name']}`: " + "; ".join(bits) if bits else ""


def _length_paragraph(hz: list[dict]) -> str:
    """What the measured lengths and shares say about "fp16 FLOP share ≥ AutoCast" (models
    with an fp32 reference only): mp's default build against AutoCast's at their shares,
    and what `index_guard` exact buys at its share."""
    facts = []
    for r in hz:
        s = r["steps"]
        if not _fp32_reference(r):
            continue
        L = s["length"]
        cmp = {k: L.get(k, {}).get("compare") for k in ("autocast", "mp_mixed", "mp_mixed_exact")}
        shares = {"autocast": s.get("autocast", {}).get("contraction_flops_f16_share")
                  if s.get("autocast", {}).get("ok") else None,
                  "mp_mixed": s.get("plan_default", {}).get("recount"),
                  "mp_mixed_exact": s.get("plan_exact", {}).get("recount")}
        if cmp["autocast"] and cmp["mp_mixed"] and None not in (shares["autocast"], shares["mp_mixed"]):
            facts.append((r, cmp, shares))
    if not facts:
        return ""

    def counts(key):
        return ", ".join(f"`{r['name']}` {_count(c[key])} at {_pct(sh[key])}"
                         for r, c, sh in facts if c.get(key) and sh.get(key) is not None)

    text = ("**Output length and fp16 FLOP share.** On these models the output length is "
            "`ceil()` of durations the model predicts, so fp16 error in the duration predictor "
            "can move the length by a frame. Inputs whose output length equals onnxruntime "
            "fp32's, at each build's fp16 FLOP share: mp mixed " + counts("mp_mixed")
            + "; AutoCast " + counts("autocast") + ".")
    rules = sorted({rule for r, *_ in facts for compute, rule in
                    (r["steps"]["length"].get("mp_rounding_compute") or {}).values()
                    if compute == "f32"})
    ac16 = [r["name"] for r, *_ in facts
            if "FLOAT16" in (r["steps"]["length"].get("autocast", {})
                             .get("rounding_input_types") or {}).values()]
    where = []
    if rules:
        where.append("mp computes the ops from the last contraction to the rounding in fp32 ("
                     + "; ".join(f"rule `{x}`" for x in rules) + ")")
    if ac16:
        where.append("in AutoCast's model the rounding op reads float16 ("
                     + ", ".join(f"`{n}`" for n in ac16) + ")")
    if where:
        text += " Both builds run the duration predictor's contractions in fp16; " \
            + "; ".join(where) + "."
    if any(c.get("mp_mixed_exact") for _, c, _ in facts):
        text += (" With `index_guard` exact (docs/precision.md), mp keeps every op the length "
                 "depends on in fp32, contractions included: " + counts("mp_mixed_exact") + ".")
    return text


def render(results: list[dict], meta: dict) -> list[str]:
    lines = report.begin(
        "Calibration: mp's mixed build with and without measured ranges",
        "Per model: mp's default mixed build and its calibrated one (`--calibrate`, "
        "docs/precision.md \"Calibration\") against **mp's own fp32 build** on "
        "`test_data_set_0`, their fp16 share of contraction FLOPs, and NVIDIA ModelOpt "
        "AutoCast's share on the same models. Generated by `bench/calibration.py` "
        "(mp.tools.calibration_bench); do not edit by hand. *Method* says how each number "
        "is computed.",
        command=meta["command"], measured=meta["commit"],
        extra=[f"mp-run: `{meta['mp_run']}` ({meta['mp_run_built']})",
               f"AutoCast: {meta['autocast']}",
               f"onnx {onnx.__version__}, numpy {np.__version__}",
               f"Models: {len(results)}; total time {meta['seconds']:.0f} s"])
    if meta.get("date"):  # the run's date, also when the page is rendered again (--render)
        lines = [f"- Date: {meta['date']}" if l.startswith("- Date: ") else l for l in lines]
    lines += ["", "## Summary", ""]
    lines += summary_lines(results)
    lines += flop_source_lines(results)
    lines += recount_lines(results)
    lines += length_summary_lines(results)
    lines += ["", "## Models", ""]
    reason = meta.get("autocast_reason")
    cols = ["model", "calib data", "default: non-finite", "default: metric",
            "calibrated: non-finite", "calibrated: metric", "fp32 nodes kept by calibration",
            "FLOP share default (f16/nodes)", "FLOP share calibrated (f16/nodes)",
            "FLOP share AutoCast (defaults)", "FLOP share AutoCast + calib data",
            "mp plan's static estimate (default / calibrated)", "calibration s"]
    rows = []
    for r in results:
        if "error" in r:
            rows.append([f"`{r['name']}`", r["calib_label"], "error", r["error"], *[""] * 9])
            continue
        s = r["steps"]
        dn, dm = metric_cell(s, "default")
        cn, cm = metric_cell(s, "calibrated")
        calib = r["calib_label"]
        if r["calib_is_eval"]:
            calib = "test_data_set_0 (**= eval**)"
        rows.append([f"`{r['name']}`", calib, dn, dm, cn, cm, kept_cell(s),
                     share_cell(s, "default"), share_cell(s, "calibrated"),
                     autocast_cell(s, "autocast", reason),
                     autocast_cell(s, "autocast_calib", reason), static_cell(s),
                     calib_seconds_cell(s)])
    lines += report.table(cols, rows, align="llrlrlrrrrrrr")
    lines += ["", "## Calibrated worse than default", ""]
    lines += worse_lines(results)
    lines += ["", "## What calibration kept in fp32", "",
              "Per model: the calibration rules of the calibrated plan (numbers → N, names → …) "
              "and the nodes they keep.", ""]
    lines += kept_rules_lines(results)
    f32c = f32_contraction_lines(results)
    if f32c:
        lines += ["", "## Contractions mp's calibrated plan keeps in fp32", "",
                  "By op type and rule (names → …): what keeps mp's FLOP share below 100 %.", ""]
        lines += f32c
    lines += ["", f"## Output length under fp16 ({LENGTH_INPUTS} random {LENGTH_TOKENS}-token inputs)", ""]
    lines += length_lines(results, meta)
    lines += ["", "## ModelOpt AutoCast", ""]
    lines += autocast_lines(results, meta)
    lines += ["", "## Method", "", METHOD]
    return lines


def autocast_lines(results: list[dict], meta: dict) -> list[str]:
    if meta.get("autocast_reason"):
        return [f"Not run: {meta['autocast_reason']}. The AutoCast columns read n/a."]
    out = [meta.get("autocast_how", "")]
    for key, label in (("autocast", "defaults"), ("autocast_calib", "with calibration data")):
        ok = [r for r in results if r.get("steps", {}).get(key, {}).get("ok")]
        bad = [r for r in results if key in r.get("steps", {}) and not r["steps"][key].get("ok")]
        out.append(f"- {label}: converted {len(ok)} of {len(ok) + len(bad)} models")
        errs: dict[str, list[str]] = {}
        for r in bad:
            errs.setdefault(re.sub(r"'[^']*'", "'…'", r["steps"][key]["error"])[:200], []).append(r["name"])
        for e, names in sorted(errs.items(), key=lambda kv: -len(kv[1])):
            out.append(f"  - {len(names)}× `{e}`: " + ", ".join(f"`{n}`" for n in names))
    return out


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mp-run", type=Path, default=build_tool("mp-run"))
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared",
                    help="folder holding corpus/decoders, corpus/speech and models")
    ap.add_argument("--no-shared", action="store_true", help="only the stress cases")
    ap.add_argument("--no-stress", action="store_true", help="skip mp.models.STRESS")
    ap.add_argument("--models", nargs="*", help="keep models whose name (or folder) matches")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per step")
    ap.add_argument("--autocast-python", type=Path, default=AUTOCAST_PYTHON,
                    help="python of a scratch venv with nvidia-modelopt[onnx] (never mp's .venv)")
    ap.add_argument("--no-autocast", action="store_true")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "calibration.md")
    ap.add_argument("--json", type=Path, help="also write the raw results")
    ap.add_argument("--render", type=Path, metavar="JSON",
                    help="only write the page again from the --json of an earlier run")
    args = ap.parse_args(argv)
    if args.render:
        saved = json.loads(args.render.read_text())
        report.write(args.out, render(saved["results"], saved["meta"]))
        print(f"wrote {args.out} from {args.render}", file=sys.stderr)
        return 0

    t0 = time.perf_counter()
    commit = report.commit()
    if args.no_autocast:
        reason, autocast_python, version = "not run: --no-autocast", None, ""
    else:
        ok, version = autocast_available(args.autocast_python)
        reason = None if ok else version
        autocast_python = args.autocast_python if ok else None

    tmp = Path(tempfile.mkdtemp(prefix="mp-calibration-"))
    results = []
    try:
        models = discover(None if args.no_shared else args.shared,
                          None if args.no_stress else tmp / "stress", args.models)
        for i, m in enumerate(models):
            try:
                r = measure(m, args.mp_run, tmp / "work" / str(i), args.timeout, autocast_python)
            except Exception as e:  # noqa: BLE001 - last resort, keep going
                r = {"name": m["name"], "source": m["source"], "calib_label": m["calib_label"],
                     "calib_is_eval": m["calib_is_eval"], "error": precision_bench.short_error(e),
                     "trace": traceback.format_exc()}
            results.append(r)
            shutil.rmtree(tmp / "work" / str(i), ignore_errors=True)
            print(f"[{i + 1}/{len(models)}] {m['name']}: {r.get('seconds', 0):.1f} s"
                  + (f" error: {r['error']}" if r.get("error") else ""), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    cmd = ".venv/bin/python bench/calibration.py"
    if args.no_shared:
        cmd += " --no-shared"
    if args.no_stress:
        cmd += " --no-stress"
    if args.models:
        cmd += " --models " + " ".join(args.models)
    if args.no_autocast:
        cmd += " --no-autocast"
    meta = {
        "command": cmd, "commit": commit, "seconds": time.perf_counter() - t0,
        "date": report.now(),
        "mp_run": report.rel(args.mp_run), "mp_run_built": report.built(args.mp_run),
        "autocast": (f"not run ({reason})" if reason else
                     f"nvidia-modelopt {version} in the scratch venv `{args.autocast_python}` "
                     "(outside the repository, not a dependency of mp; CPU only)"),
        "autocast_reason": reason,
        "autocast_how": ("`convert_to_mixed_precision(MODEL)` (defaults) and "
                         "`convert_to_mixed_precision(MODEL, calibration_data=CALIB.npz)`, each "
                         f"in a child process of `{args.autocast_python}`; an error is the "
                         "exception's first line. Failures:"),
    }
    report.publish(args.out, render(results, meta), args.json,
                   {"meta": meta, "results": results}, meta["seconds"], default=_json_default)
    return 0


def _json_default(o):
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    return str(o)


if __name__ == "__main__":
    sys.exit(main())
