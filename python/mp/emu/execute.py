"""Run a kernel launch: basic blocks in the order of mp.emu.simt's scheduler."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ops import OPS
from .ptx import Instruction, Kernel
from .profile import LaunchCounters, LaunchProfile
from .simt import EmulationError, Launch, Memory, Stats


@dataclass
class Block:
    start: int
    body: list[Instruction]     # without the terminator
    branch: Instruction | None  # bra (guarded or not), brx.idx, ret or exit; None: falls through
    target: int = -1            # block index of the branch target
    next: int = -1              # block index after this one (-1: the end)
    targets: list[int] | None = None  # brx.idx: block index per table entry


def basic_blocks(kernel: Kernel) -> list[Block]:
    """The kernel's body split at labels and after branches and returns."""
    if getattr(kernel, "_blocks", None) is not None:
        return kernel._blocks
    leaders = {0} | set(kernel.labels.values())
    for i, ins in enumerate(kernel.body):
        if ins.parts[0] in ("bra", "brx", "ret", "exit"):
            leaders.add(i + 1)
    starts = sorted(i for i in leaders if i < len(kernel.body))
    index = {s: n for n, s in enumerate(starts)}
    blocks = []
    for n, s in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(kernel.body)
        body = kernel.body[s:end]
        last = body[-1] if body else None
        branch = last if last is not None and last.parts[0] in ("bra", "brx", "ret", "exit") \
            else None
        block = Block(s, body[:-1] if branch else body, branch,
                      next=n + 1 if n + 1 < len(starts) else -1)
        if branch is not None and branch.parts[0] == "bra":
            label = branch.operands[0]
            if label not in kernel.labels:
                raise EmulationError(f"kernel {kernel.name}: branch to unknown label {label}")
            target = kernel.labels[label]
            block.target = index[target] if target in index else -1
        if branch is not None and branch.parts[0] == "brx":
            table = kernel.branch_targets.get(branch.operands[1])
            if table is None or any(t not in kernel.labels for t in table):
                raise EmulationError(f"kernel {kernel.name}: brx.idx through an unknown "
                                     f"table {branch.operands[1]}")
            block.targets = [index.get(kernel.labels[t], -1) for t in table]
        blocks.append(block)
    kernel._blocks = blocks
    return blocks


def successors(blocks: list[Block], n: int, exit_id: int) -> list[int]:
    b = blocks[n]
    nxt = b.next if b.next >= 0 else exit_id
    if b.branch is None:
        return [nxt]
    op = b.branch.parts[0]
    if op in ("ret", "exit"):
        return [exit_id] if b.branch.guard is None else [exit_id, nxt]
    if op == "brx":
        targets = sorted({t if t >= 0 else exit_id for t in b.targets})
        return targets if b.branch.guard is None else targets + [nxt]
    target = b.target if b.target >= 0 else exit_id
    return [target] if b.branch.guard is None else [target, nxt]


def immediate_post_dominators(blocks: list[Block]) -> list[int]:
    """For each block, the first block every path from it to the exit passes
    (the exit itself is len(blocks)): where threads that diverge at its
    branch meet again."""
    exit_id = len(blocks)
    succ = [successors(blocks, n, exit_id) for n in range(exit_id)]
    everything = set(range(exit_id + 1))
    pdom = [set(everything) for _ in range(exit_id)] + [{exit_id}]
    changed = True
    while changed:
        changed = False
        for n in reversed(range(exit_id)):
            new = {n} | set.intersection(*(pdom[s] for s in succ[n]))
            if new != pdom[n]:
                pdom[n], changed = new, True
    # The strict post-dominator closest to n has the most post-dominators.
    return [max(pdom[n] - {n}, key=lambda m: len(pdom[m])) for n in range(exit_id)]


def _guarded(L: Launch, ins: Instruction) -> np.ndarray | None:
    """For a guarded instruction, whether each selected thread executes it."""
    if ins.guard is None:
        return None
    p = L.read(ins.guard, "pred")
    return ~p if ins.negated else p


def _narrow(sel, mask: np.ndarray) -> np.ndarray:
    ids = np.flatnonzero(mask)
    return ids if isinstance(sel, slice) else sel[ids]


def _selected(mask: np.ndarray):
    return slice(None) if mask.all() else np.flatnonzero(mask)


def run_launch(kernel: Kernel, grid: tuple[int, int, int], block: tuple[int, int, int],
               dynamic_shared: int, params: dict[str, bytes], memory: Memory,
               stats: Stats, max_steps: int = 50_000_000,
               symbols: dict[str, int] | None = None,
               profile: list[LaunchProfile] | None = None) -> None:
    """Executes one launch to completion (every thread returned).

    Threads diverge and reconverge as on a SIMT stack (one for the whole grid):
    at a branch that splits the running threads, each side runs until the
    branch block's immediate post-dominator, where they continue together.
    `symbols`: device addresses of the module's variables; `profile`: a list
    that gets the launch's :class:`LaunchProfile` (None: not profiled)."""
    L = Launch(kernel, grid, block, dynamic_shared, params, memory, stats, symbols)
    if profile is not None:
        L.profile = LaunchCounters(LaunchProfile(kernel.name, grid, block))
    blocks = basic_blocks(kernel)
    if getattr(kernel, "_ipdom", None) is None:
        kernel._ipdom = immediate_post_dominators(blocks)
    ipdom = kernel._ipdom
    exit_id = len(blocks)
    L.done = np.zeros(L.total, bool)
    stack = [[0, exit_id, np.ones(L.total, bool)]]  # [pc, reconvergence pc, threads]
    stats.launches += 1
    stats.threads += L.total
    steps = 0
    while stack:
        top = stack[-1]
        if top[0] == top[1] or not top[2].any():
            stack.pop()
            continue
        current, mask = top[0], top[2]
        sel = _selected(mask)
        b = blocks[current]
        for ins in b.body:
            L.sel = sel
            L.instruction = ins
            guard = _guarded(L, ins)
            if guard is not None:
                if not guard.any():
                    continue
                L.sel = sel if guard.all() else _narrow(sel, guard)
            op = OPS.get(ins.parts[0])
            if op is None:
                raise L.error(f"'{ins.opcode}' is not emulated")
            op(L, ins)
            stats.instructions += 1
        L.sel = sel
        L.instruction = b.branch
        nxt = b.next if b.next >= 0 else exit_id
        term = b.branch
        if term is None:
            top[0] = nxt
        elif term.parts[0] in ("ret", "exit"):
            guard = _guarded(L, term)
            leaving = mask.copy() if guard is None else np.zeros(L.total, bool)
            if guard is not None:
                leaving[sel] = guard
            L.done |= leaving
            for entry in stack:
                entry[2] = entry[2] & ~leaving
            top[0] = nxt if guard is not None else exit_id
        elif term.parts[0] == "brx":
            # An indirect branch: each thread to the table entry its index
            # names; the groups run one after the other up to the join.
            guard = _guarded(L, term)
            going = mask.copy() if guard is None else np.zeros(L.total, bool)
            if guard is not None:
                going[sel] = guard
            index = np.zeros(L.total, np.int64)
            index[sel] = L.read(term.operands[0], "u32").astype(np.int64)
            if (index[going] >= len(b.targets)).any():
                bad = int(np.flatnonzero(going & (index >= len(b.targets)))[0])
                raise L.error(f"brx.idx index {int(index[bad])} past its table of "
                              f"{len(b.targets)} targets", bad)
            join = ipdom[current]
            staying = mask & ~going
            by_target: dict[int, np.ndarray] = {}
            for k, t in enumerate(b.targets):
                t = t if t >= 0 else exit_id
                by_target[t] = by_target.get(t, np.zeros(L.total, bool)) | (going & (index == k))
            if staying.any():
                by_target[nxt] = by_target.get(nxt, np.zeros(L.total, bool)) | staying
            groups = [(t, m) for t, m in by_target.items() if m.any()]
            if join == top[1]:
                stack.pop()
            else:
                top[0] = join
            for t, m in groups:
                if t != join:
                    stack.append([t, join, m])
        else:
            target = b.target if b.target >= 0 else exit_id
            guard = _guarded(L, term)
            if guard is None or guard.all():
                top[0] = target
            elif not guard.any():
                top[0] = nxt
            else:
                taken = np.zeros(L.total, bool)
                taken[sel] = guard
                join = ipdom[current]
                if join == top[1]:
                    # An entry below already waits at the join (a loop's
                    # exit, each iteration): the two sides replace this one,
                    # so the stack does not grow per iteration.
                    stack.pop()
                else:
                    top[0] = join
                if nxt != join:
                    stack.append([nxt, join, mask & ~taken])
                if target != join:
                    stack.append([target, join, taken])
        steps += 1
        if steps > max_steps:
            raise L.error(f"more than {max_steps} basic blocks executed: the kernel does not end")
    if profile is not None:
        profile.append(L.profile.finish())
