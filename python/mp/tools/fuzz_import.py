"""Fuzz the ONNX importer of mp-opt with mutated real models.

    python -m mp.tools.fuzz_import --seconds 600 --seed 1 [--jobs 2]
    python -m mp.tools.fuzz_import --count 500 --seed 1 --corpus repo

Seeds (--corpus): "default" is ../shared/models/*/model.onnx (the shared
folder beside the repository, when present) and examples/tts_decoder/model.onnx;
"repo" only models committed to the repository (examples/tts_decoder,
test/Execution/Inputs/add_matmul_softmax.onnx, test/Inputs/exports/*.onnx);
"all" both. --models names the seed models instead. Each mutant gets one
mutation kind, byte-level (flip, insert, delete, truncate) or protobuf-aware
through onnx (dims, element types, attribute values and types, dropped/extra
node inputs, renamed values, swapped/dropped/duplicated nodes, op type swaps,
opset versions, external-data offsets/lengths), applied 1-3 times. mp-opt
runs on each (timeout 20 s) and the result is classified:

  ok       rc 0
  error    rc 1 with an "error:" line on stderr
  crash    killed by a signal, rc >= 128, or a stack dump / assertion
  timeout  ran past the timeout
  odd      anything else (e.g. rc 1 without an error line)

Mutant i is made by a random.Random seeded from the i-th draw of
random.Random(--seed), whatever the number of jobs: --count N runs exactly
mutants 0..N-1, so the same seed, count, seed models and mp-opt (whose
--list-onnx-ops feeds the op_type mutation) give the same mutants and, with
a deterministic mp-opt, the same classification (the summary's
mutants_sha256 and outcomes_sha256 say so). --seconds bounds the run (alone:
as many mutants as fit; with --count, "complete" is false when it cut the
run short). --dry-run only makes the mutants and prints their hashes.

Every crashing (and timing-out / odd) mutant is saved under --crash-dir
(/tmp/mp-fuzz-crashes)/<kind>-<signature>/<n>/ with model.onnx, repro.sh and
stderr.txt (at most 3 per signature; which ones depends on completion order
when --jobs > 1). A JSON summary is printed at the end and written to
--summary.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import datetime
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

import onnx
from onnx import AttributeProto, TensorProto

from . import REPO, build_tool

SHARED = REPO.parent / "shared" / "models"
CRASH_DIR = Path("/tmp/mp-fuzz-crashes")  # --crash-dir's default
CRASH_MARKERS = ("Stack dump", "PLEASE submit a bug report", "Assertion",
                 "terminate called", "LLVM ERROR", "Segmentation fault",
                 "UNREACHABLE")

INTERESTING_INTS = [0, 1, -1, 2, -2, 3, 7, 64, 255, 1 << 16, (1 << 31) - 1, 1 << 31,
                    -(1 << 31), 1 << 40, (1 << 62), (1 << 63) - 1, -(1 << 63)]
INTERESTING_FLOATS = [0.0, -0.0, 1.0, -1.0, 1e-30, 1e30, float("inf"),
                      float("-inf"), float("nan"), 3.4e38]


REPO_SEEDS = [REPO / "examples" / "tts_decoder" / "model.onnx",
              REPO / "test" / "Execution" / "Inputs" / "add_matmul_softmax.onnx",
              *sorted((REPO / "test" / "Inputs" / "exports").glob("*.onnx"))]
CORPORA = ("default", "repo", "all")


def seed_models(corpus: str = "default") -> list[Path]:
    """The seed models of ``corpus`` (see the module's docstring) that exist."""
    models = []
    if corpus in ("default", "all"):
        models += sorted(SHARED.glob("*/model.onnx"))
    if corpus == "default":
        models.append(REPO_SEEDS[0])
    else:
        models += REPO_SEEDS
    return [m for m in models if m.exists()]


def seed_name(path: Path) -> str:
    """A seed's short name: its folder for a model.onnx, else its stem."""
    return path.parent.name if path.name == "model.onnx" else path.stem


def supported_ops(mp_opt: Path) -> list[tuple[str, str]]:
    out = subprocess.run([str(mp_opt), "--list-onnx-ops"], capture_output=True,
                         text=True).stdout
    ops = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            dom = "" if parts[0] == "ai.onnx" else parts[0]
            ops.append((dom, parts[1]))
    return ops


# ---------------------------------------------------------------------------
# Byte-level mutations
# ---------------------------------------------------------------------------

def m_flip(rng, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(1, 256)
    return bytes(b)


def m_insert(rng, data: bytes) -> bytes:
    i = rng.randrange(len(data) + 1)
    n = rng.choice([1, 1, 2, 4, 8, 64])
    ins = bytes(rng.randrange(256) for _ in range(n))
    return data[:i] + ins + data[i:]


def m_delete(rng, data: bytes) -> bytes:
    i = rng.randrange(len(data))
    n = rng.choice([1, 1, 2, 4, 8, 64, 1024])
    return data[:i] + data[i + n:]


def m_truncate(rng, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


BYTE_MUTATIONS = {"byte_flip": m_flip, "byte_insert": m_insert,
                  "byte_delete": m_delete, "truncate": m_truncate}


# ---------------------------------------------------------------------------
# Protobuf-aware mutations (in place on a ModelProto); return False if the
# mutation found nothing to act on.
# ---------------------------------------------------------------------------

def all_graphs(g: onnx.GraphProto):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH or a.HasField("g"):
                yield from all_graphs(a.g)
            for sg in a.graphs:
                yield from all_graphs(sg)


def all_nodes(m):
    return [(g, n) for g in all_graphs(m.graph) for n in g.node]


def all_value_infos(m):
    out = []
    for g in all_graphs(m.graph):
        out += list(g.input) + list(g.output) + list(g.value_info)
    return out


def all_initializers(m):
    out = []
    for g in all_graphs(m.graph):
        out += list(g.initializer)
    for _, n in all_nodes(m):
        for a in n.attribute:
            if a.HasField("t"):
                out.append(a.t)
    return out


def rand_int(rng):
    return rng.choice(INTERESTING_INTS) if rng.random() < 0.7 else rng.randint(-10, 100)


def pm_dims(rng, m):
    targets = []
    for vi in all_value_infos(m):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            targets.append(("vi", vi))
    for t in all_initializers(m):
        targets.append(("init", t))
    if not targets:
        return False
    kind, x = rng.choice(targets)
    if kind == "vi":
        dims = x.type.tensor_type.shape.dim
        r = rng.random()
        if r < 0.15 or not dims:
            dims.add().dim_value = rand_int(rng)
        elif r < 0.3:
            del dims[rng.randrange(len(dims))]
        elif r < 0.4:
            x.type.tensor_type.ClearField("shape")
        elif r < 0.5:
            dims[rng.randrange(len(dims))].dim_param = rng.choice(["N", "", "?", "batch"])
        else:
            dims[rng.randrange(len(dims))].dim_value = rand_int(rng)
    else:
        r = rng.random()
        if r < 0.2 or not x.dims:
            x.dims.append(rand_int(rng))
        elif r < 0.4:
            del x.dims[rng.randrange(len(x.dims))]
        else:
            x.dims[rng.randrange(len(x.dims))] = rand_int(rng)
    return True


def rand_type(rng):
    return rng.choice(list(range(0, 27)) + [99, -1, 1 << 20])


def pm_types(rng, m):
    r = rng.random()
    if r < 0.5:
        vis = [v for v in all_value_infos(m) if v.type.HasField("tensor_type")]
        if not vis:
            return False
        rng.choice(vis).type.tensor_type.elem_type = rand_type(rng)
    else:
        inits = all_initializers(m)
        if not inits:
            return False
        rng.choice(inits).data_type = rand_type(rng)
    return True


def pm_attr_value(rng, m):
    attrs = [a for _, n in all_nodes(m) for a in n.attribute]
    if not attrs:
        return False
    a = rng.choice(attrs)
    if a.type == AttributeProto.INT:
        a.i = rand_int(rng)
    elif a.type == AttributeProto.FLOAT:
        a.f = rng.choice(INTERESTING_FLOATS)
    elif a.type == AttributeProto.INTS:
        r = rng.random()
        if r < 0.3 and len(a.ints):
            del a.ints[rng.randrange(len(a.ints))]
        elif r < 0.5:
            a.ints.append(rand_int(rng))
        elif len(a.ints):
            a.ints[rng.randrange(len(a.ints))] = rand_int(rng)
        else:
            a.ints.extend([rand_int(rng) for _ in range(rng.randint(1, 6))])
    elif a.type == AttributeProto.FLOATS:
        a.floats.append(rng.choice(INTERESTING_FLOATS))
    elif a.type == AttributeProto.STRING:
        a.s = rng.choice([b"", b"garbage", b"\xff\xfe", a.s[:1], a.s + b"x"])
    elif a.type == AttributeProto.TENSOR:
        t = a.t
        if rng.random() < 0.5 and t.dims:
            t.dims[rng.randrange(len(t.dims))] = rand_int(rng)
        else:
            t.data_type = rand_type(rng)
    else:
        a.name = rng.choice(["axis", "to", "perm", "x", ""])
    return True


ATTR_TYPES = [AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING,
              AttributeProto.TENSOR, AttributeProto.GRAPH, AttributeProto.FLOATS,
              AttributeProto.INTS, AttributeProto.STRINGS, AttributeProto.TENSORS,
              AttributeProto.GRAPHS, AttributeProto.SPARSE_TENSOR, 0]


def pm_attr_type(rng, m):
    nodes = [n for _, n in all_nodes(m) if len(n.attribute)]
    r = rng.random()
    if r < 0.6 and nodes:
        a = rng.choice(list(rng.choice(nodes).attribute))
        new = rng.choice(ATTR_TYPES)
        if rng.random() < 0.5:
            # retype the value too (clear the old field, set the new one)
            for f in ("f", "i", "s", "t", "g", "sparse_tensor"):
                a.ClearField(f)
            for f in ("floats", "ints", "strings", "tensors", "graphs"):
                a.ClearField(f)
            if new == AttributeProto.FLOAT:
                a.f = rng.choice(INTERESTING_FLOATS)
            elif new == AttributeProto.INT:
                a.i = rand_int(rng)
            elif new == AttributeProto.STRING:
                a.s = b"x"
            elif new == AttributeProto.INTS:
                a.ints.extend([rand_int(rng)])
            elif new == AttributeProto.FLOATS:
                a.floats.extend([1.0])
            elif new == AttributeProto.TENSOR:
                a.t.CopyFrom(onnx.helper.make_tensor("t", TensorProto.FLOAT, [1], [1.0]))
        a.type = new
    else:
        # add a well-known attribute name with a random type to a random node
        all_n = [n for _, n in all_nodes(m)]
        if not all_n:
            return False
        n = rng.choice(all_n)
        name = rng.choice(["axis", "axes", "to", "perm", "keepdims", "epsilon",
                           "transA", "transB", "alpha", "mode", "num_heads",
                           "group", "pads", "strides", "kernel_shape", "value"])
        kind = rng.choice(["i", "f", "s", "ints", "t"])
        if kind == "i":
            a = onnx.helper.make_attribute(name, rand_int(rng))
        elif kind == "f":
            a = onnx.helper.make_attribute(name, rng.choice(INTERESTING_FLOATS))
        elif kind == "s":
            a = onnx.helper.make_attribute(name, "zz")
        elif kind == "ints":
            a = onnx.helper.make_attribute(name, [rand_int(rng) for _ in range(rng.randint(0, 4))])
        else:
            a = onnx.helper.make_attribute(name, onnx.helper.make_tensor(
                "t", rng.choice([1, 7, 10]), [rng.randint(0, 3)], []) if False else
                onnx.helper.make_tensor("t", TensorProto.INT64, [2], [rand_int(rng), 1]))
        if rng.random() < 0.5:
            # replace an existing one of that name
            for i, old in enumerate(n.attribute):
                if old.name == name:
                    del n.attribute[i]
                    break
        n.attribute.append(a)
    return True


def pm_drop_input(rng, m):
    nodes = [n for _, n in all_nodes(m) if len(n.input)]
    if not nodes:
        return False
    n = rng.choice(nodes)
    i = rng.randrange(len(n.input))
    if rng.random() < 0.5:
        del n.input[i]
    else:
        n.input[i] = ""
    return True


def pm_extra_input(rng, m):
    nodes = [(g, n) for g, n in all_nodes(m)]
    if not nodes:
        return False
    g, n = rng.choice(nodes)
    names = [x for _, nn in all_nodes(m) for x in nn.output] + [i.name for i in g.input]
    if not names:
        return False
    n.input.append(rng.choice(names))
    return True


def pm_rename(rng, m):
    nodes = [n for _, n in all_nodes(m)]
    if not nodes:
        return False
    n = rng.choice(nodes)
    r = rng.random()
    if r < 0.4 and len(n.output):
        n.output[rng.randrange(len(n.output))] = rng.choice(["renamed_x", "", n.output[0]])
    elif len(n.input):
        others = [x for nn in nodes for x in nn.output] or ["nope"]
        n.input[rng.randrange(len(n.input))] = rng.choice(others + ["undefined_value"])
    else:
        return False
    return True


def pm_swap_nodes(rng, m):
    graphs = [g for g in all_graphs(m.graph) if len(g.node) >= 2]
    if not graphs:
        return False
    g = rng.choice(graphs)
    i, j = rng.sample(range(len(g.node)), 2)
    a, b = onnx.NodeProto(), onnx.NodeProto()
    a.CopyFrom(g.node[i])
    b.CopyFrom(g.node[j])
    g.node[i].CopyFrom(b)
    g.node[j].CopyFrom(a)
    return True


def pm_drop_or_dup_node(rng, m):
    graphs = [g for g in all_graphs(m.graph) if len(g.node)]
    if not graphs:
        return False
    g = rng.choice(graphs)
    i = rng.randrange(len(g.node))
    if rng.random() < 0.5:
        del g.node[i]
    else:
        g.node.add().CopyFrom(g.node[i])
    return True


def pm_drop_graph_io(rng, m):
    g = m.graph
    r = rng.random()
    if r < 0.3 and len(g.input):
        del g.input[rng.randrange(len(g.input))]
    elif r < 0.6 and len(g.output):
        del g.output[rng.randrange(len(g.output))]
    elif r < 0.8 and len(g.initializer):
        del g.initializer[rng.randrange(len(g.initializer))]
    elif len(g.initializer) and len(g.input):
        # an initializer sharing the name of a graph input, or a duplicate
        g.initializer.add().CopyFrom(g.initializer[rng.randrange(len(g.initializer))])
    else:
        return False
    return True


OPS: list[tuple[str, str]] = []


def pm_op_type(rng, m):
    nodes = [n for _, n in all_nodes(m)]
    if not nodes:
        return False
    n = rng.choice(nodes)
    if OPS and rng.random() < 0.8:
        dom, op = rng.choice(OPS)
        n.op_type, n.domain = op, dom
        if dom and not any(o.domain == dom for o in m.opset_import):
            o = m.opset_import.add()
            o.domain, o.version = dom, 1
    else:
        n.op_type = rng.choice(["", "Bogus", n.op_type.lower()])
    return True


def pm_opset(rng, m):
    if not len(m.opset_import):
        return False
    o = rng.choice(list(m.opset_import))
    r = rng.random()
    if r < 0.2:
        m.opset_import.remove(o)
    else:
        o.version = rng.choice([0, 1, 6, 7, 9, 10, 11, 12, 13, 17, 18, 21, 23, 24, 25, 26, 99, -1])
    if rng.random() < 0.2:
        m.ir_version = rng.choice([0, 1, 3, 7, 10, 11, 99])
    return True


def pm_external(rng, m):
    ext = [t for t in all_initializers(m) if t.data_location == TensorProto.EXTERNAL]
    if not ext:
        # turn a raw initializer into a broken external reference
        inits = [t for t in all_initializers(m) if t.raw_data]
        if not inits:
            return False
        t = rng.choice(inits)
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", rng.choice(["model.onnx", "nope.bin", "", "."])
        return True
    t = rng.choice(ext)
    e = rng.choice(list(t.external_data))
    if e.key in ("offset", "length"):
        e.value = rng.choice([str(rand_int(rng)), "", "abc", "-1", "1e3", " 12",
                              "99999999999999999999999"])
    elif e.key == "location":
        e.value = rng.choice(["", ".", "model.onnx", "model.onnx.data/", "./model.onnx.data",
                              "sub/../model.onnx.data", "nope"])
    else:
        e.key = rng.choice(["offset", "length", "checksum", "bogus"])
    if rng.random() < 0.2:
        t.data_location = 0  # DEFAULT: the external entries are ignored
    return True


PROTO_MUTATIONS = {
    "dims": pm_dims, "types": pm_types, "attr_value": pm_attr_value,
    "attr_type": pm_attr_type, "drop_input": pm_drop_input,
    "extra_input": pm_extra_input, "rename": pm_rename, "swap_nodes": pm_swap_nodes,
    "drop_dup_node": pm_drop_or_dup_node, "graph_io": pm_drop_graph_io,
    "op_type": pm_op_type, "opset": pm_opset, "external_data": pm_external,
}


# ---------------------------------------------------------------------------
# Running and classifying
# ---------------------------------------------------------------------------

def classify(rc, stderr: str, timed_out: bool) -> str:
    if timed_out:
        return "timeout"
    if rc < 0 or rc >= 128 or any(k in stderr for k in CRASH_MARKERS):
        return "crash"
    if rc == 0:
        return "ok"
    if rc == 1 and "error:" in stderr:
        return "error"
    return "odd"


def gdb_backtrace(cmd: list[str], timeout: float = 60) -> str:
    """The backtrace of a crashing command under gdb ("" without gdb).

    mp-opt installs no LLVM signal handler, so a SIGSEGV prints nothing."""
    if not shutil.which("gdb"):
        return ""
    try:
        p = subprocess.run(["gdb", "-batch", "-nx", "-ex", "run", "-ex", "bt 25", "--args"] + cmd,
                           capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return ""
    return "\n".join(l for l in p.stdout.splitlines()
                     if l.startswith("#") or "signal SIG" in l)


def signature(stderr: str) -> str:
    """A short key grouping crashes of the same cause."""
    m = re.search(r"signal (SIG[A-Z]+)", stderr)
    gframes = re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+?)\(", stderr, re.M)
    gframes = [f for f in gframes if f.startswith(("mp::", "mlir::", "llvm::", "onnx::", "google::"))
               and "SignalHandler" not in f]
    if gframes:
        return (m.group(1) + ": " if m else "") + " | ".join(gframes[:3])
    m = re.search(r"(Assertion .*? failed)", stderr)
    if m:
        return m.group(1)
    m = re.search(r"LLVM ERROR: (.*)", stderr)
    if m:
        return "LLVM ERROR: " + re.sub(r"\d+", "N", m.group(1))[:120]
    frames = []
    for line in stderr.splitlines():
        fm = re.match(r"\s*#\d+ 0x[0-9a-f]+ (.*?)( \(|$)", line)
        if fm:
            f = fm.group(1)
            if any(s in f for s in ("PrintStackTrace", "SignalHandler", "RunSignalHandlers",
                                    "__restore_rt", "libc.so", "abort", "raise",
                                    "__pthread_kill", "gsignal")):
                continue
            frames.append(re.sub(r"\+0x[0-9a-f]+", "", f))
        if len(frames) >= 3:
            break
    if frames:
        return " | ".join(frames)
    lines = [l for l in stderr.splitlines() if l.strip()]
    return re.sub(r"\d+", "N", lines[0])[:160] if lines else "(no output)"


class Mutant(NamedTuple):
    idx: int
    rng_seed: int
    seed: Path      # the seed model
    kind: str       # the mutation kind
    data: bytes     # the mutant model
    extra: tuple    # mp-opt options beyond "MODEL -o /dev/null"

    def digest(self) -> str:
        """sha256 of what mp-opt gets: the seed model's name, the options and the bytes."""
        h = hashlib.sha256()
        h.update(f"{self.idx} {seed_name(self.seed)} {self.kind} {' '.join(self.extra)}\n".encode())
        h.update(self.data)
        return h.hexdigest()


def rng_seeds(seed: int):
    """The rng seed of mutant 0, 1, ... for the run seed ``seed``."""
    master = random.Random(seed)
    while True:
        yield master.getrandbits(48)


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.mp_opt = Path(args.mp_opt)
        self.seeds = [Path(p) for p in args.models] if args.models else seed_models(args.corpus)
        if not self.seeds:
            raise SystemExit(f"fuzz_import: no seed models (corpus {args.corpus})")
        self.seed_bytes = {p: p.read_bytes() for p in self.seeds}
        self.seed_protos = {p: onnx.load_model_from_string(self.seed_bytes[p])
                            for p in self.seeds}
        self.crash_dir = Path(args.crash_dir)
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.by_kind = collections.defaultdict(collections.Counter)
        self.by_seed = collections.defaultdict(collections.Counter)
        self.sigs: dict[str, dict] = {}
        self.records: dict[int, tuple[str, str]] = {}  # idx -> (mutant digest, class)
        self.work = Path(tempfile.mkdtemp(prefix="mp-fuzz-"))
        self.n = 0
        self.gdb_runs = 0
        self.elapsed = 0.0
        self.complete = True

    def make_mutant(self, idx: int, rng_seed: int) -> Mutant:
        """Mutant ``idx``: a function of ``rng_seed``, the seed models and OPS
        only. A mutation that finds nothing to act on is drawn again."""
        rng = random.Random(rng_seed)
        while True:
            seed, kind, data = self.mutate(rng)
            if data is not None:
                break
        extra = ("--mp-model-summary=output=" + os.devnull,) if rng.random() < 0.3 else ()
        return Mutant(idx, rng_seed, seed, kind, data, extra)

    def mutate(self, rng: random.Random):
        seed = rng.choice(self.seeds)
        kinds = list(BYTE_MUTATIONS) + list(PROTO_MUTATIONS)
        # weight proto-aware mutations higher: byte mutations mostly hit
        # weight bytes or give parse errors
        weights = [1] * len(BYTE_MUTATIONS) + [2] * len(PROTO_MUTATIONS)
        kind = rng.choices(kinds, weights)[0]
        times = rng.choice([1, 1, 1, 2, 3])
        if kind in BYTE_MUTATIONS:
            data = self.seed_bytes[seed]
            for _ in range(times):
                if not data:
                    break
                data = BYTE_MUTATIONS[kind](rng, data)
            return seed, kind, data
        m = onnx.ModelProto()
        m.CopyFrom(self.seed_protos[seed])
        applied = 0
        for _ in range(times):
            try:
                applied += bool(PROTO_MUTATIONS[kind](rng, m))
            except (ValueError, TypeError, IndexError) as e:
                # a mutation python protobuf refuses (closed enums, ...)
                print(f"mutation {kind} skipped: {e}", file=sys.stderr)
        if not applied:
            return seed, kind, None
        return seed, kind, m.SerializeToString()

    def run_one(self, idx: int, rng_seed: int):
        mu = self.make_mutant(idx, rng_seed)
        seed, kind, data = mu.seed, mu.kind, mu.data
        d = self.work / f"m{idx}"
        d.mkdir()
        path = d / "model.onnx"
        path.write_bytes(data)
        for side in seed.parent.glob("*.data"):
            os.symlink(side, d / side.name)
        cmd = [str(self.mp_opt), str(path), "-o", os.devnull, *mu.extra]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=self.args.timeout)
            rc, err, to = p.returncode, p.stderr.decode("utf-8", "replace"), False
        except subprocess.TimeoutExpired as e:
            rc, err, to = None, (e.stderr or b"").decode("utf-8", "replace"), True
        dt = time.time() - t0
        shutil.rmtree(d, ignore_errors=True)
        cls = classify(rc if rc is not None else 0, err, to)
        if cls == "crash" and "Stack dump" not in err:
            with self.lock:
                self.gdb_runs += 1
                use_gdb = self.gdb_runs <= self.args.max_gdb
            if use_gdb:
                err += "\n--- gdb backtrace (mp-opt printed no stack dump) ---\n" \
                    + gdb_backtrace(cmd)
        name = seed_name(seed)
        with self.lock:
            self.n += 1
            self.records[idx] = (mu.digest(), cls)
            self.counts[cls] += 1
            self.by_kind[kind][cls] += 1
            self.by_seed[name][cls] += 1
            if cls in ("crash", "timeout", "odd"):
                sig = signature(err) if cls == "crash" else cls
                key = f"{cls}-" + hashlib.sha1(sig.encode()).hexdigest()[:10]
                info = self.sigs.setdefault(key, {
                    "class": cls, "signature": sig, "count": 0, "kinds": collections.Counter(),
                    "seeds": collections.Counter(), "saved": [], "rc": rc,
                    "stderr_head": "\n".join(err.splitlines()[:14])})
                info["count"] += 1
                info["kinds"][kind] += 1
                info["seeds"][name] += 1
                if len(info["saved"]) < 3:
                    out = self.crash_dir / key / str(len(info["saved"]))
                    out.mkdir(parents=True, exist_ok=True)
                    (out / "model.onnx").write_bytes(data)
                    for side in seed.parent.glob("*.data"):
                        if not (out / side.name).exists():
                            os.symlink(side, out / side.name)
                    rcmd = [str(self.mp_opt), str(out / "model.onnx")] + cmd[2:]
                    (out / "repro.sh").write_text(
                        "#!/bin/sh\n# seed model: %s, mutation: %s, run seed %d, mutant %d "
                        "(rng seed %d), %.1fs, rc=%s\n%s\n"
                        % (seed, kind, self.args.seed, idx, rng_seed, dt, rc, " ".join(rcmd)))
                    (out / "stderr.txt").write_text(err)
                    info["saved"].append(str(out))
                    print(f"[{self.n}] {cls}: {kind} on {name}: {sig[:100]}"
                          f" -> {out}", flush=True)

    def run(self):
        """Runs mutants 0..count-1 (or 0.. until --seconds without --count),
        at most --seconds when given."""
        count, seconds = self.args.count, self.args.seconds
        t0 = time.time()
        deadline = t0 + seconds if seconds is not None else None
        seeds = rng_seeds(self.args.seed)
        idx = 0
        with cf.ThreadPoolExecutor(self.args.jobs) as ex:
            pending = set()
            while True:
                if deadline is not None and time.time() >= deadline:
                    break
                while len(pending) < self.args.jobs * 2 and (count is None or idx < count):
                    pending.add(ex.submit(self.run_one, idx, next(seeds)))
                    idx += 1
                if not pending:
                    break
                done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for f in done:
                    f.result()
            for f in cf.as_completed(pending):
                f.result()
        self.elapsed = time.time() - t0
        self.complete = count is None or self.n == count
        shutil.rmtree(self.work, ignore_errors=True)

    def mutants(self, count: int):
        """Mutants 0..count-1, made here (no mp-opt run)."""
        seeds = rng_seeds(self.args.seed)
        for idx in range(count):
            yield self.make_mutant(idx, next(seeds))

    def summary(self):
        ordered = [self.records[i] for i in sorted(self.records)]
        return {
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "seed": self.args.seed, "count": self.args.count, "seconds": self.args.seconds,
            "jobs": self.args.jobs, "timeout": self.args.timeout,
            "models": [rel(p) for p in self.seeds], "mp_opt": str(self.mp_opt),
            "elapsed_s": round(self.elapsed, 1), "complete": self.complete,
            "mutants": self.n, "counts": dict(self.counts),
            "mutants_sha256": sha256_lines(d for d, _ in ordered),
            "outcomes_sha256": sha256_lines(f"{d} {c}" for d, c in ordered),
            "by_kind": {k: dict(v) for k, v in sorted(self.by_kind.items())},
            "by_seed": {k: dict(v) for k, v in sorted(self.by_seed.items())},
            "distinct": {k: {**v, "kinds": dict(v["kinds"]), "seeds": dict(v["seeds"])}
                         for k, v in self.sigs.items()},
        }


def sha256_lines(lines) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode() + b"\n")
    return h.hexdigest()


def rel(path: Path) -> str:
    """``path`` relative to the repository when in it or in its folder
    (../shared/models/...), else absolute."""
    path = path.resolve()
    if path.is_relative_to(REPO.parent):
        return os.path.relpath(path, REPO)
    return str(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int,
                    help="run exactly this many mutants (0..N-1 of --seed)")
    ap.add_argument("--seconds", type=float,
                    help="stop after this long (default without --count: 60; with it: no bound)")
    ap.add_argument("--seed", type=int, default=0, help="the run's random seed")
    ap.add_argument("--jobs", type=int, default=2, help="mp-opt processes at once")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per mp-opt run")
    ap.add_argument("--mp-opt", default=str(build_tool("mp-opt")))
    ap.add_argument("--corpus", choices=CORPORA, default="default",
                    help="the seed models (see above; default: ../shared/models + tts_decoder)")
    ap.add_argument("--models", nargs="*", type=Path, help="seed models (instead of --corpus)")
    ap.add_argument("--max-gdb", type=int, default=300,
                    help="crashes without a stack dump get a gdb backtrace (at most this many)")
    ap.add_argument("--crash-dir", type=Path, default=CRASH_DIR,
                    help="where crashing / timing-out / odd mutants are saved")
    ap.add_argument("--summary", type=Path, help="write the JSON summary here")
    ap.add_argument("--dry-run", action="store_true",
                    help="make the --count mutants and print their hashes; run no mp-opt")
    args = ap.parse_args(argv)
    if args.count is None and args.seconds is None:
        args.seconds = 60
    if args.count is not None and args.count < 0:
        ap.error("--count must be >= 0")
    if args.jobs < 1:
        ap.error("--jobs must be >= 1")
    if args.dry_run and args.count is None:
        ap.error("--dry-run needs --count")
    if not Path(args.mp_opt).is_file():
        ap.error(f"{args.mp_opt} is not built (--mp-opt, $MP_BUILD_DIR)")
    OPS[:] = supported_ops(Path(args.mp_opt))
    fz = Fuzzer(args)
    if args.dry_run:
        digests = []
        for mu in fz.mutants(args.count):
            digests.append(mu.digest())
            print(mu.idx, seed_name(mu.seed), mu.kind, len(mu.data), digests[-1])
        shutil.rmtree(fz.work, ignore_errors=True)
        print("mutants_sha256", sha256_lines(digests))
        return
    fz.run()
    s = fz.summary()
    text = json.dumps(s, indent=1, default=str)
    if args.summary:
        args.summary.parent.mkdir(parents=True, exist_ok=True)
        args.summary.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
