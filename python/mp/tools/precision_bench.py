"""bench/precision.md: mp's mixed-precision plan next to two peer fp16 converters.

    .venv/bin/python bench/precision.py [--mp-opt build/bin/mp-opt] [--models-dir ../shared/models]
                                        [--no-generated] [--out bench/precision.md] [--json FILE]

(bench/precision.py is a driver of :func:`main`; ``python -m mp.tools.precision_bench``
is the same.)

For every ``model.onnx`` under ``--models-dir`` (default ``../shared/models`` of the
repository) and every model of ``python -m mp.models all`` (generated into a temporary
folder with its ``test_data_set_0/``), it reports side by side:

* **mp**: ``mp-opt MODEL --mp-mixed-precision="plan=PLAN.json keep-io-types=1"``, the
  plan's ``summary``;
* **occ**: onnxconverter-common's ``float16.convert_float_to_float16(model, keep_io_types=True)``;
* **ort**: onnxruntime's ``transformers.float16.convert_float_to_float16(model, keep_io_types=True)``;

with the same counting for both peers (see ``METHOD`` below, which is copied into the
markdown), and the accuracy table: mp's mixed build (``mp.compile(MODEL,
precision="mixed")``, default policy, run by mp's own CPU JIT in a child process of this
script) against each peer's fp16 model run in onnxruntime (CPU), on the same
``test_data_set_0`` inputs and against the same stored reference outputs, with the same
metrics (``output_metrics``). Every model/tool step is in its own try/except (and mp's run
in its own process): an error becomes a table cell, never an abort. Runs in well under a
minute (mostly mp's JIT).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from ..models import load_test_data
from . import REPO, build_tool, report

# The folder holding the mp package: the PYTHONPATH of the child processes.
PYTHON_DIR = Path(__file__).resolve().parents[2]

PEERS = {
    "occ": "onnxconverter-common",
    "ort": "onnxruntime transformers",
}
TOOLS = ["mp", *PEERS]
FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
# The ops whose FLOPs this script counts for the peers and the Models table: default-domain
# MatMul, Gemm, Conv, ConvTranspose, Attention. mp's plan (lib/Precision/Plan.cpp,
# contractionFlops) also counts com.microsoft Attention, MultiHeadAttention and
# GroupQueryAttention (since commit dc0cffe); this script does not (yet).
CONTRACTIONS = {"MatMul", "Gemm", "Conv", "ConvTranspose", "Attention"}
# Nodes mp never gives a precision decision (lib/Precision/OpInfo.cpp, isPrecisionNode).
NOT_PRECISION_NODES = {"Constant", "Shape", "Size"}

METHOD = """\
- **mp** numbers are the plan's `summary` as written by `mp-opt` (lib/Precision/Plan.cpp):
  `nodes_f16 / nodes_total` counts ops with a precision decision (ops with a float operand
  or result, Constant/Shape/Size excluded, Casts only float→float, nested If branches
  included); `casts` are the runtime casts the plan inserts (constant casts are folded into
  f16 weights and not counted); the FLOP share is over MatMul/Gemm/Conv/ConvTranspose,
  ONNX Attention and com.microsoft Attention/MultiHeadAttention/GroupQueryAttention with
  dynamic dims counted as 1; weight bytes are all float constants
  (initializers and Constant nodes) before and after.
- **Peers** (occ = onnxconverter-common 1.16 `float16.convert_float_to_float16`, ort =
  onnxruntime's `transformers.float16.convert_float_to_float16`, both with
  `keep_io_types=True` and otherwise default arguments) are counted on the converted
  ONNX graph, subgraphs included:
  - *casts*: number of `Cast` nodes after conversion minus before;
  - *nodes f16 / total*: value types come from `onnx.shape_inference.infer_shapes` on the
    converted model, then (for outputs it cannot type, i.e. com.microsoft ops) a Cast's
    `to`, else the type of the node's first float input (EmbedLayerNormalization's
    `mask_index` is int32). Only the nodes of the original model are counted (matched by
    name; nodes without a name are named before conversion), with mp's rule for which
    nodes count: at least one float input or output, not Constant/Shape/Size, Casts only
    when float→float. A node is **f16** when every float input and output is float16;
    *mixed* nodes (some float16, some float32 values) count as not f16 and are listed
    separately;
  - *FLOP share*: per node FLOPs of mp's op set minus the com.microsoft attention ops
    (not counted for the peers), from shapes inferred on the
    original model (`infer_shapes`, plus output shapes of the com.microsoft ops that
    onnx cannot infer: SkipLayerNormalization/FastGelu/... keep input 0's shape,
    EmbedLayerNormalization and Attention give [batch, seq, hidden]); dynamic dims = 1;
    MatMul 2·|out|·K, Gemm 2·|out|·K, Conv 2·|out|·|W|/W[0], ConvTranspose
    2·|in|·|W|/W[0], Attention 4·B·Hq·Sq·(Skv+past)·Dk. The share is the FLOPs of
    the f16 contraction nodes over all contraction FLOPs;
  - *weight bytes*: float initializers plus float Constant-node tensors, subgraphs
    included, before and after conversion.
- **Accuracy** (the *Accuracy on test_data_set_0* table): **mp** is mp's mixed build of
  the original model, `mp.compile(MODEL, precision="mixed")` (default policy, graph input
  and output types kept, the same plan as the columns above), JIT-compiled and run by
  mp's own CPU runtime through its Python package (`python/mp`, libMPCAPI.so), in a child
  process of the script so that a crash is one failed cell; each **peer**'s converted
  model runs in onnxruntime (CPU, graph optimizations disabled, one thread). All get
  the inputs of `test_data_set_0` (cast to the model's declared float input type where it
  differs; with `keep_io_types` it never does) and are scored by the same function
  (`output_metrics`) against the same stored references `output_*.pb`, which are
  onnxruntime's CPU outputs of the original model (fp32 math; for the two fp16 models
  fp32 math with fp16 inputs/outputs, so onnxruntime's converter, which leaves those
  models unchanged, reproduces them exactly): *non-finite* counts NaN/±inf in the float
  outputs, *max abs err* is the largest |output − reference| over all float outputs,
  *max abs ref* the largest |reference|. A float output without a reference of the same
  name and shape is flagged *not compared*.
"""

ACCURACY_TITLE = ("Accuracy on test_data_set_0: mp (mixed, mp's CPU JIT) vs the peers' fp16 models "
                  "in onnxruntime CPU")
ACCURACY_NOTE = """\
This is the accuracy table. **mp**: mp's mixed-precision build of the original model,
`mp.compile(MODEL, precision="mixed")` (default policy, graph input/output types kept),
run by mp's own CPU JIT. **Peers**: each converter's fp16 model run in onnxruntime (CPU).
Same `test_data_set_0` inputs, same stored references (onnxruntime's outputs of the
original model: fp32 math; fp16 inputs/outputs for the two fp16 models), same metrics:
*non-finite* = NaN/±inf count in the float outputs, *max abs err* = largest
|output − reference| over all float outputs, *max abs ref* = largest |reference|. The
overflow cases are in it: `layernorm_overflow` (LayerNorm over activations near 3e4,
whose variance overflows fp16) and the attention-mask sentinels (-65504) of
`genai_llama_fp16_mha_extdata`."""

# ----------------------------------------------------------------------------- graph walking


def walk_graphs(graph: onnx.GraphProto):
    """The graph and every subgraph (If/Loop/Scan bodies), depth first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from walk_graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from walk_graphs(g)


def all_nodes(model: onnx.ModelProto):
    for g in walk_graphs(model.graph):
        yield from g.node


def name_nodes(model: onnx.ModelProto) -> None:
    """Gives every node a unique name (only unnamed or duplicate names change)."""
    seen: set[str] = set()
    for i, node in enumerate(all_nodes(model)):
        if not node.name or node.name in seen:
            base = node.name or f"{node.op_type}"
            node.name = f"{base}__bench{i}"
        seen.add(node.name)


def count_casts(model: onnx.ModelProto) -> int:
    return sum(1 for n in all_nodes(model) if n.op_type == "Cast" and n.domain in ("", "ai.onnx"))


def weight_bytes(model: onnx.ModelProto) -> int:
    def tensor_bytes(t: onnx.TensorProto) -> int:
        if t.data_type not in FLOAT_TYPES:
            return 0
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        return n * np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize

    total = 0
    for g in walk_graphs(model.graph):
        total += sum(tensor_bytes(t) for t in g.initializer)
        for node in g.node:
            if node.op_type == "Constant":
                for a in node.attribute:
                    if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                        total += tensor_bytes(a.t)
    return total


# ----------------------------------------------------------------------------- types and shapes


def _infer(model: onnx.ModelProto) -> onnx.ModelProto:
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # noqa: BLE001 - a model onnx cannot infer still gets counted
        return model


def _collect(model: onnx.ModelProto) -> dict[str, tuple[int, list[int] | None]]:
    """name -> (elem type, shape with dynamic dims = 1, or None) over all (sub)graphs."""
    info: dict[str, tuple[int, list[int] | None]] = {}

    def add_vi(vi: onnx.ValueInfoProto):
        t = vi.type
        if not t.HasField("tensor_type") or not t.tensor_type.elem_type:
            return
        tt = t.tensor_type
        shape = None
        if tt.HasField("shape"):
            shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tt.shape.dim]
        info[vi.name] = (tt.elem_type, shape)

    for g in walk_graphs(model.graph):
        for t in g.initializer:
            info[t.name] = (t.data_type, list(t.dims))
        for vi in [*g.input, *g.value_info, *g.output]:
            add_vi(vi)
        for node in g.node:
            if node.op_type == "Constant" and node.output:
                for a in node.attribute:
                    if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                        info[node.output[0]] = (a.t.data_type, list(a.t.dims))
    return info


def _attr(node: onnx.NodeProto, name: str, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _contrib_outputs(node, info) -> dict[str, tuple[int, list[int] | None]]:
    """Output types/shapes of com.microsoft ops onnx's shape inference cannot infer."""
    def get(i):
        return info.get(node.input[i]) if i < len(node.input) and node.input[i] else None

    op = node.op_type
    out = {}
    if op == "EmbedLayerNormalization":
        ids, word = get(0), get(2)
        if ids and word and ids[1] is not None and word[1] is not None:
            out[0] = (word[0], [*ids[1], word[1][-1]])
            out[1] = (TensorProto.INT32, [ids[1][0]])
            out[2] = (word[0], [*ids[1], word[1][-1]])
        return out
    if op == "Attention":
        x, w = get(0), get(1)
        if x and w and x[1] is not None and w[1] is not None:
            sizes = _attr(node, "qkv_hidden_sizes")
            hidden = sizes[2] if sizes else w[1][-1] // 3
            out[0] = (x[0], [*x[1][:-1], hidden])
        return out
    if op in ("MultiHeadAttention", "GroupQueryAttention", "DecoderMaskedMultiHeadAttention"):
        q = get(0)
        if q and q[1] is not None:
            out[0] = (q[0], list(q[1]))
        return out
    # Normalizations, activations, rotary embedding: output 0 is shaped like input 0.
    x = get(0)
    if x:
        out[0] = x
    return out


def infer_types(model: onnx.ModelProto, *, rounds: int = 64) -> dict[str, tuple[int, list[int] | None]]:
    """Types and shapes of every value; com.microsoft outputs are filled in and inference rerun."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    info = {}
    for _ in range(rounds):
        inferred = _infer(model)
        info = _collect(inferred)
        added = []
        for g in walk_graphs(model.graph):
            for node in g.node:
                if node.domain in ("", "ai.onnx"):
                    continue
                for i, (etype, shape) in _contrib_outputs(node, info).items():
                    if i < len(node.output) and node.output[i] and node.output[i] not in info:
                        vi = (helper.make_tensor_value_info(node.output[i], etype, shape)
                              if shape is not None else
                              helper.make_tensor_value_info(node.output[i], etype, None))
                        g.value_info.append(vi)
                        added.append(node.output[i])
        if not added:
            break
    return info


def value_types(model: onnx.ModelProto) -> dict[str, int]:
    """Element type of every value of a (converted) model, see METHOD."""
    info = {k: v[0] for k, v in infer_types(model, rounds=2).items()}
    for node in all_nodes(model):
        for i, out in enumerate(node.output):
            if not out or out in info:
                continue
            if node.op_type == "Cast":
                info[out] = _attr(node, "to")
            elif node.op_type == "EmbedLayerNormalization" and i == 1:
                info[out] = TensorProto.INT32
            else:
                floats = [info[x] for x in node.input if x in info and info[x] in FLOAT_TYPES]
                if floats:
                    info[out] = floats[0]
    return info


def contraction_flops(node: onnx.NodeProto, info) -> float | None:
    """FLOPs with mp's convention (lib/Precision/Plan.cpp); None when a shape is unknown."""
    def shape(i):
        if i >= len(node.input) or not node.input[i] or node.input[i] not in info:
            return None
        return info[node.input[i]][1]

    def out_shape(i=0):
        if i >= len(node.output) or node.output[i] not in info:
            return None
        return info[node.output[i]][1]

    prod = lambda s: float(np.prod(s)) if s else 1.0  # noqa: E731
    op = node.op_type
    if op == "MatMul":
        a, b = shape(0), shape(1)
        if a is None or b is None:
            return None
        out = out_shape()
        if out is None:
            a2 = a if len(a) > 1 else [1, *a]
            b2 = b if len(b) > 1 else [*b, 1]
            batch = np.broadcast_shapes(tuple(a2[:-2]), tuple(b2[:-2]))
            out = [*batch, a2[-2], b2[-1]]
        return 2.0 * prod(out) * a[-1]
    if op == "Gemm":
        a, b = shape(0), shape(1)
        if a is None or b is None:
            return None
        ta, tb = _attr(node, "transA", 0), _attr(node, "transB", 0)
        m, k = (a[1], a[0]) if ta else (a[0], a[1])
        n = b[0] if tb else b[1]
        return 2.0 * m * n * k
    if op == "Conv":
        w, out = shape(1), out_shape()
        if w is None or out is None:
            return None
        return 2.0 * prod(out) * prod(w[1:])
    if op == "ConvTranspose":
        x, w = shape(0), shape(1)
        if x is None or w is None:
            return None
        return 2.0 * prod(x) * prod(w[1:])
    if op == "Attention":
        q, k, past = shape(0), shape(1), shape(4)
        if q is None or k is None:
            return None
        if len(q) == 4:
            b, hq, sq = q[0], q[1], q[2]
        else:
            b, sq = q[0], q[1]
            hq = _attr(node, "q_num_heads", 1)
        if len(k) == 4:
            skv, dk = k[2], k[3]
        else:
            skv, dk = k[1], k[2] // max(1, _attr(node, "kv_num_heads", 1))
        total = skv + (past[-2] if past is not None and len(past) == 4 else 0)
        return 4.0 * b * hq * sq * total * dk
    return 0.0


# ----------------------------------------------------------------------------- counting


def node_records(original: onnx.ModelProto) -> dict[str, dict]:
    """Per original node: op type and FLOPs (None: unknown shape) if it is a contraction."""
    info = infer_types(original)
    records = {}
    for node in all_nodes(original):
        rec = {"op_type": node.op_type, "flops": 0.0}
        if node.domain in ("", "ai.onnx") and node.op_type in CONTRACTIONS:
            rec["flops"] = contraction_flops(node, info)
        records[node.name] = rec
    return records


def count_precision(model: onnx.ModelProto, records: dict[str, dict]) -> dict:
    """nodes f16 / total / mixed and the FLOP share of a converted model (see METHOD)."""
    types = value_types(model)
    f16 = total = mixed = 0
    flops = flops16 = 0.0
    unknown_flops = []
    for node in all_nodes(model):
        rec = records.get(node.name)
        if rec is None or node.op_type in NOT_PRECISION_NODES:
            continue
        ins = [types.get(x) for x in node.input if x]
        outs = [types.get(x) for x in node.output if x]
        if node.op_type == "Cast":
            if not (ins and outs and ins[0] in FLOAT_TYPES and outs[0] in FLOAT_TYPES):
                continue
        floats = [t for t in ins + outs if t in FLOAT_TYPES]
        if not floats:
            continue
        total += 1
        is16 = all(t == TensorProto.FLOAT16 for t in floats)
        f16 += is16
        mixed += (not is16) and TensorProto.FLOAT16 in floats
        if rec["flops"] is None:
            unknown_flops.append(node.name)
        elif rec["flops"]:
            flops += rec["flops"]
            flops16 += rec["flops"] if is16 else 0.0
    return {
        "nodes_f16": f16, "nodes_total": total, "nodes_mixed": mixed,
        "contraction_flops": flops,
        "contraction_flops_f16_share": flops16 / flops if flops else 0.0,
        "flops_unknown_nodes": unknown_flops,
    }


# ----------------------------------------------------------------------------- tools


def run_mp(mp_opt: Path, model_path: Path, workdir: Path) -> dict:
    plan_path = workdir / "plan.json"
    cmd = [str(mp_opt), str(model_path),
           f"--mp-mixed-precision=plan={plan_path} keep-io-types=1", "-o", os.devnull]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    res = {"seconds": time.perf_counter() - t0, "returncode": proc.returncode}
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"mp-opt exit {proc.returncode}: " + " / ".join(tail))
    plan = json.loads(plan_path.read_text())
    res["plan"] = plan
    res["plan_problems"] = validate_plan(plan)
    res.update(plan["summary"])
    res["warnings"] = [l for l in proc.stderr.splitlines() if l.strip()][:20]
    return res


SUMMARY_FIELDS = {"nodes_f16": int, "nodes_total": int, "casts": int,
                  "contraction_flops_f16_share": (int, float), "weight_bytes_fp32": int,
                  "weight_bytes_mixed": int, "findings": list}


def validate_plan(plan: dict) -> list[str]:
    """Structural checks of an mp plan file; returns the problems found."""
    problems = []
    if plan.get("version") != 1:
        problems.append(f"version {plan.get('version')!r} != 1")
    if plan.get("keep_io_types") is not True:
        problems.append("keep_io_types is not true")
    nodes, summary = plan.get("nodes"), plan.get("summary")
    if not isinstance(nodes, dict) or not isinstance(summary, dict):
        return problems + ["missing nodes or summary object"]
    for key, typ in SUMMARY_FIELDS.items():
        if not isinstance(summary.get(key), typ):
            problems.append(f"summary.{key} missing or not {typ}")
    if problems:
        return problems
    for name, e in nodes.items():
        if e.get("compute") not in ("f16", "f32"):
            problems.append(f"node {name!r}: compute {e.get('compute')!r}")
        if e.get("class") not in ("allow", "infer", "deny", "clear"):
            problems.append(f"node {name!r}: class {e.get('class')!r}")
        if not e.get("rule"):
            problems.append(f"node {name!r}: no rule")
        if not isinstance(e.get("casts_in"), int) or e["casts_in"] < 0:
            problems.append(f"node {name!r}: casts_in {e.get('casts_in')!r}")
        if e.get("accumulate") is not None and e["compute"] != "f16":
            problems.append(f"node {name!r}: accumulate set on an f32 node")
    if summary["nodes_total"] != len(nodes):
        problems.append(f"nodes_total {summary['nodes_total']} != {len(nodes)} node entries")
    n16 = sum(e.get("compute") == "f16" for e in nodes.values())
    if summary["nodes_f16"] != n16:
        problems.append(f"nodes_f16 {summary['nodes_f16']} != {n16} f16 node entries")
    if not 0.0 <= summary["contraction_flops_f16_share"] <= 1.0:
        problems.append("contraction_flops_f16_share outside [0, 1]")
    if summary["casts"] < 0 or summary["weight_bytes_mixed"] < 0:
        problems.append("negative casts or weight bytes")
    return problems


@contextlib.contextmanager
def quiet():
    """Silences the converters' prints, warnings and logging."""
    level = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(level)


def convert(tool: str, model: onnx.ModelProto) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    with quiet():
        if tool == "occ":
            from onnxconverter_common import float16
            return float16.convert_float_to_float16(model, keep_io_types=True)
        if tool == "ort":
            from onnxruntime.transformers import float16
            return float16.convert_float_to_float16(model, keep_io_types=True)
    raise ValueError(tool)


ORT_NP = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64}


def output_metrics(outs: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> dict:
    """Accuracy of one run's outputs against the stored references (mp and the peers alike).

    Over the float outputs: NaN/inf count, max abs err against the reference output of the
    same name and shape, max abs value of those references; float outputs without such a
    reference are listed in ``uncompared`` (a wrong shape would otherwise go unnoticed).
    """
    nonfinite = 0
    err = max_ref = 0.0
    per_output = {}
    uncompared = []
    for name, got in outs.items():
        if got.dtype.kind != "f":
            continue
        bad = int(np.size(got) - np.isfinite(got).sum())
        nonfinite += bad
        ref = expected.get(name)
        e = ref_max = None
        if ref is not None and ref.shape == got.shape:
            diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
            finite = np.isfinite(diff)
            e = float(diff[finite].max()) if finite.any() else float("nan")
            err = max(err, e)
        else:
            uncompared.append(name)
        if ref is not None and ref.size:
            ref_max = float(np.nanmax(np.abs(ref.astype(np.float64))))
            max_ref = max(max_ref, ref_max)
        per_output[name] = {"nonfinite": bad, "max_abs_err": e, "max_abs_ref": ref_max,
                            "dtype": str(got.dtype), "shape": list(got.shape)}
    return {"nonfinite": nonfinite, "max_abs_err": err, "max_abs_ref": max_ref,
            "uncompared": uncompared, "outputs": per_output}


def run_ort(model: onnx.ModelProto, data_dir: Path) -> dict:
    import onnxruntime as ort

    inputs, expected = load_test_data(data_dir)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    feeds = {}
    for i in sess.get_inputs():
        arr = inputs[i.name]
        want = ORT_NP.get(i.type)
        feeds[i.name] = arr.astype(want) if want is not None and arr.dtype != want else arr
    names = [o.name for o in sess.get_outputs()]
    outs = dict(zip(names, sess.run(names, feeds)))
    return {"ok": True, "engine": "onnxruntime", **output_metrics(outs, expected)}


# mp runs in a child process (this script with --mp-exec), so that a crash of mp's JIT
# (an LLVM fatal error, a segfault) is one failed cell too, not the end of the report.
MP_EXEC_TIMEOUT = 600
_mp_library_retried = False


def mp_exec_child(model_path: Path, data_dir: Path, out_dir: Path) -> int:
    """--mp-exec: mp.compile(model, precision="mixed").run(test_data_set_0 inputs).

    Writes ``result.json`` (output names, seconds, or the error) and ``outputs.npz``
    (the outputs in graph order as arr_0, arr_1, ...) into ``out_dir``.
    """
    def describe(e: BaseException) -> str:
        kind = type(e).__name__
        if type(e).__module__ == "mp":
            kind = "mp." + kind  # mp.Error
        return shorten(f"{kind}: {e}", 1000)

    res: dict = {}
    try:
        import mp
        try:
            res["library"] = str(mp.library_path())
            res["version"] = mp.version()  # loads libMPCAPI.so
        except (OSError, mp.Error) as e:
            res.update(error=describe(e), library_failed=True)
            raise
        inputs, _ = load_test_data(data_dir)
        t0 = time.perf_counter()
        model = mp.compile(model_path, precision="mixed")
        res["compile_seconds"] = time.perf_counter() - t0
        feeds = {}
        for i in model.inputs:
            if i.name not in inputs:
                continue  # mp names the missing input
            arr = inputs[i.name]
            want = i.dtype if i.dtype is not None and i.dtype.kind == "f" else None
            feeds[i.name] = arr.astype(want) if want is not None and arr.dtype != want else arr
        t0 = time.perf_counter()
        outs = model.run(feeds)  # the first run JIT-compiles for these shapes
        res["run_seconds"] = time.perf_counter() - t0
        np.savez(out_dir / "outputs.npz", *outs.values())
        res["outputs"] = list(outs)
    except Exception as e:  # noqa: BLE001 - reported to the parent
        res.setdefault("error", describe(e))
    (out_dir / "result.json").write_text(json.dumps(res))
    return 0


def run_mp_exec(model_path: Path, data_dir: Path, workdir: Path) -> dict:
    """mp's mixed build of the original model, run by mp's CPU JIT on test_data_set_0."""
    global _mp_library_retried
    workdir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "mp.tools.precision_bench", "--mp-exec", str(model_path), str(data_dir),
           str(workdir)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(PYTHON_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]))
    while True:
        (workdir / "result.json").unlink(missing_ok=True)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=MP_EXEC_TIMEOUT,
                              env=env)
        tail = " / ".join(l for l in (proc.stderr or "").strip().splitlines()[-2:])
        if proc.returncode < 0:
            sig = -proc.returncode
            try:
                import signal
                sig = signal.Signals(sig).name
            except ValueError:
                pass
            return {"ok": False, "engine": "mp",
                    "error": f"mp crashed ({sig})" + (f": {tail}" if tail else "")}
        if not (workdir / "result.json").exists():
            return {"ok": False, "engine": "mp",
                    "error": f"mp exit {proc.returncode}" + (f": {tail}" if tail else "")}
        res = json.loads((workdir / "result.json").read_text())
        # libMPCAPI.so may be being relinked: wait and retry, once per report.
        if res.get("library_failed") and not _mp_library_retried:
            _mp_library_retried = True
            time.sleep(30)
            continue
        break
    if res.get("error"):
        return {"ok": False, "engine": "mp",
                "error": res["error"].replace(str(model_path), model_path.name)}
    with np.load(workdir / "outputs.npz") as z:
        outs = {name: z[f"arr_{i}"] for i, name in enumerate(res["outputs"])}
    _, expected = load_test_data(data_dir)
    return {"ok": True, "engine": "mp", **output_metrics(outs, expected),
            "compile_seconds": res.get("compile_seconds"), "run_seconds": res.get("run_seconds")}


def shorten(msg: str, limit: int = 220) -> str:
    """One line, no table bars, at most ``limit`` characters."""
    msg = " ".join(str(msg).replace("|", "/").split())
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


def short_error(e: BaseException, limit: int = 220) -> str:
    return shorten(f"{type(e).__name__}: {e}", limit)


# ----------------------------------------------------------------------------- driver


def discover(models_dir: Path | None, gen_dir: Path | None, python: str) -> list[dict]:
    models = []
    if models_dir and models_dir.is_dir():
        for p in sorted(models_dir.glob("*/model.onnx")):
            models.append({"name": p.parent.name, "source": "shared", "path": p,
                           "data": p.parent / "test_data_set_0"})
    if gen_dir is not None:
        env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
        proc = subprocess.run([python, "-m", "mp.models", "all", "-o", str(gen_dir)],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            models.append({"name": "(mp.models all)", "source": "generated", "path": None,
                           "data": None, "error": proc.stderr.strip()[-300:]})
        for p in sorted(gen_dir.glob("*/model.onnx")):
            models.append({"name": p.parent.name, "source": "generated", "path": p,
                           "data": p.parent / "test_data_set_0"})
    return models


def measure(entry: dict, mp_opt: Path, workdir: Path) -> dict:
    res = {"name": entry["name"], "source": entry["source"], "tools": {t: {} for t in TOOLS}}
    if entry.get("error") or entry["path"] is None:
        res["error"] = entry.get("error", "no model")
        return res
    t0 = time.perf_counter()
    path = entry["path"]
    # mp
    mp = res["tools"]["mp"]
    if not mp_opt.exists():
        mp["error"] = f"{mp_opt} not built"
    else:
        try:
            mdir = workdir / "mp"
            mdir.mkdir(parents=True, exist_ok=True)
            mp.update(run_mp(mp_opt, path, mdir))
        except Exception as e:  # noqa: BLE001
            mp["error"] = short_error(e)
    # mp's mixed build run by mp itself (independent of the mp-opt plan step above)
    if entry["data"] is not None and entry["data"].is_dir():
        try:
            mp["run"] = run_mp_exec(path, entry["data"], workdir / "mp-exec")
        except Exception as e:  # noqa: BLE001
            mp["run"] = {"ok": False, "engine": "mp", "error": short_error(e, limit=1000)}
    else:
        mp["run"] = {"ok": False, "engine": "mp", "skipped": "not run: no test_data_set_0"}

    try:
        original = onnx.load(path)  # external data is loaded from beside the model
        name_nodes(original)
        records = node_records(original)
        base = count_precision(original, records)
        res["base"] = {
            "nodes": len(records), "float_nodes": base["nodes_total"],
            "nodes_f16": base["nodes_f16"], "casts": count_casts(original),
            "weight_bytes": weight_bytes(original),
            "contraction_flops": base["contraction_flops"],
            "flops_unknown_nodes": base["flops_unknown_nodes"],
        }
    except Exception as e:  # noqa: BLE001
        res["error"] = "onnx cannot load or analyse the model: " + short_error(e)
        for tool in PEERS:
            res["tools"][tool]["error"] = "not attempted"
        return res

    # peers
    for tool in PEERS:
        r = res["tools"][tool]
        try:
            t1 = time.perf_counter()
            converted = convert(tool, original)
            r["convert_seconds"] = time.perf_counter() - t1
        except Exception as e:  # noqa: BLE001
            r["error"] = short_error(e)
            r["convert_failed"] = True
            continue
        try:
            r.update(count_precision(converted, records))
            r["casts"] = count_casts(converted) - res["base"]["casts"]
            r["weight_bytes_fp32"] = res["base"]["weight_bytes"]
            r["weight_bytes_mixed"] = weight_bytes(converted)
        except Exception as e:  # noqa: BLE001
            r["count_error"] = short_error(e)
        if entry["data"] is not None and entry["data"].is_dir():
            try:
                r["run"] = run_ort(converted, entry["data"])
            except Exception as e:  # noqa: BLE001
                r["run"] = {"ok": False, "error": short_error(e)}
        else:
            r["run"] = {"ok": False, "skipped": "not run: no test_data_set_0"}
    res["seconds"] = time.perf_counter() - t0
    return res


# ----------------------------------------------------------------------------- markdown


def _fmt_bytes(n) -> str:
    return f"{n / 1e6:.3f} MB" if n >= 1e5 else f"{n:,} B".replace(",", " ")


def _err(r: dict) -> str | None:
    return r.get("error")


def _failed(r) -> str:
    return "conversion fails (see *Peer failures*)" if r.get("convert_failed") else f"error: {r['error']}"


def cell_nodes(r):
    if _err(r):
        return _failed(r)
    mixed = r.get("nodes_mixed")
    return f"{r['nodes_f16']} / {r['nodes_total']}" + (f" ({mixed} mixed)" if mixed else "")


def cell_casts(r):
    return _failed(r) if _err(r) else str(r.get("casts", "?"))


def cell_share(r):
    if _err(r):
        return _failed(r)
    unknown = len(r.get("flops_unknown_nodes") or [])
    return (f"{100 * r['contraction_flops_f16_share']:.2f}%"
            + (f" ({unknown} contraction nodes of unknown shape)" if unknown else ""))


def cell_weights(r):
    if _err(r) or "weight_bytes_mixed" not in r:
        return _failed(r) if _err(r) else "?"
    before, after = r["weight_bytes_fp32"], r["weight_bytes_mixed"]
    pct = f" ({100 * after / before:.0f}%)" if before else ""
    return f"{_fmt_bytes(before)} → {_fmt_bytes(after)}{pct}"


def _run_metrics(run: dict) -> str:
    nf = run["nonfinite"]
    s = (f"runs; non-finite {nf}" + (" **(NaN/inf)**" if nf else "")
         + f"; max abs err {run['max_abs_err']:.3g} (max abs ref {run['max_abs_ref']:.3g})")
    if run.get("uncompared"):
        s += f"; **not compared** (no reference of that shape): {', '.join(run['uncompared'])}"
    return s


def cell_run(r):
    run = r.get("run") or {}
    if run.get("engine") == "mp":  # independent of the plan step: mp runs its own build
        if run.get("skipped"):
            return run["skipped"]
        if not run.get("ok"):
            return "**fails**: " + shorten(run.get("error", "?"), 150)
        return _run_metrics(run)
    if _err(r):
        return "not converted"
    if run.get("skipped"):
        return run["skipped"]
    if not run.get("ok"):
        return "**fails** in onnxruntime (see *Peer failures*)"
    return _run_metrics(run)


def comparison(results: list[dict]) -> list[str]:
    """Data-driven sentences for the comparison section."""
    lines = []
    for tool, label in PEERS.items():
        ok = [r for r in results if "base" in r and not _err(r["tools"]["mp"])
              and not _err(r["tools"][tool]) and "casts" in r["tools"][tool]]
        failed = [r["name"] for r in results if "base" in r and _err(r["tools"][tool])]
        runfail = [r["name"] for r in ok if r["tools"][tool].get("run", {}).get("error")]
        nonfinite = [r["name"] for r in ok if r["tools"][tool].get("run", {}).get("nonfinite")]
        share_ge = [r["name"] for r in ok if r["tools"]["mp"]["contraction_flops_f16_share"]
                    >= r["tools"][tool]["contraction_flops_f16_share"] - 1e-9]
        share_lt = [r["name"] for r in ok if r["name"] not in share_ge]
        fewer = [r["name"] for r in ok if r["tools"]["mp"]["casts"] < r["tools"][tool]["casts"]]
        equal = [r["name"] for r in ok if r["tools"]["mp"]["casts"] == r["tools"][tool]["casts"]]
        more = [r["name"] for r in ok if r["tools"]["mp"]["casts"] > r["tools"][tool]["casts"]]
        mp_c = sum(r["tools"]["mp"]["casts"] for r in ok)
        peer_c = sum(r["tools"][tool]["casts"] for r in ok)
        mp_n = sum(r["tools"]["mp"]["nodes_f16"] for r in ok)
        peer_n = sum(r["tools"][tool]["nodes_f16"] for r in ok)
        s = (f"- **vs {label}** ({len(ok)} models converted"
             + (f"; conversion failed on {', '.join(failed)}" if failed else "") + "): "
             f"fp16 FLOP share of mp ≥ peer on {len(share_ge)}/{len(ok)}"
             + (f" (**lower on {', '.join(share_lt)}**)" if share_lt else "")
             + f"; casts: mp fewer on {len(fewer)}, equal on {len(equal)}, more on {len(more)}"
             + (f" ({', '.join(more)})" if more else "")
             + f" — {mp_c} vs {peer_c} in total; nodes in f16: {mp_n} (mp) vs {peer_n}"
             f" (peer) in total.")
        if runfail:
            s += f" The peer's model does not run in onnxruntime on: {', '.join(runfail)}."
        if nonfinite:
            s += f" The peer's outputs contain NaN/inf on: {', '.join(nonfinite)}."
        else:
            s += " No NaN/inf in the peer's outputs where it runs."
        both = [r for r in results if "base" in r and _ran(r["tools"]["mp"])
                and not _err(r["tools"][tool]) and _ran(r["tools"][tool])]
        if both:
            higher = [r for r in both if r["tools"]["mp"]["run"]["max_abs_err"]
                      > r["tools"][tool]["run"]["max_abs_err"]]
            s += (f" Max abs err: mp ≤ peer on {len(both) - len(higher)}/{len(both)} models "
                  "that both run" + (" (mp higher on " + ", ".join(
                      f"{r['name']}: {r['tools']['mp']['run']['max_abs_err']:.3g} vs "
                      f"{r['tools'][tool]['run']['max_abs_err']:.3g}" for r in higher) + ")"
                      if higher else "") + ".")
        lines.append(s)
    runnable = [r for r in results if "base" in r and not (r["tools"]["mp"].get("run") or {})
                .get("skipped")]
    ran = [r for r in runnable if _ran(r["tools"]["mp"])]
    failed = [r["name"] for r in runnable if not _ran(r["tools"]["mp"])]
    nonfinite = [r["name"] for r in ran if r["tools"]["mp"]["run"]["nonfinite"]]
    s = (f"- **mp's mixed build on mp's CPU JIT** runs {len(ran)}/{len(runnable)} models with "
         "test data" + (f" (**fails on {', '.join(failed)}**, see *mp findings*)" if failed else "")
         + ("" if not ran else "; " + (f"**NaN/inf in its outputs on {', '.join(nonfinite)}**"
                                       if nonfinite else "no NaN/inf in its outputs")) + ".")
    lines.insert(0, s)
    return lines


def _ran(t: dict) -> bool:
    return bool((t.get("run") or {}).get("ok"))


def peer_failures(results: list[dict]) -> list[str]:
    lines = []
    for r in results:
        for tool, label in PEERS.items():
            t = r.get("tools", {}).get(tool, {})
            if _err(t):
                lines.append(f"- `{r['name']}` / {label}: conversion fails: {t['error']}")
                continue
            run = t.get("run", {})
            if run and not run.get("ok") and not run.get("skipped"):
                lines.append(f"- `{r['name']}` / {label}: the converted model does not run in "
                             f"onnxruntime: {run.get('error')}")
            elif run.get("nonfinite"):
                lines.append(f"- `{r['name']}` / {label}: {run['nonfinite']} NaN/inf values in "
                             "the outputs")
    if not lines:
        lines.append("- None.")
    for r in results:
        if r["name"] != "layernorm_overflow":
            continue
        for tool, label in {"mp": "mp (mixed, mp's CPU JIT)", **PEERS}.items():
            run = r.get("tools", {}).get(tool, {}).get("run", {})
            if run.get("ok"):
                lines.append(f"- `layernorm_overflow` / {label}: {run['nonfinite']} NaN/inf in "
                             f"the outputs, max abs err {run['max_abs_err']:.3g} (outputs up to "
                             f"{run['max_abs_ref']:.3g}): "
                             + ("**overflows**" if run["nonfinite"] else
                                "no overflow" + (" on onnxruntime's CPU provider"
                                                 if tool in PEERS else "")))
    return lines


def render(results: list[dict], meta: dict) -> str:
    out = []
    w = out.append
    w("# Mixed precision: mp's plan vs onnxconverter-common and onnxruntime's float16 converter\n")
    w("Generated by `bench/precision.py`; do not edit by hand. Reproduce from the repository root:\n")
    w("```sh")
    w(meta["command"])
    w("```\n")
    for line in report.header(
            None, f"mp-opt: `{meta['mp_opt']}` ({meta['mp_opt_mtime']}); libMPCAPI: "
            f"`{meta['mp_lib']}` ({meta['mp_lib_mtime']})", f"Peers: {meta['versions']}",
            f"Total run time: {meta['seconds']:.1f} s"):
        w(line)
    w("")
    w("Tools: **mp** = `mp-opt MODEL --mp-mixed-precision=\"plan=PLAN.json keep-io-types=1\"`; "
      "**occ** = onnxconverter-common `float16.convert_float_to_float16(model, keep_io_types=True)`; "
      "**ort** = onnxruntime `transformers.float16.convert_float_to_float16(model, "
      "keep_io_types=True)`. For accuracy, mp's mixed build runs on mp's own CPU JIT "
      "(`mp.compile(MODEL, precision=\"mixed\").run(inputs)`, default policy, graph input and "
      "output types kept), each peer's fp16 model in onnxruntime (CPU). Shared models come from `../shared/models`, generated ones from "
      "`PYTHONPATH=python python -m mp.models all -o TMPDIR` (written with their "
      "`test_data_set_0/`).\n")

    w("## Models\n")
    w("| model | source | nodes (incl. subgraphs) | float nodes | Casts in the model | "
      "contraction MFLOPs (dims=1) | float weight bytes | notes |")
    w("|---|---|---|---|---|---|---|---|")
    for r in results:
        b = r.get("base")
        if not b:
            w(f"| {r['name']} | {r['source']} | error: {r.get('error')} | | | | | |")
            continue
        note = ""
        if b["flops_unknown_nodes"]:
            note = "contraction nodes of unknown shape: " + ", ".join(b["flops_unknown_nodes"])
        w(f"| `{r['name']}` | {r['source']} | {b['nodes']} | {b['float_nodes']} "
          f"({b['nodes_f16']} already f16) | {b['casts']} | {b['contraction_flops'] / 1e6:.3f} | "
          f"{_fmt_bytes(b['weight_bytes'])} | {note} |")
    w("")

    tables = [
        ("Nodes computing in fp16 / float nodes", cell_nodes,
         "mp: `nodes_f16 / nodes_total` of the plan; peers: see *Method*. "
         "The totals are counted independently (mp on its IR, the peers on the ONNX graph)."),
        ("Casts added", cell_casts,
         "mp: runtime casts in the plan (weights converted at compile time are not casts); "
         "peers: Cast nodes after − before."),
        ("fp16 share of contraction FLOPs (MatMul/Gemm/Conv/ConvTranspose/Attention)", cell_share, ""),
        ("Weight bytes fp32 → mixed", cell_weights, ""),
        (ACCURACY_TITLE, cell_run, ACCURACY_NOTE),
    ]
    for title, cell, note in tables:
        w(f"## {title}\n")
        if note:
            w(note + "\n")
        w("| model | mp | onnxconverter-common | onnxruntime transformers |")
        w("|---|---|---|---|")
        for r in results:
            cells = []
            for t in TOOLS:
                d = r.get("tools", {}).get(t) or {}
                try:
                    cells.append(cell(d) if d else "—")
                except Exception:  # noqa: BLE001 - an incomplete result still gets a row
                    cells.append("?")
            label = f"`{r['name']}`" if "base" in r else f"`{r['name']}` ({r.get('error')})"
            w(f"| {label} | " + " | ".join(cells) + " |")
        w("")

    w("## mp findings and warnings\n")
    any_f = False
    for r in results:
        mp = r.get("tools", {}).get("mp", {})
        for f in mp.get("findings", []) or []:
            any_f = True
            w(f"- `{r['name']}`: [{f.get('kind')}] {f.get('message')}")
        for p in mp.get("plan_problems", []) or []:
            any_f = True
            w(f"- `{r['name']}`: **invalid plan**: {p}")
        for l in mp.get("warnings", []) or []:
            any_f = True
            w(f"- `{r['name']}` (mp-opt stderr): {l}")
        run = mp.get("run") or {}
        if run and not run.get("ok") and not run.get("skipped"):
            any_f = True
            w(f"- `{r['name']}`: **mp's mixed build does not run**: {run.get('error')}")
    if not any_f:
        w("None: no model produced a finding (constant out of fp16 range, mask sentinel, ...), "
          "a plan problem, an mp-opt warning or a failed mp run.")
    w("")

    w("## Peer failures and overflow\n")
    for line in peer_failures(results):
        w(line)
    w("")
    w("## mp's fp32 nodes\n")
    w("Nodes mp's plan keeps in fp32, grouped by the rule that decided them (the rule text "
      "with node names replaced by `…`).\n")
    w("| model | f32 / total | rules |")
    w("|---|---|---|")
    for r in results:
        mp = r.get("tools", {}).get("mp", {})
        if "plan" not in mp:
            continue
        f32 = {n: e for n, e in mp["plan"]["nodes"].items() if e.get("compute") != "f16"}
        groups: dict[str, list[str]] = {}
        for n, e in f32.items():
            rule = re.sub(r"'[^']*'", "…", e.get("rule", "?"))
            groups.setdefault(f"{e.get('op_type')}: {rule}", []).append(n)
        desc = "; ".join(f"{k} ×{len(v)}" for k, v in sorted(groups.items())) or "—"
        w(f"| `{r['name']}` | {len(f32)} / {len(mp['plan']['nodes'])} | {desc} |")
    w("")

    w("## Comparison\n")
    for line in comparison(results):
        w(line)
    w("")
    w(meta["discussion"])
    w("")
    w("## Method\n")
    w(METHOD)
    return "\n".join(out) + "\n"


DISCUSSION = """\
Why the numbers differ (the lists above and the *mp fp32 nodes* table are generated from
this run; the reasons below are mp's documented design, docs/precision.md):

- **FLOP share.** All three tools put (almost) every counted contraction (MatMul/Gemm/
  Conv/ConvTranspose/ONNX Attention) in fp16 wherever they convert the model at all, so
  the goal "at least the peers' fp16 FLOP share" holds, but by a zero or tiny margin
  (onnxconverter-common's 99.95% on tts_decoder comes from the two attention-times-V
  MatMuls that read a graph output it left in fp32, the same bug that makes onnxruntime
  reject that model). mp's plan also counts the contractions inside com.microsoft
  Attention/MultiHeadAttention/GroupQueryAttention (gpt2's fused QKV projections and
  attention, llama's attention); the peer columns and the *Models* table, computed by
  this script, do not. All three tools run those ops in fp16, so the gpt2 and llama
  shares are 100% either way. With dynamic dims counted as 1, attention over a KV cache weighs as
  if the cache were one token long.
- **Nodes in f16.** The peers convert (almost) every float node, Pow, Sqrt, ReduceMean
  and Div of a spelled-out LayerNorm included. mp deliberately keeps Pow/Exp and whatever
  a deny op propagates to in fp32 (openwakeword's spelled-out LayerNorms, silero's STFT
  magnitude sqrt(re² + im²)), computes LayerNorm/RMSNorm/Softmax statistics in fp32
  inside f16 ops, and, with `keep-io-types`, counts a graph input as fp32, so an infer-
  class op that reads one stays in fp32 (layernorm_overflow's residual Add with the fp32
  graph input, and the Relu after it). So mp has **fewer** nodes in f16 on those models,
  by design. Ops fed only by constants (gpt2's EmbedLayerNormalization, the mask path of
  the llama model) are neutral: they take the type their users compute in, so mp matches
  onnxruntime's converter node for node on gpt2 and llama.
- **Casts.** mp inserts one cast per (value, type), shared by all users; onnxconverter-
  common inserts one Cast per consumer of a graph input (e.g. tts_decoder's
  `encoder_out`, cast four times), which is where mp saves casts. mp pays extra casts at
  the boundaries of the fp32 islands it keeps (in and out of each Pow/Sqrt chain of
  openwakeword and silero), so on those two models it has **more** casts than the peers,
  who simply run those ops in fp16; on the other models it has as many casts as
  onnxruntime's converter (constant-fed ops adapting to their users means no casts
  around gpt2's EmbedLayerNormalization and none into the fp16 llama model's mask path).
- **Mask sentinels.** The two findings on `genai_llama_fp16_mha_extdata` are mp's mask
  rule at work: the fp16 model's -65504 attention-mask fill is stored as -10000, so that
  adding scores (or several masks) to it cannot overflow to -inf; the softmax output is
  unchanged. The peers leave the value as it is (onnxruntime's converter keeps fp16
  models unchanged, onnxconverter-common refuses them).
- **Accuracy.** The accuracy table compares what each tool's mixed/fp16 model computes,
  mp's on mp's own CPU JIT and the peers' in onnxruntime (CPU), on the same inputs and
  references; a model that does not run, or whose outputs contain NaN/inf, is a failure
  of that tool on that model. The two sides do not do the same arithmetic: mp computes
  every op its plan puts in f16 in fp16 (each result rounded to fp16, statistics and
  accumulations as the plan says), while onnxruntime's CPU provider, lacking fp16
  kernels for many ops, inserts casts to fp32 around them at session setup and drops
  the fp32→fp16→fp32 cast pairs this creates, even with graph optimizations disabled.
  On `layernorm_overflow` the session onnxruntime builds from either peer's model is
  all fp32 (MatMul, LayerNormalization, Add, Relu; only the weights were rounded to
  fp16), and gpt2's fp32 `past_*` inputs reach its fp32 Attention kernel unrounded. So
  the peers' errors here are close to fp32-with-fp16-weights, a lower bound rather than
  what an fp16 backend would give, and the reason why `layernorm_overflow` does not
  overflow for them on this provider; a backend that computes an fp16 LayerNorm in fp16
  would overflow (a naive fp16 variance of values near 3e4 is inf). mp's errors, larger
  than onnxruntime's converter's on most models by a small factor, are fp16 rounding of
  values of the reference's magnitude (half an fp16 ulp is 0.001 between 2 and 4; gpt2's
  `present_*` copy the `past_*` inputs, which mp rounds to fp16 for its fp16
  attention); on `layernorm_overflow` mp really computes the MatMul and LayerNorm in
  fp16, keeps the statistics in fp32 (`accumulate: f32` in the plan) and has no NaN/inf.
  For the two fp16 models the reference is onnxruntime's output of the unchanged model,
  which onnxruntime's converter leaves as it is and so reproduces exactly (error 0);
  mp's outputs there include the mask-sentinel rewrite above and stay finite.
- onnxconverter-common refuses models that already contain float16 (`check_fp16_ready`),
  so on the fp16 models it shows as an error; onnxruntime's converter leaves them as they
  are.
"""


def versions() -> str:
    import importlib.metadata as md
    parts = []
    for pkg in ("onnx", "onnxruntime", "onnxconverter-common", "numpy"):
        try:
            parts.append(f"{pkg} {md.version(pkg)}")
        except md.PackageNotFoundError:
            parts.append(f"{pkg} (not installed)")
    return ", ".join(parts)


def mp_library() -> Path:
    """libMPCAPI.so as the mp package finds it ($MP_LIBRARY, $MP_BUILD_DIR/lib, build/lib)."""
    import mp
    return mp.library_path()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mp-opt", type=Path, default=build_tool("mp-opt"))
    ap.add_argument("--models-dir", type=Path, default=REPO.parent / "shared" / "models")
    ap.add_argument("--no-generated", action="store_true",
                    help="skip the models of python -m mp.models")
    ap.add_argument("--only", nargs="*", help="model names to keep")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "precision.md")
    ap.add_argument("--json", type=Path, help="also write the raw results (plans included)")
    ap.add_argument("--mp-exec", nargs=3, type=Path, metavar=("MODEL", "DATA_DIR", "OUT_DIR"),
                    help=argparse.SUPPRESS)  # internal: the child process of run_mp_exec
    args = ap.parse_args(argv)
    if args.mp_exec:
        return mp_exec_child(*args.mp_exec)

    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="mp-precision-"))
    try:
        models = discover(args.models_dir, None if args.no_generated else tmp / "generated",
                          sys.executable)
        if args.only:
            models = [m for m in models if m["name"] in args.only]
        results = []
        for i, m in enumerate(models):
            try:
                r = measure(m, args.mp_opt, tmp / "work" / str(i))
            except Exception as e:  # noqa: BLE001 - last resort, keep going
                r = {"name": m["name"], "source": m["source"], "error": short_error(e),
                     "trace": traceback.format_exc()}
            results.append(r)
            print(f"{m['name']}: {r.get('seconds', 0):.1f} s"
                  + (f" error: {r['error']}" if r.get("error") else ""), file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    mp_opt = args.mp_opt
    mp_opt_disp = report.rel(mp_opt)
    cmd = ".venv/bin/python bench/precision.py"
    if args.no_generated:
        cmd += " --no-generated"
    meta = {
        "command": cmd,
        "date": report.now(),
        "machine": report.machine(),
        "commit": report.commit(),
        "mp_opt": mp_opt_disp,
        "mp_opt_mtime": report.built(mp_opt),
        "mp_lib": report.rel(mp_library()),
        "mp_lib_mtime": report.built(mp_library()),
        "versions": versions(),
        "seconds": time.perf_counter() - t0,
        "discussion": DISCUSSION,
    }
    report.publish(args.out, render(results, meta), args.json,
                   {"meta": meta, "results": results}, meta["seconds"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
