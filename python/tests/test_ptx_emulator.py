"""The CUDA target's kernels executed from their PTX on the CPU (mp.emu).

No GPU here: libraries built with ``--gpu compute_80`` carry PTX, and the
emulated driver (python/mp/emu) runs every launch of the generated host code
through the mp runtime. The Tensor Core (mma.sync), warp-shuffle reduction
and flash attention kernels are thereby checked against onnxruntime's stored
outputs and against the CPU library of the same graph. The emulator's own
instruction semantics are checked against numpy on hand-written PTX.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import BUILD, compiled_library, require_present

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from mp.emu import EmulationError, parse_module  # noqa: E402
from mp.emu.execute import run_launch  # noqa: E402
from mp.emu.simt import Memory, Stats  # noqa: E402

if not BUILD.is_absolute():
    BUILD = REPO / BUILD
MP_COMPILE = BUILD / "bin" / "mp-compile"
SHARED_MODELS = REPO.parent / "shared" / "models"
MODELS = sorted(p for p in SHARED_MODELS.glob("*") if (p / "model.onnx").is_file()) + \
    [REPO / "examples" / "tts_decoder"]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "python"), "MP_BUILD_DIR": str(BUILD)}


def _has_toolkit() -> bool:
    roots = [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    return bool(shutil.which("ptxas")) or any(r and (Path(r) / "bin" / "ptxas").is_file() for r in roots)


def _require_compiler():
    if not MP_COMPILE.is_file():
        pytest.skip(f"mp-compile is not built ({BUILD})")
    if not _has_toolkit():
        pytest.skip("the CUDA target needs the CUDA toolkit (libdevice)")
    if not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")):
        pytest.skip("no C compiler for the emulated driver")


# --- Instruction semantics on hand-written PTX --------------------------------

def _memory(*arrays: np.ndarray) -> tuple[Memory, list[int], np.ndarray]:
    """One host buffer holding `arrays` (256-byte aligned), as device memory."""
    offsets, size = [], 0
    for a in arrays:
        offsets.append(size)
        size = (size + a.nbytes + 255) // 256 * 256
    raw = np.zeros(size + 256, np.uint8)
    shift = (-raw.ctypes.data) % 256
    buf = raw[shift:shift + size]
    for a, off in zip(arrays, offsets):
        buf[off:off + a.nbytes] = np.ascontiguousarray(a).view(np.uint8).ravel()
    base = buf.ctypes.data
    starts = np.array([base + o for o in offsets], np.uint64)
    ends = starts + np.array([a.nbytes for a in arrays], np.uint64)
    return Memory(base, buf, starts, ends, np.ones(len(arrays), bool)), \
        [base + o for o in offsets], buf


def _run(ptx: str, arrays: list[np.ndarray], threads: int, blocks: int = 1,
         extra_params: dict[str, bytes] | None = None) -> list[np.ndarray]:
    """Runs kernel `k` with one pointer parameter per array (p0, p1, ...);
    returns the arrays as the kernel left them."""
    kernel = parse_module(ptx)["k"]
    memory, pointers, buf = _memory(*arrays)
    params = {f"p{i}": int(p).to_bytes(8, "little") for i, p in enumerate(pointers)}
    params.update(extra_params or {})
    run_launch(kernel, (blocks, 1, 1), (threads, 1, 1), 0, params, memory, Stats())
    out = []
    for a, p in zip(arrays, pointers):
        off = p - memory.base
        out.append(buf[off:off + a.nbytes].view(a.dtype).reshape(a.shape).copy())
    return out


HEADER = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p0, .param .u64 p1, .param .u64 p2)
{
  .reg .pred %p<8>;
  .reg .b16 %rs<8>;
  .reg .b32 %r<32>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [p0];
  ld.param.u64 %rd2, [p1];
  ld.param.u64 %rd3, [p2];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd1, %rd4;
  add.s64 %rd6, %rd2, %rd4;
  add.s64 %rd7, %rd3, %rd4;
"""


def _binary(body: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """out[i] = BODY(a[i], b[i]) with a in %r2, b in %r3, the result in %r4."""
    ptx = HEADER + f"""
  ld.global.b32 %r2, [%rd5];
  ld.global.b32 %r3, [%rd6];
  {body}
  st.global.b32 [%rd7], %r4;
  ret;
}}"""
    out = np.zeros(len(a), np.uint32)
    return _run(ptx, [a, b, out], threads=len(a))[2]


def _f32(*values) -> np.ndarray:
    return np.array(values, np.float32)


def test_float_rounding_follows_ieee():
    """.rn rounds to nearest even, .rp up, .rm down; f16 conversion ties to
    even (numpy's float16 as the reference)."""
    one_ulp = np.float32(1 + 2 ** -23)
    a, b = _f32(one_ulp, 2.0), _f32(one_ulp, 3.0)
    # (1 + 2^-23)^2 - 1 = 2^-22 + 2^-46: halfway between two floats.
    rn = _binary("fma.rn.f32 %r4, %r2, %r3, 0fBF800000;", a, b).view(np.float32)
    rp = _binary("fma.rp.f32 %r4, %r2, %r3, 0fBF800000;", a, b).view(np.float32)
    rm = _binary("fma.rm.f32 %r4, %r2, %r3, 0fBF800000;", a, b).view(np.float32)
    assert rn[0] == np.float32(2 ** -22) and rm[0] == np.float32(2 ** -22)
    assert rp[0] == np.nextafter(np.float32(2 ** -22), np.float32(1))
    assert rn[1] == rp[1] == rm[1] == 5.0
    x = _f32(1 + 2 ** -11, 1 + 3 * 2 ** -11, 65519.0, 65520.0, -0.0, 6e-8, np.nan)
    got = _binary("cvt.rn.f16.f32 %rs1, %r2; cvt.u32.u16 %r4, %rs1;", x, x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    assert np.array_equal(got[:-1].astype(np.uint16), want[:-1])
    assert np.isnan(got[-1:].astype(np.uint16).view(np.float16)).all()
    # f16x2 packs its first operand in the high half.
    pair = _binary("cvt.rn.f16x2.f32 %r4, %r2, %r3;", _f32(1.0, -2.0), _f32(0.5, 3.0))
    assert [(int(p) >> 16, int(p) & 0xFFFF) for p in pair] == \
        [(int(np.float16(1.0).view(np.uint16)), int(np.float16(0.5).view(np.uint16))),
         (int(np.float16(-2.0).view(np.uint16)), int(np.float16(3.0).view(np.uint16)))]


def test_rounding_of_results_inexact_in_float64():
    """fma and directed rounding round the exact value once: (1 + 2^-12)^2 +
    2^-80 lies just above an f32 midpoint that its float64 rounding hits;
    1 + 2^-100 rounded up is the next float after 1."""
    a = _f32(1 + 2 ** -12)
    c = np.array([2.0 ** -80], np.float32)
    fma = _binary("mov.b32 %r5, 0f17800000; fma.rn.f32 %r4, %r2, %r3, %r5;", a, a)
    assert c[0].view(np.uint32) == 0x17800000
    assert fma.view(np.float32)[0] == np.nextafter(np.float32(1 + 2 ** -11), np.float32(2))
    rp = _binary("add.rp.f32 %r4, %r2, %r3;", _f32(1.0), _f32(2.0 ** -100)).view(np.float32)
    rm = _binary("add.rm.f32 %r4, %r2, %r3;", _f32(1.0), _f32(-2.0 ** -100)).view(np.float32)
    assert rp[0] == np.nextafter(np.float32(1), np.float32(2))
    assert rm[0] == np.nextafter(np.float32(1), np.float32(0))
    rz = _binary("cvt.rz.f16.f32 %rs1, %r2; cvt.u32.u16 %r4, %rs1;", _f32(1 + 2 ** -10 - 2 ** -20),
                 _f32(0))
    assert np.uint16(rz[0]).view(np.float16) == np.float16(1.0)


def test_float_comparisons_and_nan():
    nan = np.float32(np.nan)
    a, b = _f32(1.0, nan, 3.0, -0.0), _f32(2.0, 1.0, nan, 0.0)
    ltu = _binary("setp.ltu.f32 %p1, %r2, %r3; selp.u32 %r4, 1, 0, %p1;", a, b)
    lt = _binary("setp.lt.f32 %p1, %r2, %r3; selp.u32 %r4, 1, 0, %p1;", a, b)
    ne = _binary("setp.ne.f32 %p1, %r2, %r3; selp.u32 %r4, 1, 0, %p1;", a, b)
    assert list(ltu) == [1, 1, 1, 0] and list(lt) == [1, 0, 0, 0] and list(ne) == [1, 0, 0, 0]
    mx = _binary("max.f32 %r4, %r2, %r3;", a, b).view(np.float32)
    mx_nan = _binary("max.NaN.f32 %r4, %r2, %r3;", a, b).view(np.float32)
    assert list(mx[:3]) == [2.0, 1.0, 3.0]
    assert mx_nan[0] == 2.0 and np.isnan(mx_nan[1:3]).all()
    # copysign d, a, b: b's magnitude, a's sign.
    cs = _binary("copysign.f32 %r4, %r2, %r3;", _f32(-1.0, 1.0), _f32(5.0, -7.0)).view(np.float32)
    assert list(cs) == [-5.0, 7.0]


def test_integer_semantics():
    big = _f32(1e10, -1e10, np.nan, -2.7, 2.5)
    rzi = _binary("cvt.rzi.s32.f32 %r4, %r2;", big, big).view(np.int32)
    assert list(rzi) == [2 ** 31 - 1, -2 ** 31, 0, -2, 2]
    rni = _binary("cvt.rni.s32.f32 %r4, %r2;", big, big).view(np.int32)
    assert list(rni[3:]) == [-3, 2]
    a = np.array([-7, 7, -8, 0x12345678], np.int32)
    b = np.array([2, -2, 40, 4], np.int32)
    div = _binary("div.s32 %r4, %r2, %r3;", a, b).view(np.int32)
    rem = _binary("rem.s32 %r4, %r2, %r3;", a, b).view(np.int32)
    assert list(div[:2]) == [-3, -3] and list(rem[:2]) == [-1, 1]
    shr = _binary("shr.s32 %r4, %r2, %r3;", a, b).view(np.int32)
    assert shr[2] == -1 and shr[3] == 0x1234567
    bfe = _binary("bfe.u32 %r4, %r2, 4, 8;", a, b)
    assert bfe[3] == (0x12345678 >> 4) & 0xFF
    u = np.array([0xFFFFFFFF, 3], np.uint32)
    hi = _binary("mul.hi.u32 %r4, %r2, %r3;", u, u)
    assert list(hi) == [(0xFFFFFFFF * 0xFFFFFFFF) >> 32, 0]


def test_integer_edge_cases():
    """Saturation of float to s64, mad.hi, add.sat, bfe.s sign fill, |INT_MIN|
    in division, and signed values sign-extended into wider registers."""
    f = _f32(1e30, -1e30)
    high = _binary("cvt.rzi.s64.f32 %rd8, %r2; shr.u64 %rd9, %rd8, 32; cvt.u32.u64 %r4, %rd9;", f, f)
    assert list(high) == [0x7FFFFFFF, 0x80000000]
    u = np.array([0x10000, 0xFFFFFFFF], np.uint32)
    assert list(_binary("mad.hi.u32 %r4, %r2, %r3, 5;", u, u)) == [6, 3]
    big = np.array([2 ** 31 - 1, -2 ** 31], np.int32)
    sat = _binary("add.sat.s32 %r4, %r2, %r3;", big, big).view(np.int32)
    assert list(sat) == [2 ** 31 - 1, -2 ** 31]
    bfe = _binary("bfe.s32 %r4, %r2, 31, 4;", big, big).view(np.int32)
    assert list(bfe) == [0, -1]
    half = _binary("div.s32 %r4, %r2, %r3;", big, np.array([1, 2], np.int32)).view(np.int32)
    assert list(half) == [2 ** 31 - 1, -2 ** 30]
    ext = _binary("cvt.s8.s32 %rs1, %r2; cvt.s32.s16 %r4, %rs1;", np.array([-1, 0x17F], np.int32),
                  big).view(np.int32)
    assert list(ext) == [-1, 127]


def test_shuffle_modes():
    """idx within 8-lane segments, down and up with their clamps, and a
    full member mask after half the warp returned."""
    lanes = np.arange(32, dtype=np.uint32)
    idx = _binary("shfl.sync.idx.b32 %r4, %r1, 3, 6175, -1;", lanes, lanes)  # c = 24 << 8 | 31
    assert list(idx) == [(i & ~7) | 3 for i in range(32)]
    down = _binary("shfl.sync.down.b32 %r4, %r1, 1, 31, -1;", lanes, lanes)
    assert list(down) == list(range(1, 32)) + [31]
    up = _binary("shfl.sync.up.b32 %r4, %r1, 1, 0, -1;", lanes, lanes)
    assert list(up) == [0] + list(range(31))
    exited = _binary("setp.ge.u32 %p1, %r1, 16; @%p1 bra $end; "
                     "shfl.sync.bfly.b32 %r4, %r1, 1, 31, -1; st.global.b32 [%rd7], %r4; ret; "
                     "$end: mov.u32 %r4, 99;", lanes, lanes)
    assert list(exited[:16]) == [i ^ 1 for i in range(16)]


SUM_64 = HEADER + """
  .shared .align 4 .b8 partial[8];
  ld.global.b32 %r2, [%rd5];
  shfl.sync.bfly.b32 %r3, %r2, 16, 31, -1;
  add.rn.f32 %r2, %r2, %r3;
  shfl.sync.bfly.b32 %r3, %r2, 8, 31, -1;
  add.rn.f32 %r2, %r2, %r3;
  shfl.sync.bfly.b32 %r3, %r2, 4, 31, -1;
  add.rn.f32 %r2, %r2, %r3;
  shfl.sync.bfly.b32 %r3, %r2, 2, 31, -1;
  add.rn.f32 %r2, %r2, %r3;
  shfl.sync.bfly.b32 %r3, %r2, 1, 31, -1;
  add.rn.f32 %r2, %r2, %r3;
  and.b32 %r5, %r1, 31;
  setp.ne.u32 %p1, %r5, 0;
  @%p1 bra $skip;
  shr.u32 %r6, %r1, 5;
  mul.wide.u32 %rd8, %r6, 4;
  mov.u64 %rd9, partial;
  add.s64 %rd9, %rd9, %rd8;
  st.shared.b32 [%rd9], %r2;
$skip:
  bar.sync 0;
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra $done;
  ld.shared.b32 %r7, [partial];
  ld.shared.b32 %r8, [partial+4];
  add.rn.f32 %r9, %r7, %r8;
  st.global.b32 [%rd3], %r9;
$done:
  ret;
}"""


def test_block_sum_with_shuffles_and_shared_memory():
    x = np.arange(64, dtype=np.float32)
    out = _run(SUM_64, [x, np.zeros(1, np.float32), np.zeros(1, np.float32)], threads=64)[2]
    assert out[0] == x.sum()


def test_divergent_loop_reconverges_before_a_shuffle():
    """Thread i loops i times; all of a warp meet again after the loop, so
    the shuffle that follows sees every lane."""
    ptx = HEADER + """
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $after;
$loop:
  add.s32 %r2, %r2, %r3;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, %r1;
  @%p2 bra $loop;
$after:
  shfl.sync.bfly.b32 %r4, %r2, 1, 31, -1;
  st.global.b32 [%rd7], %r4;
  ret;
}"""
    out = _run(ptx, [np.zeros(32, np.int32)] * 2 + [np.zeros(32, np.int32)], threads=32)[2]
    tri = np.array([i * (i - 1) // 2 for i in range(32)])
    assert np.array_equal(out, tri[np.arange(32) ^ 1])


def test_packed_f16x2_arithmetic_is_lane_by_lane():
    """add/mul/fma .f16x2 round each 16-bit half as the f16 instruction does
    (numpy's float16 as the reference); the low half is the first element."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(64).astype(np.float16)
    b = rng.standard_normal(64).astype(np.float16)
    pa, pb = a.view(np.uint32), b.view(np.uint32)
    for body, want in [("mul.rn.f16x2 %r4, %r2, %r3;", a * b),
                       ("add.rn.f16x2 %r4, %r2, %r3;", a + b),
                       ("fma.rn.f16x2 %r4, %r2, %r3, %r2;",
                        (a.astype(np.float64) * b + a).astype(np.float16))]:
        got = _binary(body, pa, pb).view(np.float16)
        assert np.array_equal(got, want), body


def test_packed_f16x2_comparison_sets_a_predicate_per_half():
    """setp.num.f16x2 p|q, a, b (mimi's mixed build emits it): p for the low
    halves, q for the high ones."""
    a = np.array([1.0, np.nan, np.nan, 2.0] * 8, np.float16)
    b = np.array([3.0, 4.0, 5.0, np.nan] * 8, np.float16)
    body = ("setp.num.f16x2 %p1|%p2, %r2, %r3; selp.u32 %r5, 1, 0, %p1; "
            "selp.u32 %r6, 2, 0, %p2; or.b32 %r4, %r5, %r6;")
    got = _binary(body, a.view(np.uint32), b.view(np.uint32))
    ordered = ~(np.isnan(a) | np.isnan(b))
    assert np.array_equal(got, ordered[0::2] * 1 + ordered[1::2] * 2)


def test_indirect_branch_through_a_table():
    """brx.idx (LLVM's jump table for a switch, as in a launch shared by
    several small ops): thread i goes to entry i % 3; the three groups meet
    again before a warp shuffle; an index past the table is an error."""
    ptx = HEADER + """
  rem.u32 %r2, %r1, 3;
$L_brx_0: .branchtargets $t0, $t1, $t2;
  brx.idx %r2, $L_brx_0;
$t0:
  mov.u32 %r4, 100;
  bra.uni $join;
$t1:
  mov.u32 %r4, 200;
  bra.uni $join;
$t2:
  mov.u32 %r4, 300;
$join:
  shfl.sync.bfly.b32 %r5, %r4, 1, 31, -1;
  add.s32 %r4, %r4, %r5;
  st.global.b32 [%rd7], %r4;
  ret;
}"""
    out = _run(ptx, [np.zeros(32, np.int32)] * 2 + [np.zeros(32, np.int32)], threads=32)[2]
    own = 100 * (np.arange(32) % 3 + 1)
    assert np.array_equal(out, own + own[np.arange(32) ^ 1])
    with pytest.raises(EmulationError, match="brx.idx index 3 past its table of 3 targets"):
        _run(ptx.replace("rem.u32 %r2, %r1, 3;", "rem.u32 %r2, %r1, 4;"),
             [np.zeros(32, np.int32)] * 3, threads=32)


LOCAL_FRAME = HEADER.replace("{\n", "{\n  .local .align 4 .b8 __local_depot0[16];\n  .reg .b64 %SPL;\n", 1) + """
  mov.b64 %SPL, __local_depot0;
  st.local.b32 [%SPL], %r1;
  add.s32 %r2, %r1, 100;
  st.local.b32 [%SPL+12], %r2;
  and.b32 %r3, %r1, 1;
  mul.wide.u32 %rd8, %r3, 12;
  add.s64 %rd9, %SPL, %rd8;
  ld.local.b32 %r4, [%rd9];
  st.global.b32 [%rd7], %r4;
  ret;
}"""


def test_local_memory_is_a_frame_per_thread():
    """A .local stack frame (libdevice's sinf slow path keeps one): each
    thread reads back what it stored, at an index computed at run time."""
    out = _run(LOCAL_FRAME, [np.zeros(64, np.int32)] * 2 + [np.zeros(64, np.int32)], threads=64)[2]
    tid = np.arange(64)
    assert np.array_equal(out, np.where(tid % 2, tid + 100, tid))


def test_local_access_outside_the_frame_is_an_error():
    ptx = LOCAL_FRAME.replace("mul.wide.u32 %rd8, %r3, 12;", "mul.wide.u32 %rd8, %r3, 16;")
    with pytest.raises(EmulationError, match="local memory access of 4 bytes at 16 outside the "
                                             "thread's 16-byte frame"):
        _run(ptx, [np.zeros(32, np.int32)] * 3, threads=32)


def test_module_variables_are_read_from_device_memory():
    """A module's initialized .global table (libdevice's 2/pi digits): the
    parser gives its bytes, and loads through its address read them."""
    from mp.emu.ptx import module_variables
    table = ".global .align 4 .b8 tab[8] = {1, 0, 0, 0, 255, 255, 255, 127};\n"
    ptx = HEADER.replace(".visible .entry", table + ".visible .entry", 1) + """
  mov.u64 %rd8, tab;
  and.b32 %r2, %r1, 1;
  mul.wide.u32 %rd9, %r2, 4;
  add.s64 %rd10, %rd8, %rd9;
  ld.global.nc.b32 %r4, [%rd10];
  st.global.b32 [%rd7], %r4;
  ret;
}"""
    (var,) = module_variables(ptx)
    assert (var.name, var.size, var.align) == ("tab", 8, 4)
    values = np.frombuffer(var.data, np.int32)
    assert list(values) == [1, 2 ** 31 - 1]
    kernel = parse_module(ptx)["k"]
    out = np.zeros(8, np.int32)
    memory, (p0, p1, p2, p3), buf = _memory(np.zeros(8, np.int32), np.zeros(8, np.int32), out,
                                            values.copy())
    params = {f"p{i}": int(p).to_bytes(8, "little") for i, p in enumerate((p0, p1, p2))}
    run_launch(kernel, (1, 1, 1), (8, 1, 1), 0, params, memory, Stats(), symbols={"tab": p3})
    got = buf[p2 - memory.base:p2 - memory.base + 32].view(np.int32)
    assert list(got) == [1, 2 ** 31 - 1] * 4


@pytest.mark.parametrize("body, message", [
    # Thread 31 stores one element past the end of p2 (31 floats).
    ("st.global.b32 [%rd7], %r1;", "store of 4 bytes at 0x[0-9a-f]+ 0 bytes past the end of "
                                    "the 124-byte device allocation at 0x"),
    ("add.s64 %rd8, %rd7, 2; st.global.b32 [%rd8], %r1;", "misaligned 4-byte access"),
    ("setp.lt.u32 %p1, %r1, 16; @!%p1 bra $x; shfl.sync.bfly.b32 %r4, %r1, 1, 31, -1; $x:",
     "member mask 0xffffffff names lanes that do not execute"),
    ("setp.lt.u32 %p1, %r1, 16; @!%p1 bra $x; bar.sync 0; $x:",
     "barrier reached by 16 of the 32 live threads of block 0"),
    ("popc.b32 %r4, %r1;", "'popc.b32' is not emulated"),
    ("add.s64 %rd8, %rd5, 4; ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd8];",
     "misaligned 16-byte vector access"),
    ("bar.arrive 0, 32;", "'bar.arrive 0, 32' is not emulated"),
])
def test_undefined_behaviour_is_an_error(body, message):
    """What a GPU leaves undefined stops the launch with the kernel, the PTX
    line and the thread."""
    ptx = HEADER + body + "\n  ret;\n}"
    arrays = [np.zeros(32, np.int32), np.zeros(32, np.int32), np.zeros(31, np.int32)]
    with pytest.raises(EmulationError, match=r"kernel k, PTX line \d+ '.*'.*: " + message):
        _run(ptx, arrays, threads=32)


# --- The emulated driver through the mp runtime, on hand-written PTX ----------

# The package the emulator is imported from here (the driver runs in a
# process of its own: the runtime loads one driver per process).
EMU_PACKAGE = EmulationError.__module__.rsplit(".", 1)[0]

DRIVER_SCRIPT = """
import ctypes, sys
import numpy as np
from {package} import Emulator

emu = Emulator.install()
rt = ctypes.CDLL(sys.argv[1])
P = ctypes.c_void_p
rt.mgpuModuleLoad.restype = P
rt.mgpuModuleLoad.argtypes = [P, ctypes.c_size_t]
rt.mgpuModuleGetFunction.restype = P
rt.mgpuModuleGetFunction.argtypes = [P, ctypes.c_char_p]
rt.mgpuMemAlloc.restype = P
rt.mgpuMemAlloc.argtypes = [ctypes.c_uint64, P, ctypes.c_bool]
rt.mgpuMemFree.argtypes = [P, P]
rt.mp_cuda_alloc.restype = P
rt.mp_cuda_alloc.argtypes = [ctypes.c_size_t]
for copy in (rt.mp_cuda_copy_to_device, rt.mp_cuda_copy_to_host, rt.mp_cuda_copy_on_device):
    copy.argtypes = [P, P, ctypes.c_size_t]
rt.mgpuMemset32.argtypes = [P, ctypes.c_uint, ctypes.c_size_t, P]
rt.mgpuLaunchKernel.argtypes = [P] + [ctypes.c_ssize_t] * 6 + [ctypes.c_int32, P, P, P,
                                                                 ctypes.c_size_t]
rt.mp_last_error.restype = ctypes.c_char_p


def report(what):
    status = rt.mp_cuda_take_status()
    print(f"{{what}}: {{status}}", rt.mp_last_error().decode() if status else "", flush=True)


ptx = sys.stdin.buffer.read() + b"\\0"
fn = rt.mgpuModuleGetFunction(rt.mgpuModuleLoad(ptx, len(ptx)), b"k")
report("load")
a, b, out = np.arange(8, dtype=np.float32), np.full(8, 10, np.float32), np.zeros(8, np.float32)
bufs = [rt.mp_cuda_alloc(32) for _ in range(3)]
rt.mp_cuda_copy_to_device(bufs[0], a.ctypes.data, 32)
rt.mp_cuda_copy_to_device(bufs[1], b.ctypes.data, 32)


def launch(threads, pointers):
    cells = [ctypes.c_void_p(p) for p in pointers]
    params = (P * 3)(*[ctypes.addressof(c) for c in cells])
    rt.mgpuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, None, params, None, 3)


launch(8, bufs)
rt.mp_cuda_copy_to_host(out.ctypes.data, bufs[2], 32)
report("add")
print("sum:", out.tolist())
rt.mgpuMemset32(bufs[2], 0x3F800000, 8, None)
rt.mp_cuda_copy_on_device(bufs[0], bufs[2], 32)
rt.mp_cuda_copy_to_host(out.ctypes.data, bufs[0], 32)
report("memset")
print("ones:", out.tolist())
launch(72, bufs)  # thread 64 stores past the 256 bytes of a pool block
report("past the end")
freed = rt.mgpuMemAlloc(32, None, False)
rt.mgpuMemFree(freed, None)
launch(8, [bufs[0], freed, bufs[2]])
report("freed")
elf = b"\\x7fELF" + bytes(60)
rt.mgpuModuleLoad(elf, len(elf))
report("cubin")
# A graph: the launch, copy and memset queued while capturing run when the
# graph is launched, in order, with the launch's arguments as captured.
rt.mp_cuda_capture_end.restype = P
rt.mp_cuda_graph_launch.argtypes = [P]
rt.mp_cuda_graph_destroy.argtypes = [P]
rt.mp_cuda_copy_to_device(bufs[0], a.ctypes.data, 32)
rt.mgpuMemset32(bufs[2], 0, 8, None)
report("capture " + str(rt.mp_cuda_capture_begin()))
launch(8, bufs)                                  # out = a + b
rt.mp_cuda_copy_on_device(bufs[1], bufs[2], 32)  # b = out
rt.mgpuMemset32(bufs[0], 0x40000000, 8, None)    # a = 2
graph = rt.mp_cuda_capture_end()
report("captured")
rt.mp_cuda_copy_to_host(out.ctypes.data, bufs[2], 32)
print("before the graph:", out.tolist())
rt.mp_cuda_graph_launch(graph)
rt.mp_cuda_graph_launch(graph)
rt.mp_cuda_copy_to_host(out.ctypes.data, bufs[1], 32)
report("replayed")
print("after two launches:", out.tolist())
rt.mp_cuda_graph_destroy(graph)
print("kept launches:", len(emu._recorded), "captured:", emu.captured, "replayed:", emu.replayed)
"""


def test_emulated_driver_through_the_runtime(tmp_path):
    """The emulator's driver (the shared fake driver, runtime/fake/) under
    the runtime's mgpu calls: launches, copies and memsets on its memory, the
    emulator's errors as the runtime reports them, and a CUDA graph captured
    and launched twice."""
    runtime = BUILD / "lib" / "libmp_runtime.so"
    if not runtime.is_file():
        pytest.skip(f"libmp_runtime.so is not built ({BUILD})")
    if not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")):
        pytest.skip("no C compiler for the emulated driver")
    ptx = HEADER.replace(".b32 %r<32>", ".b32 %r<32>;\n  .reg .f32 %f<4>") + """
  ld.global.f32 %f1, [%rd5];
  ld.global.f32 %f2, [%rd6];
  add.f32 %f3, %f1, %f2;
  st.global.f32 [%rd7], %f3;
  ret;
}"""
    proc = subprocess.run([sys.executable, "-c", DRIVER_SCRIPT.format(package=EMU_PACKAGE),
                           str(runtime)], input=ptx, env={**ENV, "MP_EMU_CACHE": str(tmp_path)},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    assert lines["load"] == "0 " and lines["add"] == "0 " and lines["memset"] == "0 "
    assert lines["sum"] == str([10.0 + i for i in range(8)])
    assert lines["ones"] == str([1.0] * 8)
    assert re.search(r"^6 cuLaunchKernel\(kernel 'k', grid 1x1x1, block 72x1x1.*"
                     r"CUDA_ERROR_LAUNCH_FAILED \(kernel k, .*thread 64: store of 4 bytes .* "
                     r"0 bytes past the end of the 256-byte device allocation", lines["past the end"])
    assert "which was freed" in lines["freed"]
    assert "CUDA_ERROR_NO_BINARY_FOR_GPU (the PTX emulator runs PTX, not cubins" in lines["cubin"]
    assert lines["capture 0"] == "0 " and lines["captured"] == "0 " and lines["replayed"] == "0 "
    assert lines["before the graph"] == str([0.0] * 8)
    # First launch: b = a + b = 10 + i, a = 2; second: b = 2 + (10 + i).
    assert lines["after two launches"] == str([12.0 + i for i in range(8)])
    assert lines["kept launches"] == "0 captured: 1 replayed: 2"


# --- Whole libraries through the mp runtime -----------------------------------

@pytest.mark.parametrize(("precision", "want", "diff", "passes"), [
    ("fp32", [1.9, 0.1], 5e-5, True),
    # 1.5e-4 on 1.9: mp-run's 1e-4/1e-5 let it pass; summation order cannot explain it.
    ("fp32", [1.9, 0.1], 1.5e-4, False),
    ("mixed", [0.3, -0.2], 2.0**-11, True),
    # 5e-3 on 0.3 passed at 1e-2/1e-2: sixteen f16 ulps.
    ("mixed", [0.3, -0.2], 5e-3, False),
])
def test_cuda_vs_cpu_library_bound(precision, want, diff, passes):
    """The CUDA library and the CPU library of one graph differ only in summation
    order: the bound is a few ulps of the output's magnitude, not mp-run's."""
    from mp.emu.check import compare, consistency_bound
    want = np.array(want, np.float32)
    got = want + np.float32(diff)
    ok, detail = compare(got, want, 0.0, consistency_bound(precision, want))
    assert ok == passes, detail


def _compile(model: Path, out: Path, *args: str) -> None:
    proc = subprocess.run([str(MP_COMPILE), str(model / "model.onnx"), "-o", str(out), *args],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _emulate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mp.emu", *map(str, args)], env=ENV,
                          capture_output=True, text=True, timeout=1200)


def _check_on_emulator(model: Path, data: Path, precision: str, tmp_path: Path,
                       known_gap: str | None = None, flags: tuple[str, ...] = ()) -> None:
    """Builds `model`'s CUDA library (PTX) for `data`'s shapes (mp-compile
    `flags` added) and runs it on the emulator: every output matches
    onnxruntime's at mp-run's tolerances (but `known_gap`, a "FAIL NAME vs
    expected" prefix) and the CPU library of the same graph."""
    _require_compiler()
    common = ["--precision", precision, "--shapes-from", str(data), *flags]
    _compile(model, tmp_path / "cuda.so", "--target", "cuda", "--gpu", "compute_80", *common)
    # The CPU library from the run's cache (test_compiled_library.py's too).
    cpu = compiled_library(model / "model.onnx", *common)
    proc = _emulate(tmp_path / "cuda.so", data, "--reference", cpu)
    lines = proc.stdout.splitlines()
    assert proc.returncode in (0, 1) and lines and "launches" in lines[0], proc.stdout + proc.stderr
    verdicts = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    assert verdicts, proc.stdout
    for line in verdicts:
        assert line.startswith("PASS") or (known_gap and line.startswith(known_gap)), line
    assert all(line.startswith("PASS") for line in verdicts if " vs expected" not in line)


@pytest.mark.parametrize("precision", ["fp32", "mixed"])
@pytest.mark.parametrize("model", MODELS, ids=[m.name for m in MODELS])
def test_cuda_library_on_the_emulator(model, precision, tmp_path):
    """Every kernel of the CUDA library, from its PTX: the outputs match
    onnxruntime's at mp-run's tolerances and the CPU library of the same
    graph. The one known mixed-precision miss (silero's stateN, the f16 Conv
    gap of the CPU target too) must still match the CPU library."""
    gap = "FAIL stateN vs expected" if model.name.startswith("silero") and precision == "mixed" \
        else None
    _check_on_emulator(model, model / "test_data_set_0", precision, tmp_path, gap)


CORPUS_DECODERS = sorted(p.parent for p in (REPO.parent / "shared" / "corpus" / "decoders")
                         .glob("*/model.onnx"))
# Each kernel family once in the fast tier: libdevice's sinf with its .local
# frame and 2/pi table (rotary, llama), packed f16x2 (gpt2 mixed), partial
# rotary (glm); the rest of the corpus (about 6 s each) in the full tier.
FAST_CORPUS = {("llama_ts", "mixed"), ("gpt2_ts", "mixed"), ("glm_dynamo", "fp32")}


@pytest.mark.parametrize("model, precision", [
    pytest.param(m, p, id=f"{m.name}-{p}",
                 marks=() if (m.name, p) in FAST_CORPUS else pytest.mark.slow)
    for m in CORPUS_DECODERS for p in ("fp32", "mixed")])
def test_corpus_decoder_step_on_the_emulator(model, precision, tmp_path):
    """A decode step (batch 2, one new token, 7 cached positions, left
    padding) of every real exported decoder: the CUDA library matches
    onnxruntime and the CPU library."""
    _check_on_emulator(model, model / "test_data_set_1", precision, tmp_path)


# The fused build's flash kernels on real exports: dynamo's mask gather
# and an fp32 model's caches around f16 attention (llama_dynamo mixed), f16
# caches (qwen2_ts_fp16) in the fast tier.
FAST_FUSED = {("llama_dynamo", "mixed"), ("qwen2_ts_fp16", "mixed")}


@pytest.mark.parametrize("model, precision", [
    pytest.param(m, p, id=f"{m.name}-{p}",
                 marks=() if (m.name, p) in FAST_FUSED else pytest.mark.slow)
    for m in CORPUS_DECODERS for p in ("fp32", "mixed")])
def test_corpus_decoder_fused_step_on_the_emulator(model, precision, tmp_path):
    """The same decode step built as docs/decode.md builds decoders
    (--fuse-attention): attention runs on the flash kernels with the mask
    the export builds from attention_mask (left padding masks keys) and the
    past read once, the joined cache written as it is read. The CUDA
    library matches onnxruntime and the fused CPU library."""
    _check_on_emulator(model, model / "test_data_set_1", precision, tmp_path,
                       flags=("--fuse-attention",))


@pytest.mark.parametrize("precision", [pytest.param("fp32", marks=pytest.mark.slow), "mixed"])
@pytest.mark.parametrize("model", [pytest.param(m, id=m.name, marks=() if m.name == "llama_ts"
                                                else pytest.mark.slow) for m in CORPUS_DECODERS])
def test_corpus_decoder_dynamic_shapes_on_the_emulator(model, precision, tmp_path):
    """One --dynamic-shapes CUDA library of every real exported decoder runs
    both test sets (a 4-token prefill at batch 1 with an empty cache, a
    decode step at batch 2 with 7 cached positions): the host sizes the
    grids and reads the shapes the graph computes back from the device, and
    each output matches onnxruntime and the CPU library's dynamic build."""
    _require_compiler()
    common = ["--dynamic-shapes", "--precision", precision]
    _compile(model, tmp_path / "cuda.so", "--target", "cuda", "--gpu", "compute_80", *common)
    cpu = compiled_library(model / "model.onnx", *common)
    for data in ("test_data_set_0", "test_data_set_1"):
        proc = _emulate(tmp_path / "cuda.so", model / data, "--reference", cpu)
        verdicts = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
        # Every output against onnxruntime and against the CPU library.
        assert proc.returncode == 0 and len(verdicts) == 10, proc.stdout + proc.stderr
        assert all(line.startswith("PASS") for line in verdicts), (data, proc.stdout)


GRAPH_RUNS = """
import sys
import numpy as np
from mp.emu import Emulator
from mp.emu.check import tensors
emu = Emulator.install()
import mp
cuda, cpu = mp.load(sys.argv[1]), mp.load(sys.argv[2])
base = dict(tensors(sys.argv[3], "input"))
rng = np.random.default_rng(0)
for run in range(4):
    # New input values each run: a replay must read them, not the captured ones.
    feeds = {n: (a + 0.1 * rng.standard_normal(a.shape)).astype(a.dtype) if a.dtype.kind == "f"
             else a for n, a in base.items()}
    want, got = cpu.run(feeds), cuda.run(feeds)
    err = max(float(np.abs(got[n].astype(np.float64) - want[n]).max()) for n in want)
    print(run, emu.stats.launches, emu.captured, emu.replayed, err, flush=True)
"""


@pytest.mark.parametrize("graphs", ["default", "0"])
def test_corpus_decoder_replayed_from_a_cuda_graph(graphs, tmp_path):
    """CUDA graphs are on by default: llama_ts's decode step (mixed) runs
    plainly once, is captured on its second run and replayed after, with new
    input values every run, each matching the CPU library; MP_CUDA_GRAPHS=0
    launches every kernel every run."""
    _require_compiler()
    model = REPO.parent / "shared" / "corpus" / "decoders" / "llama_ts"
    require_present(model)
    data = model / "test_data_set_1"
    common = ["--precision", "mixed", "--shapes-from", str(data)]
    _compile(model, tmp_path / "cuda.so", "--target", "cuda", "--gpu", "compute_80", *common)
    cpu = compiled_library(model / "model.onnx", *common)
    script = tmp_path / "runs.py"
    script.write_text(GRAPH_RUNS)
    env = {k: v for k, v in ENV.items() if k != "MP_CUDA_GRAPHS"}
    if graphs != "default":
        env["MP_CUDA_GRAPHS"] = graphs
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "cuda.so"), str(cpu),
                           str(data)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [[float(x) for x in line.split()] for line in proc.stdout.splitlines()]
    assert len(rows) == 4, proc.stdout
    per_run = int(rows[0][1])
    for run, launches, captured, replayed, err in rows:
        assert launches == per_run * (run + 1)
        if graphs == "0":
            assert captured == replayed == 0
        else:
            # Run 0 plain; run 1 captured, then replayed; runs 2 and 3 replayed.
            assert captured == (per_run if run >= 1 else 0)
            assert replayed == per_run * max(0, run)
        # Same kernels, same inputs: only summation order differs (mixed, one
        # f16 ulp of logits about 1).
        assert err <= 2e-3, (run, err)


TENSOR_SCATTER_LOOP = """
import sys
import numpy as np
from mp.emu import Emulator
emu = Emulator.install()
import mp
import onnxruntime as ort
sys.path.insert(0, sys.argv[3])  # the tests' conftest
from conftest import onnx24_step_feeds
so = ort.SessionOptions()
so.log_severity_level = 3  # its "in-place optimization not activated" warning
sess = ort.InferenceSession(sys.argv[2], so, providers=["CPUExecutionProvider"])
lib = mp.load(sys.argv[1])
rng = np.random.default_rng(2)
theirs = [np.zeros((2, 2, 16, 8), np.float32) for _ in range(2)]
device = [lib.to_device(c) for c in theirs]
for t in range(5):
    step = onnx24_step_feeds(rng, t)
    y, k, v = sess.run(None, {**step, "key_cache": theirs[0], "value_cache": theirs[1]})
    got = lib.run_device({**step, "key_cache": device[0], "value_cache": device[1]},
                         out={"key_cache_out": device[0], "value_cache_out": device[1]})
    assert got["key_cache_out"] is device[0] and got["value_cache_out"] is device[1]
    for name, want in (("y", y), ("key_cache_out", k), ("value_cache_out", v)):
        g = got[name].numpy().astype(np.float64)
        print(t, name, float(np.abs(g - want).max()), float(np.abs(want).max()), flush=True)
    theirs = [k, v]
"""


@pytest.mark.parametrize("precision", ["fp32", "mixed"])
def test_onnx24_tensor_scatter_caches_on_the_emulator(precision, tmp_path):
    """ONNX-24's static caches (TensorScatter into fixed-capacity caches, then
    Attention with nonpad_kv_seqlen) on the CUDA target: five steps on
    device-resident caches updated in place, the two sequences at different
    fill levels, match onnxruntime step by step. The caches are exact in
    mixed precision too: they are fp32 state carried from input to output,
    so the scatter stays fp32."""
    _require_compiler()
    pytest.importorskip("onnxruntime")
    from onnx import parser

    from conftest import ONNX24_STEP
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.onnx").write_bytes(parser.parse_model(ONNX24_STEP).SerializeToString())
    _compile(model, tmp_path / "cuda.so", "--target", "cuda", "--gpu", "compute_80",
             "--precision", precision)
    script = tmp_path / "loop.py"
    script.write_text(TENSOR_SCATTER_LOOP)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "cuda.so"),
                           str(model / "model.onnx"), str(Path(__file__).parent)], env=ENV,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line[:1].isdigit()]
    assert len(rows) == 5 * 3, proc.stdout
    for step, name, err, scale in rows:
        if name != "y":
            assert float(err) == 0.0, (step, name, err)
        else:
            # fp32: summation order (measured 2.4e-7); mixed: f16 Q, K and V
            # (measured 1.1e-3 at |y| about 1.8), within mp-run's tolerances.
            tol = 1e-6 + 1e-5 * float(scale) if precision == "fp32" else 1e-2 * float(scale)
            assert float(err) <= tol, (step, name, err, scale)


def test_cubin_library_names_the_option(tmp_path):
    """The emulator runs PTX: a library with cubins only fails to load with
    the option to use."""
    _require_compiler()
    model = REPO / "examples" / "tts_decoder"
    _compile(model, tmp_path / "cubin.so", "--target", "cuda", "--gpu", "sm_90",
             "--shapes-from", str(model / "test_data_set_0"))
    proc = _emulate(tmp_path / "cubin.so", model / "test_data_set_0")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the PTX emulator runs PTX, not cubins: compile the library with --gpu compute_80" \
        in proc.stderr


# --- Kernel families at awkward shapes -------------------------------------

def _shape_models() -> dict[str, tuple]:
    """name -> (nodes, feeds, initializers, opset): tiles that do not fill,
    rows shorter and longer than a warp, convolutions with strides and
    dilations, attention on the flash path at odd lengths."""
    from onnx import helper as h
    rng = np.random.default_rng(0)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def node(op, ins, **attrs):
        return [h.make_node(op, ins, ["y"], **attrs)]

    models = {}
    for m, k, n in [(1, 16, 8), (3, 20, 9), (17, 33, 15), (64, 64, 64), (2, 200, 130)]:
        models[f"matmul_{m}x{k}x{n}"] = (node("MatMul", ["a", "w"]), {"a": f(m, k)},
                                         {"w": f(k, n)}, 18)
    models["batched_matmul"] = (node("MatMul", ["a", "b"]), {"a": f(2, 3, 5, 17), "b": f(2, 3, 17, 6)},
                                {}, 18)
    models["gemm_transposed"] = (node("Gemm", ["a", "w", "c"], transB=1, alpha=0.5, beta=2.0),
                                 {"a": f(7, 24)}, {"w": f(11, 24), "c": f(11)}, 18)
    for n in [1, 31, 33, 1000]:
        models[f"softmax_{n}"] = (node("Softmax", ["x"], axis=-1), {"x": f(3, n) * 3}, {}, 18)
    models["layernorm_77"] = (node("LayerNormalization", ["x", "s", "b"], axis=-1),
                              {"x": f(2, 3, 77)}, {"s": f(77), "b": f(77)}, 18)
    models["reduce_max_columns"] = (node("ReduceMax", ["x", "axes"], keepdims=1), {"x": f(37, 6)},
                                    {"axes": np.array([0], np.int64)}, 18)
    models["conv1d_dilated"] = (node("Conv", ["x", "w", "b"], pads=[2, 2], dilations=[2]),
                                {"x": f(1, 5, 23)}, {"w": f(7, 5, 3), "b": f(7)}, 18)
    models["conv1d_strided"] = (node("Conv", ["x", "w"], pads=[1, 1], strides=[2]),
                                {"x": f(2, 9, 30)}, {"w": f(12, 9, 4)}, 18)
    models["convtranspose1d"] = (node("ConvTranspose", ["x", "w"], strides=[2], pads=[1, 1]),
                                 {"x": f(1, 6, 11)}, {"w": f(6, 4, 4)}, 18)
    for name, (b, heads, s, length, d) in {"attention_decode": (2, 3, 1, 37, 16),
                                           "attention_prefill": (1, 2, 19, 19, 32),
                                           "attention_long_keys": (1, 1, 5, 70, 8)}.items():
        models[name] = (node("Attention", ["q", "k", "v"]),
                        {"q": f(b, heads, s, d), "k": f(b, heads, length, d),
                         "v": f(b, heads, length, d)}, {}, 23)
    models["attention_causal"] = (node("Attention", ["q", "k", "v"], is_causal=1),
                                  {"q": f(1, 2, 13, 16), "k": f(1, 2, 13, 16),
                                   "v": f(1, 2, 13, 16)}, {}, 23)
    # Decode steps as torch exports them: grouped-query heads, a past joined
    # with the new key (the kernel writes the joined cache as it reads the
    # past), and the mask the model builds from attention_mask: additive
    # with a masked (padded) key, broadcast over heads; boolean per head.
    present = ["y", "present_key", "present_value"]
    additive = np.zeros((2, 1, 1, 71), np.float32)
    additive[0, ..., 3] = additive[1, ..., 60] = np.finfo(np.float32).min
    models["attention_past_additive_mask"] = (
        [h.make_node("Attention", ["q", "k", "v", "mask", "past_key", "past_value"], present)],
        {"q": f(2, 4, 1, 16), "k": f(2, 2, 1, 16), "v": f(2, 2, 1, 16), "mask": additive,
         "past_key": f(2, 2, 70, 16), "past_value": f(2, 2, 70, 16)}, {}, 23)
    keep = rng.random((1, 3, 2, 43)) > 0.2
    keep[..., 0] = True
    models["attention_past_bool_mask"] = (
        [h.make_node("Attention", ["q", "k", "v", "mask", "past_key", "past_value"], present)],
        {"q": f(1, 3, 2, 40), "k": f(1, 3, 2, 40), "v": f(1, 3, 2, 24), "mask": keep,
         "past_key": f(1, 3, 41, 40), "past_value": f(1, 3, 41, 24)}, {}, 23)
    return models


SHAPE_MODELS = sorted(_shape_models())

CHECK_ALL = """
import sys
from pathlib import Path
from mp.emu import Emulator
from mp.emu.check import check_library
Emulator.install()
for case in sys.argv[1:]:
    d = Path(case)
    report = check_library(str(d / "cuda.so"), d / "test_data_set_0", str(d / "cpu.so"))
    print(d.name, "ERROR", report.error, flush=True) if report.error else None
    for v in report.verdicts:
        print(d.name, v, flush=True)
"""


@pytest.fixture(scope="module")
def shape_results(tmp_path_factory):
    """Builds every shape model (onnxruntime's outputs as references) in fp32
    and mixed for CUDA (PTX) and the CPU, and runs them all in one emulator
    process: case name -> its result lines."""
    _require_compiler()
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper as h, numpy_helper

    def helper_type(a):
        return h.np_dtype_to_tensor_dtype(a.dtype)
    root = tmp_path_factory.mktemp("shapes")
    cases = []
    for name, (nodes, feeds, inits, opset) in _shape_models().items():
        outputs = list(nodes[-1].output)
        graph = h.make_graph(
            nodes, name, [h.make_tensor_value_info(n, helper_type(a), a.shape) for n, a in feeds.items()],
            [h.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
            initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
        model.ir_version = 9
        folder = root / name
        data = folder / "test_data_set_0"
        data.mkdir(parents=True)
        onnx.save(model, folder / "model.onnx")
        want = ort.InferenceSession(str(folder / "model.onnx"),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
        for i, (n, a) in enumerate(feeds.items()):
            (data / f"input_{i}.pb").write_bytes(numpy_helper.from_array(a, n).SerializeToString())
        for i, (n, a) in enumerate(zip(outputs, want)):
            (data / f"output_{i}.pb").write_bytes(numpy_helper.from_array(a, n).SerializeToString())
        for precision in ("fp32", "mixed"):
            case = root / f"{name}-{precision}"
            case.mkdir()
            (case / "test_data_set_0").symlink_to(data)
            common = ["--precision", precision, "--shapes-from", str(data)]
            _compile(folder, case / "cuda.so", "--target", "cuda", "--gpu", "compute_80", *common)
            _compile(folder, case / "cpu.so", *common)
            cases.append(str(case))
    script = root / "check_all.py"
    script.write_text(CHECK_ALL)
    proc = subprocess.run([sys.executable, str(script), *cases], env=ENV, capture_output=True,
                          text=True, timeout=1800)
    results: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        case, _, rest = line.partition(" ")
        results.setdefault(case, []).append(rest)
    return results, proc


@pytest.mark.parametrize("precision", ["fp32", "mixed"])
@pytest.mark.parametrize("name", SHAPE_MODELS)
def test_kernel_family_at_awkward_shapes(shape_results, name, precision):
    """MatMul/Gemm tiles that do not fill a 16x8 mma tile, Softmax rows of 1
    to 1000 (shorter and longer than a block), LayerNorm, a column reduction,
    dilated, strided and transposed 1-D convolutions (implicit GEMM), and
    ONNX Attention on the flash path (decode, prefill, causal, more keys
    than a split): each kernel's output equals onnxruntime's at mp-run's
    tolerances and the CPU library's."""
    results, proc = shape_results
    lines = results.get(f"{name}-{precision}")
    assert lines, proc.stdout[-2000:] + proc.stderr[-2000:]
    outputs = len(_shape_models()[name][0][-1].output)
    assert len(lines) == 2 * outputs and all(line.startswith("PASS") for line in lines), lines


def _run_against_cpu(tmp_path: Path, model: Path, script: str, *args: str,
                     env: dict | None = None) -> str:
    """Compiles `model` with ARGS for CUDA (PTX) and the CPU (the CPU library
    from the run's cache: test_dynamic_shapes.py and test_kv_cache_in_place.py
    build the same ones), runs `script` with the two libraries as arguments
    (ENV, then `env`), and returns what it printed."""
    _compile(model, tmp_path / "cuda.so", "--target", "cuda", "--gpu", "compute_80", *args)
    cpu = compiled_library(model / "model.onnx", *args, name="libdec.so")
    path = tmp_path / "script.py"
    path.write_text(script)
    proc = subprocess.run([sys.executable, str(path), str(tmp_path / "cuda.so"), str(cpu)],
                          env={**ENV, **(env or {})}, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


DECODE_LOOP = """
import sys
import numpy as np
from mp.emu import Emulator
emu = Emulator.install()
import mp
cuda, cpu = mp.load(sys.argv[1]), mp.load(sys.argv[2])
rng = np.random.default_rng(0)
dtype = dict((n, d) for n, d, _ in cpu.inputs)["past_key_0"]
caches = {n: np.zeros(s, d) for n, d, s in cpu.inputs if n.startswith("past_") and len(s) == 4}
device = {n: cuda.to_device(a) for n, a in caches.items()}
outs = {"present_" + n[5:]: a for n, a in device.items()}
# Every buffer kept across steps, as a decode loop replaying a graph keeps them.
outs.update({n: cuda.empty_device(s, d) for n, d, s in cuda.outputs if n not in outs})
kept = {}
for step in range(5):
    feeds = {"mel_frame": rng.standard_normal((2, 1, 80)).astype(np.float32),
             "encoder_out": rng.standard_normal((2, 10, 128)).astype(np.float32)}
    for name, a in feeds.items():
        kept[name] = kept[name].copy_from(a) if name in kept else cuda.to_device(a)
    length = {"past_sequence_length": np.array(step, np.int64)}
    want = cpu.run({**feeds, **length, **caches})
    got = cuda.run_device({**kept, **length, **device}, out=outs)
    caches = {"past_" + n[8:]: want[n] for n in want if n.startswith("present_")}
    for name in want:
        g, w = got[name].numpy().astype(np.float64), want[name].astype(np.float64)
        print(step, name, float(np.abs(g - w).max()), float(np.abs(w).max()), flush=True)
    print("graphs", step, emu.stats.launches, emu.captured, emu.replayed, flush=True)
"""


# fp32 (~25 s) in the full tier; mixed, with its mma kernels, stays in the fast one.
@pytest.mark.parametrize("precision", [pytest.param("fp32", marks=pytest.mark.slow), "mixed"])
def test_kv_cache_decode_loop_on_device_buffers(precision, tmp_path):
    """The decoder with fused attention and 16-position in-place caches: five
    steps on device-resident caches (run_device) give the CPU library's
    outputs and cache contents step by step. With CUDA graphs (on by
    default) the first step runs plainly, the second is captured, and each
    later one, at a new fill level, is captured again and updates the
    executable graph in place (the same kernels, other arguments); every
    step's kernels run from the graph."""
    _require_compiler()
    model = REPO / "examples" / "tts_decoder"
    pins = ["mel_frame=2x1x80", "encoder_out=2x10x128"] + \
        [f"past_{k}_{i}=2x4x0x32" for i in range(2) for k in ("key", "value")]
    # The arguments in test_kv_cache_in_place.py's order: one cached CPU library.
    common = [a for p in pins for a in ("--input-shape", p)] + \
        ["--fuse-attention", "--max-seq-len", "16", "--precision", precision]
    stdout = _run_against_cpu(tmp_path, model, DECODE_LOOP, *common,
                              env={"MP_EMU_TRACE_GRAPHS": "1"})
    rows = [line.split() for line in stdout.splitlines() if line[:1].isdigit()]
    assert len(rows) == 5 * 6, stdout
    graphs = [[int(x) for x in line.split()[1:]] for line in stdout.splitlines()
              if line.startswith("graphs ")]
    per_run = graphs[0][1]
    assert [g[0] for g in graphs] == list(range(5)), stdout
    for step, launches, captured, replayed in graphs:
        assert launches == per_run * (step + 1), stdout
        assert captured == replayed == per_run * step, stdout
    traces = [line for line in stdout.splitlines() if line.startswith("mp_emu: cuGraph")]
    assert traces == ["mp_emu: cuGraphInstantiateWithFlags"] + \
        ["mp_emu: cuGraphExecUpdate_v2: updated"] * 3, traces
    # Differences come from summation order only: measured at most 5.8e-7 of the
    # output's magnitude in fp32 and two f16 ulps (0.00195 at 1.76) after five
    # mixed steps.
    for step, name, err, scale in rows:
        tol = (4e-6 if precision == "fp32" else 4 * 2.0**-10) * float(scale)
        assert float(err) <= tol, (step, name, err, scale)


DYNAMIC = """
import sys
import numpy as np
from mp.emu import Emulator
Emulator.install()
import mp
cuda, cpu = mp.load(sys.argv[1]), mp.load(sys.argv[2])
rng = np.random.default_rng(0)
for batch, enc_len, past in [(1, 3, 0), (3, 17, 5)]:
    feeds = {"mel_frame": rng.standard_normal((batch, 1, 80)).astype(np.float32),
             "encoder_out": rng.standard_normal((batch, enc_len, 128)).astype(np.float32)}
    for name, dtype, shape in cpu.inputs:
        if name.startswith("past_"):
            feeds[name] = rng.standard_normal((batch, 4, past, 32)).astype(dtype)
    want, got = cpu.run(feeds), cuda.run(feeds)
    for name in want:
        assert got[name].shape == want[name].shape, (name, got[name].shape, want[name].shape)
        print(batch, enc_len, past, name, float(np.abs(got[name] - want[name]).max()), flush=True)
"""


def test_dynamic_shapes_library(tmp_path):
    """--dynamic-shapes: grids sized on the host at run time, generic
    kernels indexing with run-time strides; two sets of sizes agree with the
    CPU library's dynamic build."""
    _require_compiler()
    model = REPO / "examples" / "tts_decoder"
    rows = [line.split() for line in
            _run_against_cpu(tmp_path, model, DYNAMIC, "--dynamic-shapes", "--precision",
                             "fp32").splitlines()]
    assert len(rows) == 2 * 6
    # fp32, values up to ~2: measured at most 1.1e-6 (summation order).
    assert all(float(r[-1]) < 1e-5 for r in rows), rows


def _value_sized_model(directory: Path, inputs: list[np.ndarray]) -> None:
    """VITS's pattern: NonZero of a mask, its coordinates gathered (GatherND),
    a count that sizes a Range, and a Reshape to a shape computed from the
    count; onnxruntime's outputs as references, one test set per input."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    def const(name, value):
        return numpy_helper.from_array(np.array(value), name)

    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["m"], name="mask"),
        helper.make_node("NonZero", ["m"], ["idx"], name="nonzero"),
        helper.make_node("Transpose", ["idx"], ["idx_t"], perm=[1, 0], name="coords"),
        helper.make_node("GatherND", ["x", "idx_t"], ["y"], name="gather"),
        helper.make_node("Cast", ["m"], ["m64"], to=TensorProto.INT64, name="cast"),
        helper.make_node("ReduceSum", ["m64"], ["n"], keepdims=0, name="count"),
        helper.make_node("Range", ["start", "n", "step"], ["r"], name="range"),
        helper.make_node("Reshape", ["n", "one_dim"], ["n1"], name="n1"),
        helper.make_node("Concat", ["one_dim", "n1"], ["shape"], axis=0, name="shape"),
        helper.make_node("Reshape", ["y", "shape"], ["y2"], name="row"),
    ]
    graph = helper.make_graph(
        nodes, "value_sized",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 20])],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         [("y2", TensorProto.FLOAT), ("idx", TensorProto.INT64), ("r", TensorProto.INT64)]],
        [numpy_helper.from_array(np.array(0, np.float32), "zero"), const("start", np.int64(0)),
         const("step", np.int64(1)), const("one_dim", np.array([1], np.int64))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    directory.mkdir(parents=True, exist_ok=True)
    onnx.save(model, directory / "model.onnx")
    session = ort.InferenceSession(str(directory / "model.onnx"), providers=["CPUExecutionProvider"])
    for k, x in enumerate(inputs):
        data = directory / f"test_data_set_{k}"
        data.mkdir()
        (data / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
        for j, (name, value) in enumerate(zip(["y2", "idx", "r"], session.run(None, {"x": x}))):
            (data / f"output_{j}.pb").write_bytes(numpy_helper.from_array(value, name).SerializeToString())


def test_value_sized_results_on_the_emulator(tmp_path):
    """Results sized by tensor values on the CUDA target: the counting and
    compaction loops run on one GPU thread, the host reads the count back
    to allocate, and a Reshape takes sizes computed in device memory. One
    library, two inputs with different counts (one with none), each
    matching onnxruntime. (x has more elements than mp compiles in, so its
    values stay run-time inputs.)"""
    _require_compiler()
    rng = np.random.RandomState(7)
    inputs = [rng.randn(4, 20).astype(np.float32), -np.abs(rng.randn(4, 20)).astype(np.float32)]
    model = tmp_path / "model"
    _value_sized_model(model, inputs)
    _compile(model, tmp_path / "cuda.so", "--target", "cuda", "--gpu", "compute_80",
             "--input-shape", "x=4x20")
    for k in range(len(inputs)):
        proc = _emulate(tmp_path / "cuda.so", model / f"test_data_set_{k}")
        verdicts = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
        assert proc.returncode == 0 and len(verdicts) == 3, proc.stdout + proc.stderr
        assert all(line.startswith("PASS") for line in verdicts), proc.stdout


EXPORTS = REPO / "test" / "Inputs" / "exports"


@pytest.mark.parametrize("name", ["topk_ts", "repeat_interleave_ts", "gru_ts", "script_loop_ts"])
def test_torch_exports_on_the_emulator(name, tmp_path):
    """Real torch exports whose lowering leaves serial code (TopK's sort,
    repeat_interleave's unrolled loop of sequence ops, a GRU's recurrence)
    build for the CUDA target and match onnxruntime on the PTX emulator."""
    _require_compiler()
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import numpy_helper

    session = ort.InferenceSession(str(EXPORTS / f"{name}.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.RandomState(0)
    data = tmp_path / "test_data_set_0"
    data.mkdir()
    feeds = {}
    for i, spec in enumerate(session.get_inputs()):
        shape = [d if isinstance(d, int) else 5 for d in spec.shape]
        value = rng.randint(1, 4, size=shape).astype(np.int64) if "int" in spec.type \
            else rng.randn(*shape).astype(np.float32)
        feeds[spec.name] = value
        (data / f"input_{i}.pb").write_bytes(numpy_helper.from_array(value, spec.name).SerializeToString())
    for j, (spec, value) in enumerate(zip(session.get_outputs(), session.run(None, feeds))):
        (data / f"output_{j}.pb").write_bytes(numpy_helper.from_array(value, spec.name).SerializeToString())
    proc = subprocess.run([str(MP_COMPILE), str(EXPORTS / f"{name}.onnx"), "-o", str(tmp_path / "lib.so"),
                           "--target", "cuda", "--gpu", "compute_80", "--shapes-from", str(data)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    proc = _emulate(tmp_path / "lib.so", data)
    verdicts = [line for line in proc.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert proc.returncode == 0 and len(verdicts) == len(session.get_outputs()), proc.stdout + proc.stderr
    assert all(line.startswith("PASS") for line in verdicts), proc.stdout
