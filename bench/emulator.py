"""Every shared model's CUDA library on the PTX emulator: numerics, not speed.

    .venv/bin/python bench/emulator.py [-o bench/emulator.md]

For each model folder (../shared/models/*, examples/*) with a test_data_set_0
and each precision, builds the CUDA library as PTX (--gpu compute_80) and
the CPU library, runs the CUDA one on the emulator (docs/emulator.md) and
records per output the largest error against onnxruntime's stored outputs
and against the CPU library, with the launches and instructions the run
issued. Needs build/bin/mp-compile and the CUDA toolkit (libdevice).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from mp.emu import Emulator  # noqa: E402
from mp.emu.check import check_library  # noqa: E402
from mp.tools import build_tool  # noqa: E402
from mp.tools.report import header, row, table, write  # noqa: E402


def compile_library(model: Path, out: Path, precision: str, *target: str) -> None:
    subprocess.run([str(build_tool("mp-compile")), str(model / "model.onnx"), "-o", str(out),
                    "--precision", precision, "--shapes-from", str(model / "test_data_set_0"),
                    *target],
                   check=True, capture_output=True, text=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, default=REPO / "bench" / "emulator.md")
    args = ap.parse_args()
    emu = Emulator.install()
    models = sorted(p.parent for p in (REPO.parent / "shared" / "models").glob("*/model.onnx"))
    models += sorted(p.parent for p in (REPO / "examples").glob("*/model.onnx"))
    rows, failed = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            for precision in ("fp32", "mixed"):
                folder = Path(tmp) / f"{model.name}-{precision}"
                compile_library(model, folder / "cuda.so", precision, "--target", "cuda",
                                "--gpu", "compute_80")
                compile_library(model, folder / "cpu.so", precision)
                before = (emu.stats.launches, emu.stats.instructions)
                start = time.perf_counter()
                report = check_library(str(folder / "cuda.so"), model / "test_data_set_0",
                                       str(folder / "cpu.so"))
                seconds = time.perf_counter() - start
                if report.error:
                    failed += 1
                    rows.append((model.name, precision, f"ERROR {report.error[:120]}",
                                 "", "", "", "", ""))
                    continue
                launches = emu.stats.launches - before[0]
                issued = emu.stats.instructions - before[1]
                for v in (v for v in report.verdicts if v.against == "expected"):
                    cpu = next(c for c in report.verdicts
                               if c.output == v.output and c.against != "expected")
                    failed += not cpu.passed
                    rows.append((model.name, precision, v.output,
                                 f"{'PASS' if v.passed else 'FAIL'} {v.detail.split(', ')[0][12:]}",
                                 f"{'PASS' if cpu.passed else 'FAIL'} {cpu.detail.split(', ')[0][12:]}",
                                 launches, issued, f"{seconds:.1f}"))
                print(row(rows[-1]), flush=True)
    lines = [
        "# CUDA libraries on the PTX emulator", "",
        "Each shared model's CUDA library, built as PTX (`mp-compile --target cuda --gpu "
        "compute_80`), run on the PTX emulator (`docs/emulator.md`): every kernel (Tensor Core "
        "`mma.sync`, warp-shuffle reductions, flash attention, generic kernels) executed from "
        "its PTX on the CPU, under the generated host code and the mp runtime. Numerics only: "
        "the emulator says nothing about speed.", "",
        "- vs onnxruntime: the largest |error| against the stored `output_N.pb`, PASS at "
        "mp-run's tolerances (fp32 1e-4/1e-5; mixed and f16 outputs rtol 1e-2, atol 1e-2 x max|ref| in [1e-3, 1]);",
        "- vs CPU library: the same against the CPU library of the same graph and precision;",
        "- launches, instructions: kernel launches of the run and instructions the emulator "
        "issued (one per group of threads executing it together); s: emulation time.", "",
        *header(".venv/bin/python bench/emulator.py"), "",
        *table(["model", "precision", "output", "vs onnxruntime", "vs CPU library", "launches",
                "instructions", "s"], rows, align="lllllrrr")]
    write(args.output, lines)
    print(f"wrote {args.output}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
