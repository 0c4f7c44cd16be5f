"""The emulator's traffic model (mp.emu.profile) on hand-written PTX whose
sectors, coalescing and FLOPs are known by construction, and ``python -m
mp.emu --profile`` on a real CUDA library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_ptx_emulator import ENV, HEADER, MP_COMPILE, _memory, _require_compiler

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from mp.emu import parse_module  # noqa: E402
from mp.emu.execute import run_launch  # noqa: E402
from mp.emu.profile import (HBM_BYTES_PER_S, LAUNCH_SECONDS, LaunchProfile,  # noqa: E402
                            StepProfile, modeled_seconds)
from mp.emu.simt import Stats  # noqa: E402


def _profile(body: str, threads: int, n: int = 4096) -> LaunchProfile:
    """Runs HEADER + body on three n-element f32 arrays; returns the launch's
    profile. In the body, %r1 is the thread index and %rd1..%rd3 point at
    the arrays."""
    kernel = parse_module(HEADER + body + "\n  ret;\n}")["k"]
    arrays = [np.ones(n, np.float32) for _ in range(3)]
    memory, pointers, _ = _memory(*arrays)
    params = {f"p{i}": int(p).to_bytes(8, "little") for i, p in enumerate(pointers)}
    launches: list[LaunchProfile] = []
    run_launch(kernel, (1, 1, 1), (threads, 1, 1), 0, params, memory, Stats(), profile=launches)
    (p,) = launches
    return p


def test_unit_stride_loads_are_fully_coalesced():
    """256 threads reading consecutive floats: 32 sectors, every byte used;
    the store likewise."""
    p = _profile("ld.global.b32 %r2, [%rd5]; st.global.b32 [%rd7], %r2;", 256)
    assert (p.sectors_read, p.sectors_written) == (32, 32)
    assert (p.requested_read, p.requested_written) == (1024, 1024)
    assert (p.dram_read, p.dram_written) == (1024, 1024)
    assert p.coalesced == 1.0


def test_strided_loads_move_a_sector_per_lane():
    """Thread i reads element 8·i: each lane needs a sector of its own, so
    4 of the 32 bytes moved are used (12.5 %)."""
    p = _profile("mul.wide.u32 %rd8, %r1, 32; add.s64 %rd9, %rd1, %rd8; "
                 "ld.global.b32 %r2, [%rd9];", 128)
    assert p.sectors_read == 128 and p.requested_read == 512
    assert p.coalesced == pytest.approx(0.125)
    assert p.dram_read == 128 * 32


def test_broadcast_is_one_sector_per_warp_and_counted_once():
    """Every lane reading element 0: one sector per warp instruction, the
    word counted once per warp, one sector from DRAM for the launch."""
    p = _profile("ld.global.b32 %r2, [%rd1];", 128)
    assert p.sectors_read == 4 and p.requested_read == 16
    assert p.coalesced == pytest.approx(4 / 32)
    assert p.dram_read == 32


def test_sites_name_the_instructions_that_waste_sectors():
    """Per instruction: a unit-stride load wastes nothing and is not listed;
    a strided one (12.5 % used) is, with its PTX line and text, and its
    bytes add up to the launch's."""
    p = _profile("ld.global.b32 %r2, [%rd5]; mul.wide.u32 %rd8, %r1, 32; add.s64 %rd9, %rd1, %rd8; "
                 "ld.global.b32 %r3, [%rd9];", 64)
    (site, requested, moved), = p.worst_sites(5)
    assert site.endswith("ld.global.b32 %r3, [%rd9]") and site.split(":")[0].isdigit()
    assert (requested, moved) == (256, 64 * 32)
    assert sum(r for r, _ in p.sites.values()) == p.requested_read
    assert sum(s for _, s in p.sites.values()) == p.sectors_read


def test_vector_loads_count_their_whole_width():
    """ld.v4.b32 by 32 lanes: 512 contiguous bytes, 16 sectors, once."""
    p = _profile("mul.wide.u32 %rd8, %r1, 16; add.s64 %rd9, %rd1, %rd8; "
                 "ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd9];", 32)
    assert (p.sectors_read, p.requested_read, p.dram_read) == (16, 512, 512)


def test_repeated_reads_reach_dram_once_per_launch():
    """Two loads of the same element: twice the sectors, DRAM bytes once."""
    p = _profile("ld.global.b32 %r2, [%rd5]; ld.global.b32 %r3, [%rd5];", 64)
    assert p.sectors_read == 16 and p.dram_read == 256


def test_flops_count_fma_twice_and_packed_halves_each():
    p = _profile("ld.global.b32 %r2, [%rd5]; fma.rn.f32 %r3, %r2, %r2, %r2; "
                 "add.rn.f32 %r4, %r3, %r2; mul.rn.f16x2 %r5, %r2, %r2;", 64)
    assert p.core_flops == 64 * (2 + 1 + 2) and p.tensor_flops == 0


def test_modeled_time_is_bandwidth_or_compute_plus_launch():
    p = LaunchProfile("k", (1, 1, 1), (1, 1, 1), dram_read=4_800_000, dram_written=0)
    assert modeled_seconds(p) == pytest.approx(1e-6 + LAUNCH_SECONDS)
    q = LaunchProfile("k", (1, 1, 1), (1, 1, 1), core_flops=67_000_000)
    assert modeled_seconds(q, launch_seconds=0) == pytest.approx(1e-6)
    step = StepProfile([p, q], minimal_bytes=2_400_000, launch_seconds=0)
    assert step.roofline_seconds == pytest.approx(max(2_400_000 / HBM_BYTES_PER_S, 1e-6))
    assert step.summary()["bytes_over_minimal"] == pytest.approx(2.0)


def test_profile_of_a_real_library(tmp_path):
    """``--profile`` on the bundled TTS decoder's CUDA library: a line per
    launch, the step's totals, and JSON whose launches add up to them and
    whose minimal bytes are at least the weights' and the inputs'."""
    _require_compiler()
    model = REPO / "examples" / "tts_decoder"
    data = model / "test_data_set_0"
    lib = tmp_path / "cuda.so"
    subprocess.run([str(MP_COMPILE), str(model / "model.onnx"), "-o", str(lib), "--target", "cuda",
                    "--gpu", "compute_80", "--precision", "mixed", "--shapes-from", str(data)],
                   check=True, capture_output=True)
    proc = subprocess.run([sys.executable, "-m", "mp.emu", str(lib), str(data), "--profile",
                           "--profile-json", str(tmp_path / "p.json"), "--profile-sites", "2"],
                          env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "p.json").read_text())
    summary, launches = report["summary"], report["launches"]
    assert summary["launches"] == len(launches) > 0
    assert summary["dram_bytes"] == sum(p["dram_read"] + p["dram_written"] for p in launches)
    assert summary["modeled_seconds"] == pytest.approx(sum(p["modeled_seconds"] for p in launches))
    assert summary["tensor_flops"] > 0  # mixed: the projections run on mma.sync
    # Minimal bytes: the inputs and outputs the run moves, plus the weights.
    from mp.emu.check import tensors
    io = sum(a.nbytes for kind in ("input", "output") for _, a in tensors(data, kind))
    assert summary["minimal_bytes"] > io
    assert 0 < summary["coalesced"] <= 1
    text = proc.stdout
    assert f"step: {len(launches)} launches" in text and "not a measurement" in text
    assert sum(1 for line in text.splitlines() if "main_graph" in line) == len(launches)
    # --profile-sites: at most 2 instructions under each launch, by PTX line.
    sites = [line for line in text.splitlines() if "KB moved: PTX line" in line]
    assert 0 < len(sites) <= 2 * len(launches)
