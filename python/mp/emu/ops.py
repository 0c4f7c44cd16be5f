"""What each PTX instruction does, on the threads a :class:`Launch` selected.

One function per opcode family (the part before the first dot); each reads
its operands with ``Launch.read`` as the instruction's type and writes the
result's raw bits. Control flow (``bra``, ``ret``) is the scheduler's, in
:mod:`mp.emu.execute`.
"""

from __future__ import annotations

import numpy as np

from .simt import (_FLOAT, _SINT, _UINT, EmulationError, Launch, _ftz, _kind, _np_type,
                   round_float, two_sum)
from .ptx import Instruction

_ROUNDING = ("rn", "rz", "rm", "rp")


def _type_of(parts: list[str]) -> str:
    """The instruction's last type suffix ("f32" of "add.rn.f32")."""
    for p in reversed(parts):
        if _is_type(p):
            return p
    raise EmulationError(f"no type in '{'.'.join(parts)}'")


def _is_type(p: str) -> bool:
    return p == "pred" or (len(p) >= 2 and p[0] in "bsuf" and p[1:].isdigit())


def _rounding(parts: list[str]) -> str:
    for p in parts:
        if p in _ROUNDING:
            return p
    return "rn"


def _float_result(L: Launch, ins: Instruction, exact: np.ndarray, t: str,
                  error: np.ndarray | None = None) -> np.ndarray:
    """The value exact + error (float64 pair, see simt.round_float) rounded to
    type `t` as the instruction says."""
    parts = ins.parts
    r = round_float(exact, _rounding(parts), _FLOAT[int(t[1:])], error)
    if t == "f32" and "ftz" in parts:
        r = _ftz(r)
    if "sat" in parts:
        r = np.where(np.isnan(r), r.dtype.type(0), np.clip(r, 0, 1)).astype(r.dtype)
    return r


def _inputs(L: Launch, ins: Instruction, t: str, first: int = 1) -> list[np.ndarray]:
    values = [L.read(o, t) for o in ins.operands[first:]]
    if "ftz" in ins.parts:
        values = [_ftz(v) for v in values]
    return values


# --- Integer and float arithmetic ------------------------------------------

def _arith(L: Launch, ins: Instruction) -> None:
    parts = ins.parts
    if parts[-1] == "f16x2":
        _packed(L, ins)
        return
    op, t = parts[0], _type_of(parts)
    kind, bits = _kind(t)
    if kind == "f":
        _float_arith(L, ins, op, t)
        return
    if "sat" in parts and not (op in ("add", "sub") and t == "s32"):
        raise L.error(f"'{ins.opcode}' is not emulated")
    if "wide" in parts:
        a, b = (L.read(o, t) for o in ins.operands[1:3])
        wide = (_SINT if kind == "s" else _UINT)[2 * bits]
        r = a.astype(wide) * b.astype(wide)
        if op == "mad":
            r = r + L.read(ins.operands[3], f"{kind}{2 * bits}")
        L.write(ins.operands[0], r)
        return
    vals = [L.read(o, t) for o in ins.operands[1:]]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if op in ("add", "sub") and "sat" in parts:   # s32: clamped, not wrapped
            wide = vals[0].astype(np.int64) + (1 if op == "add" else -1) * vals[1].astype(np.int64)
            r = np.clip(wide, -2 ** 31, 2 ** 31 - 1)
        elif op == "add":
            r = vals[0] + vals[1]
        elif op == "sub":
            r = vals[0] - vals[1]
        elif op in ("mul", "mad") and "hi" in parts:
            r = _mul_hi(vals[0], vals[1], kind, bits)
            if op == "mad":
                r = r + vals[2]
        elif op in ("mul", "mad"):
            r = vals[0] * vals[1]
            if op == "mad":
                r = r + vals[2]
        elif op in ("div", "rem"):
            a, b = vals
            if (b == 0).any():
                raise L.error("integer division by zero",
                              L.thread_ids()[int(np.flatnonzero(b == 0)[0])])
            if kind == "s":
                # Magnitudes as unsigned (|INT_MIN| fits), quotient toward zero.
                u = _UINT[bits]
                ua = np.where(a < 0, (-a).view(u), a.view(u))
                ub = np.where(b < 0, (-b).view(u), b.view(u))
                q = (ua // ub).view(a.dtype)
                q = np.where((a < 0) != (b < 0), -q, q)
                r = q if op == "div" else a - q * b
            else:
                r = a // b if op == "div" else a % b
        elif op == "min":
            r = np.minimum(vals[0], vals[1])
        elif op == "max":
            r = np.maximum(vals[0], vals[1])
        elif op == "neg":
            r = -vals[0]
        elif op == "abs":
            r = np.abs(vals[0])
        else:
            raise L.error(f"'{ins.opcode}' is not emulated")
    L.write(ins.operands[0], np.asarray(r).astype(_np_type(t)))


def _mul_hi(a: np.ndarray, b: np.ndarray, kind: str, bits: int) -> np.ndarray:
    if bits < 64:
        wide = (_SINT if kind == "s" else _UINT)[2 * bits]
        return ((a.astype(wide) * b.astype(wide)) >> bits).astype(a.dtype)
    # 64 x 64 -> high 64 bits from 32-bit halves (unsigned, then sign fixes).
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    a0, a1, b0, b1 = ua & m32, ua >> np.uint64(32), ub & m32, ub >> np.uint64(32)
    lo = a0 * b0
    mid1 = a1 * b0 + (lo >> np.uint64(32))
    mid2 = a0 * b1 + (mid1 & m32)
    hi = a1 * b1 + (mid1 >> np.uint64(32)) + (mid2 >> np.uint64(32))
    if kind == "s":
        hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
        return hi.view(np.int64)
    return hi


_PACKED_TEMPS = ("%__lane_d", "%__lane_a", "%__lane_b", "%__lane_c")


def _packed(L: Launch, ins: Instruction) -> None:
    """``add/sub/mul/fma/neg/abs/min/max .f16x2``: the f16 instruction on each
    16-bit half of the 32-bit operands, the results packed back (low half
    first, as mov.b32 {lo, hi} packs them)."""
    if len(ins.operands) > len(_PACKED_TEMPS) or "|" in ins.operands[0]:
        raise L.error(f"'{ins.opcode}' is not emulated")
    opcode = ins.opcode.replace("f16x2", "f16")
    scalar = Instruction(opcode, list(_PACKED_TEMPS[:len(ins.operands)]), None, False,
                         ins.line, ins.text)
    sources = [L.read(o, "u32") for o in ins.operands[1:]]
    result = np.zeros(L.count(), np.uint32)
    for half in (0, 16):
        for temp, value in zip(_PACKED_TEMPS[1:], sources):
            L.bits_of[temp] = 16
            L.write(temp, ((value >> np.uint32(half)) & np.uint32(0xFFFF)).astype(np.uint16))
        L.bits_of[_PACKED_TEMPS[0]] = 16
        L.instruction = scalar
        _arith(L, scalar)
        L.instruction = ins
        result |= L.read(_PACKED_TEMPS[0], "u16").astype(np.uint32) << np.uint32(half)
    L.write(ins.operands[0], result)


_FLOPS = {"add": 1, "sub": 1, "mul": 1, "min": 1, "max": 1, "div": 1, "fma": 2, "mad": 2}


def _float_arith(L: Launch, ins: Instruction, op: str, t: str) -> None:
    parts = ins.parts
    if L.profile is not None and op in _FLOPS:
        L.profile.flops(_FLOPS[op] * L.count())
    vals = _inputs(L, ins, t)
    wide = [v.astype(np.float64) for v in vals]
    with np.errstate(all="ignore"):
        if op in ("add", "sub", "mul") and t != "f64" and _rounding(parts) == "rn" \
                and "ftz" not in parts and "sat" not in parts:
            # numpy's float32/float16 arithmetic is IEEE round-to-nearest.
            a, b = vals
            r = a + b if op == "add" else a - b if op == "sub" else a * b
            L.write(ins.operands[0], r.astype(vals[0].dtype))
            return
        error = None
        if t == "f64" and (op in ("fma", "mad") or _rounding(parts) != "rn"):
            raise L.error(f"'{ins.opcode}' is not emulated (it would round twice)")
        if op == "add":
            exact, error = two_sum(wide[0], wide[1])
        elif op == "sub":
            exact, error = two_sum(wide[0], -wide[1])
        elif op == "mul":
            exact = wide[0] * wide[1]   # exact: at most 2 x 24 significant bits
        elif op in ("fma", "mad"):
            exact, error = two_sum(wide[0] * wide[1], wide[2])
        elif op == "div":
            if _rounding(parts) != "rn":
                raise L.error(f"'{ins.opcode}' is not emulated")
            if t == "f32" and "rn" in parts:
                L.write(ins.operands[0], _ftz(vals[0] / vals[1]) if "ftz" in parts
                        else vals[0] / vals[1])
                return
            exact = wide[0] / wide[1]
        elif op == "neg":
            L.write(ins.operands[0], -vals[0])
            return
        elif op == "abs":
            L.write(ins.operands[0], np.abs(vals[0]))
            return
        elif op in ("min", "max"):
            if "xorsign" in parts or "abs" in parts:
                raise L.error(f"'{ins.opcode}' is not emulated")
            nan_wins = "NaN" in parts
            f = (np.minimum if op == "min" else np.maximum) if nan_wins else \
                (np.fmin if op == "min" else np.fmax)
            L.write(ins.operands[0], f(vals[0], vals[1]))
            return
        else:
            raise L.error(f"'{ins.opcode}' is not emulated")
    L.write(ins.operands[0], _float_result(L, ins, exact, t, error))


def _math(L: Launch, ins: Instruction) -> None:
    """sqrt, rsqrt, rcp, ex2, lg2, sin, cos, tanh (``.approx`` computed exactly)."""
    parts, t = ins.parts, _type_of(ins.parts)
    x = _inputs(L, ins, t)[0].astype(np.float64)
    op = parts[0]
    with np.errstate(all="ignore"):
        exact = {"sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "rcp": lambda v: 1 / v,
                 "ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos,
                 "tanh": np.tanh}[op](x)
    L.write(ins.operands[0], _float_result(L, ins, exact, t))


def _copysign(L: Launch, ins: Instruction) -> None:
    # copysign d, a, b: b's magnitude with a's sign.
    t = _type_of(ins.parts)
    a, b = (L.read(o, t) for o in ins.operands[1:])
    L.write(ins.operands[0], np.copysign(b, a))


# --- Bits, comparisons, moves, conversions ---------------------------------

def _logic(L: Launch, ins: Instruction) -> None:
    op, t = ins.parts[0], _type_of(ins.parts)
    if t == "pred":
        vals = [L.read(o, "pred") for o in ins.operands[1:]]
    else:
        t = "u" + t[1:]
        vals = [L.read(o, t) for o in ins.operands[1:]]
    if op == "and":
        r = vals[0] & vals[1]
    elif op == "or":
        r = vals[0] | vals[1]
    elif op == "xor":
        r = vals[0] ^ vals[1]
    elif op == "not":
        r = ~vals[0]
    elif op == "cnot":
        r = (vals[0] == 0).astype(vals[0].dtype)
    else:
        raise L.error(f"'{ins.opcode}' is not emulated")
    L.write(ins.operands[0], r)


def _shift(L: Launch, ins: Instruction) -> None:
    op, t = ins.parts[0], _type_of(ins.parts)
    kind, bits = _kind(t)
    a = L.read(ins.operands[1], ("s" if kind == "s" else "u") + str(bits))
    n = L.read(ins.operands[2], "u32").astype(np.int64)
    big = n >= bits
    shift = np.minimum(n, bits - 1).astype(a.dtype)
    if op == "shl":
        r = np.where(big, a.dtype.type(0), a << shift)
    elif kind == "s":
        r = a >> shift  # arithmetic; a shift of the width or more fills with the sign
    else:
        r = np.where(big, a.dtype.type(0), a >> shift)
    L.write(ins.operands[0], r)


def _bfe(L: Launch, ins: Instruction) -> None:
    """bfe d, a, pos, len: len bits of a from pos (pos and len taken mod
    256); bits past a's width, and all high bits for .s, copy the sign bit
    a[min(pos + len - 1, width - 1)] (0 for .u or len 0)."""
    t = _type_of(ins.parts)
    kind, bits = _kind(t)
    a = L.read(ins.operands[1], "u" + str(bits)).astype(np.uint64)
    pos = (L.read(ins.operands[2], "u32") & np.uint32(0xFF)).astype(np.int64)
    length = (L.read(ins.operands[3], "u32") & np.uint32(0xFF)).astype(np.int64)
    msb = np.minimum(pos + length - 1, bits - 1)
    available = np.clip(np.where(pos < bits, msb - pos + 1, 0), 0, 64)  # bits inside a
    shifted = np.where(pos >= 64, np.uint64(0), a >> np.minimum(pos, 63).astype(np.uint64))
    mask = np.where(available >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << np.minimum(available, 63).astype(np.uint64)) - np.uint64(1))
    r = shifted & mask
    if kind == "s":
        sign = np.where(length == 0, np.uint64(0),
                        (a >> np.clip(msb, 0, 63).astype(np.uint64)) & np.uint64(1))
        r = np.where(sign == 1, r | ~mask, r)
    L.write(ins.operands[0], r.astype(_UINT[bits]))


_COMPARE = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal,
    "hi": np.greater, "hs": np.greater_equal,
}


def _setp_packed(L: Launch, ins: Instruction) -> None:
    """``setp.CMP.f16x2 p|q, a, b``: p compares the low halves, q the high."""
    dests = ins.operands[0].split("|")
    if len(dests) != 2 or len(ins.operands) != 3:
        raise L.error(f"'{ins.text}' is not emulated")
    scalar = Instruction(ins.opcode.replace("f16x2", "f16"),
                         ["%__lane_p", *_PACKED_TEMPS[1:3]], None, False, ins.line, ins.text)
    sources = [L.read(o, "u32") for o in ins.operands[1:]]
    L.bits_of["%__lane_p"] = 1
    for half, dest in zip((0, 16), dests):
        for temp, value in zip(_PACKED_TEMPS[1:], sources):
            L.bits_of[temp] = 16
            L.write(temp, ((value >> np.uint32(half)) & np.uint32(0xFFFF)).astype(np.uint16))
        _setp(L, scalar)
        L.write(dest, L.read("%__lane_p", "pred"))


def _setp(L: Launch, ins: Instruction) -> None:
    parts = ins.parts
    if parts[-1] == "f16x2":
        _setp_packed(L, ins)
        return
    cmp, t = parts[1], _type_of(parts)
    kind, bits = _kind(t)
    read_as = t if kind in "fs" else "u" + str(bits)
    a, b = (L.read(o, read_as) for o in ins.operands[1:3])
    if "ftz" in parts:
        a, b = _ftz(a), _ftz(b)
    with np.errstate(invalid="ignore"):
        if kind == "f":
            unordered = np.isnan(a) | np.isnan(b)
            if cmp == "num":
                r = ~unordered
            elif cmp == "nan":
                r = unordered
            elif cmp.endswith("u") and cmp[:-1] in _COMPARE:
                r = _COMPARE[cmp[:-1]](a, b) | unordered
            elif cmp == "ne":
                r = (a != b) & ~unordered
            else:
                r = _COMPARE[cmp](a, b)
        else:
            r = _COMPARE[cmp](a, b)
    if len(parts) > 3 and parts[2] in ("and", "or", "xor"):
        c = L.read(ins.operands[3], "pred")
        r = {"and": r & c, "or": r | c, "xor": r ^ c}[parts[2]]
    dest, _, complement = ins.operands[0].partition("|")
    L.write(dest, r)
    if complement:
        L.write(complement, ~r)


def _selp(L: Launch, ins: Instruction) -> None:
    t = _type_of(ins.parts)
    a, b = (L.read(o, t) for o in ins.operands[1:3])
    c = L.read(ins.operands[3], "pred")
    L.write(ins.operands[0], np.where(c, a, b))


def _vector(text: str) -> list[str]:
    return [v.strip() for v in text.strip()[1:-1].split(",")]


def _mov(L: Launch, ins: Instruction) -> None:
    t = _type_of(ins.parts)
    kind, bits = _kind(t)
    dest, src = ins.operands[0], ins.operands[1]
    if src.startswith("{"):   # pack: the first element in the low bits
        elems = _vector(src)
        width = bits // len(elems)
        r = np.zeros(L.count(), _UINT[bits])
        for i, e in enumerate(elems):
            r |= L.read(e, f"u{width}").astype(_UINT[bits]) << _UINT[bits](i * width)
        L.write(dest, r)
    elif dest.startswith("{"):  # unpack
        elems = _vector(dest)
        width = bits // len(elems)
        v = L.read(src, f"u{bits}")
        for i, e in enumerate(elems):
            if e != "_":
                L.write(e, ((v >> _UINT[bits](i * width)) & _UINT[bits]((1 << width) - 1))
                        .astype(_UINT[width]))
    else:
        L.write(dest, L.read(src, t if kind != "f" else f"u{bits}"))


def _cvt(L: Launch, ins: Instruction) -> None:
    parts = ins.parts
    types = [p for p in parts[1:] if _is_type(p) or p in ("f16x2", "bf16x2")]  # dst, src
    if types[0] in ("f16x2", "bf16x2"):
        # cvt.rn.f16x2.f32 d, a, b: d = {cvt(a) in the high half, cvt(b) in the low}.
        if types[0] == "bf16x2":
            raise L.error(f"'{ins.opcode}' is not emulated")
        a, b = (L.read(o, types[1]).astype(np.float64) for o in ins.operands[1:3])
        ha = _float_result(L, ins, a, "f16").view(np.uint16).astype(np.uint32)
        hb = _float_result(L, ins, b, "f16").view(np.uint16).astype(np.uint32)
        L.write(ins.operands[0], (ha << np.uint32(16)) | hb)
        return
    dst, src = types
    dkind, dbits = _kind(dst)
    skind, sbits = _kind(src)
    x = L.read(ins.operands[1], src if skind in "fs" else f"u{sbits}")
    if "ftz" in parts:
        x = _ftz(x)
    rounding = next((p for p in parts if p in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")),
                    None)
    with np.errstate(all="ignore"):
        if dkind == "f" and skind == "f":
            v = x.astype(np.float64)
            if rounding in ("rni", "rzi", "rmi", "rpi"):
                v = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rounding](v)
            r = _float_result(L, ins, v, dst)
        elif dkind == "f":
            s64 = x.astype(np.float64)
            limit = 2.0 ** (sbits if skind == "u" else sbits - 1)
            back = np.where(np.abs(s64) < limit, s64, 0).astype(x.dtype)
            # The conversion's error, for the 64-bit values a float64 cannot hold.
            error = np.where(np.abs(s64) < limit, (x - back).astype(np.float64), 0.0) \
                if sbits == 64 else None
            r = _float_result(L, ins, s64, dst, error)
        elif skind == "f":
            v = x.astype(np.float64)
            v = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil,
                 None: np.trunc}[rounding if rounding in ("rni", "rzi", "rmi", "rpi") else None](v)
            itype = _np_type(dst if dkind == "s" else f"u{dbits}")
            info = np.iinfo(itype)
            # Saturating; compared as floats, so that 2^63 - 1 (not a float) is no trap.
            high, low = v >= float(info.max), v <= float(info.min)
            safe = np.where(np.isnan(v) | high | low, 0, v).astype(itype)
            r = np.where(high, itype(info.max), np.where(low, itype(info.min), safe))
        else:
            r = x.astype(_np_type(dst if dkind == "s" else f"u{dbits}"))
            if "sat" in parts:
                raise L.error(f"'{ins.opcode}' is not emulated")
    L.write(ins.operands[0], r)


def _cvta(L: Launch, ins: Instruction) -> None:
    # cvta.to.global / cvta.global: global and generic addresses coincide.
    if "shared" in ins.parts or "local" in ins.parts:
        raise L.error("generic addressing of .shared or .local memory is not emulated")
    L.write(ins.operands[0], L.read(ins.operands[1], "u64"))


# --- Memory ------------------------------------------------------------------

def _space(parts: list[str]) -> str:
    for p in parts[1:]:
        if p in ("global", "shared", "param", "local", "const"):
            return p
    return "generic"


def _ld(L: Launch, ins: Instruction) -> None:
    parts = ins.parts
    t = _type_of(parts)
    size = max(1, _kind(t)[1] // 8)
    space = _space(parts)
    dest, addr = ins.operands[0], ins.operands[1]
    elems = _vector(dest) if dest.startswith("{") else [dest]
    _check_vector_alignment(L, space, addr, size, len(elems))
    _profile_access(L, ins, space, addr, size * len(elems), store=False)
    for i, e in enumerate(elems):
        value = L.load(space, _offset(addr, i * size), size)
        if _kind(t)[0] == "s" and L.reg_bits(e) > size * 8:
            value = value.view(_SINT[size * 8]).astype(_SINT[L.reg_bits(e)])
        L.write(e, value)


def _st(L: Launch, ins: Instruction) -> None:
    parts = ins.parts
    t = _type_of(parts)
    size = max(1, _kind(t)[1] // 8)
    addr, src = ins.operands[0], ins.operands[1]
    elems = _vector(src) if src.startswith("{") else [src]
    _check_vector_alignment(L, _space(parts), addr, size, len(elems))
    _profile_access(L, ins, _space(parts), addr, size * len(elems), store=True)
    for i, e in enumerate(elems):
        L.store(_space(parts), _offset(addr, i * size), L.read(e, f"u{size * 8}"), size)


def _profile_access(L: Launch, ins: Instruction, space: str, addr: str, nbytes: int,
                    store: bool) -> None:
    """Records a global access of `nbytes` per thread (a whole vector) while profiling."""
    if L.profile is None or space != "global":
        return
    kind, a = L.address(addr)
    if kind != "reg":
        return
    # Bounds and alignment are checked by the access itself, right after.
    offsets = (a - np.uint64(L.memory.base)).astype(np.int64)
    L.profile.access(L.warp[L.thread_ids()], offsets, nbytes, store,
                     site=f"{ins.line}: {ins.text.strip() or ins.opcode}")


def _check_vector_alignment(L: Launch, space: str, addr: str, size: int, count: int) -> None:
    """A vector access (ld.v4.b32 ...) must be aligned to its whole size."""
    if count == 1 or space not in ("global", "shared", "local"):
        return  # scalar accesses are checked by Launch.load/store
    _, a = L.address(addr)
    bad = a % np.uint64(size * count) != 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise L.error(f"misaligned {size * count}-byte vector access at 0x{int(a[i]):x}",
                      L.thread_ids()[i])


def _offset(addr: str, extra: int) -> str:
    if not extra:
        return addr
    inner = addr.strip()[1:-1]
    return f"[{inner}+{extra}]" if "+" not in inner else \
        f"[{inner.rsplit('+', 1)[0]}+{int(inner.rsplit('+', 1)[1], 0) + extra}]"


# --- Warp-wide ---------------------------------------------------------------

def _shfl(L: Launch, ins: Instruction) -> None:
    parts = ins.parts
    mode = parts[2] if parts[1] == "sync" else parts[1]
    dest, a_op, b_op, c_op = ins.operands[:4]
    mask_op = ins.operands[4] if len(ins.operands) > 4 else "-1"
    ids = L.thread_ids()
    lane = L.lane[ids].astype(np.int64)
    b = L.read(b_op, "u32").astype(np.int64) & 31
    c = L.read(c_op, "u32").astype(np.int64)
    member = L.read(mask_op, "u32").astype(np.int64)
    clamp, seg = c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (clamp & ~seg)
    min_lane = lane & seg
    if mode == "bfly":
        j = lane ^ b
        ok = j <= max_lane
    elif mode == "down":
        j = lane + b
        ok = j <= max_lane
    elif mode == "up":
        j = lane - b
        ok = j >= max_lane
    elif mode == "idx":
        j = min_lane | (b & ~seg)
        ok = j <= max_lane
    else:
        raise L.error(f"'{ins.opcode}' is not emulated")
    j = np.where(ok, j, lane)
    _check_warp_members(L, ids, lane, member)
    source = ids - lane + j
    active = np.zeros(L.total, bool)
    active[ids] = True
    valid = (source >= 0) & (source < L.total)
    valid &= active[np.clip(source, 0, L.total - 1)]
    valid &= L.warp[np.clip(source, 0, L.total - 1)] == L.warp[ids]
    if not valid.all():
        bad = int(np.flatnonzero(~valid)[0])
        raise L.error(f"shfl.sync reads lane {int(j[bad])}, which does not execute it",
                      ids[bad])
    reg = L.regs.get(a_op)
    if a_op.startswith("%") and reg is None:
        reg = L.regs[a_op] = np.zeros(L.total, np.uint32)
    value = reg[source] if a_op.startswith("%") else np.full(len(ids), L.read(a_op, "u32")[0])
    d, _, p = dest.partition("|")
    L.write(d, value.astype(np.uint32))
    if p:
        L.write(p, ok)


def _check_warp_members(L: Launch, ids: np.ndarray, lane: np.ndarray, member: np.ndarray) -> None:
    """Every lane a thread names in its member mask executes the instruction."""
    # Lanes that executed ret, and lanes past the end of a partial last warp,
    # do not hold the others back (the ISA waits for non-exited lanes only).
    present = np.zeros(L.warp.max() + 1 if L.total else 1, np.int64)
    np.bitwise_or.at(present, L.warp[ids], np.int64(1) << lane)
    gone = np.flatnonzero(L.done)
    np.bitwise_or.at(present, L.warp[gone], np.int64(1) << L.lane[gone].astype(np.int64))
    last = L.nthread % 32
    if last:
        tails = np.arange(L.warps_per_block - 1, len(present), L.warps_per_block)
        present[tails] |= (0xFFFFFFFF >> last) << last
    missing = member & 0xFFFFFFFF & ~present[L.warp[ids]]
    if (missing != 0).any():
        i = int(np.flatnonzero(missing)[0])
        raise L.error(f"member mask 0x{int(member[i]) & 0xFFFFFFFF:08x} names lanes that do not "
                      f"execute the instruction (missing 0x{int(missing[i]):08x})", ids[i])
    own = (member >> lane) & 1
    if (own == 0).any():
        i = int(np.flatnonzero(own == 0)[0])
        raise L.error("a thread executes a .sync instruction whose member mask excludes it", ids[i])


# Fragment layouts of mma.m16n8k16 (PTX ISA, "Matrix Fragments for
# mma.m16n8k16 with floating point type"): lane l, g = l >> 2, t = l & 3.
_LANE = np.arange(32)
_G, _T = _LANE >> 2, _LANE & 3
# A (16 x 16, row): element i of the lane's 8 halves.
_A_ROW = np.stack([_G, _G, _G + 8, _G + 8, _G, _G, _G + 8, _G + 8], 1)
_A_COL = np.stack([2 * _T, 2 * _T + 1, 2 * _T, 2 * _T + 1,
                   2 * _T + 8, 2 * _T + 9, 2 * _T + 8, 2 * _T + 9], 1)
# B (16 x 8, col): element i of the lane's 4 halves.
_B_ROW = np.stack([2 * _T, 2 * _T + 1, 2 * _T + 8, 2 * _T + 9], 1)
_B_COL = np.stack([_G] * 4, 1)
# C and D (16 x 8): element i of the lane's 4 values.
_C_ROW = np.stack([_G, _G, _G + 8, _G + 8], 1)
_C_COL = np.stack([2 * _T, 2 * _T + 1, 2 * _T, 2 * _T + 1], 1)


def _halves(L: Launch, regs: list[str], rows: int) -> np.ndarray:
    """(warps, 32, 2 * len(regs)) f16 values of packed f16x2 registers."""
    words = np.stack([L.read(r, "u32") for r in regs], 1).reshape(rows, 32, len(regs))
    lo = (words & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16)
    hi = (words >> np.uint32(16)).astype(np.uint16).view(np.float16)
    return np.stack([lo, hi], 3).reshape(rows, 32, 2 * len(regs))


def _mma(L: Launch, ins: Instruction) -> None:
    parts = ins.parts
    if "m16n8k16" not in parts or "row" not in parts or "col" not in parts:
        raise L.error(f"'{ins.opcode}' is not emulated (m16n8k16.row.col only)")
    types = [p for p in parts if _is_type(p)]  # d, a, b, c
    if types[1:3] != ["f16", "f16"]:
        raise L.error(f"'{ins.opcode}' is not emulated (f16 inputs only)")
    ids = L.thread_ids()
    warps, counts = np.unique(L.warp[ids], return_counts=True)
    if (counts != 32).any() or (L.lane[ids].reshape(-1, 32) != _LANE).any():
        raise L.error("mma.sync needs all 32 lanes of a warp", ids[0])
    nw = len(warps)
    if L.profile is not None:
        L.profile.flops(nw * 2 * 16 * 8 * 16, tensor=True)
    d_regs, a_regs, b_regs, c_regs = (_vector(o) for o in ins.operands[:4])
    a = _halves(L, a_regs, nw).astype(np.float64)
    b = _halves(L, b_regs, nw).astype(np.float64)
    w = np.arange(nw)[:, None, None]
    A = np.zeros((nw, 16, 16))
    A[w, _A_ROW[None], _A_COL[None]] = a
    B = np.zeros((nw, 16, 8))
    B[w, _B_ROW[None], _B_COL[None]] = b
    if types[3] == "f32":
        c = np.stack([L.read(r, "f32") for r in c_regs], 1).reshape(nw, 32, 4).astype(np.float64)
    else:
        c = _halves(L, c_regs, nw).astype(np.float64)
    C = np.zeros((nw, 16, 8))
    C[w, _C_ROW[None], _C_COL[None]] = c
    D = np.matmul(A, B) + C
    d = D[w, _C_ROW[None], _C_COL[None]].reshape(nw * 32, 4)
    if types[0] == "f32":
        for i, r in enumerate(d_regs):
            L.write(r, round_float(d[:, i], "rn"))
    else:
        h = d.astype(np.float16).view(np.uint16).astype(np.uint32)
        for i, r in enumerate(d_regs):
            L.write(r, h[:, 2 * i] | (h[:, 2 * i + 1] << np.uint32(16)))


def _bar(L: Launch, ins: Instruction) -> None:
    """bar.sync / barrier.sync: every live thread of a block must be here
    (the SIMT stack brings them together after structured control flow);
    threads that returned count as arrived, a live one elsewhere is an
    error."""
    parts = ins.parts
    if parts[1:2] != ["sync"] or any(p not in ("sync", "aligned") for p in parts[1:]) or \
            (ins.operands and ins.operands[0] != "0") or len(ins.operands) > 1:
        raise L.error(f"'{ins.text}' is not emulated (bar.sync 0 only)")
    ids = L.thread_ids()
    blocks = L.block_index[ids]
    here = np.bincount(blocks, minlength=L.total // L.nthread)
    alive = np.bincount(L.block_index[~L.done], minlength=L.total // L.nthread)
    partial = (here > 0) & (here != alive)
    if partial.any():
        blk = int(np.flatnonzero(partial)[0])
        raise L.error(f"barrier reached by {int(here[blk])} of the {int(alive[blk])} live threads "
                      f"of block {blk}; the others wait at another instruction")


def _nop(L: Launch, ins: Instruction) -> None:
    pass


OPS = {
    "add": _arith, "sub": _arith, "mul": _arith, "mad": _arith, "div": _arith, "rem": _arith,
    "min": _arith, "max": _arith, "neg": _arith, "abs": _arith, "fma": _arith,
    "sqrt": _math, "rsqrt": _math, "rcp": _math, "ex2": _math, "lg2": _math, "sin": _math,
    "cos": _math, "tanh": _math, "copysign": _copysign,
    "and": _logic, "or": _logic, "xor": _logic, "not": _logic, "cnot": _logic,
    "shl": _shift, "shr": _shift, "bfe": _bfe,
    "setp": _setp, "selp": _selp, "mov": _mov, "cvt": _cvt, "cvta": _cvta,
    "ld": _ld, "st": _st, "shfl": _shfl, "mma": _mma, "bar": _bar, "barrier": _bar,
    "membar": _nop, "fence": _nop,
}
