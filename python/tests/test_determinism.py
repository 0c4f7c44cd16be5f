"""Determinism (issue 26): the same model and options give byte-identical
artifacts, and the same inputs give bit-identical outputs.

Compiler: two mp-opt and two mp-compile processes on the bundled TTS decoder
step, the conv_vocoder example and a small attention block, started at the
same time in two working folders with the same relative output names, write
byte-identical IR, plans, fusion reports, ``.so``, ``.h`` and ``.json``. The
outputs may embed their own file name (the header guard ``LIBTTS_MIXED_H``)
and the model's path; nothing else may leak into them: two processes get
different addresses (ASLR), so an order taken from a pointer-keyed hash map
differs between them, as do temporary paths, timestamps and thread
scheduling.

Runtime: a library (``mp.load``), the JIT (``mp.compile``) and ``mp-run
--output-dir`` give the same bits on the same inputs, also after runs on other
inputs and of other models in between: those leave their data in the buffer
pools (host and device) and arenas a later run reuses, so a kernel that reads
memory it did not write, or an output element left unwritten, shows up as a
difference. The CUDA library runs on the PTX emulator (no GPU needed).
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from conftest import BUILD, REPO, require_built

import mp

MP_OPT = BUILD / "bin" / "mp-opt"
MP_COMPILE = BUILD / "bin" / "mp-compile"
MP_RUN = BUILD / "bin" / "mp-run"
TTS = REPO / "examples" / "tts_decoder"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "python"), "MP_BUILD_DIR": str(BUILD)}


def _has_toolkit() -> bool:
    roots = [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + \
        ["/usr/local/cuda"]
    return bool(shutil.which("ptxas")) or any(r and (Path(r) / "bin" / "ptxas").is_file()
                                               for r in roots)


def _twice(root: Path, argv: list[str]) -> tuple[Path, Path, str, str]:
    """Runs `argv` twice at once, in ROOT/a and ROOT/b (relative output paths
    land there): concurrent runs also catch a fixed scratch path that one run
    would overwrite under the other. Returns both folders and stderrs."""
    dirs = [root / "a", root / "b"]
    procs = []
    for d in dirs:
        d.mkdir(parents=True)
        procs.append(subprocess.Popen([str(a) for a in argv], cwd=d, env=ENV, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    errs = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"{' '.join(map(str, argv))}:\n{out}\n{err}"
        errs.append(err)
    return dirs[0], dirs[1], errs[0], errs[1]


def _assert_same_bytes(a: Path, b: Path, what: str) -> None:
    x, y = a.read_bytes(), b.read_bytes()
    assert x, f"{a} is empty"
    if x == y:
        return
    at = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    detail = f"{what}: {a} and {b} differ from byte {at} ({len(x)} vs {len(y)} bytes)"
    try:
        diff = difflib.unified_diff(x.decode().splitlines(), y.decode().splitlines(),
                                    str(a), str(b), lineterm="", n=1)
        detail += "\n" + "\n".join(list(diff)[:40])
    except UnicodeDecodeError:
        pass
    pytest.fail(detail)


def _assert_bit_identical(got: dict, want: dict, where: str) -> None:
    """Same output names in the same order, dtypes, shapes and bits. NaN
    never equals itself, so a NaN would fail every comparison: name it."""
    assert list(got) == list(want), f"{where}: outputs {list(got)} != {list(want)}"
    for name, w in want.items():
        g = got[name]
        assert g.dtype == w.dtype and g.shape == w.shape, \
            f"{where}: {name} is {g.dtype}{g.shape}, was {w.dtype}{w.shape}"
        if w.dtype.kind == "f":
            assert np.isfinite(w).all(), f"{where}: {name} has non-finite values"
        assert np.array_equal(g, w), \
            f"{where}: {name} differs in {np.count_nonzero(g != w)} of {g.size} elements"


def _feeds(folder: Path, names: list[str]) -> dict[str, np.ndarray]:
    """The inputs of an ONNX test data set by name (unnamed ones in `names` order)."""
    files = sorted(folder.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    tensors = [onnx.load_tensor(str(f)) for f in files]
    return {t.name or names[i]: numpy_helper.to_array(t) for i, t in enumerate(tensors)}


def _other(feeds: dict[str, np.ndarray], seed: int, shapes: dict | None = None) -> dict:
    """Different values (and with `shapes`, different shapes) of the same dtypes."""
    rng = np.random.default_rng(seed)
    return {n: (0.5 * rng.standard_normal((shapes or {}).get(n, a.shape))).astype(a.dtype)
            for n, a in feeds.items()}


# --- The compiler -------------------------------------------------------------

def _attention_model(path: Path) -> Path:
    """One attention block (2 heads, torch.onnx's decomposed form, which
    mp-fuse-attention fuses) with dynamic batch and sequence: small enough
    to compile with --dynamic-shapes in a second or two."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(7)
    d, heads = 32, 2

    def weight(name):
        return numpy_helper.from_array(
            (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32), name)
    inits = [weight(f"w{n}") for n in "qkvo"] + [
        numpy_helper.from_array(np.array([0, 0, heads, d // heads], np.int64), "split"),
        numpy_helper.from_array(np.array([0, 0, d], np.int64), "merge"),
        numpy_helper.from_array(np.array((d // heads) ** -0.5, np.float32), "scale"),
        numpy_helper.from_array(np.ones(d, np.float32), "gamma"),
        numpy_helper.from_array(np.zeros(d, np.float32), "beta")]
    node = helper.make_node
    nodes = [n for x in "qkv" for n in (
        node("MatMul", ["x", f"w{x}"], [f"{x}0"]), node("Reshape", [f"{x}0", "split"], [f"{x}1"]),
        node("Transpose", [f"{x}1"], [x], perm=[0, 2, 1, 3]))]
    nodes += [node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
              node("MatMul", ["q", "kt"], ["s0"]), node("Mul", ["s0", "scale"], ["s"]),
              node("Softmax", ["s"], ["p"], axis=-1), node("MatMul", ["p", "v"], ["o0"]),
              node("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
              node("Reshape", ["o1", "merge"], ["o2"]), node("MatMul", ["o2", "wo"], ["o3"]),
              node("Add", ["o3", "x"], ["o4"]),
              node("LayerNormalization", ["o4", "gamma", "beta"], ["y"], axis=-1)]
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", "seq", d]) for n in "xy"]
    graph = helper.make_graph(nodes, "attention", io[:1], io[1:], inits)
    path.mkdir(parents=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(path / "model.onnx"))
    return path


@pytest.fixture(scope="module")
def models(conv_vocoder, tmp_path_factory):
    """Folders with model.onnx (and test_data_set_0, but for attention)."""
    return {"tts": TTS, "vocoder": conv_vocoder,
            "attention": _attention_model(tmp_path_factory.mktemp("models") / "attention")}


@pytest.mark.parametrize("model", ["tts", "vocoder"])
def test_mp_opt_mixed_precision_is_byte_identical(model, models, tmp_path):
    """mp-opt with attention fusion and the mixed-precision pipeline (as in
    docs/precision.md): IR (with locations), plan, fusion report and the
    precision report on stderr. Would catch decisions, casts or plan rows in
    the order of a pointer-keyed map, or a report that lists sets unordered."""
    require_built(MP_OPT)
    a, b, err_a, err_b = _twice(tmp_path, [
        MP_OPT, models[model] / "model.onnx", "--mp-fuse-attention=report=fuse.json",
        "--mp-mixed-precision=plan=plan.json report=1", "--mlir-print-debuginfo",
        "-o", "out.mlir"])
    for name in ("out.mlir", "plan.json", "fuse.json"):
        _assert_same_bytes(a / name, b / name, f"mp-opt {model}")
    assert err_a == err_b and "mp precision report" in err_a
    # Not vacuous: the plan decided something, and the IR carries it.
    plan = json.loads((a / "plan.json").read_text())
    assert plan["summary"]["nodes_f16"] > 0, plan["summary"]
    assert "mp.cast" in (a / "out.mlir").read_text()


# name: (model, mp-compile options, needs the CUDA toolkit)
COMPILES = {
    "tts-mixed": ("tts", ["--shapes-from", "{data}", "--precision", "mixed",
                          "--fuse-attention"], False),
    "vocoder-fp32": ("vocoder", ["--input-shape", "mel=1x80x16"], False),
    "attention-dynamic-mixed": ("attention", ["--dynamic-shapes", "--precision", "mixed",
                                              "--fuse-attention"], False),
    # Two cubins (ptxas per architecture) and the code that launches them.
    "tts-cuda-mixed": ("tts", ["--shapes-from", "{data}", "--target", "cuda", "--gpu",
                               "sm_80,sm_90", "--precision", "mixed", "--fuse-attention"], True),
    # PTX, for the emulator below.
    "vocoder-cuda-ptx": ("vocoder", ["--shapes-from", "{data}", "--target", "cuda", "--gpu",
                                     "compute_80", "--precision", "mixed"], True),
}


@pytest.fixture(scope="module")
def compiled(models, tmp_path_factory):
    """compiled(name) -> (library a, library b, [model, options...]):
    COMPILES[name] built twice at once, each as out/libNAME.so in its own
    folder; built on first use."""
    require_built(MP_COMPILE)
    done = {}

    def get(name):
        if name not in done:
            model, options, cuda = COMPILES[name]
            if cuda and not _has_toolkit():
                pytest.skip("no CUDA toolkit (ptxas, libdevice) on this machine")
            folder = models[model]
            options = [o.format(data=folder / "test_data_set_0") for o in options]
            lib = f"out/lib{name.replace('-', '_')}.so"
            # --no-cache: two real compiles (test_mp_compile_cache_hit_is_byte_identical
            # checks what the compile cache copies).
            a, b, _, _ = _twice(tmp_path_factory.mktemp(name),
                                [MP_COMPILE, folder / "model.onnx", "-o", lib, *options,
                                 "--no-cache"])
            done[name] = (a / lib, b / lib, [folder / "model.onnx", *options])
        return done[name]
    return get


@pytest.mark.parametrize("name", list(COMPILES))
def test_mp_compile_is_byte_identical(name, compiled):
    """The library, header and description of two compiles. Would catch
    object code that depends on hash-map or thread order (kernel outlining,
    arena offsets, GPU module merging), the scratch folder's name in the
    object or the link, and a timestamp or random build id."""
    a, b, _ = compiled(name)
    for suffix in (".so", ".h", ".json"):
        _assert_same_bytes(a.with_suffix(suffix), b.with_suffix(suffix), f"mp-compile {name}")
    desc = json.loads(a.with_suffix(".json").read_text())
    assert desc["target"] == ("cuda" if "cuda" in name else "cpu")
    assert desc["precision"] == ("fp32" if "fp32" in name else "mixed")


@pytest.mark.parametrize("name", ["tts-mixed", "tts-cuda-mixed"])
def test_mp_compile_cache_hit_is_byte_identical(name, compiled, tmp_path):
    """mp-compile's compile cache: a compile that stores the library, then one
    into another folder that copies it, give the bytes of a compile without
    the cache."""
    a, _, argv = compiled(name)
    env = {**ENV, "MP_CACHE_DIR": str(tmp_path / "cache")}
    errs = []
    for folder in ("store", "hit"):
        (tmp_path / folder).mkdir()
        p = subprocess.run([str(MP_COMPILE), *map(str, argv), "-o", f"out/{a.name}"],
                           cwd=tmp_path / folder, env=env, text=True, capture_output=True)
        assert p.returncode == 0, p.stderr
        errs.append(p.stderr)
    assert "loaded from the compile cache" not in errs[0] and "lowering" in errs[0], errs[0]
    assert "loaded from the compile cache" in errs[1] and "lowering" not in errs[1], errs[1]
    for folder in ("store", "hit"):
        for suffix in (".so", ".h", ".json"):
            _assert_same_bytes(a.with_suffix(suffix),
                               (tmp_path / folder / "out" / a.name).with_suffix(suffix),
                               f"mp-compile {name} through the compile cache")


# --- The runtime --------------------------------------------------------------

def _inputs(models) -> dict[str, tuple[dict, dict]]:
    """Per model: inputs A (the test data) and B (other values)."""
    tts = _feeds(TTS / "test_data_set_0", [])
    voc = _feeds(models["vocoder"] / "test_data_set_0", ["mel"])
    attention = _other({"x": np.zeros((2, 8, 32), np.float32)}, 1)
    return {"tts": (tts, _other(tts, 2)), "vocoder": (voc, _other(voc, 3)),
            # Another batch and sequence length: the outputs change size too.
            "attention": (attention, _other(attention, 4, {"x": (3, 5, 32)}))}


# The CPU libraries of COMPILES, with their models.
LIBRARIES = {"tts-mixed": "tts", "vocoder-fp32": "vocoder", "attention-dynamic-mixed": "attention"}


def test_library_outputs_are_bit_identical(compiled, models):
    """Every CPU library runs A, then each runs B, then A again (a second
    handle on the other copy of the library for the last): the two A runs
    are bit-identical. Would catch a kernel reading an arena or pool buffer
    that an earlier run of this or another library left data in (an
    accumulator not reset, a padded tail), and any run-to-run variation."""
    inputs = _inputs(models)
    cases = {name: inputs[model] for name, model in LIBRARIES.items()}
    libs = {name: mp.load(compiled(name)[0]) for name in cases}
    try:
        first = {name: libs[name].run(a) for name, (a, _) in cases.items()}
        second = {name: libs[name].run(b) for name, (_, b) in cases.items()}
        for name in cases:  # B really left other data behind
            assert not np.array_equal(*(r[next(iter(r))] for r in (first[name], second[name])))
        for name, (a, _) in cases.items():
            _assert_bit_identical(libs[name].run(a), first[name], f"{name}: A, B, A")
            with mp.load(compiled(name)[1]) as other:
                _assert_bit_identical(other.run(a), first[name], f"{name}: the other copy")
        for name, (_, b) in cases.items():
            _assert_bit_identical(libs[name].run(b), second[name], f"{name}: B again")
        assert second["attention-dynamic-mixed"]["y"].shape == (3, 5, 32)
    finally:
        for lib in libs.values():
            lib.close()


@pytest.mark.parametrize("name", ["tts-mixed", "vocoder-fp32"])
def test_library_writes_every_output_element(name, compiled, models):
    """Outputs into caller arrays prefilled with NaN and with zeros give the
    same bits: would catch an output element the library never writes
    (np.empty in Library.run would hide it as whatever memory held)."""
    a, _ = _inputs(models)[LIBRARIES[name]]
    with mp.load(compiled(name)[0]) as lib:
        outs = [lib.run(a, out={n: np.full(s, fill, d) for n, d, s in lib.outputs})
                for fill in (np.nan, 0)]
    _assert_bit_identical(outs[1], outs[0], f"{name}: prefilled NaN vs 0")


def test_jit_outputs_are_bit_identical(models):
    """The JIT (mp.compile) of two models, interleaved: A, B, A. Its buffers
    come from the runtime's process-wide pool, so B's and the other model's
    data sit in what the second A reuses. The attention model has dynamic
    shapes, so its B (another shape) runs the same variant too."""
    require_built(mp.library_path())
    inputs = _inputs(models)
    jits = {"tts": mp.compile(TTS / "model.onnx"),
            "attention": mp.compile(models["attention"] / "model.onnx", precision="mixed",
                                    fuse_attention=True, dynamic_shapes=True)}
    try:
        first = {n: m.run(inputs[n][0]) for n, m in jits.items()}
        for n, m in jits.items():
            out = m.run(inputs[n][1])
            assert not np.array_equal(out[next(iter(out))], first[n][next(iter(out))])
        for n, m in jits.items():
            _assert_bit_identical(m.run(inputs[n][0]), first[n], f"JIT {n}: A, B, A")
            assert m.num_variants == 1  # B ran the same code on the same pool
    finally:
        for m in jits.values():
            m.close()


def _input_args(folder: Path) -> list:
    """mp-run --input NAME=FILE for every input_N.pb of a test data set (not
    --compare: an accuracy miss is not this file's business)."""
    return [a for f in sorted(folder.glob("input_*.pb"))
            for a in ("--input", f"{onnx.load_tensor(str(f)).name}={f}")]


def test_mp_run_output_dir_is_byte_identical(compiled, models, tmp_path):
    """mp-run --output-dir, twice at once: on a compiled library and on an
    ONNX model (the JIT, mixed precision). The library's .npy files also
    equal what mp.load gives on the same inputs (the same code on the same
    bits): would catch mp-run feeding inputs differently."""
    require_built(MP_RUN)
    lib = compiled("tts-mixed")[0]
    voc = models["vocoder"]
    for what, argv in (("library", [MP_RUN, lib, *_input_args(TTS / "test_data_set_0")]),
                       ("jit", [MP_RUN, voc / "model.onnx", "--precision", "mixed",
                                *_input_args(voc / "test_data_set_0")])):
        a, b, _, _ = _twice(tmp_path / what, [*argv, "--output-dir", "out"])
        names = sorted(p.name for p in (a / "out").glob("*.npy"))
        assert names and names == sorted(p.name for p in (b / "out").glob("*.npy"))
        for n in names:  # would catch a run-to-run or process-to-process difference
            _assert_same_bytes(a / "out" / n, b / "out" / n, f"mp-run {what}")
        if what == "library":
            with mp.load(lib) as loaded:
                want = loaded.run(_feeds(TTS / "test_data_set_0", []))
            assert sorted(f"{n}.npy" for n in want) == names
            _assert_bit_identical({n: np.load(a / "out" / f"{n}.npy") for n in want}, want,
                                  "mp-run vs mp.load")


EMULATED = """
import sys
import numpy as np
from mp.emu import Emulator
Emulator.install()
import mp
a = dict(np.load(sys.argv[2]))
b = {n: (0.5 * np.random.default_rng(6).standard_normal(x.shape)).astype(x.dtype)
     for n, x in a.items()}
with mp.load(sys.argv[1]) as lib:
    runs = [lib.run(x) for x in (a, b, a)]
np.savez(sys.argv[3], **{f"{i}/{n}": x for i, r in enumerate(runs) for n, x in r.items()})
"""


def test_cuda_library_outputs_are_bit_identical_on_the_emulator(compiled, models, tmp_path):
    """The CUDA library (PTX) on the emulator: A, B, A through the device
    buffer pool. Would catch a kernel reading a device buffer it did not
    write (B's data would show), or launch order varying between runs."""
    if not (shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")):
        pytest.skip("no C compiler for the emulated driver")
    lib = compiled("vocoder-cuda-ptx")[0]
    np.savez(tmp_path / "a.npz", **_feeds(models["vocoder"] / "test_data_set_0", ["mel"]))
    proc = subprocess.run([sys.executable, "-c", EMULATED, lib, tmp_path / "a.npz",
                           tmp_path / "runs.npz"], env=ENV, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with np.load(tmp_path / "runs.npz") as f:
        runs = [{k.split("/", 1)[1]: f[k] for k in f.files if k.startswith(f"{i}/")}
                for i in range(3)]
    assert runs[0] and not np.array_equal(runs[1]["audio"], runs[0]["audio"])
    _assert_bit_identical(runs[2], runs[0], "CUDA on the emulator: A, B, A")
