"""Sweep the ONNX backend node tests through mp-opt's importer.

Two sources of node tests are walked:

* ``onnx-wheel``: ``<onnx package>/backend/test/data/node/*/model.onnx`` from
  the pinned onnx wheel in the venv;
* ``libonnx-testdata``: Debian's ``/usr/share/libonnx-testdata/data/node/*/model.onnx``
  (older ONNX release, older opsets and IR versions).

For every model the op types (with domains, including ops inside ``If``/``Loop``/
``Scan`` subgraphs) and opset imports are read with onnx and compared with
``mp-opt --list-onnx-ops``. A model whose default-domain opset is outside the
range mp supports, or that uses an op mp does not list at the model's opset, is
*not attempted*. Every other model is imported with ``mp-opt model.onnx -o
/dev/null`` (in parallel, 30 s timeout each) and counted as imported, failed
(non-zero exit, first error line kept) or crashed (killed by a signal or exit
code >= 128).

Usage::

    python -m mp.tools.node_tests [--mp-opt PATH] [--out FILE.md] [--jobs N]

Without ``--out`` the markdown report goes to stdout; a one-line summary per
source always goes to stderr.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Iterable

import onnx

from . import build_tool, report


# mp imports ai.onnx models with a default-domain opset in this range only.
MIN_OPSET = 7
MAX_OPSET = 27
DEFAULT_DOMAIN = "ai.onnx"
TIMEOUT_S = 30.0

SOURCE_WHEEL = "onnx-wheel"
SOURCE_DEBIAN = "libonnx-testdata"
DEBIAN_NODE_DIR = Path("/usr/share/libonnx-testdata/data/node")

NOT_ATTEMPTED = "not-attempted"
OK = "ok"
FAILED = "failed"
CRASHED = "crashed"


def wheel_node_dir() -> Path:
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "node"


def default_sources() -> dict[str, Path]:
    return {SOURCE_WHEEL: wheel_node_dir(), SOURCE_DEBIAN: DEBIAN_NODE_DIR}


def default_mp_opt() -> Path:
    return build_tool("mp-opt")


def norm_domain(domain: str) -> str:
    return DEFAULT_DOMAIN if domain in ("", DEFAULT_DOMAIN) else domain


def op_label(domain: str, op_type: str) -> str:
    """``Abs`` for the default domain, ``com.microsoft:Attention`` otherwise."""
    domain = norm_domain(domain)
    return op_type if domain == DEFAULT_DOMAIN else f"{domain}:{op_type}"


# --------------------------------------------------------------------------- op table


def parse_op_table(text: str) -> dict[tuple[str, str], list[int]]:
    """Parses ``mp-opt --list-onnx-ops``: lines ``domain op_type v1,v2,...``."""
    table: dict[tuple[str, str], list[int]] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3:
            raise ValueError(f"--list-onnx-ops line {lineno}: expected 'domain op v1,v2,...': {line!r}")
        domain, op, versions = parts
        try:
            vs = sorted(int(v) for v in versions.split(","))
        except ValueError:
            raise ValueError(f"--list-onnx-ops line {lineno}: bad version list: {line!r}") from None
        key = (norm_domain(domain), op)
        if key in table:
            raise ValueError(f"--list-onnx-ops line {lineno}: duplicate op {key}")
        table[key] = vs
    return table


def load_op_table(mp_opt: Path) -> dict[tuple[str, str], list[int]]:
    out = subprocess.run(
        [str(mp_opt), "--list-onnx-ops"], capture_output=True, text=True, check=True, timeout=60
    )
    return parse_op_table(out.stdout)


def picked_version(versions: Iterable[int], opset: int) -> int | None:
    """The since-version mp dispatches on at ``opset``: the largest listed one <= opset."""
    ok = [v for v in versions if v <= opset]
    return max(ok) if ok else None


# --------------------------------------------------------------------------- models


@dataclasses.dataclass
class ModelInfo:
    opsets: dict[str, int]  # normalized domain -> version
    ops: set[tuple[str, str]]  # (normalized domain, op_type), subgraphs included
    # Value kinds outside mp's numeric-tensor world ("STRING", "sequence", "map",
    # "optional", "sparse_tensor"), found on graph inputs/outputs/value_info,
    # initializers and Constant values, subgraphs included.
    unsupported_types: set[str] = dataclasses.field(default_factory=set)


_STRING = onnx.TensorProto.STRING


def _type_kinds(tp: onnx.TypeProto, out: set[str]) -> None:
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        if tp.tensor_type.elem_type == _STRING:
            out.add("STRING")
    elif kind is not None:
        out.add(kind.removesuffix("_type"))


def _walk_graph(graph: onnx.GraphProto, info: ModelInfo) -> None:
    for vi in [*graph.input, *graph.output, *graph.value_info]:
        if vi.HasField("type"):
            _type_kinds(vi.type, info.unsupported_types)
    for t in graph.initializer:
        if t.data_type == _STRING:
            info.unsupported_types.add("STRING")
    if len(graph.sparse_initializer):
        info.unsupported_types.add("sparse_tensor")
    for node in graph.node:
        info.ops.add((norm_domain(node.domain), node.op_type))
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _walk_graph(attr.g, info)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    _walk_graph(g, info)
            elif attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type == _STRING:
                info.unsupported_types.add("STRING")
            elif attr.type == onnx.AttributeProto.STRINGS and node.op_type == "Constant":
                info.unsupported_types.add("STRING")
            elif attr.type == onnx.AttributeProto.SPARSE_TENSOR:
                info.unsupported_types.add("sparse_tensor")


def read_model_info(path: Path) -> ModelInfo:
    model = onnx.load(str(path), load_external_data=False)
    info = ModelInfo(opsets={norm_domain(o.domain): o.version for o in model.opset_import}, ops=set())
    _walk_graph(model.graph, info)
    return info


def unsupported_reasons(info: ModelInfo, table: dict[tuple[str, str], list[int]]) -> list[str]:
    """Why mp would not import this model ([] = it should). One string per reason:
    ``opset N`` for a default-domain opset outside 7..27 (``opset missing`` when
    default-domain ops are used without importing the domain), else the op label
    (``Op`` or ``domain:Op``), with ``@N`` appended when mp lists the op but
    only at since-versions newer than the model's opset N, and ``type K`` for
    values mp's tensor-only dialect cannot hold (string tensors, sequences,
    maps, optionals, sparse tensors)."""
    opset = info.opsets.get(DEFAULT_DOMAIN)
    if opset is not None and not MIN_OPSET <= opset <= MAX_OPSET:
        return [f"opset {opset}"]
    if opset is None and any(d == DEFAULT_DOMAIN for d, _ in info.ops):
        return ["opset missing"]
    reasons = [f"type {k}" for k in sorted(info.unsupported_types)]
    for domain, op in sorted(info.ops):
        versions = table.get((domain, op))
        if versions is None:
            reasons.append(op_label(domain, op))
            continue
        version = info.opsets.get(domain)
        if version is None or picked_version(versions, version) is None:
            reasons.append(f"{op_label(domain, op)}@{version}")
    return reasons


# --------------------------------------------------------------------------- running


@dataclasses.dataclass
class CaseResult:
    source: str
    name: str
    path: Path
    status: str = NOT_ATTEMPTED
    reasons: list[str] = dataclasses.field(default_factory=list)
    returncode: int | None = None
    error: str = ""
    ops: list[str] = dataclasses.field(default_factory=list)


_LOC_PREFIX = re.compile(r"^\S*?:\d+:\d+:\s*")


def first_error_line(stderr: str, path: Path) -> str:
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    pick = next((l for l in lines if "error" in l.lower()), lines[0] if lines else "")
    pick = pick.replace(str(path), "model.onnx")
    return _LOC_PREFIX.sub("", pick)


_QUOTED = re.compile(r"'[^']*'")


def error_category(error: str) -> str:
    """``error`` with quoted names (nodes, values, types) blanked, for grouping."""
    return _QUOTED.sub("'…'", error)


def describe_exit(returncode: int) -> str:
    signum = -returncode if returncode < 0 else returncode - 128
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = ""
    if returncode < 0:
        return f"killed by signal {signum}" + (f" ({name})" if name else "")
    return f"exit {returncode}" + (f" (signal {signum} {name}?)" if name else "")


def is_crash(returncode: int) -> bool:
    return returncode < 0 or returncode >= 128


def run_import(mp_opt: Path, case: CaseResult, timeout: float = TIMEOUT_S) -> CaseResult:
    try:
        proc = subprocess.run(
            [str(mp_opt), str(case.path), "-o", os.devnull],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        case.status = FAILED
        case.error = f"timed out after {timeout:g} s"
        return case
    case.returncode = proc.returncode
    if proc.returncode == 0:
        case.status = OK
    elif is_crash(proc.returncode):
        case.status = CRASHED
        line = first_error_line(proc.stderr, case.path)
        case.error = describe_exit(proc.returncode) + (f": {line}" if line else "")
    else:
        case.status = FAILED
        case.error = first_error_line(proc.stderr, case.path) or f"exit {proc.returncode}, no output"
    return case


def collect_cases(
    sources: dict[str, Path], table: dict[tuple[str, str], list[int]], name_filter: str | None = None
) -> list[CaseResult]:
    cases = []
    for source, root in sources.items():
        for path in sorted(root.glob("*/model.onnx")):
            name = path.parent.name
            if name_filter and name_filter not in name:
                continue
            case = CaseResult(source=source, name=name, path=path)
            try:
                info = read_model_info(path)
            except Exception as e:  # unreadable by onnx itself: not mp's problem
                case.reasons = [f"unreadable by onnx ({type(e).__name__})"]
                cases.append(case)
                continue
            case.ops = sorted(op_label(d, o) for d, o in info.ops)
            case.reasons = unsupported_reasons(info, table)
            cases.append(case)
    return cases


def sweep(
    mp_opt: Path,
    sources: dict[str, Path] | None = None,
    jobs: int | None = None,
    name_filter: str | None = None,
    timeout: float = TIMEOUT_S,
) -> list[CaseResult]:
    """Classifies every node test and imports the attempted ones. Sources that
    do not exist on this machine are skipped (they contribute no cases)."""
    if sources is None:
        sources = default_sources()
    sources = {s: p for s, p in sources.items() if p.is_dir()}
    table = load_op_table(mp_opt)
    cases = collect_cases(sources, table, name_filter)
    attempted = [c for c in cases if not c.reasons]
    jobs = jobs or os.cpu_count() or 2
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda c: run_import(mp_opt, c, timeout), attempted))
    return cases


# --------------------------------------------------------------------------- report


@dataclasses.dataclass
class Counts:
    total: int = 0
    attempted: int = 0
    ok: int = 0
    failed: int = 0
    crashed: int = 0

    @property
    def rate(self) -> float:
        return 100.0 * self.ok / self.attempted if self.attempted else 0.0


def counts(cases: Iterable[CaseResult]) -> Counts:
    c = Counts()
    for case in cases:
        c.total += 1
        if case.status == NOT_ATTEMPTED:
            continue
        c.attempted += 1
        if case.status == OK:
            c.ok += 1
        elif case.status == FAILED:
            c.failed += 1
        elif case.status == CRASHED:
            c.crashed += 1
    return c


def counts_by_source(cases: list[CaseResult]) -> dict[str, Counts]:
    sources = list(dict.fromkeys(c.source for c in cases))
    return {s: counts(c for c in cases if c.source == s) for s in sources}


def render_report(
    cases: list[CaseResult], mp_opt: Path, elapsed_s: float, sources: dict[str, Path] | None = None
) -> str:
    sources = sources or default_sources()
    by_source = counts_by_source(cases)
    names = list(by_source)
    out = report.begin(
        "ONNX backend node tests through mp-opt's importer",
        "Generated by `python -m mp.tools.node_tests` (see `bench/import-node-tests.py`).",
        extra=[f"mp-opt: `{report.rel(mp_opt)}` ({report.built(mp_opt)})",
               f"onnx (reader of the models): {onnx.__version__}",
               *(f"Source `{s}`: `{report.rel(sources.get(s, Path('?')))}`" for s in names)])
    w = out.append
    try:
        load = " (load average {:.1f} {:.1f} {:.1f} at the end)".format(*os.getloadavg())
    except OSError:
        load = ""
    w(f"- Sweep time: {elapsed_s:.1f} s{load}")
    w("")
    w(
        f"A model is *attempted* when its default-domain opset is in {MIN_OPSET}..{MAX_OPSET} and every "
        "op it uses (subgraphs included) is listed by `mp-opt --list-onnx-ops` at a since-version <= the "
        f"model's opset for that domain, and no value is a string tensor, sequence, map, optional or "
        "sparse tensor (mp's dialect holds numeric tensors only). Attempted models run "
        "`mp-opt model.onnx -o /dev/null` "
        f"({TIMEOUT_S:g} s timeout); a crash is an exit by signal or with code >= 128."
    )
    w("")
    w("## Counts")
    w("")
    rows = [(s, by_source[s]) for s in names]
    if len(names) > 1:
        rows.append(("all", counts(cases)))
    out += report.table(["source", "cases", "attempted", "imported OK", "failed", "crashed",
                         "imported / attempted"],
                        [(s, c.total, c.attempted, c.ok, c.failed, c.crashed, f"{c.rate:.1f}%")
                         for s, c in rows], "lrrrrrr")
    w("")

    w("## Not attempted")
    w("")
    w(
        "One row per reason; a model with several unsupported ops counts once under each. "
        "`opset N`: default-domain opset outside the supported range; `Op@N`: mp lists the op only "
        "at since-versions newer than the model's opset N; `type K`: a value mp's dialect cannot hold."
    )
    w("")
    reason_counts = {s: Counter(r for c in cases if c.source == s for r in c.reasons) for s in names}
    all_reasons = Counter()
    for cnt in reason_counts.values():
        all_reasons.update(cnt)
    out += report.table(["reason", *names],
                        [(reason, *(reason_counts[s][reason] for s in names))
                         for reason, _ in sorted(all_reasons.items(), key=lambda kv: (-kv[1], kv[0]))],
                        "l" + "r" * len(names))
    w("")

    crashes = [c for c in cases if c.status == CRASHED]
    w("## Crashes")
    w("")
    out += report.table(["source", "model", "error"], [(c.source, c.name, c.error) for c in crashes],
                        empty="None.")
    w("")

    failures = [c for c in cases if c.status == FAILED]
    w("## Failure categories")
    w("")
    w("The first error line with node and value names blanked out; one row per distinct message.")
    w("")
    cat_counts = {s: Counter(error_category(c.error) for c in failures if c.source == s) for s in names}
    all_cats = Counter(error_category(c.error) for c in failures)
    examples: dict[str, str] = {}
    for c in failures:
        examples.setdefault(error_category(c.error), c.name)
    out += report.table(["error", *names, "example"],
                        [(cat, *(cat_counts[s][cat] for s in names), examples[cat])
                         for cat, _ in sorted(all_cats.items(), key=lambda kv: (-kv[1], kv[0]))],
                        "l" + "r" * len(names), empty="None.")
    w("")

    w("## Failures")
    w("")
    out += report.table(["source", "model", "first error line"],
                        [(c.source, c.name, c.error) for c in failures], empty="None.")
    w("")
    return "\n".join(out)


def summary_lines(cases: list[CaseResult]) -> list[str]:
    return [
        f"{s}: {c.total} cases, {c.attempted} attempted, {c.ok} ok, {c.failed} failed, "
        f"{c.crashed} crashed ({c.rate:.1f}% of attempted)"
        for s, c in counts_by_source(cases).items()
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mp.tools.node_tests", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mp-opt", type=Path, default=None, help="mp-opt binary (default: $MP_BUILD_DIR/bin/mp-opt, MP_BUILD_DIR defaults to build)")
    ap.add_argument("--out", type=Path, default=None, help="write the markdown report here (default: stdout)")
    ap.add_argument("--jobs", type=int, default=None, help="parallel mp-opt processes (default: CPU count)")
    ap.add_argument("--filter", default=None, help="only test names containing this substring")
    ap.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per model (default 30)")
    args = ap.parse_args(argv)

    mp_opt = args.mp_opt or default_mp_opt()
    if not mp_opt.is_file():
        print(f"error: mp-opt not found at {mp_opt} (build mp or pass --mp-opt)", file=sys.stderr)
        return 2
    sources = default_sources()
    start = time.monotonic()
    cases = sweep(mp_opt, sources, jobs=args.jobs, name_filter=args.filter, timeout=args.timeout)
    elapsed = time.monotonic() - start
    text = render_report(cases, mp_opt, elapsed, sources)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    for line in summary_lines(cases):
        print(line, file=sys.stderr)
    print(f"sweep: {elapsed:.1f} s", file=sys.stderr)
    return 1 if any(c.status == CRASHED for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
