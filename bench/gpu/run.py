"""GPU benchmark of mp-compile's CUDA libraries: one prepared run on the GPU machine.

    python3 bench/gpu/run.py [--out DIR] [--device cuda|cpu|emulator] [--only NAME]

Reads bench/gpu/artifacts/manifest.json (written by bench/gpu/build.sh on a
machine without a GPU). Needs the stdlib and numpy; torch and onnxruntime
are optional ("not available" is reported). No MLIR: libraries run through
libmp_runtime.so via python/mp/library.py (``import mp`` does not load
libMPCAPI.so; it is only needed for mp.compile).

For each library (model x fp32/mixed), in its own subprocess, so that a crash
or a hang costs one row and the runtime's peak-memory counters are per
library:
  - load it (mp.library.load), run the test inputs, compare with the outputs
    of the CPU library of the same precision computed at build time
    (PASS if |got - ref| <= atol + rtol*|ref| everywhere: fp32 rtol 1e-3
    atol 1e-4, mixed 1e-2 and 1e-2); the ONNX reference outputs are shown
    for information;
  - time lib.run: warm-up, then repeated runs (median and min, ms). Every
    run copies inputs host->device and outputs device->host (mp_model_run
    takes host buffers), so small models measure copies and launches;
  - device memory the runtime holds (mp.library.memory_stats()).
Side by side: onnxruntime on the same ONNX model and inputs (the graph as
written, fp32 except for the fp16 models; CUDAExecutionProvider if this
onnxruntime has it, else the CPU EP, labelled so), and a PyTorch fp16
scaled_dot_product_attention decode microbenchmark against 4.8 TB/s.

--device cpu runs the CPU libraries instead (a dry run of the whole flow on a
machine without a GPU; no memory stats, no PyTorch, ORT on the CPU EP).
--device emulator runs the CUDA libraries on the PTX emulator (mp.emu,
docs/emulator.md; artifacts built with MP_GPU_ARCH=compute_80): a dry run
of the GPU path itself, kernels included, whose times mean nothing.
Results: DIR/results.md and DIR/results.json (rewritten after every item, so
a run killed by its time limit leaves what it finished), also printed.
Exit status: 0 all passed; 1 a library failed to build, load or run, or a
comparison failed; 2 only that the time guard skipped something.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "python"))

TOL = {"fp32": (1e-3, 1e-4), "mixed": (1e-2, 1e-2)}   # (rtol, atol)
PEAK_BW = 4.8e12    # H200 HBM3e, vendor datasheet, bytes/s
WARMUP = 3


# ---------------------------------------------------------------- helpers

def compare(got: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> dict:
    """Max abs error, max rel error (|diff| / max(|ref|, atol), so that
    near-zero references do not blow it up) and the allclose verdict. A NaN
    passes only where the reference has one."""
    if got.shape != ref.shape:
        return {"ok": False, "error": f"shape {list(got.shape)} != {list(ref.shape)}"}
    g, r = got.astype(np.float64), ref.astype(np.float64)
    nan_mismatch = bool(np.any(np.isnan(g) != np.isnan(r)))
    both = np.isnan(g) & np.isnan(r)
    diff = np.where(both, 0.0, np.abs(g - r))
    diff = np.where(np.isnan(diff), np.inf, diff)
    ok = not nan_mismatch and bool(np.all(diff <= atol + rtol * np.abs(np.nan_to_num(r))))
    return {"ok": ok, "max_abs": float(diff.max(initial=0.0)),
            "max_rel": float((diff / np.maximum(np.abs(np.nan_to_num(r)), atol)).max(initial=0.0)),
            **({"error": "NaN where the reference has none"} if nan_mismatch else {})}


def time_calls(fn, max_runs: int, seconds: float) -> dict:
    """Wall-clock ms of fn() after WARMUP calls: up to max_runs calls or
    `seconds`, at least 3. fn must be synchronous (mp's run and ORT's are)."""
    for _ in range(WARMUP):
        fn()
    times, t_end = [], time.perf_counter() + seconds
    while len(times) < max_runs and (len(times) < 3 or time.perf_counter() < t_end):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "runs": len(times)}


def load_npy(art: Path, rows: list[dict]) -> dict[str, np.ndarray]:
    return {r["name"]: np.load(art / r["file"]) for r in rows}


# ------------------------------------------------- child jobs (subprocesses)

def child_library(spec: dict) -> dict:
    """Loads, checks and times one library; the runtime beside it is used."""
    art, model, build, target = Path(spec["art"]), spec["model"], spec["build"], spec["target"]
    if spec["device"] == "emulator":
        from mp.emu import Emulator
        Emulator.install()           # before the runtime loads a driver
    entry = build[target]
    os.environ["MP_RUNTIME_LIBRARY"] = str(art / entry["runtime"])
    # Read by the runtime on first use; graphs are on by default.
    os.environ["MP_CUDA_GRAPHS"] = "1" if spec.get("graphs") else "0"
    import mp                       # after MP_RUNTIME_LIBRARY is set
    from mp import library as mpl
    res: dict = {}
    t = time.perf_counter()
    try:
        lib = mpl.load(art / entry["library"])
    except mp.Error as e:
        return {"ok": False, "error": f"load failed (status {e.status}): {e}"}
    res["load_ms"] = (time.perf_counter() - t) * 1e3
    feeds = load_npy(art, model["inputs"])
    feeds = {n: feeds[n] for n, _, _ in lib.inputs}   # compiled-in inputs are dropped
    try:
        outs = lib.run(feeds)
    except mp.Error as e:
        return {"ok": False, "error": f"run failed (status {e.status}): {e}"}
    rtol, atol = TOL[build["precision"]]
    ref = load_npy(art, build["reference"])
    onnx_ref = load_npy(art, model["onnx_outputs"])
    res["outputs"] = {}
    for name, got in outs.items():
        row = compare(got, ref[name], rtol, atol) if name in ref else {"ok": False, "error": "no reference"}
        if name in onnx_ref:
            row["onnx_max_abs"] = compare(got, onnx_ref[name], rtol, atol).get("max_abs")
        res["outputs"][name] = row
    res["ok"] = all(r["ok"] for r in res["outputs"].values()) and set(outs) == set(ref)
    res["timing"] = time_calls(lambda: lib.run(feeds), spec["runs"], spec["seconds"])
    # The same on device buffers: inputs uploaded once, each timed call
    # queues a run and waits for it, no host<->device copies.
    try:
        dev_feeds = {n: lib.to_device(a) if n not in lib.host_inputs else a
                     for n, a in feeds.items()}
        dev_outs = {n: lib.empty_device(s, d) for n, d, s in lib.outputs}

        def device_step():
            lib.run_device(dev_feeds, out=dev_outs)
            lib.synchronize()
        res["timing_device"] = time_calls(device_step, spec["runs"], spec["seconds"])
        for name, a in dev_outs.items():
            if name in ref and not compare(a.numpy(), ref[name], rtol, atol)["ok"]:
                res["outputs"][name]["device_buffers_ok"] = False
                res["ok"] = False
    except Exception as e:  # noqa: BLE001 -- reported in the row, the rest stands
        res["timing_device"] = {"error": f"{type(e).__name__}: {e}"}
    if target == "cuda":
        try:
            res["memory"] = mpl.memory_stats()   # while the library (its weights) is loaded
        except Exception as e:  # noqa: BLE001 -- an older runtime lacks it
            res["memory"] = {"error": str(e)}
    lib.close()
    return res


def child_ort(spec: dict) -> dict:
    """onnxruntime on the original model and all its test inputs."""
    import onnxruntime as ort
    art, model = Path(spec["art"]), spec["model"]
    avail = ort.get_available_providers()
    want = ["CUDAExecutionProvider"] if spec["device"] == "cuda" and "CUDAExecutionProvider" in avail else []
    sess = ort.InferenceSession(str(art / model["onnx"]), providers=want + ["CPUExecutionProvider"])
    res = {"version": ort.__version__, "available": avail, "providers": sess.get_providers()}
    feeds = load_npy(art, model["inputs"])
    names = [o.name for o in sess.get_outputs()]
    outs = dict(zip(names, sess.run(None, feeds)))
    onnx_ref = load_npy(art, model["onnx_outputs"])
    res["onnx_max_abs"] = max((compare(outs[n], onnx_ref[n], 0, 0)["max_abs"] for n in onnx_ref
                               if n in outs and outs[n].shape == onnx_ref[n].shape), default=None)
    res["timing"] = time_calls(lambda: sess.run(None, feeds), spec["runs"], spec["seconds"])
    return res


def child_torch(spec: dict) -> dict:
    """Device-to-device copy (the measured bandwidth ceiling) and fp16 SDPA
    decode (1 query token) over a K/V cache, timed with CUDA events. Small
    caches are rotated among several copies so that the data read is far
    larger than the 60 MB L2 (else we would time the cache)."""
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        return {"error": f"torch {torch.__version__} sees no GPU"}
    res = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "device": torch.cuda.get_device_name(0)}
    ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731

    def timed(fn, iters, reps=5):
        for _ in range(3):
            fn(0)
        ms = []
        for _ in range(reps):
            a, b = ev(), ev()
            a.record()
            for i in range(iters):
                fn(i)
            b.record()
            torch.cuda.synchronize()
            ms.append(a.elapsed_time(b) / iters)
        return statistics.median(ms)

    n = 1 << 28   # 1 GiB of fp32
    x, y = torch.rand(n, device="cuda"), torch.empty(n, device="cuda")
    ms = timed(lambda i: y.copy_(x), 10)
    res["copy"] = {"bytes": 2 * 4 * n, "ms": ms, "bytes_per_s": 2 * 4 * n / (ms * 1e-3)}
    del x, y
    H, d, rows = 8, 64, []
    for B in (1, 4, 16):
        for L in (1024, 4096, 16384, 32768):
            kv_bytes = 2 * B * L * H * d * 2     # K and V, fp16
            sets = max(1, min(256, math.ceil((512 << 20) / kv_bytes)))
            q = torch.randn(B, H, 1, d, device="cuda", dtype=torch.float16)
            ks = [torch.randn(B, H, L, d, device="cuda", dtype=torch.float16) for _ in range(sets)]
            vs = [torch.randn(B, H, L, d, device="cuda", dtype=torch.float16) for _ in range(sets)]
            ms = timed(lambda i: F.scaled_dot_product_attention(q, ks[i % sets], vs[i % sets]),
                       max(20, sets))
            rows.append({"B": B, "L": L, "kv_bytes": kv_bytes, "ms": ms,
                         "bytes_per_s": kv_bytes / (ms * 1e-3)})
            del q, ks, vs
            torch.cuda.empty_cache()
    res["sdpa"] = rows
    return res


CHILDREN = {"library": child_library, "ort": child_ort, "torch": child_torch}


def run_child(spec: dict, timeout: float) -> dict:
    """Runs one job in a fresh python; a crash, a hang or an exception
    becomes {"ok": False, "error": ...} instead of ending the benchmark."""
    try:
        p = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:.0f} s"}
    lines = p.stdout.strip().splitlines()
    if p.returncode == 0 and lines:
        return json.loads(lines[-1])
    tail = " | ".join((p.stderr or p.stdout).strip().splitlines()[-3:])
    return {"ok": False, "error": f"exit {p.returncode}: {tail}"}


# ------------------------------------------------------------------ report

def graph_cell(x: dict) -> str:
    """The CUDA-graph column: median ms, or why there is none."""
    g = x.get("graphs")
    if not g:
        return "-"
    if not g["ok"]:
        return "FAIL: " + str(g.get("error") or "outputs differ")[:80].replace("|", "/")
    return f"{g['timing']['median_ms']:.4g}"


def device_cell(x: dict) -> str:
    """The device-buffer column: median ms, or why there is none."""
    t = x.get("timing_device")
    if not t:
        return "-"
    if "error" in t:
        return "FAIL: " + t["error"][:80].replace("|", "/")
    return f"{t['median_ms']:.4g}"


def sh(cmd: list[str]) -> str:
    if not shutil.which(cmd[0]):
        return f"{cmd[0]} not found"
    p = subprocess.run(cmd, capture_output=True, text=True)
    return (p.stdout or p.stderr).strip()


def render(r: dict) -> str:
    dev = r["device"]
    L = [f"# mp GPU benchmark ({'CUDA libraries' if dev == 'cuda' else 'DRY RUN: CPU libraries'})", "",
         f"- date: {r['date']}", f"- host: {r['host']}",
         f"- nvidia-smi -L: {r['gpus']}", f"- driver: {r['driver']}",
         f"- python {r['python']}, numpy {r['numpy']}",
         f"- artifacts: built {r['manifest']['created']} from mp {r['manifest']['mp_commit']}",
         f"- elapsed: {r['elapsed_s']:.0f} s{' (incomplete)' if not r['done'] else ''}", "",
         "## mp libraries", "",
         f"Each row: one library built by mp-compile --target {dev}. check: outputs vs the CPU library of the "
         "same precision, computed at build time (PASS: |got-ref| <= atol + rtol*|ref|; fp32 rtol 1e-3 "
         "atol 1e-4, mixed 1e-2/1e-2); max abs / max rel over all outputs (rel = |diff|/max(|ref|, atol)); "
         "vs ONNX: max abs error against the stored onnxruntime outputs (information only). "
         "median/min: wall-clock ms of one lib.run after 3 warm-up runs, INCLUDING the host<->device "
         "copies of every input and output. load: mp.library.load (dlopen, kernel modules). "
         "act peak: high-water mark of the runtime's device activation buffers; weights: device copies "
         "of constants (mp.library.memory_stats(), in this library's own process). tok/s: 1000/median "
         "(tts_decoder: one decoder step = one token per sequence; its test batch has B sequences).", "",
         "graph ms: median with MP_CUDA_GRAPHS=1 (the run captured once, replayed with one "
         "cuGraphLaunch), with its own check against the CPU reference. device ms: median of "
         "lib.run_device + lib.synchronize on inputs and outputs kept in device memory (no "
         "host<->device copies; its outputs are checked too, a mismatch fails the row).", "",
         "| model | prec | check | max abs | max rel | vs ONNX | median ms | min ms | runs | load ms | act peak MiB | weights MiB | tok/s | graph ms | device ms |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    esc = lambda s: str(s)[:200].replace("|", "/").replace("\n", " ")  # noqa: E731 -- table-safe
    f = lambda v, p=3: "-" if v is None else f"{v:.{p}g}"  # noqa: E731
    for x in r["libraries"]:
        if "error" in x and "outputs" not in x:
            L.append(f"| {x['model']} | {x['precision']} | FAIL: {esc(x['error'])} |" + " |" * 12)
            continue
        outs = x["outputs"].values()
        mem, t = x.get("memory") or {}, x.get("timing") or {}
        mib = lambda k: f"{mem[k] / 2**20:.2f}" if k in mem else "-"  # noqa: E731
        L.append(f"| {x['model']} | {x['precision']} | {'PASS' if x['ok'] else 'FAIL'} | "
                 f"{f(max((o.get('max_abs', math.inf) for o in outs), default=None))} | "
                 f"{f(max((o.get('max_rel', math.inf) for o in outs), default=None))} | "
                 f"{f(max((o.get('onnx_max_abs') or 0 for o in outs), default=None))} | "
                 f"{f(t.get('median_ms'), 4)} | {f(t.get('min_ms'), 4)} | {t.get('runs', '-')} | "
                 f"{f(x.get('load_ms'))} | {mib('peak_buffer_bytes')} | {mib('constant_bytes')} | "
                 f"{f(x.get('tokens_per_s'), 4) if 'tokens_per_s' in x else ''} | {graph_cell(x)} | "
                 f"{device_cell(x)} |")
    L += ["", "## onnxruntime, same model and inputs", "",
          "The ONNX graph as written (fp32, except the fp16 llama and GQA models: no fp16 conversion, so not "
          "comparable with mp's mixed builds), default graph optimizations, numpy inputs and outputs "
          "(so host<->device copies are included, as for mp). provider: the one ORT actually used; "
          "if CUDAExecutionProvider is missing this is the CPU EP and NOT a GPU number.", "",
          f"onnxruntime: {r.get('ort_status', '-')}", "",
          "| model | provider | median ms | min ms | runs | max abs vs stored ONNX outputs |", "|---|---|---|---|---|---|"]
    for x in r["ort"]:
        if "timing" not in x:
            L.append(f"| {x['model']} | FAIL: {esc(x.get('error', ''))} | | | | |")
            continue
        t = x["timing"]
        L.append(f"| {x['model']} | {x['providers'][0]} | {f(t['median_ms'], 4)} | {f(t['min_ms'], 4)} | "
                 f"{t['runs']} | {f(x['onnx_max_abs'])} |")
    L += ["", "## PyTorch fp16 SDPA decode microbenchmark", ""]
    tr = r.get("torch")
    if not tr or "sdpa" not in tr:
        L.append(f"not run: {(tr or {}).get('error', 'skipped')}")
    else:
        c = tr["copy"]
        L += [f"torch {tr['torch']} (CUDA {tr['cuda']}) on {tr['device']}. "
              "torch.nn.functional.scaled_dot_product_attention, q [B,8,1,64], K and V [B,8,L,64], fp16, "
              "PyTorch's default backend; ms per call from CUDA events (median of 5 loops of >= 20 calls, "
              "K/V rotated among copies so that > 512 MiB is read per loop, not the L2). "
              "bytes = 2*B*L*8*64*2 (K and V read once); GB/s = bytes / time; "
              f"% of the 4.8 TB/s datasheet and of the measured device-to-device copy "
              f"({c['bytes_per_s'] / 1e9:.0f} GB/s, 1 GiB fp32 copy, read+write counted).", "",
              "| B | L | K+V MiB | ms | GB/s | % of 4.8 TB/s | % of copy |", "|---|---|---|---|---|---|---|"]
        for s in tr["sdpa"]:
            L.append(f"| {s['B']} | {s['L']} | {s['kv_bytes'] / 2**20:.0f} | {s['ms']:.4f} | "
                     f"{s['bytes_per_s'] / 1e9:.0f} | {100 * s['bytes_per_s'] / PEAK_BW:.0f}% | "
                     f"{100 * s['bytes_per_s'] / c['bytes_per_s']:.0f}% |")
    if r["failures"] or r["skipped"]:
        L += ["", "## Failures and skips", ""] + [f"- FAIL {s}" for s in r["failures"]] + \
             [f"- skipped {s}" for s in r["skipped"]]
    return "\n".join(L) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--artifacts", type=Path, default=HERE / "artifacts")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "gpu-out"))
    ap.add_argument("--device", choices=["cuda", "cpu", "emulator"], default="cuda")
    ap.add_argument("--only", default="", help="only models whose name contains this")
    ap.add_argument("--runs", type=int, default=100, help="timed runs at most per library")
    ap.add_argument("--seconds", type=float, default=2.0, help="timing time per library")
    ap.add_argument("--budget", type=float, default=240, help="overall time guard, seconds")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        spec = json.loads(a.child)
        try:
            res = CHILDREN[spec["kind"]](spec)
        except Exception as e:  # noqa: BLE001 -- reported as this job's error
            res = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(res))
        return 0

    t0 = time.monotonic()
    art = a.artifacts.resolve()
    manifest = json.loads((art / "manifest.json").read_text())
    a.out.mkdir(parents=True, exist_ok=True)
    r = {"device": a.device, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
         "host": platform.node(), "python": platform.python_version(), "numpy": np.__version__,
         "gpus": sh(["nvidia-smi", "-L"]).replace("\n", "; "),
         "driver": sh(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).split("\n")[0],
         "manifest": {k: manifest[k] for k in ("created", "mp_commit", "gpu_arch")},
         "libraries": [], "ort": [], "torch": None, "failures": [], "skipped": [], "done": False, "elapsed_s": 0}

    def save():
        r["elapsed_s"] = time.monotonic() - t0
        (a.out / "results.json").write_text(json.dumps(r, indent=1) + "\n")
        (a.out / "results.md").write_text(render(r))

    def budget(cap: float) -> float:   # seconds a job may take; 0: skip it
        left = a.budget - (time.monotonic() - t0)
        return min(cap, left) if left > 15 else 0

    models = [m for m in manifest["models"] if a.only in m["name"]]
    common = {"art": str(art), "runs": a.runs, "seconds": a.seconds, "device": a.device}
    target = "cpu" if a.device == "cpu" else "cuda"   # the emulator runs the CUDA libraries
    for m in models:
        for b in m["builds"]:
            row = {"model": m["name"], "precision": b["precision"]}
            label = f"{m['name']} {b['precision']} {a.device}"
            if not b[target]["ok"] or not b["reference"]:
                row["error"] = b[target].get("error") or b["cpu"].get("error") or "no reference"
            elif not (limit := budget(90)):
                r["skipped"].append(label + " (time guard)")
                continue
            else:
                row |= run_child({**common, "kind": "library", "model": m, "build": b, "target": target}, limit)
                if "timing" in row and "tts_decoder" in m["name"]:
                    row["tokens_per_s"] = 1000 / row["timing"]["median_ms"]
                # The same run replayed as a CUDA graph (MP_CUDA_GRAPHS=1).
                if a.device == "cuda" and row.get("ok") and (limit := budget(60)):
                    g = run_child({**common, "kind": "library", "model": m, "build": b,
                                   "target": target, "graphs": True}, limit)
                    row["graphs"] = {"ok": g.get("ok", False), "timing": g.get("timing"),
                                     "error": g.get("error")}
            if not row.get("ok"):
                r["failures"].append(f"{label}: {row.get('error', 'outputs differ from the CPU reference')}")
            r["libraries"].append(row)
            print(f"[{time.monotonic() - t0:5.1f}s] {label}: {'PASS' if row.get('ok') else 'FAIL'}"
                  f"{', %.4g ms' % row['timing']['median_ms'] if 'timing' in row else ''}"
                  f"{'' if row.get('ok') else ': ' + str(row.get('error', 'mismatch'))[:200]}", flush=True)
            save()

    try:
        import onnxruntime as ort
        has_cuda = "CUDAExecutionProvider" in ort.get_available_providers()
        r["ort_status"] = (f"{ort.__version__}, providers {ort.get_available_providers()}"
                           + ("" if has_cuda or a.device != "cuda" else
                              " -- no CUDAExecutionProvider: the times below are the CPU EP"))
    except ImportError:
        r["ort_status"], models_ort = "not available (no onnxruntime)", []
    else:
        models_ort = models
    for m in models_ort:
        if not (limit := budget(60)):
            r["skipped"].append(f"onnxruntime {m['name']} (time guard)")
            continue
        row = {"model": m["name"]} | run_child({**common, "kind": "ort", "model": m}, limit)
        r["ort"].append(row)   # an ORT failure is reported, not counted against mp
        print(f"[{time.monotonic() - t0:5.1f}s] onnxruntime {m['name']}: "
              + (f"{row['providers'][0]} {row['timing']['median_ms']:.4g} ms" if "timing" in row else row["error"][:200]),
              flush=True)
        save()

    if a.device == "cuda":
        # torch is imported only in the child: it is slow to import, and a
        # child that finds no GPU reports that as its error.
        if importlib.util.find_spec("torch") is None:
            r["torch"] = {"error": "not available (no torch)"}
        elif not (limit := budget(90)):
            r["skipped"].append("PyTorch SDPA (time guard)")
        else:
            r["torch"] = run_child({**common, "kind": "torch"}, limit)
        print(f"[{time.monotonic() - t0:5.1f}s] PyTorch SDPA: {r['torch'].get('error', 'done') if r['torch'] else 'skipped'}")
    else:
        r["torch"] = {"error": f"skipped (--device {a.device})"}
    r["done"] = True
    save()
    print("\n" + render(r))
    print(f"results: {a.out / 'results.md'}, {a.out / 'results.json'}")
    return 1 if r["failures"] else 2 if r["skipped"] else 0


if __name__ == "__main__":
    sys.exit(main())
