"""Execute one PTX kernel launch on numpy arrays, every thread of the grid at once.

Each register is an array with one element per thread of the grid (raw bits:
uint16, uint32 or uint64; bool for predicates); an instruction runs on the
threads that are at it, all in one numpy operation.

Scheduling (mp.emu.execute): basic blocks on one SIMT stack for the whole
grid; threads that split at a branch meet again at its immediate
post-dominator, so a barrier or a warp-wide instruction (``shfl.sync``,
``mma.sync``) after structured control flow sees every thread that reaches
it together. What the hardware leaves undefined is an error here, named with
the kernel, the PTX line and a thread: a load or store outside every live
device allocation or misaligned, a barrier or shuffle that only part of the
live threads execute, a shuffle that reads a lane which is not at it,
``mma.sync`` by a partial warp. Threads run each instruction in lockstep, so
a missing barrier between a shared-memory write and a read is not detected.

Arithmetic follows the PTX ISA: IEEE round-to-nearest for ``.rn`` (numpy's
float32/float16, or the exact value's rounding for fma), directed rounding
for ``.rm``/``.rp``/``.rz``, the ``.approx`` functions computed in float64
and rounded (more accurate than the hardware's), ``mma.sync`` accumulated in
float64 and rounded once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ptx import Instruction, Kernel

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_FLOAT = {16: np.float16, 32: np.float32, 64: np.float64}


class EmulationError(Exception):
    """A kernel did something a GPU leaves undefined (or the emulator lacks)."""


@dataclass
class Memory:
    """Device memory: one mapping, and the allocations in it."""
    base: int                 # address of bytes[0]
    bytes: np.ndarray         # uint8 view of the whole mapping
    starts: np.ndarray        # uint64, sorted
    ends: np.ndarray          # uint64, exclusive
    live: np.ndarray          # bool


@dataclass
class Stats:
    launches: int = 0
    threads: int = 0
    instructions: int = 0     # instructions issued (per group of threads)


def _kind(type_name: str) -> tuple[str, int]:
    """("u"|"s"|"f"|"b"|"pred", bits) of a PTX type suffix."""
    if type_name == "pred":
        return "pred", 1
    return type_name[0], int(type_name[1:])


def _np_type(type_name: str):
    kind, bits = _kind(type_name)
    if kind == "f":
        return _FLOAT[bits]
    if kind == "s":
        return _SINT[bits]
    if kind == "pred":
        return np.bool_
    return _UINT[bits]


def _bits_to(raw: np.ndarray, type_name: str) -> np.ndarray:
    """Reinterprets raw register bits as `type_name` (truncating wider ones)."""
    kind, bits = _kind(type_name)
    if kind == "pred":
        return raw.astype(bool)
    if raw.dtype.itemsize * 8 != bits:
        raw = raw.astype(_UINT[bits])
    return raw.view(_np_type(type_name))


def _to_bits(value: np.ndarray, bits: int) -> np.ndarray:
    """Raw bits of `value` for a register of `bits` bits."""
    if bits == 1:
        return value.astype(bool)
    if value.dtype == np.bool_:
        value = value.astype(np.uint8)
    if value.dtype.itemsize * 8 == bits:
        return value.view(_UINT[bits])
    if value.dtype.kind == "i":  # signed: sign-extended (or truncated)
        return value.astype(_SINT[bits]).view(_UINT[bits])
    unsigned = value.view(_UINT[value.dtype.itemsize * 8])
    return unsigned.astype(_UINT[bits])


def _immediate(text: str, type_name: str) -> np.generic:
    """A PTX literal as a scalar of `type_name`: 0fXXXXXXXX and 0dXXXXXXXXXXXXXXXX
    are float bits, converted for a float type and kept as bits otherwise."""
    kind, bits = _kind(type_name)
    t = text.strip()
    for prefix, width, ftype in (("0f", 8, np.float32), ("0d", 16, np.float64)):
        if t[:2].lower() == prefix and len(t) == 2 + width:
            raw = int(t[2:], 16)
            if kind == "f":
                value = np.array(raw, _UINT[4 * width]).view(ftype)
                return np.array(value).astype(_FLOAT[bits])[()]
            return np.array(raw & ((1 << bits) - 1), _UINT[bits]).view(_np_type(type_name))[()]
    if kind == "f":
        return _FLOAT[bits](float(t))
    if kind == "pred":
        return np.bool_(int(t, 0) != 0)
    value = int(t[:-1] if t.endswith("U") else t, 0)
    return np.array(value & ((1 << bits) - 1), dtype=_UINT[bits]).view(_np_type(type_name))[()]


def round_float(s: np.ndarray, mode: str, ftype=np.float32,
                error: np.ndarray | None = None) -> np.ndarray:
    """The exact value s + error (float64 s, |error| at most half an ulp of
    s; None: s is exact) rounded to `ftype`: to nearest even (rn), down
    (rm), up (rp) or toward zero (rz). Correct for ties and directed modes
    even when s itself is a rounding of the exact value."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = s.astype(ftype)
        if error is None:
            error = np.zeros_like(s)
        r64 = r.astype(np.float64)
        # The sign of r - exact (exact subtractions: r and s are close).
        above = ((r64 - s) - error) > 0
        below = ((r64 - s) - error) < 0
        finite = np.isfinite(s) & np.isfinite(r64)
        down = np.nextafter(r, ftype(-np.inf))
        up = np.nextafter(r, ftype(np.inf))
        if mode == "rn":
            # s exactly halfway between two ftype values, the exact value
            # off it: round toward the side it lies on.
            other = np.where(s > r64, up, down).astype(np.float64)
            tie = finite & (error != 0) & ((r64 + other) / 2 == s) & (other != r64)
            r = np.where(tie & (error > 0), np.maximum(r, other.astype(ftype)), r)
            r = np.where(tie & (error < 0), np.minimum(r, other.astype(ftype)), r)
        elif mode in ("rm", "rp", "rz"):
            to_down = above if mode == "rm" else above & (s >= 0) if mode == "rz" else \
                np.zeros_like(above)
            to_up = below if mode == "rp" else below & (s < 0) if mode == "rz" else \
                np.zeros_like(below)
            r = np.where(finite & to_down, down, r)
            r = np.where(finite & to_up, up, r)
    return r.astype(ftype)


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, e): s = fl(a + b) and e the exact error, a + b = s + e (Knuth)."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def _ftz(x: np.ndarray) -> np.ndarray:
    """float32 subnormals flushed to (signed) zero."""
    if x.dtype != np.float32:
        return x
    tiny = np.abs(x) < np.float32(1.1754944e-38)
    return np.where(tiny, np.copysign(np.float32(0), x), x)


class Launch:
    """One kernel launch: the grid's threads and their registers."""

    def __init__(self, kernel: Kernel, grid: tuple[int, int, int], block: tuple[int, int, int],
                 dynamic_shared: int, params: dict[str, bytes], memory: Memory, stats: Stats,
                 symbols: dict[str, int] | None = None):
        self.kernel, self.memory, self.stats = kernel, memory, stats
        # Device addresses of the module's .global/.const variables.
        self.symbols = symbols or {}
        self.params = params
        nblock = grid[0] * grid[1] * grid[2]
        nthread = block[0] * block[1] * block[2]
        if nblock == 0 or nthread == 0:
            raise EmulationError(f"kernel {kernel.name}: launch with an empty grid or block")
        if nthread > 1024:
            raise EmulationError(f"kernel {kernel.name}: {nthread} threads per block (at most 1024)")
        self.nthread, self.total = nthread, nblock * nthread
        t = np.arange(self.total, dtype=np.int64)
        local, blk = t % nthread, t // nthread
        self.block_index, self.local = blk, local
        self.lane = (local % 32).astype(np.uint32)
        self.warps_per_block = (nthread + 31) // 32
        self.warp = blk * self.warps_per_block + local // 32
        self.special = {
            "%tid.x": local % block[0], "%tid.y": local // block[0] % block[1],
            "%tid.z": local // (block[0] * block[1]),
            "%ctaid.x": blk % grid[0], "%ctaid.y": blk // grid[0] % grid[1],
            "%ctaid.z": blk // (grid[0] * grid[1]),
            "%laneid": self.lane, "%warpid": local // 32,
        }
        for axis, n, g in zip("xyz", block, grid):
            self.special[f"%ntid.{axis}"] = np.full(self.total, n)
            self.special[f"%nctaid.{axis}"] = np.full(self.total, g)
        self.special = {k: v.astype(np.uint32) for k, v in self.special.items()}
        shared = kernel.shared_bytes
        self.shared_symbols = dict(kernel.shared)
        if kernel.dynamic_shared:
            shared = (shared + 15) // 16 * 16
            self.shared_symbols[kernel.dynamic_shared] = shared
            shared += dynamic_shared
        self.shared_size = max(16, (shared + 15) // 16 * 16)
        self.shared = np.zeros(nblock * self.shared_size, np.uint8)
        # Each thread's .local frame; a local symbol's value is its offset in it.
        self.local_size = (kernel.local_bytes + 15) // 16 * 16
        self.local_mem = np.zeros(self.total * self.local_size, np.uint8)
        self.profile = None  # profile.LaunchCounters while profiling
        self.regs: dict[str, np.ndarray] = {}
        self.bits_of: dict[str, int] = {}
        self.sel: slice | np.ndarray = slice(None)
        self.instruction: Instruction | None = None

    # --- Operands -----------------------------------------------------------

    def reg_bits(self, name: str) -> int:
        bits = self.bits_of.get(name)
        if bits is None:
            prefix = name.rstrip("0123456789")
            if prefix not in self.kernel.registers:
                raise self.error(f"register {name} is not declared")
            bits = self.bits_of[name] = self.kernel.registers[prefix]
        return bits

    def read(self, operand: str, type_name: str) -> np.ndarray:
        """The operand's value on the selected threads, as `type_name`."""
        n = self.count()
        if operand.startswith("%"):
            if operand in self.special:
                raw = self.special[operand][self.sel]
                return _bits_to(raw, type_name) if type_name != "pred" else raw != 0
            bits = self.reg_bits(operand)
            reg = self.regs.get(operand)
            if reg is None:
                reg = self.regs[operand] = np.zeros(self.total, bool if bits == 1 else _UINT[bits])
            raw = reg[self.sel]
            if type_name == "pred":
                return raw.astype(bool)
            return _bits_to(raw, type_name)
        if operand.startswith("!%"):
            return ~self.read(operand[1:], "pred")
        for table in (self.shared_symbols, self.kernel.local, self.symbols):
            if operand in table:
                return np.full(n, table[operand], np.uint64).view(_np_type(type_name)) \
                    if _kind(type_name)[1] == 64 else \
                    np.full(n, table[operand]).astype(_np_type(type_name))
        return np.full(n, _immediate(operand, type_name))

    def write(self, operand: str, value: np.ndarray) -> None:
        if operand == "_":
            return
        bits = self.reg_bits(operand)
        reg = self.regs.get(operand)
        if reg is None:
            reg = self.regs[operand] = np.zeros(self.total, bool if bits == 1 else _UINT[bits])
        reg[self.sel] = _to_bits(np.asarray(value), bits)

    def count(self) -> int:
        return self.total if isinstance(self.sel, slice) else len(self.sel)

    def thread_ids(self) -> np.ndarray:
        return np.arange(self.total) if isinstance(self.sel, slice) else self.sel

    def error(self, message: str, thread: int | None = None) -> EmulationError:
        ins = self.instruction
        where = f"kernel {self.kernel.name}"
        if ins is not None:
            where += f", PTX line {ins.line} '{ins.text}'"
        if thread is not None:
            block, local = divmod(int(thread), self.nthread)
            where += f", block {block} thread {local}"
        return EmulationError(f"{where}: {message}")

    # --- Memory -------------------------------------------------------------

    def address(self, operand: str) -> tuple[str, np.ndarray]:
        """("reg"|"symbol"|"param", addresses) of a "[base+offset]" operand."""
        inner = operand.strip()[1:-1].replace(" ", "")
        offset = 0
        for sign in ("+", "-"):
            head, mark, tail = inner.rpartition(sign)
            if mark and head and not tail.startswith("%"):
                try:
                    offset = int(tail, 0) * (1 if sign == "+" else -1)
                    inner = head
                    break
                except ValueError:
                    pass
        if inner.startswith("%"):
            base = self.read(inner, "u64")
            return "reg", base + np.uint64(offset & 0xFFFFFFFFFFFFFFFF)
        if inner in self.params:
            return "param", np.full(self.count(), offset, np.uint64)
        if inner in self.shared_symbols:
            return "symbol", np.full(self.count(), self.shared_symbols[inner] + offset, np.uint64)
        if inner in self.kernel.local:
            return "symbol", np.full(self.count(), self.kernel.local[inner] + offset, np.uint64)
        if inner in self.symbols:
            return "reg", np.full(self.count(), self.symbols[inner] + offset, np.uint64)
        try:
            return "reg", np.full(self.count(), int(inner, 0) + offset, np.uint64)
        except ValueError:
            raise self.error(f"unknown address '{inner}'") from None

    def check_global(self, addr: np.ndarray, size: int, store: bool) -> np.ndarray:
        """Byte offsets into the mapping of `size`-byte accesses at `addr`."""
        if size > 1 and (addr % np.uint64(size)).any():
            bad = int(np.flatnonzero(addr % np.uint64(size))[0])
            raise self.error(f"misaligned {size}-byte access at 0x{int(addr[bad]):x}",
                             self.thread_ids()[bad])
        mem = self.memory
        idx = np.searchsorted(mem.starts, addr, side="right") - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        ok &= (addr + np.uint64(size) <= mem.ends[safe]) & mem.live[safe]
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            a, i = int(addr[bad]), int(idx[bad])
            if i < 0:
                where = "below every device allocation"
            else:
                start, end = int(mem.starts[i]), int(mem.ends[i])
                what = f"the {end - start}-byte device allocation at 0x{start:x}"
                where = f"in {what}, which was freed" if not mem.live[i] else \
                    f"running past the end of {what}" if a < end else \
                    f"{a - end} bytes past the end of {what}"
            raise self.error(f"{'store' if store else 'load'} of {size} bytes at 0x{a:x} {where}",
                             self.thread_ids()[bad])
        return (addr - np.uint64(mem.base)).astype(np.int64)

    def shared_offsets(self, addr: np.ndarray, size: int) -> np.ndarray:
        bad = (addr + np.uint64(size) > np.uint64(self.shared_size)) | (addr % np.uint64(size) != 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise self.error(f"shared memory access of {size} bytes at {int(addr[i])} outside the "
                             f"block's {self.shared_size} bytes or misaligned", self.thread_ids()[i])
        blk = self.block_index[self.sel].astype(np.int64)
        return blk * self.shared_size + addr.astype(np.int64)

    def local_offsets(self, addr: np.ndarray, size: int) -> np.ndarray:
        bad = (addr + np.uint64(size) > np.uint64(self.local_size)) | (addr % np.uint64(size) != 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise self.error(f"local memory access of {size} bytes at {int(addr[i])} outside the "
                             f"thread's {self.kernel.local_bytes}-byte frame or misaligned",
                             self.thread_ids()[i])
        return self.thread_ids().astype(np.int64) * self.local_size + addr.astype(np.int64)

    def load(self, space: str, operand: str, size: int) -> np.ndarray:
        """Raw `size`-byte values (unsigned) at the operand's addresses."""
        kind, addr = self.address(operand)
        utype = _UINT[size * 8]
        if space == "param":
            name = operand.strip()[1:-1].split("+")[0].strip()
            data = self.params.get(name)
            off = int(addr[0]) if len(addr) else 0
            if data is None or off + size > len(data):
                raise self.error(f"no parameter bytes at '{operand}'")
            value = np.frombuffer(data[off:off + size], utype)[0]
            return np.full(self.count(), value, utype)
        if space == "shared":
            offs = self.shared_offsets(addr, size)
            return self.shared.view(utype)[offs // size]
        if space == "local":
            offs = self.local_offsets(addr, size)
            return self.local_mem.view(utype)[offs // size]
        if space == "global" and kind == "reg":
            offs = self.check_global(addr, size, store=False)
            return self.memory.bytes.view(utype)[offs // size]
        raise self.error(f"loads from .{space} are not emulated")

    def store(self, space: str, operand: str, values: np.ndarray, size: int) -> None:
        kind, addr = self.address(operand)
        utype = _UINT[size * 8]
        if space == "shared":
            offs = self.shared_offsets(addr, size)
            self.shared.view(utype)[offs // size] = values
        elif space == "local":
            offs = self.local_offsets(addr, size)
            self.local_mem.view(utype)[offs // size] = values
        elif space == "global" and kind == "reg":
            offs = self.check_global(addr, size, store=True)
            self.memory.bytes.view(utype)[offs // size] = values
        else:
            raise self.error(f"stores to .{space} are not emulated")
