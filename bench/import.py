#!/usr/bin/env python3
"""Regenerates bench/import.md: import time and peak memory of mp-opt on a large model.

    .venv/bin/python bench/import.py [--out bench/import.md] [--gb 1] [--repeat 2]
        [--work DIR] [--d-model 1024] [--vocab 32000] [--seed 0] [--sample-ms 20]
        [--mp-opt PATH]

Generates a GPT-like model of about --gb GiB of fp32 weights with
python/mp/tools/big_model.py twice, A with every weight inline (raw_data) and
B with the weights in an external data file, into --work (files from an
earlier run with the same parameters are reused; default: a temporary folder,
deleted afterwards). Reads every file once so that they are in the page
cache, copies mp-opt (so that a rebuild during the series cannot swap it),
then runs each model under three mp-opt command lines --repeat times, round
by round: (a) import only, (b) import and print the IR with the resources
elided, (c) import, mixed precision and the f16 weight conversion. For every
run it records wall time, user and system time and max RSS (wait4's rusage
of mp-opt, spawned from a small helper process: mp.tools.measure), and samples
/proc/PID/status (VmRSS, RssAnon, RssFile) every --sample-ms to split the
peak into heap and file pages. Every number of the report comes from this
run; the quick version is python/tests/test_import_bench.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import onnx  # noqa: E402

from mp.tools import big_model, build_tool, report  # noqa: E402
from mp.tools import measure as measuring  # noqa: E402

MIB = 1 << 20
GIB = 1 << 30

# (key, label, big_model --external)
VARIANTS = (("A", "A inline", False), ("B", "B external", True))
# (key, label, description, mp-opt arguments after the model; {summary}: a file)
RUNS = (
    ("a", "(a) import only", "import only",
     ["--mp-model-summary=output={summary}", "--no-output"]),
    ("b", "(b) + print (elided)", "import + print the IR text to /dev/null",
     ["--mp-model-summary=output=/dev/null", "--mlir-elide-resource-strings-if-larger=64",
      "-o", "/dev/null"]),
    ("c", "(c) mixed precision", "import + precision + f16 weight conversion",
     ["--mp-mixed-precision", "--no-output"]),
)


# ---------------------------------------------------------------- models

def model_params(args, external: bool) -> dict:
    return {"gb": args.gb, "d_model": args.d_model, "vocab": args.vocab, "seed": args.seed,
            "external": external}


def model_files(model: Path, info: dict) -> list[tuple[Path, int]]:
    files = [(model, info["model_bytes"])]
    if info["data_bytes"]:
        files.append((model.with_name(model.name + ".data"), info["data_bytes"]))
    return files


def make_model(args, key: str, external: bool) -> tuple[Path, dict, bool]:
    """big_model's model of variant ``key`` in --work: (path, build info,
    reused). A model whose sidecar JSON records the same parameters and whose
    files have the recorded sizes is reused."""
    model = args.work / key / "model.onnx"
    sidecar = model.with_suffix(".json")
    params = model_params(args, external)
    if sidecar.is_file():
        saved = json.loads(sidecar.read_text())
        if saved.get("params") == params and all(
                p.is_file() and p.stat().st_size == n for p, n in model_files(model, saved["info"])):
            return model, saved["info"], True
    print(f"generating {model} ...", flush=True)
    sidecar.unlink(missing_ok=True)
    info = big_model.build(args.gb, model, external, d=args.d_model, vocab=args.vocab,
                           seed=args.seed)
    sidecar.write_text(json.dumps({"params": params, "info": info}, indent=1) + "\n")
    return model, info, False


def big_model_command(args, model: Path, external: bool) -> str:
    cmd = ["PYTHONPATH=python", ".venv/bin/python", "-m", "mp.tools.big_model",
           "--gb", f"{args.gb:g}", "-o", str(model)]
    if args.d_model != 1024:
        cmd += ["--d-model", str(args.d_model)]
    if args.vocab != 32000:
        cmd += ["--vocab", str(args.vocab)]
    if args.seed:
        cmd += ["--seed", str(args.seed)]
    if external:
        cmd.append("--external")
    return " ".join(cmd)


def warm(paths) -> None:
    """Reads each file once (into the page cache)."""
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while f.read(16 * MIB):
                pass


# ---------------------------------------------------------------- measuring

def measure(cmd: list[str], sample_s: float) -> dict:
    """Runs ``cmd`` (through mp.tools.measure: a small helper process spawns it, stdin
    /dev/null, output to a temporary file): its wall time, user and system time and max
    RSS (wait4's rusage in the helper, so Python's own memory is not counted), and the
    peaks of VmRSS, RssAnon and RssFile sampled every ``sample_s``."""
    try:
        return measuring.run(cmd, sample_s, prefix="mp-import-bench-")
    except measuring.Failed as e:
        raise SystemExit(str(e)) from None


def mp_opt_cmd(mp_opt: Path, model: Path, run_args: list[str], summary: Path) -> list[str]:
    return [str(mp_opt), str(model), *(a.format(summary=summary) for a in run_args)]


# ---------------------------------------------------------------- report

def mib(n: float) -> str:
    return f"{n / MIB:,.0f}".replace(",", " ") + " MiB"


def size(n: int) -> str:
    return f"{n / GIB:.3f} GiB" if n >= GIB // 2 else f"{n / MIB:.1f} MiB"


def spaced(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def per_run(values, unit="") -> str:
    return " / ".join(f"{v:.2f}" for v in values) + unit


def span(values, unit=" s") -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.2f}{unit}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}{unit}"


def summary_line(path: Path) -> str:
    try:
        for line in path.read_text().splitlines():
            if line.startswith("parameters:"):
                return line.strip()
    except OSError:
        pass
    return "(no parameters line)"


def render(args, *, models: dict, results: dict, baseline: list[dict], env: dict) -> list[str]:
    info = models["A"]["info"]
    wb = info["weight_bytes"]
    data_b = models["B"]["info"]["data_bytes"]

    def rs(v, r):
        return results[v][r]

    def top(v, r, k):
        return max(m[k] for m in rs(v, r))

    def ratio(v, r):
        return top(v, r, "max_rss") / wb

    reused = [k for k in models if models[k]["reused"]]
    lines = report.begin(
        f"Import time and memory of a {size(wb)} model",
        "How long `mp-opt` takes to import a large ONNX model and how much memory it holds, "
        "with the weights inline (A) and in an external data file (B), for import alone and "
        "for two things done after it. The peak memory is compared with the bytes of the "
        "weights: import keeps one copy of them (or maps the data file), so the goal is a "
        "ratio near 1 inline and far below 1 with external data.",
        command=env["command"], measured=env["commit"],
        extra=[f"mp-opt: `{report.rel(args.mp_opt)}` ({report.built(args.mp_opt)}, sha256 "
               f"`{env['mp_opt_sha'][:16]}`), measured as a copy taken when the run started",
               f"Memory: {env['ram']}; load average (1 min) {env['load_before']:.2f} before "
               f"the series, {env['load_after']:.2f} after",
               f"Series: {env['started']} to {env['ended']}, {args.repeat} round"
               f"{'s' if args.repeat != 1 else ''} of every configuration; onnx "
               f"{onnx.__version__}, Python {sys.version.split()[0]}"])
    lines += ["", "## Models", ""]
    lines.append(
        f"Generated with `python/mp/tools/big_model.py` (its docstring says what the graph "
        f"is): GPT-like decoder, d_model {info['d_model']}, {info['heads']} heads, FFN "
        f"{info['ffn']}, vocab {info['vocab']}, {info['layers']} layer"
        f"{'s' if info['layers'] != 1 else ''}, opset {info['opset']}, fp32, "
        f"{info['initializers']} weight tensors of random normal values, "
        f"**{spaced(wb)} weight bytes ({size(wb)}, {info['parameters'] / 1e6:.1f} M "
        f"parameters)**. "
        + (f"The files of an earlier run with the same parameters were reused "
           f"({', '.join(reused)})." if reused else "Both were generated for this run.")
        + " Every file was read once before the series, so they were in the page cache.")
    if info["layers"] == 1 and wb > 1.5 * args.gb * GIB:
        lines.append("")
        lines.append(f"(--gb {args.gb:g} asks for less than the embedding, LM head and one "
                     f"layer at this d_model and vocab: the model is that minimum.)")
    lines += ["", "```sh"]
    lines += [big_model_command(args, f"{env['work']}/{k}/model.onnx", ext) + f"  # {label}"
              for k, label, ext in VARIANTS]
    lines += ["```", ""]
    lines += report.table(
        ["variant", "files"],
        [(label, " + ".join(f"{p.name} {spaced(n)} B"
                            for p, n in model_files(models[k]["path"], models[k]["info"])))
         for k, label, _ in VARIANTS])

    lines += ["", "## Results", ""]
    lines.append("`mp-opt MODEL ARGS`, each configuration run "
                 f"{args.repeat} time{'s' if args.repeat != 1 else ''}: wall, user and sys "
                 "list every run; max RSS is the largest of the runs (wait4's ru_maxrss), "
                 "RSS / weights = max RSS / the weight bytes. Peak anon and peak file are the "
                 "largest RssAnon (heap) and RssFile (mapped files: mp-opt's libraries, "
                 f"the external data) of /proc/PID/status sampled every {args.sample_ms:g} ms, "
                 "so short peaks can be missed.")
    lines.append("")
    for _, label, desc, run_args in RUNS:
        shown = " ".join(a.format(summary="FILE") for a in run_args)
        lines.append(f"- {label.split(' ', 1)[0]} {desc}: `{shown}`")
    lines.append("")
    rows = []
    for v, vlabel, _ in VARIANTS:
        for r, rlabel, _, _ in RUNS:
            ms = rs(v, r)
            rows.append((vlabel, rlabel, per_run([m["wall"] for m in ms], " s"),
                         per_run([m["user"] for m in ms], " s"),
                         per_run([m["sys"] for m in ms], " s"),
                         mib(top(v, r, "max_rss")), f"{ratio(v, r):.2f}",
                         mib(top(v, r, "peak_anon")), mib(top(v, r, "peak_file"))))
    lines += report.table(["variant", "run", "wall", "user", "sys", "max RSS", "RSS / weights",
                           "peak anon", "peak file"], rows, align="llrrrrrrr")
    lines.append("")
    spread = max(max(m["max_rss"] for m in ms) - min(m["max_rss"] for m in ms)
                 for per in results.values() for ms in per.values())
    base_rss = max(m["max_rss"] for m in baseline)
    sums = {v: summary_line(models[v]["summary"]) for v, _, _ in VARIANTS}
    summary_text = (f"`{sums['A']}` (A and B)" if sums["A"] == sums["B"]
                    else "; ".join(f"{v}: `{s}`" for v, s in sums.items()))
    lines.append(
        (f"Max RSS differed by at most {spread / MIB:.1f} MiB between the runs of a row. "
         if args.repeat > 1 else "")
        + f"`mp-opt --version` alone (its own libraries) has a max RSS of {mib(base_rss)}. "
        f"Summary output of (a): {summary_text}.")

    # What the numbers mean: every number below comes from `results`, and
    # each claim that depends on them is chosen by them.
    lib_file = top("A", "a", "peak_file")  # inline import maps no data: the libraries

    def data_read(r):
        """File pages of B's run ``r`` beyond the libraries: the data it paged in."""
        return max(0, top("B", r, "peak_file") - lib_file)

    def walls(v, r):
        return span([m["wall"] for m in rs(v, r)])

    def extra(v, r):
        return top(v, r, "max_rss") - top(v, "a", "max_rss")

    def sys_share(v, r):
        ms = rs(v, r)
        cpu = sum(m["user"] + m["sys"] for m in ms)
        return sum(m["sys"] for m in ms) / cpu if cpu else 0.0

    def read_text(r):
        return (f"{mib(data_read(r))} of the {mib(data_b)} data file "
                f"({data_read(r) / data_b * 100:.0f}%)")

    lines += ["", "### What the numbers mean", ""]
    net = top("A", "a", "max_rss") - base_rss
    lines.append(
        f"- **Import** (a): the inline model imports in {walls('A', 'a')} at "
        f"{ratio('A', 'a'):.2f}x the weight bytes ({net / wb:.2f}x without the "
        f"{mib(base_rss)} of `mp-opt --version`; the stream parser copies each raw_data "
        f"once and does not map the file whole next to the copies), the external-data model "
        f"in {walls('B', 'a')} at {ratio('B', 'a'):.2f}x ({mib(top('B', 'a', 'max_rss'))}, "
        f"{mib(top('B', 'a', 'max_rss') - base_rss)} over `--version`). B maps "
        f"`model.onnx.data` and pages in only what is read: its file RSS beyond the inline "
        f"import's (mp-opt's libraries) was {read_text('a')}, so import "
        + ("did not read the weights." if data_read("a") < data_b / 4
           else "read much of the weights."))
    lines.append(
        f"- **Printing** (b) holds {mib(extra('A', 'b'))} (A) and {mib(extra('B', 'b'))} (B) "
        f"more than import alone ({ratio('A', 'b'):.2f}x and {ratio('B', 'b'):.2f}x the "
        f"weights) and takes {walls('A', 'b')} (A) and {walls('B', 'b')} (B), "
        f"{sys_share('A', 'b') * 100:.0f}% and {sys_share('B', 'b') * 100:.0f}% of the CPU "
        "time in the kernel. Textual IR holds every weight as a hex string; with "
        "`--mlir-elide-resource-strings-if-larger` the output is small, but B paged in "
        f"{read_text('b')}: "
        + ("the printer reads and encodes each blob before deciding to elide it."
           if data_read("b") >= data_b / 2 else "the printer skips most blobs it elides.")
        + " Printing is for debugging small models, not part of the import path.")
    alive = extra("A", "c") >= wb / 4
    lines.append(
        f"- **f16 conversion** (c) holds {mib(extra('A', 'c'))} (A) and "
        f"{mib(extra('B', 'c'))} (B) more than import alone, against {mib(wb / 2)} for fp16 "
        f"copies of all weights (peak anon A {mib(top('A', 'c', 'peak_anon'))}, B "
        f"{mib(top('B', 'c', 'peak_anon'))}; B paged in {read_text('c')}, clean page cache "
        "the kernel can reclaim). "
        + ("The fp16 copies are made while the fp32 originals are still alive: releasing "
           "(or never materializing) the fp32 blobs once converted would bring (c) down to "
           "about the import-only peak plus the fp16 bytes."
           if alive else "The fp32 originals are released as they are converted."))
    lines += ["", "## History", "",
              "Earlier versions of this page (`git log -p bench/import.md`) hold the "
              "measurements from before the stream parser and `--no-output`."]
    return lines


# ---------------------------------------------------------------- main

def ram() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) * 1024 / GIB:.1f} GiB RAM"
    except OSError:
        pass
    return "RAM unknown"


def utc() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, default=REPO / "bench" / "import.md")
    ap.add_argument("--gb", type=float, default=1.0, help="weights in GiB (big_model --gb)")
    ap.add_argument("--repeat", type=int, default=2, help="runs of every configuration")
    ap.add_argument("--work", type=Path,
                    help="where the models are generated and kept (default: a temporary "
                         "folder, deleted afterwards)")
    ap.add_argument("--d-model", type=int, default=1024, help="big_model --d-model")
    ap.add_argument("--vocab", type=int, default=32000, help="big_model --vocab")
    ap.add_argument("--seed", type=int, default=0, help="big_model --seed")
    ap.add_argument("--sample-ms", type=float, default=20,
                    help="period of the /proc/PID/status samples")
    ap.add_argument("--mp-opt", type=Path, default=build_tool("mp-opt"))
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.d_model <= 0 or args.d_model % big_model.HEADS:
        ap.error(f"--d-model must be a positive multiple of {big_model.HEADS}")
    if not args.mp_opt.is_file():
        ap.error(f"{args.mp_opt} is not built")
    command = " ".join([".venv/bin/python bench/import.py",
                        *(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))])
    env = {"command": command, "commit": report.commit(), "ram": ram()}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="mp-import-bench-") as tmp:
        tmp = Path(tmp)
        env["work"] = report.rel(args.work) if args.work else "$WORK"
        args.work = (args.work or tmp / "models").resolve()
        mp_opt = measuring.snapshot([args.mp_opt], tmp / "tools")["mp-opt"]
        env["mp_opt_sha"] = measuring.sha256(mp_opt)
        models = {}
        for key, label, external in VARIANTS:
            path, info, reused = make_model(args, key, external)
            models[key] = {"path": path, "info": info, "reused": reused,
                           "summary": tmp / f"summary-{key}.txt"}
            print(f"{label}: {path} ({'reused' if reused else 'generated'}), "
                  f"{info['weight_bytes']} weight bytes", flush=True)
        warm(p for m in models.values() for p, _ in model_files(m["path"], m["info"]))
        env["load_before"] = os.getloadavg()[0]
        env["started"] = utc()
        results = {k: {r: [] for r, *_ in RUNS} for k, *_ in VARIANTS}
        baseline = []
        for i in range(args.repeat):
            baseline.append(measure([str(mp_opt), "--version"], args.sample_ms / 1000))
            for key, label, _ in VARIANTS:
                for r, rlabel, _, run_args in RUNS:
                    m = measure(mp_opt_cmd(mp_opt, models[key]["path"], run_args,
                                           models[key]["summary"]), args.sample_ms / 1000)
                    results[key][r].append(m)
                    print(f"round {i + 1}: {label} {rlabel}: {m['wall']:.2f} s, max RSS "
                          f"{m['max_rss'] / MIB:.0f} MiB", flush=True)
        env["ended"] = utc()
        env["load_after"] = os.getloadavg()[0]
        lines = render(args, models=models, results=results, baseline=baseline, env=env)
    text = report.write(args.out, lines)
    print(text)
    print(f"wrote {args.out} ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
