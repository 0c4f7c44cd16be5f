"""KV caches in fixed-capacity buffers updated in place (mp-compile
--max-seq-len, issue: fuse KV-cached attention).

The bundled TTS decoder step joins its past K/V with Concat. Compiled with
--fuse-attention --max-seq-len 16, each cache is one 16-position buffer, the
new input ``past_sequence_length`` says how many positions are filled, and a
step writes only its own position. A decode loop through the runtime
(``mp.load``) must give what onnxruntime gives on the original model fed the
growing Concat-ed caches, step by step, and in fp32 leave the same cache
contents.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import BUILD, ONNX24_STEP, compiled_library, onnx24_step_feeds

import mp

REPO = Path(__file__).resolve().parents[2]
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
MP_COMPILE = BUILD / "bin" / "mp-compile"
MODEL = REPO / "examples" / "tts_decoder" / "model.onnx"
CAPACITY = 16
BATCH, HEADS, HEAD_DIM, ENC_LEN = 2, 4, 32, 10
CACHES = [f"{kind}_{layer}" for layer in range(2) for kind in ("key", "value")]


def _pins(past: int = 0) -> list[str]:
    pins = [f"mel_frame={BATCH}x1x80", f"encoder_out={BATCH}x{ENC_LEN}x128"]
    pins += [f"past_{c}={BATCH}x{HEADS}x{past}x{HEAD_DIM}" for c in CACHES]
    return [a for p in pins for a in ("--input-shape", p)]


def _compile(out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(MP_COMPILE), str(MODEL), "-o", str(out), *_pins(), *args],
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def libs():
    """The step with in-place caches, fp32 and mixed, from the run's cache
    (test_ptx_emulator.py's references: the same arguments in the same order)."""
    if not MP_COMPILE.is_file() or not mp.library_path().is_file():
        pytest.skip(f"mp-compile or libMPCAPI.so is not built ({BUILD})")
    return {precision: compiled_library(MODEL, *_pins(), "--fuse-attention", "--max-seq-len",
                                        str(CAPACITY), "--precision", precision, name="libdec.so")
            for precision in ("fp32", "mixed")}


def _reference_steps(steps: int, seed: int = 0):
    """Inputs of each decode step and onnxruntime's outputs on the original
    model, which takes the caches grown so far."""
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    rng = np.random.default_rng(seed)
    enc = rng.standard_normal((BATCH, ENC_LEN, 128)).astype(np.float32)
    past = {f"past_{c}": np.zeros((BATCH, HEADS, 0, HEAD_DIM), np.float32) for c in CACHES}
    for _ in range(steps):
        mel = rng.standard_normal((BATCH, 1, 80)).astype(np.float32)
        ref = dict(zip(names, sess.run(None, {"mel_frame": mel, "encoder_out": enc, **past})))
        yield mel, enc, ref
        past = {f"past_{c}": ref[f"present_{c}"] for c in CACHES}


def test_signature_describes_in_place_caches(libs):
    desc = json.loads(libs["fp32"].with_suffix(".json").read_text())
    assert desc["kv_cache"] == {"length_input": "past_sequence_length",
                                "capacity": CAPACITY, "new_positions": 1}
    inputs = {t["name"]: t for t in desc["inputs"]}
    assert inputs["past_key_0"]["shape"] == [BATCH, HEADS, CAPACITY, HEAD_DIM]
    assert inputs["past_sequence_length"]["shape"] == []
    assert inputs["past_sequence_length"]["dtype"] == "int64"
    outputs = {t["name"]: t for t in desc["outputs"]}
    for c in CACHES:
        assert outputs[f"present_{c}"]["in_place_of"] == f"past_{c}"
    assert "in_place_of" not in outputs["mel_out"]


def test_decode_loop_matches_onnxruntime_in_place(libs):
    """The caches are passed as their own outputs: no copy, and after step t
    positions 0..t hold what onnxruntime's Concat-ed present holds."""
    with mp.load(libs["fp32"]) as lib:
        caches = {c: np.zeros((BATCH, HEADS, CAPACITY, HEAD_DIM), np.float32) for c in CACHES}
        for t, (mel, enc, ref) in enumerate(_reference_steps(8)):
            inputs = {"mel_frame": mel, "encoder_out": enc,
                      "past_sequence_length": np.array(t, np.int64),
                      **{f"past_{c}": caches[c] for c in CACHES}}
            outs = lib.run(inputs, out={f"present_{c}": caches[c] for c in CACHES})
            for name in ("mel_out", "stop_logit"):
                np.testing.assert_allclose(outs[name], ref[name], rtol=1e-4, atol=1e-5,
                                           err_msg=f"{name} at step {t}")
            for c in CACHES:
                assert outs[f"present_{c}"] is caches[c]
                np.testing.assert_allclose(caches[c][:, :, :t + 1], ref[f"present_{c}"],
                                           rtol=1e-5, atol=1e-6, err_msg=f"{c} at step {t}")


def test_separate_output_buffers_leave_the_inputs_alone(libs):
    """With distinct output arrays the library copies the cache first: same
    results, and the caller's input caches are not written."""
    steps = list(_reference_steps(3, seed=1))
    with mp.load(libs["fp32"]) as lib:
        caches = {c: np.zeros((BATCH, HEADS, CAPACITY, HEAD_DIM), np.float32) for c in CACHES}
        for t, (mel, enc, ref) in enumerate(steps):
            given = {c: caches[c].copy() for c in CACHES}
            outs = lib.run({"mel_frame": mel, "encoder_out": enc,
                            "past_sequence_length": np.array(t, np.int64),
                            **{f"past_{c}": given[c] for c in CACHES}})
            for c in CACHES:
                np.testing.assert_array_equal(given[c], caches[c])
                caches[c] = outs[f"present_{c}"]
            np.testing.assert_allclose(outs["mel_out"], ref["mel_out"], rtol=1e-4, atol=1e-5)


def test_decode_loop_on_device_buffers(libs):
    """The same loop on DeviceArrays (run_device): the caches stay in the
    library's memory (host memory for a CPU library) and are updated in
    place; each step's inputs may be host arrays, uploaded by run_device."""
    with mp.load(libs["fp32"]) as lib:
        assert lib.host_inputs == set()
        caches = {c: lib.to_device(np.zeros((BATCH, HEADS, CAPACITY, HEAD_DIM), np.float32))
                  for c in CACHES}
        for t, (mel, enc, ref) in enumerate(_reference_steps(6)):
            outs = lib.run_device({"mel_frame": mel, "encoder_out": lib.to_device(enc),
                                   "past_sequence_length": np.array(t, np.int64),
                                   **{f"past_{c}": caches[c] for c in CACHES}},
                                  out={f"present_{c}": caches[c] for c in CACHES})
            assert all(outs[f"present_{c}"] is caches[c] for c in CACHES)
            for name in ("mel_out", "stop_logit"):
                np.testing.assert_allclose(outs[name].numpy(), ref[name], rtol=1e-4, atol=1e-5,
                                           err_msg=f"{name} at step {t}")
        for c in CACHES:
            np.testing.assert_allclose(caches[c].numpy()[:, :, :t + 1], ref[f"present_{c}"],
                                       rtol=1e-5, atol=1e-6)
        # Distinct outputs: the input caches are left alone.
        before = caches["key_0"].numpy()
        outs = lib.run_device({"mel_frame": mel, "encoder_out": enc,
                               "past_sequence_length": np.array(t + 1, np.int64),
                               **{f"past_{c}": caches[c] for c in CACHES}})
        np.testing.assert_array_equal(caches["key_0"].numpy(), before)
        assert not np.array_equal(outs["present_key_0"].numpy(), before)


def test_device_buffer_errors(libs):
    """Wrong dtypes or shapes, host arrays as outputs, arrays of another
    library and use after close are errors that say what is wrong."""
    lib = mp.load(libs["fp32"])
    other = mp.load(libs["fp32"])
    feeds = {name: np.zeros(shape, dtype) for name, dtype, shape in lib.inputs}
    with pytest.raises(mp.Error, match=r"input 'past_key_0' is float16\[2, 4, 16, 32\], the "
                                       r"library was compiled for float32\[2, 4, 16, 32\]"):
        lib.run_device({**feeds, "past_key_0": lib.to_device(feeds["past_key_0"].astype(np.float16))})
    with pytest.raises(mp.Error, match="output 'mel_out' must be given as a DeviceArray"):
        lib.run_device(feeds, out={"mel_out": np.zeros((BATCH, 1, 80), np.float32)})
    shared = lib.empty_device((BATCH, HEADS, CAPACITY, HEAD_DIM), np.float32)
    with pytest.raises(mp.Error, match="outputs 'present_key_0' and 'present_value_0' are the "
                                       "same DeviceArray"):
        lib.run_device(feeds, out={"present_key_0": shared, "present_value_0": shared})
    with pytest.raises(mp.Error, match="is a DeviceArray of another library"):
        lib.run_device({**feeds, "mel_frame": other.to_device(feeds["mel_frame"])})
    with pytest.raises(mp.Error, match=r"cannot copy float32\[3\] into a DeviceArray of float32\[2\]"):
        lib.empty_device((2,), np.float32).copy_from(np.zeros(3, np.float32))
    kept = lib.to_device(np.ones(4, np.float32))
    lib.close()
    with pytest.raises(mp.Error, match="is closed"):
        kept.numpy()
    other.close()


def test_mixed_precision_keeps_f16_caches(libs):
    """Mixed precision stores the caches in the attention's f16 (halving
    their memory); a decode loop stays close to onnxruntime's fp32."""
    with mp.load(libs["mixed"]) as lib:
        dtypes = {name: dtype for name, dtype, _ in lib.inputs}
        assert dtypes["past_key_0"] == np.float16
        caches = {c: np.zeros((BATCH, HEADS, CAPACITY, HEAD_DIM), np.float16) for c in CACHES}
        worst = 0.0
        for t, (mel, enc, ref) in enumerate(_reference_steps(8)):
            outs = lib.run({"mel_frame": mel, "encoder_out": enc,
                            "past_sequence_length": np.array(t, np.int64),
                            **{f"past_{c}": caches[c] for c in CACHES}},
                           out={f"present_{c}": caches[c] for c in CACHES})
            err = np.abs(outs["mel_out"] - ref["mel_out"]).max() / np.abs(ref["mel_out"]).max()
            worst = max(worst, float(err))
            np.testing.assert_allclose(caches["key_0"][:, :, :t + 1].astype(np.float32),
                                       ref["present_key_0"], rtol=1e-2, atol=1e-2)
        assert worst < 1e-2, worst


def test_overfull_cache_is_refused(libs):
    """A fill level that leaves no room for the step's position is an error
    naming the input and the capacity, before anything runs."""
    with mp.load(libs["fp32"]) as lib:
        inputs = {name: np.zeros(shape, dtype) for name, dtype, shape in lib.inputs}
        for bad in (CAPACITY, -1):
            inputs["past_sequence_length"] = np.array(bad, np.int64)
            with pytest.raises(mp.Error) as err:
                lib.run(inputs)
            assert "input 'past_sequence_length' is %d" % bad in str(err.value)
            assert f"holds 0 to {CAPACITY} (mp-compile --max-seq-len)" in str(err.value)


def test_unfused_attention_is_an_error(tmp_path):
    """Without --fuse-attention the caches feed Concat, not mp.attention:
    mp-compile says so instead of compiling a step that copies them."""
    if not MP_COMPILE.is_file():
        pytest.skip("mp-compile is not built")
    proc = _compile(tmp_path / "lib.so", "--max-seq-len", "16")
    assert proc.returncode != 0
    assert "no mp.attention reads a KV cache" in proc.stderr
    assert "mp-fuse-attention" in proc.stderr


def _has_ptxas() -> bool:
    roots = [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    return bool(shutil.which("ptxas")) or any(r and (Path(r) / "bin" / "ptxas").is_file() for r in roots)


@pytest.fixture(scope="module")
def cuda_lib(tmp_path_factory):
    """The mixed-precision step for --target cuda, 64 positions."""
    if not MP_COMPILE.is_file():
        pytest.skip("mp-compile is not built")
    if not _has_ptxas():
        pytest.skip("no CUDA toolkit (ptxas) on this machine")
    lib = tmp_path_factory.mktemp("kv_cuda") / "libdec.so"
    proc = _compile(lib, "--fuse-attention", "--max-seq-len", "64", "--precision", "mixed",
                    "--target", "cuda", "--gpu", "sm_80")
    assert proc.returncode == 0, proc.stderr
    return lib


def test_cuda_library_builds_with_in_place_caches(cuda_lib):
    """The CUDA target compiles the same step (ptxas on every kernel); its
    JSON has the same in-place outputs. Running it needs a GPU."""
    desc = json.loads(cuda_lib.with_suffix(".json").read_text())
    assert desc["kv_cache"]["capacity"] == 64
    assert {t.get("in_place_of") for t in desc["outputs"]} >= {f"past_{c}" for c in CACHES}


DEVICE_LOOP = """
import sys
import numpy as np
import mp
lib = mp.load(sys.argv[1])
print("host inputs:", sorted(lib.host_inputs), flush=True)
specs = {name: (dtype, shape) for name, dtype, shape in lib.inputs}
dev = {name: lib.to_device(np.zeros(shape, dtype)) for name, (dtype, shape) in specs.items()
       if name not in lib.host_inputs}
caches = {name: a for name, a in dev.items() if name.startswith("past_")}
out = {name.replace("past_", "present_"): a for name, a in caches.items()}
for t in range(3):
    print("step", t, flush=True)
    outs = lib.run_device({**dev, "past_sequence_length": np.array(t, np.int64)}, out=out)
    assert all(outs[n] is a for n, a in out.items())
print("distinct outputs", flush=True)
lib.run_device({**dev, "past_sequence_length": np.array(3, np.int64)})
print("download", flush=True)
outs["mel_out"].numpy()
print("done", flush=True)
"""


def test_cuda_decode_loop_on_device_buffers_copies_nothing(cuda_lib, tmp_path):
    """A decode loop on DeviceArrays through the generated CUDA wrapper, on
    the fake driver (test/Runtime/Inputs/fake_cuda.c; its kernels do
    nothing, so this checks the data movement, not values): the steps copy
    nothing between host and device, the fill level is read from host
    memory, distinct output caches are copied on the device (one copy per
    cache), and only the download crosses back."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        pytest.skip("no C compiler for the fake driver")
    fake = tmp_path / "fake_cuda.so"
    subprocess.run([cc, "-shared", "-fPIC", str(REPO / "test/Runtime/Inputs/fake_cuda.c"),
                    "-o", str(fake)], check=True)
    script = tmp_path / "loop.py"
    script.write_text(DEVICE_LOOP)
    env = {**os.environ, "MP_CUDA_DRIVER": str(fake), "FAKE_CUDA_ANY_KERNEL": "1",
           "FAKE_CUDA_TRACE_COPIES": "1", "PYTHONPATH": str(REPO / "python")}
    proc = subprocess.run([sys.executable, str(script), str(cuda_lib)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    lines = proc.stdout.splitlines()
    assert "host inputs: ['past_sequence_length']" in lines
    sections, current = {}, None
    for line in lines:
        if line.startswith(("step", "distinct", "download", "done")):
            current = line
            sections[current] = []
        elif current and line.startswith("fake: copy"):
            sections[current].append(line)
    # Step 0 uploads the weights; later steps copy nothing at all.
    assert all(not c.startswith("fake: copy DtoH") for c in sections["step 0"])
    assert sections["step 1"] == [] and sections["step 2"] == [], sections
    cache_bytes = BATCH * HEADS * 64 * HEAD_DIM * 2
    assert sections["distinct outputs"] == [f"fake: copy DtoD {cache_bytes} bytes"] * len(CACHES)
    assert sections["download"] == [f"fake: copy DtoH {BATCH * 80 * 4} bytes"]


@pytest.mark.parametrize("precision", ["fp32", "mixed"])
def test_jit_decode_loop_compiles_once(precision):
    """mp.compile(fuse_attention=True, max_seq_len=16): the same in-place
    decode loop in the JIT, one compiled variant for every step, outputs as
    onnxruntime's (fp32 to 1e-4; mixed within 1e-2 of the output's range)."""
    if not mp.library_path().is_file():
        pytest.skip("libMPCAPI.so is not built")
    m = mp.compile(MODEL, precision, fuse_attention=True, max_seq_len=CAPACITY)
    specs = {t.name: t for t in m.inputs}
    assert specs["past_sequence_length"].dtype == np.int64 and specs["past_sequence_length"].shape == ()
    cache_dtype = np.float16 if precision == "mixed" else np.float32
    assert specs["past_key_0"].dtype == cache_dtype
    caches = {c: np.zeros((BATCH, HEADS, CAPACITY, HEAD_DIM), cache_dtype) for c in CACHES}
    for t, (mel, enc, ref) in enumerate(_reference_steps(6)):
        outs = m.run({"mel_frame": mel, "encoder_out": enc,
                      "past_sequence_length": np.array(t, np.int64),
                      **{f"past_{c}": caches[c] for c in CACHES}})
        scale = np.abs(ref["mel_out"]).max()
        if precision == "fp32":
            np.testing.assert_allclose(outs["mel_out"], ref["mel_out"], rtol=1e-4, atol=1e-5)
        else:
            assert np.abs(outs["mel_out"] - ref["mel_out"]).max() < 1e-2 * scale
        caches = {c: outs[f"present_{c}"] for c in CACHES}
    assert m.num_variants == 1


def test_jit_errors():
    """max_seq_len without fusion, and caches not of the capacity, are
    errors that say what to do."""
    if not mp.library_path().is_file():
        pytest.skip("libMPCAPI.so is not built")
    with pytest.raises(mp.Error, match="enable attention fusion too"):
        mp.compile(MODEL, max_seq_len=CAPACITY)
    m = mp.compile(MODEL, fuse_attention=True, max_seq_len=CAPACITY)
    feeds = {"mel_frame": np.zeros((BATCH, 1, 80), np.float32),
             "encoder_out": np.zeros((BATCH, ENC_LEN, 128), np.float32),
             "past_sequence_length": np.array(0, np.int64),
             **{f"past_{c}": np.zeros((BATCH, HEADS, 3, HEAD_DIM), np.float32) for c in CACHES}}
    with pytest.raises(mp.Error, match=r"input .past_key_0. is f32\[2, 4, 3, 32\], the compiled "
                                       r"step takes f32\[2, 4, 16, 32\] \(KV caches hold max_seq_len"):
        m.run(feeds)


def test_onnx24_tensor_scatter_caches_update_in_place(tmp_path):
    """ONNX-24's own in-place form (TensorScatter into a fixed cache, then
    Attention with nonpad_kv_seqlen) needs no option: the library writes
    only each batch's new row into the cache buffer the caller passes as
    input and output, and a 5-step loop (the two sequences at different
    fill levels) matches onnxruntime's; the JIT compiles it once."""
    if not MP_COMPILE.is_file() or not mp.library_path().is_file():
        pytest.skip("mp-compile or libMPCAPI.so is not built")
    ort = pytest.importorskip("onnxruntime")
    from onnx import parser
    model = tmp_path / "step.onnx"
    model.write_bytes(parser.parse_model(ONNX24_STEP).SerializeToString())
    lib_path = tmp_path / "libstep.so"
    proc = subprocess.run([str(MP_COMPILE), str(model), "-o", str(lib_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    desc = json.loads(lib_path.with_suffix(".json").read_text())
    assert {t["name"]: t.get("in_place_of") for t in desc["outputs"]} == {
        "y": None, "key_cache_out": "key_cache", "value_cache_out": "value_cache"}
    so = ort.SessionOptions()
    so.log_severity_level = 3  # its "in-place optimization not activated" warning
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    jit = mp.compile(model)
    rng = np.random.default_rng(2)
    zeros = lambda: np.zeros((2, 2, 16, 8), np.float32)  # noqa: E731
    ours, theirs, jit_caches = [zeros(), zeros()], [zeros(), zeros()], [zeros(), zeros()]
    with mp.load(lib_path) as lib:
        for t in range(5):
            step = onnx24_step_feeds(rng, t)
            y_ref, k_ref, v_ref = sess.run(None, {**step, "key_cache": theirs[0],
                                                  "value_cache": theirs[1]})
            outs = lib.run({**step, "key_cache": ours[0], "value_cache": ours[1]},
                           out={"key_cache_out": ours[0], "value_cache_out": ours[1]})
            got = jit.run({**step, "key_cache": jit_caches[0], "value_cache": jit_caches[1]})
            for y in (outs["y"], got["y"]):
                np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-6, err_msg=f"step {t}")
            for cache, ref in ((ours[0], k_ref), (ours[1], v_ref),
                               (got["key_cache_out"], k_ref), (got["value_cache_out"], v_ref)):
                np.testing.assert_array_equal(cache, ref)
            theirs = [k_ref, v_ref]
            jit_caches = [got["key_cache_out"], got["value_cache_out"]]
    assert jit.num_variants == 1
