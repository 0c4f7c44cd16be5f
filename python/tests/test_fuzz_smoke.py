"""The importer fuzz smoke: a fixed-seed run of mp.tools.fuzz_import on the
models committed to the repository (--corpus repo: no ../shared needed).

The long run is bench/fuzz-import.py. A crash, timeout or odd result here
prints the saved mutants (model.onnx, repro.sh, stderr.txt) to reproduce it.
"""

import json
import os
import subprocess
import sys

from conftest import BUILD, PYTHON_DIR, require_built

MP_OPT = BUILD / "bin" / "mp-opt"
SEED = 1
# 20-28 s with --jobs 1 on the 2-core development machine (load 3-7): not slow.
COUNT = 300


def fuzz(*args, hash_seed=None, timeout=300):
    """Runs python -m mp.tools.fuzz_import on the repository's models."""
    require_built(MP_OPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(PYTHON_DIR)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = str(hash_seed)
    p = subprocess.run([sys.executable, "-m", "mp.tools.fuzz_import", "--mp-opt", str(MP_OPT),
                        "--corpus", "repo", *map(str, args)],
                       capture_output=True, text=True, env=env, timeout=timeout)
    assert p.returncode == 0, f"fuzz_import {' '.join(map(str, args))} failed:\n{p.stderr[-4000:]}"
    return p.stdout


def run_summary(tmp_path, *args):
    summary = tmp_path / "summary.json"
    fuzz("--crash-dir", tmp_path / "crashes", "--summary", summary, *args)
    return json.loads(summary.read_text())


def findings(s):
    """The crash/timeout/odd signatures of a summary with their saved repros."""
    lines = []
    for key, d in sorted(s["distinct"].items()):
        lines.append(f"{key}: {d['count']}x {d['signature']} (kinds {d['kinds']}, "
                     f"seeds {d['seeds']})")
        lines += [f"    {path}/repro.sh" for path in d["saved"]]
        lines += ["    | " + line for line in d["stderr_head"].splitlines()[:6]]
    return "\n".join(lines)


def test_fuzz_smoke(tmp_path):
    s = run_summary(tmp_path, "--seed", SEED, "--count", COUNT, "--jobs", 1)
    counts = s["counts"]
    print(f"{s['mutants']} mutants in {s['elapsed_s']} s: {counts}")
    assert s["complete"] and s["mutants"] == COUNT, s
    bad = {c: counts.get(c, 0) for c in ("crash", "timeout", "odd")}
    assert not any(bad.values()), f"mp-opt on fuzzed models: {bad}\n{findings(s)}"
    # The mutants reach both paths: models mp-opt imports and ones it rejects cleanly.
    assert counts.get("ok", 0) > 0 and counts.get("error", 0) > 0, counts
    assert sum(counts.values()) == COUNT


def dry_run(seed, count, hash_seed=None, capsys=None):
    """The lines of --dry-run: one per mutant (index, seed model, mutation
    kind, size, sha256), then the sha256 of them all. In a process of its own
    with PYTHONHASHSEED=hash_seed, else here (capsys)."""
    args = ["--dry-run", "--seed", seed, "--count", count]
    if capsys is None:
        out = fuzz(*args, hash_seed=hash_seed, timeout=120)
    else:
        from mp.tools import fuzz_import
        require_built(MP_OPT)
        capsys.readouterr()
        fuzz_import.main(["--mp-opt", str(MP_OPT), "--corpus", "repo", *map(str, args)])
        out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == count + 1 and lines[-1].startswith("mutants_sha256 "), out[-2000:]
    return lines


def test_same_seed_and_count_give_the_same_mutants(capsys):
    # Two processes with different hash seeds: no set or dict order leaks in.
    a = dry_run(SEED, 40, hash_seed=0)
    assert a == dry_run(SEED, 40, hash_seed=1)
    # A prefix of a longer run: mutant i does not depend on the count.
    assert dry_run(SEED, 20, capsys=capsys)[:-1] == a[:20]
    assert dry_run(SEED + 1, 40, capsys=capsys)[-1] != a[-1]


def test_outcomes_do_not_depend_on_jobs(tmp_path, capsys):
    one = run_summary(tmp_path / "j1", "--seed", SEED, "--count", 20, "--jobs", 1)
    two = run_summary(tmp_path / "j2", "--seed", SEED, "--count", 20, "--jobs", 2)
    assert one["mutants_sha256"] == two["mutants_sha256"]
    # what --dry-run makes is what was run
    assert dry_run(SEED, 20, capsys=capsys)[-1] == "mutants_sha256 " + one["mutants_sha256"]
    assert one["outcomes_sha256"] == two["outcomes_sha256"], (one["counts"], two["counts"])
