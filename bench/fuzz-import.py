#!/usr/bin/env python3
"""Regenerates bench/fuzz-import.md: the long fuzz run of mp-opt's ONNX importer.

    .venv/bin/python bench/fuzz-import.py [-o bench/fuzz-import.md] [--seeds 1 2]
        [--seconds 150] [--count N] [--jobs 2] [--corpus default]

Runs `python -m mp.tools.fuzz_import` once per run seed (each in a process of
its own, one after the other: 2 x 150 s by default, 2 mp-opt jobs each) on
the seed models of --corpus ("default": ../shared/models/*/model.onnx when
present and examples/tts_decoder; "all" adds the small models of the
repository) and writes the report: totals per run seed, outcomes per
mutation kind and per seed model, and the signatures of every crash, timeout
or odd result with the mutants saved to reproduce them (under --crash-dir,
not committed). With --count every run seed makes exactly that many mutants
(--seconds then only bounds it), so the mutants are the same on any machine.
Every number of the report comes from the run; the quick fixed-seed version
is python/tests/test_fuzz_smoke.py.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import onnx  # noqa: E402

from mp.tools import build_tool, fuzz_import, report  # noqa: E402

CLASSES = ("ok", "error", "crash", "timeout", "odd")


def run_seed(seed: int, args, summary: Path) -> dict:
    """One fuzz_import run; its JSON summary."""
    cmd = [sys.executable, "-m", "mp.tools.fuzz_import", "--seed", str(seed),
           "--jobs", str(args.jobs), "--timeout", str(args.timeout), "--mp-opt", str(args.mp_opt),
           "--corpus", args.corpus, "--crash-dir", str(args.crash_dir), "--summary", str(summary)]
    if args.count is not None:
        cmd += ["--count", str(args.count)]
    if args.seconds is not None:
        cmd += ["--seconds", str(args.seconds)]
    print("+", " ".join(shlex.quote(c) for c in cmd), flush=True)
    # The JSON summary also goes to stdout: only the progress lines (crashes) are shown.
    p = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    for line in p.stdout:
        if line.startswith("["):
            print(line, end="", flush=True)
    if p.wait() != 0:
        raise SystemExit(f"fuzz_import --seed {seed} failed (rc {p.returncode})")
    return json.loads(summary.read_text())


def counts_row(label, c: collections.Counter | dict, *first) -> list:
    return [label, *first, sum(c.get(k, 0) for k in CLASSES), *(c.get(k, 0) for k in CLASSES)]


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def render(runs: dict[int, dict], args, *, command: str, measured: str) -> list[str]:
    first = next(iter(runs.values()))
    total = collections.Counter()
    by_kind = collections.defaultdict(collections.Counter)
    by_seed = collections.defaultdict(collections.Counter)
    distinct: dict[str, dict] = {}
    for s in runs.values():
        total.update(s["counts"])
        for k, c in s["by_kind"].items():
            by_kind[k].update(c)
        for k, c in s["by_seed"].items():
            by_seed[k].update(c)
        for key, d in s["distinct"].items():
            e = distinct.setdefault(key, {"class": d["class"], "signature": d["signature"],
                                          "count": 0, "kinds": collections.Counter(),
                                          "seeds": collections.Counter(), "saved": [],
                                          "stderr_head": d["stderr_head"]})
            e["count"] += d["count"]
            e["kinds"].update(d["kinds"])
            e["seeds"].update(d["seeds"])
            e["saved"] += d["saved"]
    n = sum(total.values())
    elapsed = sum(s["elapsed_s"] for s in runs.values())
    per_run = (f"exactly {args.count} mutants" + (f" (at most {args.seconds:g} s)" if args.seconds
                                                   else "")
               if args.count is not None else f"{args.seconds:g} s")
    mp_opt = Path(args.mp_opt)
    lines = report.begin(
        "Fuzzing the ONNX importer",
        "`python -m mp.tools.fuzz_import` (see its docstring) mutates real models, one mutation "
        "kind per mutant (byte-level, or protobuf-aware through onnx) applied 1-3 times, runs "
        "`mp-opt MUTANT -o /dev/null` (30% of them with `--mp-model-summary`) and classifies the "
        "result: **ok** (rc 0), **error** (rc 1 with an `error:` line), **crash** (a signal, "
        "rc >= 128, a stack dump or an assertion), **timeout**, **odd** (anything else). "
        f"Run seeds {', '.join(map(str, runs))}, {per_run} each, {args.jobs} mp-opt jobs, "
        f"{args.timeout:g} s timeout per mp-opt run. Seed models (`--corpus {args.corpus}`, "
        f"{len(first['models'])}, a seed model's `*.data` files linked beside each of its "
        "mutants): " + ", ".join(f"`{m}`" for m in first["models"]) + ".",
        command=command, measured=measured,
        extra=[f"mp-opt: `{report.rel(mp_opt)}` ({report.built(mp_opt)}, sha256 "
               f"`{sha256_file(mp_opt)[:16]}`)",
               f"onnx {onnx.__version__} (the mutator), Python {sys.version.split()[0]}",
               f"Total: {n} mutants in {elapsed:.0f} s"])
    lines += ["", "## Totals", ""]
    lines.append(f"{n} mutants: " + ", ".join(f"{total.get(k, 0)} {k}" for k in CLASSES) + ".")
    lines.append("")
    rows = [counts_row(str(seed), s["counts"], f"{s['elapsed_s']:.0f}",
                       f"{s['mutants'] / s['elapsed_s']:.1f}" if s["elapsed_s"] else "-")
            for seed, s in runs.items()]
    rows.append(counts_row("**all**", total, f"{elapsed:.0f}",
                           f"{n / elapsed:.1f}" if elapsed else "-"))
    lines += report.table(["run seed", "s", "mutants/s", "mutants", *CLASSES], rows,
                          align="lrrrrrrrr")
    if args.count is not None:
        lines += ["", "Mutants and outcomes per run seed (sha256 over the mutants in order, "
                  "see fuzz_import's summary; the same on every machine for the same mp-opt "
                  "and seed models):", ""]
        lines += report.table(
            ["run seed", "complete", "mutants_sha256", "outcomes_sha256"],
            [(seed, "yes" if s["complete"] else "no (--seconds)", f"`{s['mutants_sha256'][:16]}`",
              f"`{s['outcomes_sha256'][:16]}`") for seed, s in runs.items()])
    lines += ["", "## Per mutation kind", ""]
    lines += report.table(["kind", "mutants", *CLASSES],
                          [counts_row(k, by_kind[k]) for k in sorted(by_kind)], align="lrrrrrr")
    lines += ["", "## Per seed model", ""]
    lines += report.table(["seed model", "mutants", *CLASSES],
                          [counts_row(k, by_seed[k]) for k in sorted(by_seed)], align="lrrrrrr")
    lines += ["", "## Crashes, timeouts and odd results", ""]
    if not distinct:
        lines.append("None.")
    else:
        plural = "" if len(distinct) == 1 else "s"
        lines.append(f"{len(distinct)} distinct signature{plural}. Up to 3 mutants of each are "
                     f"saved under `{args.crash_dir}` (not committed): `sh DIR/repro.sh` "
                     "reruns one.")
        lines.append("")
        lines += report.table(
            ["class", "signature", "mutants", "kinds", "seed models", "saved"],
            [(d["class"], f"`{d['signature']}`", d["count"],
              ", ".join(f"{k} {v}" for k, v in d["kinds"].most_common()),
              ", ".join(f"{k} {v}" for k, v in d["seeds"].most_common()),
              "<br>".join(f"`{p}`" for p in d["saved"]))
             for _, d in sorted(distinct.items(), key=lambda kv: (-kv[1]["count"], kv[0]))],
            align="llrlll")
        for key, d in sorted(distinct.items()):
            lines += ["", f"<details><summary>{key}: stderr of the first mutant</summary>", "",
                      "```", d["stderr_head"], "```", "", "</details>"]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, default=REPO / "bench" / "fuzz-import.md")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2], help="run seeds")
    ap.add_argument("--seconds", type=float, help="per run seed (default 150 without --count)")
    ap.add_argument("--count", type=int, help="exactly this many mutants per run seed")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20, help="seconds per mp-opt run")
    ap.add_argument("--corpus", choices=fuzz_import.CORPORA, default="default")
    ap.add_argument("--mp-opt", type=Path, default=build_tool("mp-opt"))
    ap.add_argument("--crash-dir", type=Path, default=fuzz_import.CRASH_DIR)
    args = ap.parse_args(argv)
    if args.count is None and args.seconds is None:
        args.seconds = 150
    if not args.mp_opt.is_file():
        ap.error(f"{args.mp_opt} is not built")
    command = " ".join([".venv/bin/python bench/fuzz-import.py",
                        *(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))])
    measured = report.commit()
    runs = {}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="mp-fuzz-bench-") as tmp:
        for seed in args.seeds:
            runs[seed] = run_seed(seed, args, Path(tmp) / f"summary-{seed}.json")
            print(f"run seed {seed}: {runs[seed]['mutants']} mutants, {runs[seed]['counts']}",
                  flush=True)
    text = report.write(args.out, render(runs, args, command=command, measured=measured))
    print(text)
    print(f"wrote {args.out} ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
