"""Wall time and peak memory of a child process, for the bench pages (bench/import.py,
bench/compile.py).

    from mp.tools import measure

    tools = measure.snapshot([build_tool("mp-opt")], tmp)   # copies: a rebuild cannot swap them
    m = measure.run([str(tools["mp-opt"]), "model.onnx", "--no-output"])
    m["wall"], m["max_rss"], m["output"]

:func:`run` spawns the command from a small helper process (:data:`HELPER`, a fresh
``python -I -S``) and reads its wall time, user and system time and max RSS from wait4's
rusage there: ru_maxrss counts the memory of the process the command was spawned from
(exec records its high-water mark), which for the calling process would be the whole
Python with onnx, numpy and maybe a model; for the helper it is far below the tools'.
The helper can also sample /proc/PID/status (VmRSS, RssAnon, RssFile) to split the peak
into heap and file pages, and kill the command after a timeout.

Only the standard library.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

# argv: sample period (s, 0: no sampling), timeout (s, 0: none), log file, command...
HELPER = r"""
import json, os, signal, sys, threading, time

def status(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile"):
            out[k] = int(v.split()[0]) * 1024
    return out or None

period, timeout, log, cmd = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4:]
fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
           (os.POSIX_SPAWN_DUP2, fd, 1), (os.POSIX_SPAWN_DUP2, fd, 2)]
peaks = {"VmRSS": 0, "RssAnon": 0, "RssFile": 0, "samples": 0}
done = threading.Event()
timed_out = []
t0 = time.perf_counter()
pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=actions)

def sample():
    while not done.is_set():
        s = status(pid)
        if s:
            peaks["samples"] += 1
            for k, v in s.items():
                peaks[k] = max(peaks[k], v)
        done.wait(period)

def watch():
    if not done.wait(timeout):
        timed_out.append(True)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

threads = ([threading.Thread(target=sample, daemon=True)] if period > 0 else []) + \
          ([threading.Thread(target=watch, daemon=True)] if timeout > 0 else [])
for t in threads:
    t.start()
_, st, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
done.set()
for t in threads:
    t.join()
print(json.dumps({"rc": os.waitstatus_to_exitcode(st), "wall": wall, "user": ru.ru_utime,
                  "sys": ru.ru_stime, "max_rss": ru.ru_maxrss * 1024,
                  "peak_rss_sampled": peaks["VmRSS"], "peak_anon": peaks["RssAnon"],
                  "peak_file": peaks["RssFile"], "samples": peaks["samples"],
                  "timed_out": bool(timed_out)}))
"""


class Failed(RuntimeError):
    """The command failed (exit status not 0, or timed out) and ``check`` was set."""

    def __init__(self, message: str, result: dict) -> None:
        super().__init__(message)
        self.result = result


def run(cmd: Sequence[str], sample_s: float = 0.0, *, timeout_s: float = 0.0,
        env: Mapping[str, str] | None = None, cwd: Path | str | None = None,
        check: bool = True, prefix: str = "mp-measure-") -> dict:
    """Runs ``cmd`` (``cmd[0]`` a path; stdin /dev/null, stdout and stderr together into a
    temporary file) through :data:`HELPER`: ``rc``, ``wall``, ``user``, ``sys``, ``max_rss``
    (bytes, wait4), ``timed_out`` and ``output`` (the text it printed); with ``sample_s`` > 0
    also the peaks ``peak_rss_sampled``, ``peak_anon``, ``peak_file`` of /proc/PID/status
    sampled that often (``samples`` of them). ``timeout_s`` > 0 kills the command after that
    many seconds. With ``check``, a non-zero exit or a timeout raises :class:`Failed` (the
    message ends with the output's tail); a helper that itself fails always raises it."""
    cmd = [str(c) for c in cmd]
    with tempfile.NamedTemporaryFile(prefix=prefix, suffix=".log") as log:
        p = subprocess.run([sys.executable, "-I", "-S", "-c", HELPER, str(sample_s),
                            str(timeout_s), log.name, *cmd], capture_output=True, text=True,
                           env=None if env is None else dict(env), cwd=cwd)
        if p.returncode != 0:
            raise Failed(f"measuring {shlex.join(cmd)} failed:\n{p.stderr[-3000:]}", {})
        m = json.loads(p.stdout)
        m["output"] = Path(log.name).read_text(errors="replace")
    if check and (m["rc"] != 0 or m["timed_out"]):
        how = f"timed out ({timeout_s:g} s)" if m["timed_out"] else f"rc {m['rc']}"
        raise Failed(f"{shlex.join(cmd)} failed ({how}):\n{m['output'][-3000:]}", m)
    return m


def snapshot(tools: Iterable[Path], dest: Path) -> dict[str, Path]:
    """Copies each executable into ``dest/bin`` and the shared libraries beside its build
    (``../lib/*.so*``, found first through the executables' $ORIGIN/../lib run path) into
    ``dest/lib``, so that a rebuild during a series cannot swap what is measured. Returns
    {name: copy}."""
    out = {}
    (dest / "bin").mkdir(parents=True, exist_ok=True)
    for tool in map(Path, tools):
        copy = dest / "bin" / tool.name
        shutil.copy2(tool, copy)
        out[tool.name] = copy
        libs = tool.resolve().parent.parent / "lib"
        for lib in sorted(libs.glob("*.so*")) if libs.is_dir() else ():
            if lib.is_file() and not (dest / "lib" / lib.name).exists():
                (dest / "lib").mkdir(exist_ok=True)
                shutil.copy2(lib, dest / "lib" / lib.name)
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
