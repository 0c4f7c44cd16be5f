"""What the GPU check scripts (kv_decode.py, dynamic.py) share: the
tolerance check, the report files and the command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

NAN = float("nan")


def excess(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> float:
    """max(|got - want| - (atol + rtol |want|)): <= 0 when every element is
    within tolerance (-inf for an empty array)."""
    want64 = want.astype(np.float64)
    diff = np.abs(got.astype(np.float64) - want64) - (atol + rtol * np.abs(want64))
    return float(diff.max()) if diff.size else -np.inf


def result_cell(row: dict) -> str:
    """PASS, FAIL, or ERROR with the message of a row that raised."""
    if row["passed"]:
        return "PASS"
    return "ERROR " + row["error"] if "error" in row else "FAIL"


def write_report(out: Path, name: str, report: dict, lines: list[str]) -> int:
    """OUT/NAME.json and OUT/NAME.md; 1 if any row failed, else 0."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / f"{name}.md").write_text("\n".join(lines) + "\n")
    return 0 if all(r["passed"] for r in report["results"]) else 1


def library_target(device: str) -> str:
    """The libraries a run on `device` loads: "cpu" or "cuda"; "emulator"
    runs the CUDA ones on the PTX emulator (docs/emulator.md), installed
    here, before the runtime loads a driver."""
    if device == "emulator":
        from mp.emu import Emulator
        Emulator.install()
        return "cuda"
    return device


def timed_runs(device: str) -> int:
    """Timed repetitions per measurement: 20, or 2 on the emulator (whose
    times mean nothing and whose steps take seconds)."""
    return 2 if device == "emulator" else 20


def main(argv: list[str], prepare: Callable[[Path], int],
         run: Callable[..., int], doc: str) -> int:
    """`prepare ART` or `run ART OUT [cpu|emulator]`; else the usage."""
    if len(argv) == 2 and argv[0] == "prepare":
        return prepare(Path(argv[1]))
    if len(argv) in (3, 4) and argv[0] == "run" and argv[3:] in ([], ["cpu"], ["emulator"]):
        return run(Path(argv[1]), Path(argv[2]), *argv[3:])
    print(doc, file=sys.stderr)
    return 2
