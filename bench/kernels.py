"""ptxas resource usage of mp's CUDA kernels, per model, precision and GPU.

    .venv/bin/python bench/kernels.py [--archs sm_80 sm_90] [--jobs 2] [-o bench/kernels.md]

For every model (each folder with a model.onnx and test_data_set_0 under
../shared/models and examples/), in fp32 and mixed precision:

1. `mp-compile MODEL --shapes-from DIR/test_data_set_0 --target cuda
   --gpu sm_80,sm_90 --emit ptx [--precision mixed]` ($MP_BUILD_DIR/bin or
   build/bin) writes the kernel module (one, holding every kernel) per
   architecture, after a line `// ----- kernel module NAME for sm_XY`;
2. each module (one per model: every kernel is in it) is written to its own
   .ptx file (temp dir) and assembled with `ptxas -v -arch=sm_XY`;
3. the `-v` report gives, per entry function, registers, shared memory,
   stack frame and spill stores/loads, summarised in bench/kernels.md.

No GPU is needed. Exits non-zero if mp-compile or any ptxas run fails.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from mp.tools import build_tool  # noqa: E402
from mp.tools.report import command_output, header, table  # noqa: E402

HEADER = re.compile(r"^// ----- kernel module (\S+) for (sm_\d+)\s*$", re.M)
ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\d+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers(.*)")
SMEM = re.compile(r"(\d+) bytes smem")
ENTRY_PTX = re.compile(r"^\.visible \.entry (\w+)\(", re.M)


def mp_compile() -> Path:
    return build_tool("mp-compile")


def binary_id(path: Path) -> str:
    """sha256 prefix of a binary, waiting up to 2 min while it is being rebuilt."""
    for _ in range(60):
        if path.is_file():
            return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        time.sleep(2)
    raise FileNotFoundError(path)


def find_ptxas() -> Path | None:
    for var in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var) and (Path(os.environ[var]) / "bin" / "ptxas").is_file():
            return Path(os.environ[var]) / "bin" / "ptxas"
    found = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    return Path(found) if Path(found).is_file() else None


def models() -> list[Path]:
    dirs = sorted((REPO.parent / "shared" / "models").glob("*/model.onnx"))
    dirs += sorted((REPO / "examples").glob("*/model.onnx"))
    return [m.parent for m in dirs if (m.parent / "test_data_set_0").is_dir()]


def parse_ptxas(log: str) -> list[dict]:
    """One dict per entry function in a `ptxas -v` report."""
    kernels, cur = [], None
    for line in log.splitlines():
        if m := ENTRY.search(line):
            cur = {"entry": m.group(1), "regs": None, "smem": 0, "stack": 0, "spill_st": 0, "spill_ld": 0}
            kernels.append(cur)
        elif cur and (m := FRAME.search(line)):
            cur["stack"], cur["spill_st"], cur["spill_ld"] = map(int, m.groups())
        elif cur and (m := USED.search(line)):
            cur["regs"] = int(m.group(1))
            if s := SMEM.search(m.group(2)):
                cur["smem"] = int(s.group(1))
    return kernels


def entry_features(ptx: str) -> dict:
    """{entry: (uses mma.sync, uses shfl.sync)} for every kernel of a module."""
    heads = list(ENTRY_PTX.finditer(ptx))
    out = {}
    for i, h in enumerate(heads):
        body = ptx[h.end():heads[i + 1].start() if i + 1 < len(heads) else len(ptx)]
        out[h.group(1)] = ("mma.sync" in body, "shfl.sync" in body)
    return out


def run_ptxas(ptxas: Path, ptx: Path, arch: str) -> tuple[int, str]:
    p = subprocess.run([str(ptxas), "-v", f"-arch={arch}", str(ptx), "-o", os.devnull],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def measure(model: Path, precision: str, archs: list[str], ptxas: Path, tmp: Path,
            jobs: int = 2) -> dict:
    """Compiles one model to PTX and runs ptxas on every module. Returns
    {arch: {"kernels": [dict(module, entry, regs, ...)], "failures": [(module, log)]}}."""
    out = tmp / f"{model.name}.{precision}.ptx"
    cmd = [str(mp_compile()), str(model / "model.onnx"), "--shapes-from",
           str(model / "test_data_set_0"), "--target", "cuda", "--gpu", ",".join(archs),
           "--emit", "ptx", "-o", str(out)]
    if precision == "mixed":
        cmd += ["--precision", "mixed"]
    binary_id(mp_compile())  # waits if mp-compile is briefly missing (a rebuild)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    text = out.read_text()
    heads = list(HEADER.finditer(text))
    jobs_in = []
    for i, h in enumerate(heads):
        body = text[h.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        path = tmp / f"{model.name}.{precision}.{h.group(1)}.{h.group(2)}.ptx"
        path.write_text(body)
        jobs_in.append((h.group(1), h.group(2), path, entry_features(body)))
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda j: run_ptxas(ptxas, j[2], j[1]), jobs_in))
    res = {a: {"kernels": [], "failures": []} for a in archs}
    for (module, arch, _, features), (rc, log) in zip(jobs_in, results):
        entries = parse_ptxas(log) if rc == 0 else []
        if rc != 0 or not entries:
            res[arch]["failures"].append((module, log.strip()))
        for e in entries:
            mma, shfl = features.get(e["entry"], (False, False))
            res[arch]["kernels"].append({"module": module, "mma": mma, "shfl": shfl, **e})
    return res


def report(results: dict, archs: list[str], ptxas: Path, mp_id: str) -> str:
    ver = command_output([str(ptxas), "--version"]).splitlines()
    lines = [
        "# CUDA kernels: ptxas resource usage",
        "",
        "Registers, shared memory, stack frame and spills that `ptxas -v` reports for every",
        "kernel `mp-compile --target cuda --emit ptx` writes, per model (folders with a",
        "model.onnx under ../shared/models and examples/, shapes from test_data_set_0),",
        f"precision (fp32, mixed) and architecture ({', '.join(archs)}). No GPU is used.",
        "",
        "f16 contractions (MatMul, Gemm, Conv as implicit GEMM, attention's products) run on",
        "Tensor Cores (`mma.sync` m16n8k16, f32 accumulation: the *TC kernels* column,",
        "`mp-contraction-to-mma`); reductions along contiguous rows of at least 32 elements",
        "(Softmax, LayerNorm, Reduce*) are one block per row with warp shuffles and shared",
        "memory (`mp-reduction-to-gpu`); attention without mask tensors is a split-KV flash",
        "attention kernel pair whose first kernel sums dot products with warp shuffles",
        "(both count in the *shuffle kernels* column); every other op is the baseline",
        "kernel of docs/compile.md (one kernel per fused linalg op, one thread per output",
        "element). In fp32 only models stored in f16 (the llama and GQA ones) have f16",
        "contractions, hence TC kernels. The goal is **zero spills in the main kernels**",
        "(matmul, conv, attention).",
        "",
        *header(".venv/bin/python bench/kernels.py -o bench/kernels.md",
                f"ptxas: {ver[-1] if ver else 'unknown'} ({ver[-2] if len(ver) > 1 else ''})",
                f"mp-compile sha256 `{mp_id}`"),
        "",
        "## Summary",
        "",
        "Kernels: ptxas entry functions. Spilling: kernels with any spill store or load;",
        "spill bytes: stores + loads summed over all kernels.",
        "",
    ]
    rows = []
    for (model, prec), per_arch in results.items():
        for arch in archs:
            ks, fails = per_arch[arch]["kernels"], per_arch[arch]["failures"]
            spill = [k for k in ks if k["spill_st"] or k["spill_ld"]]
            tc = [k for k in ks if k["mma"]]
            rows.append((model, prec, arch, len(ks), len(tc), sum(k["shfl"] for k in ks), len(fails),
                         max((k["regs"] or 0 for k in ks), default=0),
                         max((k["regs"] or 0 for k in tc), default="-"), len(spill),
                         sum(k["spill_st"] + k["spill_ld"] for k in ks),
                         max((k["stack"] for k in ks), default=0),
                         max((k["smem"] for k in ks), default=0)))
    lines += table(["model", "precision", "arch", "kernels", "TC kernels", "shuffle kernels",
                    "ptxas failures", "max registers", "max TC registers", "spilling kernels",
                    "spill bytes", "max stack", "max smem"], rows, align="lllrrrrrrrrrr")
    lines += ["", "## Most registers", "",
              "Per model, the 3 kernels with the most registers (fp32 and mixed kernels are",
              "numbered separately); registers on each architecture, and any spill bytes.", ""]
    for model in dict.fromkeys(m for m, _ in results):
        mods: dict = {}
        for (m, prec), pa in results.items():
            for arch in archs:
                for k in pa[arch]["kernels"] if m == model else []:
                    mods.setdefault((k["entry"], prec), {})[arch] = k
        top = sorted(mods.items(), key=lambda kv: -max(k["regs"] or 0 for k in kv[1].values()))[:3]
        lines.append(f"- **{model}**: " + "; ".join(
            f"`{mod}` ({prec}): " + ", ".join(
                f"{k['regs']} {a}" + (f" ({k['spill_st'] + k['spill_ld']} B spill)"
                                      if k["spill_st"] or k["spill_ld"] else "")
                for a, k in per.items()) for (mod, prec), per in top))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archs", nargs="+", default=["sm_80", "sm_90"])
    ap.add_argument("--precisions", nargs="+", default=["fp32", "mixed"])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("-o", "--output", type=Path, default=REPO / "bench" / "kernels.md")
    args = ap.parse_args(argv)
    ptxas = find_ptxas()
    if ptxas is None or not mp_compile().is_file():
        print(f"need ptxas ({ptxas}) and mp-compile ({mp_compile()})", file=sys.stderr)
        return 2
    results, failed, mp_id = {}, 0, binary_id(mp_compile())
    with tempfile.TemporaryDirectory(prefix="mp-kernels-") as tmp:
        for model in models():
            for prec in args.precisions:
                res = measure(model, prec, args.archs, ptxas, Path(tmp), args.jobs)
                results[(model.name, prec)] = res
                for arch in args.archs:
                    r = res[arch]
                    failed += len(r["failures"])
                    for module, log in r["failures"]:
                        print(f"  ptxas FAILED {module} {arch}:\n{log[-1500:]}", file=sys.stderr)
                    print(f"{model.name} {prec} {arch}: {len(r['kernels'])} kernels "
                          f"({sum(k['mma'] for k in r['kernels'])} on Tensor Cores, "
                          f"{sum(k['shfl'] for k in r['kernels'])} with shuffles), "
                          f"max {max((k['regs'] or 0 for k in r['kernels']), default=0)} registers, "
                          f"{len(r['failures'])} failures", file=sys.stderr)
    if binary_id(mp_compile()) != mp_id:
        print("mp-compile changed during the run (rebuilt?); not writing the report, rerun",
              file=sys.stderr)
        return 1
    args.output.write_text(report(results, args.archs, ptxas, mp_id))
    print(f"wrote {args.output}" + (f"; {failed} ptxas failures" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
