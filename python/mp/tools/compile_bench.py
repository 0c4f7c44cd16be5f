"""bench/compile.md: how long mp takes from an ONNX file to a first result (issue 27, "Compile
in seconds").

    .venv/bin/python bench/compile.py [--sizes 10000 20000 100000] [--repeat 3]
                                      [--models NAME ...] [--no-step] [--step-layers 12]
                                      [--jit-repeat 1] [--no-occ] [--occ-timeout 600]
                                      [--unshared-weights] [--shared ../shared]
                                      [--out bench/compile.md] [--json FILE]
    .venv/bin/python bench/compile.py --render FILE.json   # the page again from a --json

(bench/compile.py is a driver of :func:`main`; ``python -m mp.tools.compile_bench`` is the
same.)

Two parts, every number from this run:

1. **Front end** (import + attention fusion + precision assignment + cast insertion):
   ``mp-opt MODEL --mp-fuse-attention --mp-mixed-precision --no-output`` on the generated
   TTS decoder step (python/mp/models/tts_decoder.py) with as many layers as bring its
   graph nearest to each of --sizes ONNX nodes (72 nodes a layer), weights shared across
   layers by default (``share_layer_weights=True``: the graph grows, the weight bytes
   barely do; --unshared-weights for distinct ones). Every size --repeat times, round by
   round; each run's wall time and max RSS come from wait4's rusage of mp-opt, spawned by
   a small helper process (mp.tools.measure). Beside it, on the same files in the same run:
   onnxconverter-common's ``float16.convert_float_to_float16(model, keep_io_types=True)`` in
   a child Python (process wall and max RSS the same way, plus the load + convert time
   the child measures itself), once per size with a timeout (--occ-timeout; the sizes
   after one that timed out are skipped).
2. **JIT** (compile + first run): for every ``SHARED/corpus/decoders/*/model.onnx`` with a
   ``test_data_set_0`` and the 12-layer decoder step of bench/cpu.md (tts_decoder,
   unshared weights, batch 1, encoder length 64, KV cache 128; its test_data_set_0 is
   written here, references from onnxruntime), fp32 and ``--precision mixed``:
   ``mp-run MODEL --compare test_data_set_0 --repeat 1 --output-dir OUT [--progress]`` with
   ``MP_CACHE_DIR`` a fresh empty folder (cold: compiles and stores), then the same
   command again (cached: loads). Each run: process wall time, max RSS, the
   ``time: compile X ms (compiled|cached)`` figure mp-run prints, its stage times
   (``mp-run: progress: STAGE: MS ms`` lines, when mp-run has --progress) and whether the
   outputs of the two runs are the same bytes.

mp-opt and mp-run are copied (with the build's shared libraries) when the run starts, so a
rebuild during the series cannot swap them. The constants under "The issue's targets" are
its goals; the page says of each whether this run met it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import REPO, build_tool, measure, report

MB = 1_000_000
DEFAULT_SIZES = (10_000, 20_000, 100_000)
SHARED_DECODERS = "corpus/decoders"
FRONT_END_ARGS = ("--mp-fuse-attention", "--mp-mixed-precision", "--no-output")
PRECISIONS = ("fp32", "mixed")
# bench/cpu.md's decoder step.
STEP_LAYERS, STEP_ENC_LEN, STEP_PAST_LEN, STEP_SEED = 12, 64, 128, 0
JIT_TIMEOUT_S = 600.0
OCC_TIMEOUT_S = 600.0

# The targets.
FRONT_END_NODES = 100_000   # the graph size the front-end targets are for
FRONT_END_S = 2.0
FRONT_END_MB = 300.0
LINEAR_SLACK = 1.25         # time per node at any size <= this x the smallest size's
CORPUS_FIRST_S = 3.0
STEP_FIRST_S = 8.0
CACHED_S = 0.5

COMPILE_LINE = re.compile(r"^time: compile ([0-9.]+) ms \((compiled|cached)\)", re.M)
PROGRESS_LINE = re.compile(r"^mp-run: progress: (.+): (-?[0-9.]+(?:[eE][-+]?[0-9]+)?) ms\s*$",
                           re.M)
RESULT_LINE = re.compile(r"\s(PASS|FAIL)\s*$")

# onnxconverter-common in a child Python: argv[1] the model. Prints one JSON line last.
OCC_CHILD = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
import onnx
import onnxconverter_common
from onnxconverter_common import float16
t1 = time.perf_counter()
import_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
model = onnx.load(sys.argv[1])
t2 = time.perf_counter()
out = float16.convert_float_to_float16(model, keep_io_types=True)
t3 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "load": t2 - t1, "convert": t3 - t2,
                  "import_rss": import_rss, "nodes_out": len(out.graph.node),
                  "version": onnxconverter_common.__version__}))
"""


# ----------------------------------------------------------------------------- parsing


def parse_compile(output: str) -> tuple[float, str] | None:
    """mp-run's ``time: compile X ms (compiled|cached)``: (ms, kind), or None."""
    m = COMPILE_LINE.search(output)
    return (float(m.group(1)), m.group(2)) if m else None


def parse_progress(output: str) -> dict[str, float]:
    """The ``mp-run: progress: STAGE: MS ms`` lines: {stage: ms}, in the order the stages
    first appear; a stage reported more than once is summed."""
    stages: dict[str, float] = {}
    for m in PROGRESS_LINE.finditer(output):
        stages[m.group(1).strip()] = stages.get(m.group(1).strip(), 0.0) + float(m.group(2))
    return stages


def compare_result(rc: int, output: str) -> str:
    """PASS, FAIL (k of n outputs) or an error, from mp-run --compare's exit and table."""
    results = [m.group(1) for line in output.splitlines() if (m := RESULT_LINE.search(line))]
    fails = results.count("FAIL")
    if rc == 0 and not fails:
        return "PASS"
    if rc in (0, 1) and fails:
        return f"FAIL ({fails} of {len(results)} outputs)"
    return f"error (exit {rc}): {first_error(output)}"


def first_error(output: str) -> str:
    for line in output.splitlines():
        if "error" in line.lower():
            return line.strip()[:200]
    lines = [l for l in output.splitlines() if l.strip()]
    return lines[-1].strip()[:200] if lines else "no output"


def supports_progress(help_text: str) -> bool:
    return re.search(r"^\s*--progress\b", help_text, re.M) is not None


def same_outputs(a: Path, b: Path) -> tuple[bool, str]:
    """Whether folders ``a`` and ``b`` hold the same files with the same bytes: (same, why
    not)."""
    fa = sorted(p.name for p in a.glob("*.npy")) if a.is_dir() else []
    fb = sorted(p.name for p in b.glob("*.npy")) if b.is_dir() else []
    if not fa:
        return False, "no outputs"
    if fa != fb:
        return False, "different output files"
    diff = [n for n in fa if (a / n).read_bytes() != (b / n).read_bytes()]
    return (not diff), (f"{len(diff)} of {len(fa)} differ: {', '.join(diff[:3])}" if diff else "")


# ----------------------------------------------------------------------------- graphs


def layers_for(nodes: int, base: int, per_layer: int) -> int:
    """The layer count whose graph has the node count nearest ``nodes`` (at least 1)."""
    return max(1, round((nodes - base) / per_layer))


def decoder_layout() -> tuple[int, int]:
    """tts_decoder's node count as base + per_layer x layers, from builds of 1 and 2 layers."""
    from ..models import tts_decoder
    one = len(tts_decoder.build(n_layers=1).graph.node)
    two = len(tts_decoder.build(n_layers=2).graph.node)
    return one - (two - one), two - one


def write_front_end_graph(path: Path, layers: int, shared: bool) -> dict:
    import onnx

    from ..models import tts_decoder
    model = tts_decoder.build(share_layer_weights=shared, n_layers=layers)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return {"path": path, "layers": layers, "nodes": len(model.graph.node),
            "bytes": path.stat().st_size, "initializers": len(model.graph.initializer)}


def write_step(folder: Path, layers: int = STEP_LAYERS) -> Path:
    """The decoder step of bench/cpu.md in ``folder``: model.onnx (unshared weights) and
    test_data_set_0 (batch 1, encoder 64, cache 128, seed 0; references from
    onnxruntime)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    from .. import models as mp_models
    from ..models import tts_decoder
    model = tts_decoder.build(share_layer_weights=False, n_layers=layers)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.onnx"
    onnx.save(model, str(path))
    feeds = tts_decoder.example_inputs(np.random.default_rng(STEP_SEED), n_layers=layers,
                                       batch=1, enc_len=STEP_ENC_LEN, past_len=STEP_PAST_LEN)
    data = mp_models.write_inputs(model, feeds, folder / "test_data_set_0")
    outputs = mp_models.run_onnxruntime(model, feeds)
    for i, vi in enumerate(model.graph.output):
        (data / f"output_{i}.pb").write_bytes(
            numpy_helper.from_array(outputs[vi.name], vi.name).SerializeToString())
    return path


def graph_nodes(model: Path) -> int | None:
    try:
        import onnx
        return len(onnx.load(str(model), load_external_data=False).graph.node)
    except Exception:  # noqa: BLE001 - a count is only shown
        return None


def discover(shared: Path, only: list[str] | None) -> list[dict]:
    root = shared / SHARED_DECODERS
    found = []
    for model in sorted(root.glob("*/model.onnx")) if root.is_dir() else ():
        d = model.parent
        if not (d / "test_data_set_0").is_dir():
            continue
        if only and not any(o == d.name or o in d.name for o in only):
            continue
        found.append({"name": d.name, "kind": "corpus", "model": model,
                      "data": d / "test_data_set_0", "nodes": graph_nodes(model)})
    return found


def warm(paths) -> None:
    """Reads each file once (into the page cache)."""
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while f.read(1 << 24):
                pass


# ----------------------------------------------------------------------------- measuring


def _slim(m: dict) -> dict:
    """A measurement without its output text (kept in the JSON otherwise)."""
    return {k: v for k, v in m.items() if k != "output"}


def front_end(mp_opt: Path, graphs: list[dict], repeat: int, timeout: float) -> dict:
    """mp-opt --version (its libraries) and the front end on every graph, ``repeat`` rounds."""
    runs: dict[int, list[dict]] = {g["nodes"]: [] for g in graphs}
    baseline = []
    for i in range(repeat):
        baseline.append(_slim(measure.run([mp_opt, "--version"])))
        for g in graphs:
            try:
                m = _slim(measure.run([mp_opt, g["path"], *FRONT_END_ARGS], timeout_s=timeout))
            except measure.Failed as e:
                if not e.result:
                    raise
                m = {**_slim(e.result), "error": first_error(e.result.get("output", str(e)))}
            runs[g["nodes"]].append(m)
            print(f"front end round {i + 1}: {g['nodes']} nodes: {m['wall']:.2f} s, max RSS "
                  f"{m['max_rss'] / MB:.0f} MB" + (f" ({m['error']})" if "error" in m else ""),
                  file=sys.stderr, flush=True)
    return {"runs": runs, "baseline": baseline}


def fused_sites(mp_opt: Path, graph: Path, work: Path) -> int | None:
    """Attention sites mp-fuse-attention fused in ``graph`` (its report; an unmeasured
    run)."""
    rep = work / f"fused-{graph.stem}.json"
    try:
        measure.run([mp_opt, graph, f"--mp-fuse-attention=report={rep}",
                     "--mp-mixed-precision", "--no-output"], timeout_s=600)
        return len(json.loads(rep.read_text())["fused"])
    except (measure.Failed, OSError, ValueError, KeyError):
        return None


def occ_available(python: Path) -> tuple[bool, str]:
    """(True, version) when onnxconverter-common imports in ``python``, else (False, why)."""
    try:
        p = subprocess.run([str(python), "-c", "import onnxconverter_common as o; "
                            "print(o.__version__)"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"{python} does not run: {e}"
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        return False, f"onnxconverter_common does not import in {python}: " + (
            lines[-1] if lines else f"exit {p.returncode}")
    return True, p.stdout.strip()


def occ_convert(python: Path, graph: Path, timeout: float) -> dict:
    m = measure.run([python, "-c", OCC_CHILD, graph], timeout_s=timeout, check=False)
    out = _slim(m)
    if m["timed_out"]:
        out["error"] = f"timed out ({timeout:.0f} s)"
        return out
    for line in reversed(m["output"].strip().splitlines()):
        try:
            out.update(json.loads(line))
            break
        except ValueError:
            continue
    else:
        out["error"] = f"exit {m['rc']}: {first_error(m['output'])}"
    if m["rc"] != 0 and "error" not in out:
        out["error"] = f"exit {m['rc']}: {first_error(m['output'])}"
    return out


def occ_series(python: Path, graphs: list[dict], timeout: float) -> dict[int, dict]:
    res: dict[int, dict] = {}
    skip = None
    for g in graphs:
        if skip:
            res[g["nodes"]] = {"skipped": f"skipped: {skip} nodes timed out"}
            continue
        r = occ_convert(python, g["path"], timeout)
        res[g["nodes"]] = r
        if r.get("error", "").startswith("timed out"):
            skip = f"{g['nodes']:,}".replace(",", " ")
        print(f"onnxconverter-common: {g['nodes']} nodes: "
              + (r["error"] if "error" in r else
                 f"{r['wall']:.2f} s (convert {r['convert']:.2f} s), max RSS "
                 f"{r['max_rss'] / MB:.0f} MB"), file=sys.stderr, flush=True)
    return res


def mp_run_cmd(mp_run: Path, m: dict, precision: str, out: Path, progress: bool) -> list:
    cmd = [mp_run, m["model"], "--compare", m["data"], "--repeat", "1", "--output-dir", out]
    if precision != "fp32":
        cmd += ["--precision", precision]
    if progress:
        cmd.append("--progress")
    return cmd


def one_jit_run(cmd: list, cache: Path, timeout: float) -> dict:
    env = dict(os.environ, MP_CACHE_DIR=str(cache))
    m = measure.run(cmd, env=env, timeout_s=timeout, check=False)
    out = _slim(m)
    c = parse_compile(m["output"])
    out["compile_ms"], out["compile_kind"] = c if c else (None, None)
    out["stages"] = parse_progress(m["output"])
    out["compare"] = ("timed out" if m["timed_out"] else compare_result(m["rc"], m["output"]))
    return out


def jit(mp_run: Path, m: dict, precision: str, work: Path, rounds: int, timeout: float,
        progress: bool) -> list[dict]:
    """``rounds`` x (cold run in a fresh cache, cached run)."""
    results = []
    for i in range(rounds):
        cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
        outs = {k: work / f"out-{k}" for k in ("cold", "cached")}
        for o in outs.values():
            shutil.rmtree(o, ignore_errors=True)
        r = {k: one_jit_run(mp_run_cmd(mp_run, m, precision, outs[k], progress), cache, timeout)
             for k in ("cold", "cached")}
        r["identical"], r["identical_why"] = same_outputs(outs["cold"], outs["cached"])
        results.append(r)
        shutil.rmtree(cache, ignore_errors=True)
        print(f"jit {m['name']} {precision} round {i + 1}: cold {r['cold']['wall']:.2f} s "
              f"({r['cold']['compare']}), cached {r['cached']['wall']:.2f} s, "
              f"{'identical' if r['identical'] else 'DIFFERENT: ' + r['identical_why']}",
              file=sys.stderr, flush=True)
    return results


# ----------------------------------------------------------------------------- report


def median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spaced(n: int | None) -> str:
    return "?" if n is None else f"{n:,}".replace(",", " ")


def secs(v: float | None, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f} s"


def mbytes(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v / MB:.1f} MB" if v < 10 * MB else f"{v / MB:,.0f} MB".replace(",", " ")


def front_rows(graphs: list[dict], fe: dict) -> list[dict]:
    """Per graph: median wall, median max RSS, and the ratios against the smallest graph
    (t / t0, and per node: (t / t0) / (nodes / nodes0))."""
    rows = []
    for g in graphs:
        runs = [r for r in fe["runs"][g["nodes"]] if "error" not in r]
        rows.append({"nodes": g["nodes"], "layers": g["layers"], "bytes": g["bytes"],
                     "walls": [r["wall"] for r in fe["runs"][g["nodes"]]],
                     "wall": median(r["wall"] for r in runs),
                     "rss": median(r["max_rss"] for r in runs),
                     "errors": [r["error"] for r in fe["runs"][g["nodes"]] if "error" in r],
                     "fused": g.get("fused")})
    rows.sort(key=lambda r: r["nodes"])
    if rows and rows[0]["wall"]:
        t0, n0, m0 = rows[0]["wall"], rows[0]["nodes"], rows[0]["rss"]
        for r in rows:
            if r["wall"] is None:
                r["ratio"] = r["per_node"] = r["rss_ratio"] = None
                continue
            r["ratio"] = r["wall"] / t0
            r["per_node"] = r["ratio"] / (r["nodes"] / n0)
            r["rss_ratio"] = r["rss"] / m0 if m0 else None
    return rows


def pair_ratio(rows: list[dict]) -> tuple[dict, dict] | None:
    """The first two rows whose node counts are about 1:2 (the issue's t(2N)/t(N))."""
    for a in rows:
        for b in rows:
            if a["wall"] and b["wall"] and 1.9 <= b["nodes"] / a["nodes"] <= 2.1:
                return a, b
    return None


def target_rows(rows: list[dict], jit_results: list[dict], step_layers: int) -> list[tuple]:
    """(target, measured, verdict) per target of the issue, from this run's numbers."""
    out = []
    big = rows[-1] if rows else None
    near = big is not None and big["wall"] is not None and big["nodes"] >= 0.95 * FRONT_END_NODES
    if near:
        where = f"{spaced(big['nodes'])} nodes"
        out.append((f"front end, {spaced(FRONT_END_NODES)}-node graph: <= {FRONT_END_S:g} s",
                    f"{secs(big['wall'])} ({where}, median)",
                    "holds" if big["wall"] <= FRONT_END_S else "does not hold"))
        out.append((f"front end, {spaced(FRONT_END_NODES)}-node graph: <= {FRONT_END_MB:g} MB",
                    f"{mbytes(big['rss'])} max RSS ({where}, median)",
                    "holds" if big["rss"] <= FRONT_END_MB * MB else "does not hold"))
    else:
        largest = "no graph" if big is None else f"the largest graph has {spaced(big['nodes'])} nodes"
        for what in (f"<= {FRONT_END_S:g} s", f"<= {FRONT_END_MB:g} MB"):
            out.append((f"front end, {spaced(FRONT_END_NODES)}-node graph: {what}",
                        f"not measured ({largest})", "n/a"))
    timed = [r for r in rows if r.get("per_node") is not None]
    if len(timed) >= 2:
        worst = max(timed[1:], key=lambda r: r["per_node"])
        pr = pair_ratio(timed)
        parts = []
        if pr:
            parts.append(f"t({spaced(pr[1]['nodes'])}) / t({spaced(pr[0]['nodes'])}) = "
                         f"{pr[1]['wall'] / pr[0]['wall']:.2f}")
        parts += [f"t({spaced(r['nodes'])}) / t({spaced(timed[0]['nodes'])}) / "
                  f"{r['nodes'] / timed[0]['nodes']:.2f} = {r['per_node']:.2f}"
                  for r in timed[1:] if not pr or r is not pr[1]]
        out.append((f"front end linear in size: time per node at every size <= "
                    f"{LINEAR_SLACK:g}x the smallest graph's",
                    "; ".join(parts),
                    "holds" if worst["per_node"] <= LINEAR_SLACK else "does not hold"))
    else:
        out.append(("front end linear in size", "not measured (fewer than two sizes)", "n/a"))

    def cold_walls(kind):
        return [(r["name"], p, run["cold"]["wall"], run["cold"].get("timed_out"))
                for r in jit_results if r["kind"] == kind
                for p, runs in r["runs"].items() for run in runs]

    def first_result(kind, limit, label):
        walls = cold_walls(kind)
        if not walls:
            return (label, "not measured", "n/a")
        over = [w for w in walls if w[2] > limit or w[3]]
        worst = max(walls, key=lambda w: w[2])
        meas = (f"worst {worst[2]:.2f} s ({worst[0]}, {worst[1]}); {len(walls) - len(over)} of "
                f"{len(walls)} cold runs within")
        return (label, meas, "does not hold" if over else "holds")

    out.append(first_result("corpus", CORPUS_FIRST_S,
                            f"JIT first result, each corpus decoder: <= {CORPUS_FIRST_S:g} s"))
    label = f"JIT first result, {STEP_LAYERS}-layer decoder step: <= {STEP_FIRST_S:g} s"
    if step_layers == STEP_LAYERS or not any(r["kind"] == "step" for r in jit_results):
        out.append(first_result("step", STEP_FIRST_S, label))
    else:
        out.append((label, f"not measured (the step was built with {step_layers} layers)", "n/a"))
    cached = [(r["name"], p, run["cached"]["wall"]) for r in jit_results
              for p, runs in r["runs"].items() for run in runs]
    if cached:
        worst = max(cached, key=lambda w: w[2])
        over = [w for w in cached if w[2] >= CACHED_S]
        out.append((f"second start (cached): < {CACHED_S:g} s",
                    f"worst {worst[2]:.2f} s ({worst[0]}, {worst[1]}); {len(cached) - len(over)} "
                    f"of {len(cached)} cached runs within",
                    "does not hold" if over else "holds"))
        runs = [run for r in jit_results for rs in r["runs"].values() for run in rs]
        same = sum(1 for run in runs if run["identical"])
        out.append(("cached outputs bit-identical to the cold run's",
                    f"{same} of {len(runs)} runs", "holds" if same == len(runs) else "does not hold"))
        hits = sum(1 for run in runs if run["cached"].get("compile_kind") == "cached")
        if hits != len(runs):
            out.append(("second start loads from the cache (mp-run says \"cached\")",
                        f"{hits} of {len(runs)} runs", "does not hold"))
    else:
        out.append((f"second start (cached): < {CACHED_S:g} s", "not measured", "n/a"))
    return out


def occ_cells(o: dict | None) -> list[str]:
    if o is None:
        return ["n/a"] * 3
    if "skipped" in o:
        return [o["skipped"], "", ""]
    if "error" in o:
        return [o["error"], "", mbytes(o.get("max_rss")) if o.get("timed_out") is False else ""]
    return [secs(o["wall"]), secs(o["load"] + o["convert"]), mbytes(o["max_rss"])]


def front_lines(rows: list[dict], fe: dict, occ: dict | None, meta: dict) -> list[str]:
    lines = []
    n0 = spaced(rows[0]["nodes"]) if rows else "?"
    cols = ["graph nodes", "layers", "file", "attention sites fused", "mp-opt wall (median)",
            "runs", "max RSS (median)", f"t / t({n0})", f"per node vs {n0}",
            "RSS / RSS(smallest)", "onnxconverter-common wall", "its load + convert",
            "its max RSS", "its load + convert / mp-opt wall"]
    table = []
    for r in rows:
        o = None if occ is None else occ.get(r["nodes"])
        speed = ""
        if o and "convert" in o and r["wall"]:
            speed = f"{(o['load'] + o['convert']) / r['wall']:.1f}x"
        table.append([spaced(r["nodes"]), r["layers"], mbytes(r["bytes"]),
                      "?" if r["fused"] is None else r["fused"], secs(r["wall"]),
                      " / ".join(f"{w:.2f}" for w in r["walls"]) + (
                          f" ({len(r['errors'])} failed: {r['errors'][0]})" if r["errors"] else ""),
                      mbytes(r["rss"]), _f(r.get("ratio")), _f(r.get("per_node")),
                      _f(r.get("rss_ratio")), *occ_cells(o), speed])
    lines += report.table(cols, table, align="rrrrrlrrrrrrrr")
    base = fe.get("baseline") or []
    if base:
        lines += ["", f"`mp-opt --version` alone (the process with its libraries, no model): "
                  f"max RSS {mbytes(median(b['max_rss'] for b in base))}, wall "
                  f"{secs(median(b['wall'] for b in base), 3)} (median of {len(base)})."]
    if occ is not None:
        done = [o for o in occ.values() if "import_rss" in o]
        if done:
            lines += [f"onnxconverter-common's child Python after importing onnx and "
                      f"onnxconverter_common, before loading a model: max RSS "
                      f"{mbytes(max(o['import_rss'] for o in done))}; the imports took "
                      f"{secs(median(o['imports'] for o in done))} (median)."]
    return lines


def _f(v: float | None) -> str:
    return "" if v is None else f"{v:.2f}"


def jit_lines(jit_results: list[dict]) -> list[str]:
    cols = ["model", "nodes", "precision", "cold: wall", "cold: compile (mp-run)",
            "cold: max RSS", "cached: wall", "cached: compile (mp-run)", "--compare",
            "cold = cached bytes"]
    table = []
    for r in jit_results:
        for p, runs in r["runs"].items():
            cold = [x["cold"] for x in runs]
            cached = [x["cached"] for x in runs]
            kinds = {x.get("compile_kind") for x in cached}
            same = sum(1 for x in runs if x["identical"])
            why = [x["identical_why"] for x in runs if not x["identical"]]
            table.append([f"`{r['name']}`", spaced(r.get("nodes")), p,
                          _walls(cold), _ms(cold, "compiled"), mbytes(median(x["max_rss"] for x in cold)),
                          _walls(cached), _ms(cached, "cached") + ("" if kinds == {"cached"} else
                                                                   " (**not from the cache**)"),
                          "; ".join(sorted({x["compare"] for x in cold + cached})),
                          "yes" if same == len(runs) else f"**no** ({why[0]})"])
    return report.table(cols, table, align="lrlrrrrrll", empty="No models.")


def _walls(runs: list[dict]) -> str:
    w = median(x["wall"] for x in runs)
    text = secs(w)
    if len(runs) > 1:
        text += " (" + " / ".join(f"{x['wall']:.2f}" for x in runs) + ")"
    if any(x.get("timed_out") for x in runs):
        text += " timed out"
    return text


def _ms(runs: list[dict], kind: str) -> str:
    ms = median(x.get("compile_ms") for x in runs)
    if ms is None:
        return "n/a"
    kinds = {x.get("compile_kind") for x in runs}
    return f"{ms:,.0f} ms".replace(",", " ") + ("" if kinds == {kind} else f" ({'/'.join(map(str, kinds))})")


def stage_lines(jit_results: list[dict], progress: bool) -> list[str]:
    if not progress:
        return ["No stage split (mp-run lacks --progress)."]
    stages: list[str] = []
    for r in jit_results:
        for runs in r["runs"].values():
            for x in runs:
                for k in ("cold", "cached"):
                    for s in x[k]["stages"]:
                        if s not in stages:
                            stages.append(s)
    if not stages:
        return ["No stage split: mp-run has --progress but printed no "
                "`mp-run: progress: STAGE: MS ms` line."]
    cols = ["model", "precision", "run", *(f"{s} ms" for s in stages), "sum of stages",
            "process wall - stages"]
    table = []
    for r in jit_results:
        for p, runs in r["runs"].items():
            for k in ("cold", "cached"):
                xs = [x[k] for x in runs]
                per = {s: median(x["stages"].get(s) for x in xs) for s in stages}
                total = median(sum(x["stages"].values()) for x in xs)
                wall = median(x["wall"] for x in xs)
                table.append([f"`{r['name']}`", p, k,
                              *("" if per[s] is None else f"{per[s]:,.0f}".replace(",", " ")
                                for s in stages),
                              f"{total:,.0f} ms".replace(",", " "),
                              f"{wall * 1e3 - total:,.0f} ms".replace(",", " ")])
    return report.table(cols, table, align="lll" + "r" * (len(stages) + 2))


METHOD = """\
- **Front end**: `mp-opt MODEL --mp-fuse-attention --mp-mixed-precision --no-output`
  (import, attention fusion, precision assignment, cast insertion; nothing printed). The
  process is spawned by a small helper Python (mp.tools.measure) that reads wall time and
  max RSS (`ru_maxrss`, MB = 10^6 bytes) from `wait4`; the wall time is the whole process
  (start, loading mp-opt's libraries, reading the file). Every size once per round, rounds
  repeated, medians shown with each run's time. *attention sites fused*: from
  `--mp-fuse-attention=report=FILE` in a separate, unmeasured run.
- **Linear in size**: *t / t(smallest)* is the median time over the smallest graph's; *per
  node* divides that by the ratio of node counts (1.00 = exactly linear; a quadratic
  front end would give about the node ratio). The target holds when every size's per-node
  figure is within the slack the *Targets* bullet below states.
- **onnxconverter-common**: `float16.convert_float_to_float16(onnx.load(MODEL),
  keep_io_types=True)` in a child Python measured the same way (its wall includes starting
  Python and importing onnx; *its load + convert* is what the child timed itself), once
  per size. It only converts to fp16: no attention fusion, no per-op precision choice.
  *its load + convert / mp-opt wall*: above 1, mp-opt's whole process took less time than
  onnxconverter-common's load and conversion alone.
- **JIT**: `mp-run MODEL --compare test_data_set_0 --repeat 1 --output-dir OUT` (with
  `--precision mixed` for mixed, `--progress` when mp-run has it), `MP_CACHE_DIR` a fresh
  empty folder: the *cold* run compiles and stores; the same command again is the
  *cached* run. *wall*: the process, spawned and measured as above (compile, the first
  and one more run, the comparison, writing the outputs). *compile (mp-run)*: mp-run's
  own `time: compile X ms (compiled|cached)`. *--compare*: mp-run's verdict against the
  stored onnxruntime references (mixed builds are compared with its mixed tolerances).
  *cold = cached bytes*: every `.npy` the two runs wrote is the same bytes.
- **Stage split**: the `mp-run: progress: STAGE: MS ms` lines of `--progress`, median over
  the rounds; *process wall - stages* is what no stage covers (process start, reading the
  inputs, running, comparing, writing)."""


def render(meta: dict, graphs: list[dict], fe: dict, occ: dict | None,
           jit_results: list[dict]) -> list[str]:
    rows = front_rows(graphs, fe)
    lines = report.begin(
        "Compile time: front end and JIT",
        "How long mp takes from an ONNX file to a first result (issue 27, \"Compile in "
        "seconds\"): the front end (import, attention fusion, precision assignment, cast "
        "insertion) on graphs of growing size beside onnxconverter-common's fp16 conversion "
        "of the same files, and the JIT (compile and first run) of every corpus decoder and "
        "the 12-layer decoder step, cold and from the compile cache. Generated by "
        "`bench/compile.py` (mp.tools.compile_bench); do not edit by hand. Every number is "
        "from the run named below; *Method* says how each is taken.",
        command=meta["command"], measured=meta["commit"],
        extra=[f"mp-opt: `{meta['mp_opt']}` ({meta['mp_opt_built']}, sha256 "
               f"`{meta['mp_opt_sha'][:16]}`), mp-run: `{meta['mp_run']}` "
               f"({meta['mp_run_built']}, sha256 `{meta['mp_run_sha'][:16]}`); each measured "
               "as a copy taken when the run started",
               f"onnxconverter-common: {meta['occ']}",
               f"onnx {meta['onnx']}, Python {meta['python']}",
               f"Load average (1 min): {meta['load_before']:.2f} before the series, "
               f"{meta['load_after']:.2f} after; series {meta['started']} to {meta['ended']}, "
               f"total {meta['seconds']:.0f} s"])
    if meta.get("date"):
        lines = [f"- Date: {meta['date']}" if l.startswith("- Date: ") else l for l in lines]
    lines += ["", "## Targets", "",
              "The issue's targets, judged on this run's numbers (medians where rounds were "
              f"repeated; front end: {meta['repeat']} round{'s' if meta['repeat'] != 1 else ''}, "
              f"JIT: {meta['jit_repeat']}).", ""]
    lines += report.table(["target", "measured", "verdict"],
                          target_rows(rows, jit_results, meta["step_layers"]))
    lines += ["", "## Front end", ""]
    weights = ("shared by the layers (`share_layer_weights=True`: only the LayerNorms are "
               "per layer, so the file grows with the graph, not with weights)"
               if meta["shared_weights"] else "distinct per layer (`share_layer_weights=False`)")
    lines.append(
        f"Graphs: the TTS decoder step of `python/mp/models/tts_decoder.py` (d_model 128, 4 "
        f"heads, FFN 512, opset 17) with the layer count that brings it nearest to each of "
        f"{', '.join(spaced(s) for s in meta['sizes'])} ONNX nodes "
        f"({meta['layout'][1]} nodes a layer + {meta['layout'][0]}); weights {weights}. "
        "Each file was read once before the series (page cache).")
    lines.append("")
    lines += front_lines(rows, fe, occ, meta)
    if meta.get("occ_reason"):
        lines += ["", f"onnxconverter-common: n/a ({meta['occ_reason']})."]
    lines += ["", "## JIT: compile and first run", ""]
    step = (f"`{meta['step_name']}`: the decoder step of bench/cpu.md (`tts_decoder`, "
            f"{meta['step_layers']} layers, unshared weights, batch 1, encoder length "
            f"{STEP_ENC_LEN}, KV cache {STEP_PAST_LEN}; its test_data_set_0 written by this "
            "script with onnxruntime's outputs as references). " if meta.get("step_name") else "")
    lines.append(f"Models: every `{SHARED_DECODERS}/*` of the shared folder with a "
                 f"test_data_set_0 ({meta['corpus_count']}). {step}Cold and cached runs "
                 f"alternate per model and precision, {meta['jit_repeat']} round"
                 f"{'s' if meta['jit_repeat'] != 1 else ''}, each in a fresh cache folder"
                 + (" (medians, every run in brackets)." if meta["jit_repeat"] > 1 else "."))
    lines.append("")
    lines += jit_lines(jit_results)
    lines += ["", "## Per-stage split", ""]
    if meta["progress"]:
        lines += ["`mp-run --progress` stage times (ms), cold and cached runs.", ""]
    lines += stage_lines(jit_results, meta["progress"])
    lines += ["", "## Method", "", METHOD,
              f"- **Targets**: front end <= {FRONT_END_S:g} s and <= {FRONT_END_MB:g} MB at "
              f"{spaced(FRONT_END_NODES)} nodes (judged on the largest graph when it has at "
              f"least 95 % of that), linear (per node <= {LINEAR_SLACK:g}x the smallest "
              f"graph's at every size); JIT first result (cold process wall) <= "
              f"{CORPUS_FIRST_S:g} s for each corpus decoder and <= {STEP_FIRST_S:g} s for the "
              f"{STEP_LAYERS}-layer step, fp32 and mixed alike; second start (cached process "
              f"wall) < {CACHED_S:g} s."]
    return lines


# ----------------------------------------------------------------------------- main


def command_line(argv: list[str]) -> str:
    return " ".join([".venv/bin/python bench/compile.py", *(shlex.quote(a) for a in argv)])


def utc() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES),
                    help="front-end graph sizes in ONNX nodes (nearest layer count)")
    ap.add_argument("--repeat", type=int, default=3, help="front-end rounds")
    ap.add_argument("--jit-repeat", type=int, default=1, help="JIT rounds (cold + cached)")
    ap.add_argument("--models", nargs="*", help="corpus decoders whose name contains one of these")
    ap.add_argument("--no-corpus", action="store_true", help="no corpus decoders")
    ap.add_argument("--no-step", action="store_true", help="no decoder-step JIT rows")
    ap.add_argument("--step-layers", type=int, default=STEP_LAYERS)
    ap.add_argument("--no-occ", action="store_true", help="skip onnxconverter-common")
    ap.add_argument("--occ-python", type=Path, default=Path(sys.executable),
                    help="the Python onnxconverter-common runs in")
    ap.add_argument("--occ-timeout", type=float, default=OCC_TIMEOUT_S,
                    help="seconds per onnxconverter-common conversion")
    ap.add_argument("--jit-timeout", type=float, default=JIT_TIMEOUT_S, help="seconds per mp-run")
    ap.add_argument("--unshared-weights", action="store_true",
                    help="front-end graphs with distinct weights per layer")
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared",
                    help="folder holding corpus/decoders")
    ap.add_argument("--mp-opt", type=Path, default=build_tool("mp-opt"))
    ap.add_argument("--mp-run", type=Path, default=build_tool("mp-run"))
    ap.add_argument("--out", "-o", type=Path, default=REPO / "bench" / "compile.md")
    ap.add_argument("--json", type=Path, help="also write the raw results")
    ap.add_argument("--render", type=Path, metavar="JSON",
                    help="only write the page again from the --json of an earlier run")
    args = ap.parse_args(argv)
    if args.render:
        saved = json.loads(args.render.read_text())
        report.write(args.out, render(**_keys_to_int(saved)))
        print(f"wrote {args.out} from {args.render}", file=sys.stderr)
        return 0
    if args.repeat < 1 or args.jit_repeat < 1:
        ap.error("--repeat and --jit-repeat must be at least 1")
    if any(s < 1 for s in args.sizes):
        ap.error("--sizes must be positive")
    for tool in (args.mp_opt, args.mp_run):
        if not tool.is_file():
            ap.error(f"{tool} is not built")

    t0 = time.perf_counter()
    import onnx
    meta = {"command": command_line(sys.argv[1:] if argv is None else argv),
            "commit": report.commit(), "date": report.now(),
            "mp_opt": report.rel(args.mp_opt), "mp_opt_built": report.built(args.mp_opt),
            "mp_run": report.rel(args.mp_run), "mp_run_built": report.built(args.mp_run),
            "onnx": onnx.__version__, "python": sys.version.split()[0],
            "repeat": args.repeat, "jit_repeat": args.jit_repeat,
            "sizes": sorted(set(args.sizes)), "shared_weights": not args.unshared_weights,
            "step_layers": args.step_layers}
    if args.no_occ:
        occ_ok, meta["occ_reason"] = False, "not run: --no-occ"
    else:
        occ_ok, version = occ_available(args.occ_python)
        meta["occ_reason"] = None if occ_ok else version
    meta["occ"] = (f"{version} (`float16.convert_float_to_float16`, keep_io_types=True, in "
                   f"`{report.rel(args.occ_python)}`)" if occ_ok else f"n/a ({meta['occ_reason']})")

    tmp = Path(tempfile.mkdtemp(prefix="mp-compile-bench-"))
    try:
        tools = measure.snapshot([args.mp_opt, args.mp_run], tmp / "tools")
        mp_opt, mp_run = tools["mp-opt"], tools["mp-run"]
        meta["mp_opt_sha"], meta["mp_run_sha"] = measure.sha256(mp_opt), measure.sha256(mp_run)
        help_text = subprocess.run([str(mp_run), "--help"], capture_output=True, text=True).stdout
        meta["progress"] = supports_progress(help_text)
        if not meta["progress"]:
            print("mp-run has no --progress: no stage split", file=sys.stderr)

        # Front-end graphs.
        base, per_layer = decoder_layout()
        meta["layout"] = [base, per_layer]
        graphs = []
        for layers in sorted({layers_for(s, base, per_layer) for s in meta["sizes"]}):
            g = write_front_end_graph(tmp / "graphs" / f"decoder-{layers}.onnx", layers,
                                      shared=not args.unshared_weights)
            g["fused"] = fused_sites(mp_opt, g["path"], tmp)
            graphs.append(g)
            print(f"graph: {layers} layers, {g['nodes']} nodes, {g['bytes']} bytes, "
                  f"{g['fused']} attention sites fused", file=sys.stderr, flush=True)
        warm(g["path"] for g in graphs)

        # JIT models.
        models = [] if args.no_corpus else discover(args.shared, args.models)
        meta["corpus_count"] = len(models)
        if not args.no_step:
            step = write_step(tmp / "step", args.step_layers)
            meta["step_name"] = f"tts_decoder step, {args.step_layers} layers"
            models.append({"name": meta["step_name"], "kind": "step", "model": step,
                           "data": step.parent / "test_data_set_0", "nodes": graph_nodes(step)})

        meta["load_before"] = os.getloadavg()[0]
        meta["started"] = utc()
        fe = front_end(mp_opt, graphs, args.repeat, timeout=args.jit_timeout)
        occ = occ_series(args.occ_python, graphs, args.occ_timeout) if occ_ok else None
        jit_results = []
        for i, m in enumerate(models):
            work = tmp / "jit" / str(i)
            work.mkdir(parents=True)
            jit_results.append({
                "name": m["name"], "kind": m["kind"], "nodes": m["nodes"],
                "runs": {p: jit(mp_run, m, p, work, args.jit_repeat, args.jit_timeout,
                                meta["progress"]) for p in PRECISIONS}})
            shutil.rmtree(work, ignore_errors=True)
        meta["ended"] = utc()
        meta["load_after"] = os.getloadavg()[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    meta["seconds"] = time.perf_counter() - t0
    graphs = [{k: v for k, v in g.items() if k != "path"} for g in graphs]
    payload = {"meta": meta, "graphs": graphs, "fe": fe, "occ": occ, "jit_results": jit_results}
    # Through JSON and back, so that the page is the same as a --render of the --json.
    payload = json.loads(json.dumps(payload, default=str))
    report.publish(args.out, render(**_keys_to_int(payload)), args.json, payload,
                   meta["seconds"])
    return 0


def _keys_to_int(payload: dict) -> dict:
    """JSON turns the node-count keys of ``fe["runs"]`` and ``occ`` into strings."""
    p = dict(payload)
    p["fe"] = dict(p["fe"], runs={int(k): v for k, v in p["fe"]["runs"].items()})
    if p["occ"] is not None:
        p["occ"] = {int(k): v for k, v in p["occ"].items()}
    return p


if __name__ == "__main__":
    sys.exit(main())
