"""The header and tables of mp's markdown reports (bench/*.md and the sweeps of mp.tools).

Every report names the date, the machine and the mp commit it measured
(with a mark when the working tree had uncommitted changes), then what it
is specific to it::

    from mp.tools import report

    lines = ["# Title", "", *report.header("python bench/x.py", "onnxruntime 1.23"), ""]
    lines += report.table(["model", "ms"], rows, align="lr")
    report.write(path, lines)

Only the standard library: the GPU machine imports this too.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from . import REPO


def command_output(cmd: Sequence[str], cwd: Path = REPO) -> str:
    """stdout of ``cmd`` stripped, "" if it cannot run or fails."""
    try:
        return subprocess.run(list(cmd), capture_output=True, text=True, cwd=cwd,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def commit(repo: Path = REPO) -> str:
    """The short hash of HEAD, with "(working tree modified)" when tracked
    files other than the bench pages differ from it; "unknown" outside a git
    checkout. The pages (bench/*.md) are what the benches write, not what
    they measure: bench/regenerate.sh rewrites one after another."""
    sha = command_output(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"])
    if not sha:
        return "unknown"
    changed = command_output(["git", "-C", str(repo), "diff", "--name-only", "HEAD"]).splitlines()
    dirty = [f for f in changed if not (f.startswith("bench/") and f.endswith(".md") and "/" not in f[6:])]
    return sha + (" (working tree modified)" if dirty else "")


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine() -> str:
    """CPU, cores (and those this process may use) and OS."""
    cores = f"{os.cpu_count()} cores"
    try:
        usable = len(os.sched_getaffinity(0))
        if usable != os.cpu_count():
            cores += f", {usable} usable"
    except (AttributeError, OSError):
        pass
    return f"{cpu_name()} ({cores}), {platform.system()} {platform.release()}"


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def header(command: str | None = None, *extra: str, measured: str | None = None) -> list[str]:
    """The report's header items: date, machine, mp commit (``measured``: the
    one taken when a long run started, else HEAD now), each of ``extra``
    (e.g. "onnxruntime 1.23.2") and the command that regenerates it."""
    lines = [f"- Date: {now()}", f"- Machine: {machine()}",
             f"- mp commit: {measured or commit()}"]
    lines += [f"- {e}" for e in extra]
    if command:
        lines.append(f"- Regenerate: `{command}`")
    return lines


def begin(title: str, *paragraphs: str, command: str | None = None,
          extra: Iterable[str] = (), measured: str | None = None) -> list[str]:
    """A report's first lines: the title, ``paragraphs``, then :func:`header`."""
    lines = [f"# {title}", ""]
    for p in paragraphs:
        lines += [p, ""]
    return lines + header(command, *extra, measured=measured)


def cell(value: object) -> str:
    """A table cell: one line, bars escaped."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def row(values: Iterable[object]) -> str:
    return "| " + " | ".join(cell(v) for v in values) + " |"


def table(columns: Sequence[str], rows: Iterable[Iterable[object]], align: str = "",
          empty: str | None = None) -> list[str]:
    """A markdown table; ``align`` has one letter per column, "l" or "r"
    (missing letters: "l"). Without rows, ``empty`` (e.g. "None.") instead
    when given."""
    rows = list(rows)
    if not rows and empty is not None:
        return [empty]
    marks = ["---:" if a == "r" else "---" for a in align.ljust(len(columns), "l")]
    return [row(columns), "|" + "|".join(marks) + "|", *(row(r) for r in rows)]


def rel(path: Path | str) -> str:
    """``path`` relative to the repository when inside it."""
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def built(path: Path | str) -> str:
    """When ``path`` (a binary) was last written: "built 2026-12-02 14:05 UTC"."""
    try:
        mtime = Path(path).stat().st_mtime
    except OSError:
        return "not built"
    return datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).strftime(
        "built %Y-%m-%d %H:%M UTC")


def write(path: Path, lines: Iterable[str]) -> str:
    """Writes the report (lines joined, one final newline) and returns its text."""
    text = "\n".join(lines).rstrip("\n") + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return text


def publish(out: Path, page: str | Iterable[str], json_path: Path | None, payload: dict,
            seconds: float, default=str) -> None:
    """Writes a bench page (text or lines) and, when asked, its data as JSON, and says so
    on stderr."""
    write(out, [page] if isinstance(page, str) else page)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(payload, indent=1, default=default))
    print(f"wrote {out} ({seconds:.0f} s)", file=sys.stderr)
