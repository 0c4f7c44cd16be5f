"""Memory traffic and arithmetic of emulated kernels, and a modeled GPU time.

While profiling, every global load and store of a launch is recorded the way
the memory system would see it:

- *sectors*: per warp and instruction, the distinct 32-byte sectors its
  active lanes touch (a vector access counts once, with its whole width).
  This is what the L1 sends to L2. The coalescing efficiency is the distinct
  bytes the lanes asked for over ``32 x sectors`` (1.0: every byte moved was
  asked for; lanes reading the same word count it once).
- *DRAM bytes*: the distinct sectors the whole launch reads and writes. It
  assumes a launch reads each sector from DRAM once (L2 keeps it for the rest
  of the launch) and that nothing survives in L2 from one launch to the next:
  an intermediate written by one kernel and read by the next counts twice,
  which a 50 MB L2 would often save. It is a model, not a measurement.

FLOPs are counted per thread: ``add/sub/mul/min/max`` on floats 1, ``fma``
2, packed ``f16x2`` twice that; ``mma.sync.m16n8k16`` 2·16·8·16 per warp on
Tensor Cores. Transcendentals and conversions are not counted.

:func:`modeled_seconds` turns a launch into time on an H200 SXM: the larger
of DRAM bytes at 4.8 TB/s and FLOPs at the peak of the units that run them
(989 TFLOP/s dense fp16 Tensor Core, 67 TFLOP/s fp32 CUDA cores; fp16 CUDA
core work is charged at the fp32 rate), plus a fixed launch cost.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

#: H200 SXM figures the model uses (NVIDIA's data sheet, dense).
HBM_BYTES_PER_S = 4.8e12
TENSOR_FLOPS_PER_S = 989e12
CORE_FLOPS_PER_S = 67e12
#: GPU time between back-to-back kernels of one stream (launched ahead by the
#: host): a few microseconds without CUDA graphs; about 1 with them.
LAUNCH_SECONDS = 2.5e-6
SECTOR = 32


@dataclass
class LaunchProfile:
    """What one kernel launch moved and computed."""
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    requested_read: int = 0      # distinct bytes per warp-instruction the lanes asked for
    requested_written: int = 0
    sectors_read: int = 0        # per warp-instruction 32-byte sectors
    sectors_written: int = 0
    dram_read: int = 0           # distinct sectors of the launch, in bytes
    dram_written: int = 0
    tensor_flops: int = 0
    core_flops: int = 0
    # Per global load/store instruction (its PTX line and text): requested
    # bytes and sectors moved, summed over the warps that ran it.
    sites: dict[str, list[int]] = field(default_factory=dict)

    @property
    def dram_bytes(self) -> int:
        return self.dram_read + self.dram_written

    @property
    def coalesced(self) -> float:
        """Requested bytes over the bytes of the sectors moved (1.0 is ideal)."""
        moved = SECTOR * (self.sectors_read + self.sectors_written)
        return (self.requested_read + self.requested_written) / moved if moved else 1.0

    def worst_sites(self, count: int) -> list[tuple[str, int, int]]:
        """The `count` instructions that move the most bytes nobody asked
        for: (site, requested bytes, sector bytes), worst first."""
        moved = [(site, req, SECTOR * sec) for site, (req, sec) in self.sites.items()]
        moved.sort(key=lambda s: s[1] - s[2])
        return [s for s in moved[:count] if s[2] > s[1]]

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("sites")
        d["coalesced"] = self.coalesced
        d["modeled_seconds"] = modeled_seconds(self)
        return d


def modeled_seconds(p: LaunchProfile, launch_seconds: float = LAUNCH_SECONDS) -> float:
    """The launch's modeled H200 time (see the module's docstring)."""
    compute = p.tensor_flops / TENSOR_FLOPS_PER_S + p.core_flops / CORE_FLOPS_PER_S
    return max(p.dram_bytes / HBM_BYTES_PER_S, compute) + launch_seconds


@dataclass
class LaunchCounters:
    """Accumulates one launch's accesses (Launch.profile while profiling)."""
    profile: LaunchProfile
    _read: list[np.ndarray] = field(default_factory=list)
    _written: list[np.ndarray] = field(default_factory=list)

    def access(self, warps: np.ndarray, offsets: np.ndarray, nbytes: int, store: bool,
               site: str = "") -> None:
        """One instruction's global accesses: `nbytes` at each byte offset
        (into device memory) by threads of the given warps. Accesses are
        aligned to their size (checked before), so each lies in one sector
        when nbytes <= 32."""
        if len(offsets) == 0:
            return
        first = offsets.astype(np.int64) // SECTOR
        last = (offsets.astype(np.int64) + nbytes - 1) // SECTOR
        sectors = first if nbytes <= SECTOR else np.concatenate(
            [np.arange(f, l + 1) for f, l in zip(first, last)])
        owners = warps.astype(np.int64) if nbytes <= SECTOR else np.repeat(
            warps.astype(np.int64), last - first + 1)
        per_warp = len(np.unique(owners << 36 | sectors))
        # Aligned same-size accesses either coincide or do not overlap.
        distinct = nbytes * len(np.unique(warps.astype(np.int64) << 36 | offsets // nbytes))
        p = self.profile
        counts = p.sites.setdefault(site, [0, 0])
        counts[0] += distinct
        counts[1] += per_warp
        if store:
            p.requested_written += distinct
            p.sectors_written += per_warp
            self._written.append(sectors)
        else:
            p.requested_read += distinct
            p.sectors_read += per_warp
            self._read.append(sectors)

    def flops(self, count: int, tensor: bool = False) -> None:
        if tensor:
            self.profile.tensor_flops += count
        else:
            self.profile.core_flops += count

    def finish(self) -> LaunchProfile:
        p = self.profile
        p.dram_read = SECTOR * len(np.unique(np.concatenate(self._read))) if self._read else 0
        p.dram_written = SECTOR * len(np.unique(np.concatenate(self._written))) \
            if self._written else 0
        self._read, self._written = [], []
        return p


@dataclass
class StepProfile:
    """A whole run (one decode step, say): its launches and the bytes it must
    at least move (weights, inputs and outputs, each once)."""
    launches: list[LaunchProfile]
    minimal_bytes: int
    launch_seconds: float = LAUNCH_SECONDS

    @property
    def dram_bytes(self) -> int:
        return sum(p.dram_bytes for p in self.launches)

    @property
    def coalesced(self) -> float:
        requested = sum(p.requested_read + p.requested_written for p in self.launches)
        moved = SECTOR * sum(p.sectors_read + p.sectors_written for p in self.launches)
        return requested / moved if moved else 1.0

    @property
    def modeled_seconds(self) -> float:
        return sum(modeled_seconds(p, self.launch_seconds) for p in self.launches)

    @property
    def roofline_seconds(self) -> float:
        """The step's bound: its minimal bytes at full bandwidth or its FLOPs
        at peak, whichever is longer, with no launch cost."""
        tensor = sum(p.tensor_flops for p in self.launches)
        core = sum(p.core_flops for p in self.launches)
        return max(self.minimal_bytes / HBM_BYTES_PER_S,
                   tensor / TENSOR_FLOPS_PER_S + core / CORE_FLOPS_PER_S)

    def summary(self) -> dict:
        return {
            "launches": len(self.launches),
            "dram_bytes": self.dram_bytes,
            "minimal_bytes": self.minimal_bytes,
            "bytes_over_minimal": self.dram_bytes / self.minimal_bytes if self.minimal_bytes
            else float("nan"),
            "coalesced": self.coalesced,
            "tensor_flops": sum(p.tensor_flops for p in self.launches),
            "core_flops": sum(p.core_flops for p in self.launches),
            "modeled_seconds": self.modeled_seconds,
            "roofline_seconds": self.roofline_seconds,
            "launch_seconds": self.launch_seconds,
        }

    def to_dict(self) -> dict:
        return {"summary": self.summary(), "launches": [p.to_dict() for p in self.launches]}

    def lines(self, sites: int = 0) -> list[str]:
        """A table per launch (each followed by its `sites` least coalesced
        load/store instructions), then the step's totals next to its
        roofline."""
        out = [f"{'#':>4} {'kernel':<28} {'grid x block':<20} {'read KB':>9} {'write KB':>9} "
               f"{'coal.':>6} {'TC MFLOP':>9} {'core MFLOP':>10} {'model us':>9}"]
        for i, p in enumerate(self.launches):
            dims = f"{'x'.join(map(str, p.grid))}/{'x'.join(map(str, p.block))}"
            out.append(f"{i:>4} {p.kernel[-28:]:<28} {dims:<20} {p.dram_read / 1e3:>9.1f} "
                       f"{p.dram_written / 1e3:>9.1f} {100 * p.coalesced:>5.0f}% "
                       f"{p.tensor_flops / 1e6:>9.2f} {p.core_flops / 1e6:>10.2f} "
                       f"{1e6 * modeled_seconds(p, self.launch_seconds):>9.2f}")
            for site, requested, moved in p.worst_sites(sites):
                out.append(f"{'':>6}{100 * requested / moved:>4.0f}% of "
                           f"{moved / 1e3:>7.1f} KB moved: PTX line {site}")
        s = self.summary()
        out += [
            f"step: {s['launches']} launches; DRAM {s['dram_bytes'] / 1e6:.3f} MB modeled, "
            f"{s['minimal_bytes'] / 1e6:.3f} MB minimal ({s['bytes_over_minimal']:.2f}x); "
            f"{100 * s['coalesced']:.1f}% coalesced; {s['tensor_flops'] / 1e6:.2f} MFLOP on "
            f"Tensor Cores, {s['core_flops'] / 1e6:.2f} MFLOP on CUDA cores",
            f"step: modeled H200 time {1e6 * s['modeled_seconds']:.1f} us "
            f"({1e6 * self.launch_seconds * s['launches']:.1f} us of it launch cost at "
            f"{1e6 * self.launch_seconds:g} us each); roofline {1e6 * s['roofline_seconds']:.2f} us. "
            "A model from the emulator's counts, not a measurement.",
        ]
        return out
