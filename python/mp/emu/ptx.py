"""Parse the PTX that mp-compile writes (LLVM's NVPTX backend) into kernels.

Only what the emulator needs: each ``.entry`` with its parameters, register
declarations, ``.shared`` and ``.local`` variables, labels and instructions,
and the module's ``.global``/``.const`` variables with their initial bytes
(libdevice's tables, e.g. the 2/pi digits of sinf's large-argument path).
Instructions keep their operands as text; :mod:`mp.emu.simt` gives them
meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class PtxError(Exception):
    """PTX the emulator cannot parse or does not implement."""


@dataclass
class Instruction:
    opcode: str                 # "add.rn.f32", "@"-guard removed
    operands: list[str]         # text, "{...}" and "[...]" kept whole
    guard: str | None = None    # predicate register of "@%p" / "@!%p"
    negated: bool = False
    line: int = 0               # 1-based line in the module text
    text: str = ""

    @property
    def parts(self) -> list[str]:
        return self.opcode.split(".")


@dataclass
class Param:
    name: str
    size: int                   # bytes


@dataclass
class Kernel:
    name: str
    params: list[Param]
    registers: dict[str, int]   # prefix ("%rd") -> bits (1 for .pred)
    shared: dict[str, int]      # variable -> offset in the block's shared memory
    shared_bytes: int           # static shared memory per block
    dynamic_shared: str | None  # the extern .shared variable, if any
    body: list[Instruction]
    labels: dict[str, int]      # label -> index in body
    line: int = 0
    local: dict[str, int] = field(default_factory=dict)  # .local variable -> offset
    local_bytes: int = 0        # .local memory per thread (a stack frame)
    # ".branchtargets" lists by their label (the table of a brx.idx).
    branch_targets: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Variable:
    """A module-scope ``.global`` or ``.const`` variable: the driver allocates
    it in device memory when the module loads."""
    name: str
    size: int
    align: int
    data: bytes                 # initial bytes (zeros without an initializer)


_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2,
               "b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8,
               "f64": 8, "pred": 1}

_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(")
# ".param [.align N] .TYPE [.ptr [.space] [.align N]] NAME[[COUNT]]"
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+[^\[]*?([\w$]+)\s*"
                    r"(?:\[(\d+)\])?\s*$")
_REG = re.compile(r"\.reg\s+\.(\w+)\s+(%[A-Za-z_]+)(?:<\d+>)?$")
_SHARED = re.compile(r"(\.extern\s+)?\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)"
                     r"(?:\[(\d*)\])?")
_LOCAL = re.compile(r"\.local\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)(?:\[(\d+)\])?$")
# ".global .align 4 .b8 NAME[24] = {1, 2, ...}" at module scope ("const" too).
_VARIABLE = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.(global|const)\s+(?:\.align\s+(\d+)\s+)?"
                       r"\.(\w+)\s+([\w$]+)(?:\[(\d+)\])?\s*(?:=\s*(\{[^}]*\}|[^;]+))?;",
                       re.M)
_LABEL = re.compile(r"^\s*([\w$]+):")


def split_operands(text: str) -> list[str]:
    """Splits at the commas outside ``{}`` and ``[]``."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise PtxError("unbalanced braces in a kernel body")


def parse_module(text: str) -> dict[str, Kernel]:
    """Every ``.entry`` of a PTX module, by name."""
    clean = _strip_comments(text)
    kernels: dict[str, Kernel] = {}
    for match in _ENTRY.finditer(clean):
        name = match.group(1)
        close = clean.index(")", match.end())
        params = []
        for decl in clean[match.end():close].split(","):
            if not decl.strip():
                continue
            p = _PARAM.search(decl)
            if not p:
                raise PtxError(f"kernel {name}: cannot read parameter '{decl.strip()}'")
            size = _TYPE_BYTES.get(p.group(1))
            if size is None:
                raise PtxError(f"kernel {name}: parameter type .{p.group(1)}")
            params.append(Param(p.group(2), size * int(p.group(3) or 1)))
        body_at = clean.index("{", close)
        end = _matching_brace(clean, body_at)
        line0 = clean.count("\n", 0, body_at) + 1
        kernels[name] = _parse_body(name, params, clean[body_at + 1:end], line0,
                                    clean.count("\n", 0, match.start()) + 1)
    return kernels


def _parse_body(name: str, params: list[Param], body: str, line0: int, line: int) -> Kernel:
    registers: dict[str, int] = {}
    shared: dict[str, int] = {}
    shared_bytes, dynamic = 0, None
    local: dict[str, int] = {}
    local_bytes = 0
    branch_targets: dict[str, list[str]] = {}
    instructions: list[Instruction] = []
    labels: dict[str, int] = {}
    start = 0
    for statement in body.split(";"):
        offset, start = start, start + len(statement) + 1
        stmt = statement
        label = None
        while True:
            m = _LABEL.match(stmt)
            if not m:
                break
            labels[m.group(1)] = len(instructions)
            label = m.group(1)
            offset += m.end()
            stmt = stmt[m.end():]
        offset += len(stmt) - len(stmt.lstrip())
        stmt_line = line0 + body.count("\n", 0, offset)
        stmt = " ".join(stmt.split())
        if not stmt or stmt in ("{", "}"):
            continue
        if stmt.startswith(".reg"):
            r = _REG.match(stmt)
            if not r:
                raise PtxError(f"kernel {name}: cannot read '{stmt}'")
            registers[r.group(2)] = 1 if r.group(1) == "pred" else 8 * _TYPE_BYTES[r.group(1)]
            continue
        if stmt.startswith((".shared", ".extern")):
            s = _SHARED.match(stmt)
            if not s:
                raise PtxError(f"kernel {name}: cannot read '{stmt}'")
            align = int(s.group(2) or _TYPE_BYTES[s.group(3)])
            if s.group(1):
                dynamic = s.group(4)
                continue
            shared_bytes = (shared_bytes + align - 1) // align * align
            shared[s.group(4)] = shared_bytes
            shared_bytes += _TYPE_BYTES[s.group(3)] * int(s.group(5) or 1)
            continue
        if stmt.startswith(".branchtargets"):
            if label is None:
                raise PtxError(f"kernel {name}: '.branchtargets' without a label")
            branch_targets[label] = split_operands(stmt[len(".branchtargets"):])
            del labels[label]  # a table, not a place to branch to
            continue
        if stmt.startswith(".local"):
            v = _LOCAL.match(stmt)
            if not v:
                raise PtxError(f"kernel {name}: cannot read '{stmt}'")
            align = int(v.group(1) or _TYPE_BYTES[v.group(2)])
            local_bytes = (local_bytes + align - 1) // align * align
            local[v.group(3)] = local_bytes
            local_bytes += _TYPE_BYTES[v.group(2)] * int(v.group(4) or 1)
            continue
        if stmt.startswith("."):
            if stmt.startswith((".const", ".global")):
                raise PtxError(f"kernel {name}: '{stmt}' is not emulated")
            continue  # .maxntid, .pragma and the like
        guard, negated = None, False
        if stmt.startswith("@"):
            head, stmt = stmt.split(" ", 1)
            negated = head.startswith("@!")
            guard = head[2:] if negated else head[1:]
        opcode, _, rest = stmt.partition(" ")
        instructions.append(Instruction(opcode, split_operands(rest), guard, negated,
                                        stmt_line, stmt))
    return Kernel(name, params, registers, shared, shared_bytes, dynamic, instructions, labels,
                  line, local, local_bytes, branch_targets)


def module_variables(text: str) -> list[Variable]:
    """The module-scope ``.global`` and ``.const`` variables, in order (LLVM
    writes them unindented, outside every function)."""
    out = []
    for m in _VARIABLE.finditer(_strip_comments(text)):
        name, kind = m.group(4), m.group(3)
        if kind not in _TYPE_BYTES or kind == "pred":
            raise PtxError(f"module variable {name}: type .{kind} is not emulated")
        elem, count = _TYPE_BYTES[kind], int(m.group(5) or 1)
        data = bytearray(elem * count)
        init = (m.group(6) or "").strip()
        if init:
            values = [v.strip() for v in init.strip("{}").split(",") if v.strip()]
            if len(values) > count or kind[0] == "f":
                raise PtxError(f"module variable {name}: initializer '{init[:60]}' is not emulated")
            for i, v in enumerate(values):
                data[i * elem:(i + 1) * elem] = (int(v, 0) & ((1 << 8 * elem) - 1)).to_bytes(
                    elem, "little")
        out.append(Variable(name, elem * count, int(m.group(2) or elem), bytes(data)))
    return out
