"""Bad run-time data never reads or writes outside a buffer (issue 26).

Lengths and positions read from data at run time, beyond the indices of
test_index_checks.py: com.microsoft GroupQueryAttention's ``seqlens_k``
(and the rotary positions it implies) and ``total_sequence_length``, the
fill level ``past_sequence_length`` of KV caches updated in place
(``--fuse-attention --max-seq-len``), ONNX TensorScatter's write indices
and Attention's ``nonpad_kv_seqlen``. A value out of range stops the run
with a message naming the node, the op and the range (onnxruntime's
ranges): in the JIT (``mp.compile``, ``mp-run``) and in an ``mp-compile``
CPU library, which returns it as the run's error (``mp.Error``, ``mp-run``
exit status 2) and runs the next, good inputs. Before these checks a
seqlens_k past the rotary caches segfaulted, and the other bad values gave
garbage or NaN.

"Never a read or write outside a buffer" is checked with valgrind's
memcheck on ``mp-run libX.so`` (AddressSanitizer does not see the accesses
of MLIR-generated code, which it does not instrument): the bad inputs and
the good inputs at the edge of each range, 0 invalid reads or writes. The
libraries are built with ``--cpu x86-64-v3``, since valgrind does not
decode AVX-512; the JIT always compiles for the host CPU (and LLVM itself
would take minutes under valgrind), so only the library path runs there.
A control run shows the same flags catching the generated code reading
past an input buffer. mp-run loads LLVM under valgrind (about 4 s a run,
2 to 3 minutes in all), so these are marked slow.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import BUILD, require_built

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper, parser  # noqa: E402

import mp  # noqa: E402

MP_RUN = BUILD / "bin" / "mp-run"
MP_COMPILE = BUILD / "bin" / "mp-compile"
F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
# valgrind does not decode AVX-512: on x86 the libraries target AVX2.
CPU_ARGS = ["--cpu", "x86-64-v3"] if platform.machine() in ("x86_64", "AMD64") else []


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _gqa(B, S, P, total, seqlens, rotary=False, symbolic=False):
    """GroupQueryAttention (4 query heads, 2 KV heads) over a past cache of
    P positions: the model and its feeds. With `rotary` the head is 16 wide
    and the cos/sin caches have 64 rows; `symbolic` names the batch,
    sequence and cache lengths (so total_sequence_length stays an input)."""
    H = 16 if rotary else 8
    rng = np.random.default_rng(5)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    b, s, p = ("b", "s", "p") if symbolic else (B, S, P)
    feeds = {"q": f(B, S, 4 * H), "k": f(B, S, 2 * H), "v": f(B, S, 2 * H),
             "pk": f(B, 2, P, H), "pv": f(B, 2, P, H),
             "seqlens_k": np.array(seqlens, np.int32), "total": np.array(total, np.int32)}
    inputs = [_vi("q", F, [b, s, 4 * H]), _vi("k", F, [b, s, 2 * H]), _vi("v", F, [b, s, 2 * H]),
              _vi("pk", F, [b, 2, p, H]), _vi("pv", F, [b, 2, p, H]),
              _vi("seqlens_k", I32, [b]), _vi("total", I32, [])]
    names = ["q", "k", "v", "pk", "pv", "seqlens_k", "total"]
    attrs = {}
    if rotary:
        angles = np.arange(64)[:, None] / (100.0 ** (np.arange(H // 2)[None] / (H // 2)))
        feeds["cos"] = np.cos(angles).astype(np.float32)
        feeds["sin"] = np.sin(angles).astype(np.float32)
        inputs += [_vi("cos", F, [64, H // 2]), _vi("sin", F, [64, H // 2])]
        names += ["cos", "sin"]
        attrs["do_rotary"] = 1
    node = helper.make_node("GroupQueryAttention", names, ["out", "present_key", "present_value"],
                            domain="com.microsoft", name="gqa", num_heads=4, kv_num_heads=2,
                            **attrs)
    graph = helper.make_graph([node], "gqa", inputs,
                              [_vi(n, F, None) for n in ("out", "present_key", "present_value")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid("com.microsoft", 1)])
    return model, feeds


TENSOR_SCATTER = """
<ir_version: 10, opset_import: ["" : 24]>
scatter (float[{b}, 2, {s}, 8] update, float[{b}, 2, {n}, 8] cache, int64[{b}] write_indices)
  => (float[{b}, 2, {n}, 8] out)
{{
  out = TensorScatter <axis: int = -2, mode: string = "{mode}"> (cache, update, write_indices)
}}
"""


def _tensor_scatter(mode, symbolic=False):
    dims = dict(b='"b"', s='"s"', n='"n"') if symbolic else dict(b=2, s=3, n=16)
    model = parser.parse_model(TENSOR_SCATTER.format(mode=mode, **dims))
    model.graph.node[0].name = "scatter"
    rng = np.random.default_rng(6)
    feeds = {"update": rng.standard_normal((2, 2, 3, 8)).astype(np.float32),
             "cache": rng.standard_normal((2, 2, 16, 8)).astype(np.float32)}
    return model, feeds


ATTENTION = """
<ir_version: 10, opset_import: ["" : 24]>
step (float[2, 4, 1, 8] q, float[2, 2, 16, 8] k, float[2, 2, 16, 8] v, int64[2] kv_len)
  => (float[2, 4, 1, 8] y)
{
  y = Attention(q, k, v, , , , kv_len)
}
"""


def _attention():
    model = parser.parse_model(ATTENTION)
    model.graph.node[0].name = "attn"
    rng = np.random.default_rng(7)
    feeds = {"q": rng.standard_normal((2, 4, 1, 8)).astype(np.float32),
             "k": rng.standard_normal((2, 2, 16, 8)).astype(np.float32),
             "v": rng.standard_normal((2, 2, 16, 8)).astype(np.float32)}
    return model, feeds


CAPACITY = 16


def _kv_step():
    """A decoder step whose attention joins past and new K/V with Concat
    (mp-fuse-attention makes it one mp.attention with caches, which
    --max-seq-len keeps in CAPACITY-position buffers at a fill level)."""
    nodes = [helper.make_node("Concat", ["past_key", "k"], ["present_key"], axis=2),
             helper.make_node("Concat", ["past_value", "v"], ["present_value"], axis=2),
             helper.make_node("Transpose", ["present_key"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["s2"]),
             helper.make_node("Softmax", ["s2"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "present_value"], ["y"])]
    graph = helper.make_graph(
        nodes, "kv",
        [_vi(n, F, [1, 2, 1, 8]) for n in ("q", "k", "v")]
        + [_vi(n, F, [1, 2, "past", 8]) for n in ("past_key", "past_value")],
        [_vi("y", F, [1, 2, 1, 8]), _vi("present_key", F, [1, 2, None, 8]),
         _vi("present_value", F, [1, 2, None, 8])],
        [helper.make_tensor("scale", F, [], [8 ** -0.5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    rng = np.random.default_rng(8)
    feeds = {n: rng.standard_normal((1, 2, 1, 8)).astype(np.float32) for n in ("q", "k", "v")}
    feeds.update({n: np.zeros((1, 2, CAPACITY, 8), np.float32)
                  for n in ("past_key", "past_value")})
    return model, feeds


def _with(feeds, **values):
    """`feeds` with integer inputs replaced (same dtype)."""
    out = dict(feeds)
    for name, value in values.items():
        out[name] = np.array(value, feeds[name].dtype if name in feeds else np.int64)
    return out


def _case(name):
    """The model, options, good feeds (at the edge of the range), bad feeds
    (each out of range) and the message of a case. `dynamic`: compiled with
    dynamic shapes; `reference`: onnxruntime runs the model (the KV step's
    in-place form has no onnxruntime equivalent)."""
    c = dict(dynamic=False, reference=True, jit={}, compile_args=[], shapes_from=False)
    if name.startswith("gqa_"):
        c["shapes_from"] = True  # total_sequence_length is compiled in
    if name == "gqa_seqlens_past_the_cache":
        model, feeds = _gqa(B=1, S=1, P=6, total=7, seqlens=[6])
        c.update(good=feeds, bad=[_with(feeds, seqlens_k=[7]), _with(feeds, seqlens_k=[-3])],
                 message="GroupQueryAttention (node 'gqa'): seqlens_k is out of range [0, 7): "
                         "seqlens_k[b] is batch b's last valid position in the present KV "
                         "cache of 7 positions")
    elif name == "gqa_seqlens_before_the_new_tokens":
        # Three new tokens after a past cache end at seqlens_k >= 2.
        model, feeds = _gqa(B=1, S=3, P=4, total=7, seqlens=[2])
        c.update(good=feeds, bad=[_with(feeds, seqlens_k=[1])],
                 message="GroupQueryAttention (node 'gqa'): seqlens_k is out of range [2, 7) "
                         "after a past cache: seqlens_k[b] + 1 counts batch b's past and 3 "
                         "new positions")
    elif name == "gqa_rotary_position":
        # seqlens_k fits the 81-position cache, but the token's position
        # does not fit the 64 rows of cos and sin (a segfault before).
        # onnxruntime refuses any total_sequence_length above the rows
        # (mp checks the positions used), so there is no reference here.
        model, feeds = _gqa(B=1, S=1, P=80, total=81, seqlens=[63], rotary=True)
        c.update(reference=False, good=feeds,
                 bad=[_with(feeds, seqlens_k=[70]), _with(feeds, seqlens_k=[64])],
                 message="GroupQueryAttention (node 'gqa'): a rotary position (the past length "
                         "from seqlens_k plus the token's index) is out of range [0, 64): the "
                         "cos and sin caches have 64 rows")
    elif name == "gqa_total_sequence_length":
        # Read at run time with dynamic shapes; below 0 it would size the
        # present cache negative.
        model, feeds = _gqa(B=1, S=1, P=6, total=7, seqlens=[6], symbolic=True)
        c.update(dynamic=True, shapes_from=False, good=feeds,
                 bad=[_with(feeds, total=-3), _with(feeds, total=0)],
                 message="GroupQueryAttention (node 'gqa'): total_sequence_length is out of "
                         "range [S, inf): it counts the past and the S new positions")
    elif name in ("tensor_scatter_linear", "tensor_scatter_linear_dynamic"):
        dynamic = name.endswith("dynamic")
        model, feeds = _tensor_scatter("linear", symbolic=dynamic)
        feeds["write_indices"] = np.array([0, 13], np.int64)
        size = ("n - s + 1", "s", "n") if dynamic else ("14", "3", "16")
        c.update(dynamic=dynamic, good=feeds,
                 bad=[_with(feeds, write_indices=[0, 14]), _with(feeds, write_indices=[-1, 0])],
                 message="TensorScatter (node 'scatter'): a write index is out of range "
                         f"[0, {size[0]}): the update's {size[1]} positions along axis 2 "
                         f"must fit in the cache's {size[2]}")
    elif name == "tensor_scatter_circular":
        # Circular mode wraps any index >= 0 around the cache (40 -> 8).
        model, feeds = _tensor_scatter("circular")
        feeds["write_indices"] = np.array([15, 40], np.int64)
        c.update(good=feeds, bad=[_with(feeds, write_indices=[3, -1])],
                 message="TensorScatter (node 'scatter'): a write index is out of range "
                         "[0, inf): circular mode wraps it around the cache's 16 positions "
                         "along axis 2")
    elif name == "attention_nonpad_kv_seqlen":
        model, feeds = _attention()
        feeds["kv_len"] = np.array([16, 1], np.int64)
        c.update(good=feeds, bad=[_with(feeds, kv_len=[17, 3]), _with(feeds, kv_len=[4, -1])],
                 message="Attention (node 'attn'): nonpad_kv_seqlen is out of range [0, 17): "
                         "it counts each batch's valid keys among the 16")
    elif name == "kv_cache_fill_level":
        model, feeds = _kv_step()
        good = _with(feeds, past_sequence_length=CAPACITY - 1)
        c.update(reference=False, good=good, jit=dict(fuse_attention=True, max_seq_len=CAPACITY),
                 compile_args=["--fuse-attention", "--max-seq-len", str(CAPACITY),
                               "--input-shape", f"past_key=1x2x{CAPACITY - 1}x8",
                               "--input-shape", f"past_value=1x2x{CAPACITY - 1}x8"],
                 bad=[_with(good, past_sequence_length=CAPACITY),
                      _with(good, past_sequence_length=-1)],
                 messages=[f"input 'past_sequence_length' is {level}, out of range "
                           f"[0, {CAPACITY}): with 1 new position(s) per step the KV cache "
                           f"needs {level + 1} positions, and it holds 0 to {CAPACITY}"
                           for level in (CAPACITY, -1)])
    else:
        raise KeyError(name)
    c.setdefault("messages", [c.get("message")] * len(c["bad"]))
    c["model"] = model
    return c


CASES = ["gqa_seqlens_past_the_cache", "gqa_seqlens_before_the_new_tokens",
         "gqa_rotary_position", "gqa_total_sequence_length", "tensor_scatter_linear",
         "tensor_scatter_linear_dynamic", "tensor_scatter_circular",
         "attention_nonpad_kv_seqlen", "kv_cache_fill_level"]


def _check_against_onnxruntime(case, got):
    """Outputs on the good feeds equal onnxruntime's (for GroupQueryAttention
    the caches up to each batch's last valid position: onnxruntime leaves
    the rest of its buffer as allocated)."""
    if not case["reference"]:
        return
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(case["model"].SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    feeds = case["good"]
    for name, want in zip(names, sess.run(names, feeds)):
        have = got[name]
        if name.startswith("present_"):
            last = int(feeds["seqlens_k"][0])
            have, want = have[:, :, :last + 1], want[:, :, :last + 1]
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("name", CASES)
def test_jit_stops_the_run(tmp_path, name):
    """mp.compile: each bad value raises mp.Error with the message; the same
    compiled model then runs the good inputs (at the edge of the range)."""
    require_built(mp.library_path())
    case = _case(name)
    path = tmp_path / "model.onnx"
    onnx.save(case["model"], path)
    model = mp.compile(path, dynamic_shapes=case["dynamic"], **case["jit"])
    for bad, message in zip(case["bad"], case["messages"]):
        with pytest.raises(mp.Error) as error:
            model.run(bad)
        assert message in str(error.value)
    _check_against_onnxruntime(case, model.run(case["good"]))


def _save_inputs(folder: Path, feeds, prefix=""):
    """The feeds as NAME.npy in `folder`; the mp-run --input arguments."""
    folder.mkdir(parents=True, exist_ok=True)
    args = []
    for name, value in feeds.items():
        np.save(folder / f"{prefix}{name}.npy", value)
        args += ["--input", f"{name}={folder / f'{prefix}{name}.npy'}"]
    return args


def test_mp_run_jit_exits_with_the_message(tmp_path):
    """mp-run (JIT) on a model: exit status 1 and the message, no output
    written (the case that segfaulted before)."""
    require_built(MP_RUN)
    case = _case("gqa_rotary_position")
    onnx.save(case["model"], tmp_path / "model.onnx")
    proc = subprocess.run([str(MP_RUN), str(tmp_path / "model.onnx"), "--output-dir",
                           str(tmp_path / "out"), *_save_inputs(tmp_path, case["bad"][0])],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert case["messages"][0] in proc.stderr
    assert not (tmp_path / "out" / "out.npy").exists()


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    """Builds each case's CPU library once (for AVX2, see the module
    docstring): {name: (library, case)}."""
    require_built(MP_COMPILE, mp.library_path())
    folder = tmp_path_factory.mktemp("libs")
    built = {}

    def get(name):
        if name not in built:
            case = _case(name)
            onnx.save(case["model"], folder / f"{name}.onnx")
            lib = folder / f"lib{name}.so"
            args = [str(MP_COMPILE), str(folder / f"{name}.onnx"), "-o", str(lib), *CPU_ARGS,
                    *case["compile_args"]]
            if case["dynamic"]:
                args.append("--dynamic-shapes")
            if case["shapes_from"]:
                data = folder / f"{name}_data"
                data.mkdir()
                for i, graph_input in enumerate(case["model"].graph.input):
                    tensor = numpy_helper.from_array(case["good"][graph_input.name],
                                                     graph_input.name)
                    (data / f"input_{i}.pb").write_bytes(tensor.SerializeToString())
                args += ["--shapes-from", str(data)]
            proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, proc.stderr
            built[name] = (lib, case)
        return built[name]

    return get


def _library_feeds(lib, feeds):
    """The feeds a library takes (compiled-in inputs dropped)."""
    return {name: feeds[name] for name, _, _ in lib.inputs}


@pytest.mark.parametrize("name", CASES)
def test_library_returns_the_error(libraries, tmp_path, name):
    """mp.load: each bad value is the run's error (mp.Error with the
    message), the process goes on and the good inputs run; mp-run on the
    library exits with status 2 (MP_ERROR_INVALID) and the message."""
    path, case = libraries(name)
    with mp.load(path) as lib:
        for bad, message in zip(case["bad"], case["messages"]):
            with pytest.raises(mp.Error) as error:
                lib.run(_library_feeds(lib, bad))
            assert message in str(error.value)
        got = lib.run(_library_feeds(lib, case["good"]))
        bad = _library_feeds(lib, case["bad"][0])
    _check_against_onnxruntime(case, got)
    proc = subprocess.run([str(MP_RUN), str(path), *_save_inputs(tmp_path, bad)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert case["messages"][0] in proc.stderr


VALGRIND = shutil.which("valgrind")


@pytest.mark.slow
@pytest.mark.skipif(VALGRIND is None, reason="valgrind is not installed on this machine")
@pytest.mark.parametrize("name", CASES)
def test_library_under_valgrind(libraries, tmp_path, name):
    """memcheck on mp-run LIB: every bad input stops the run with the
    message (status 2) and the good inputs at the edge of the range run
    (status 0), with no invalid read or write (--error-exitcode=99)."""
    path, case = libraries(name)
    with mp.load(path) as lib:
        takes = [name for name, _, _ in lib.inputs]
    runs = list(zip(case["bad"], case["messages"])) + [(case["good"], None)]
    for i, (feeds, message) in enumerate(runs):
        inputs = _save_inputs(tmp_path, {n: feeds[n] for n in takes}, prefix=f"{i}_")
        proc = subprocess.run([VALGRIND, "--tool=memcheck", "--error-exitcode=99", "-q",
                               str(MP_RUN), str(path), *inputs],
                              capture_output=True, text=True, timeout=600)
        output = proc.stdout + proc.stderr
        assert "Invalid read" not in output and "Invalid write" not in output, output
        assert proc.returncode == (2 if message else 0), output
        if message:
            assert message in output


# Runs a library once on zeroed inputs, the largest of them allocated at
# half its described size, so that the generated code reads past its end.
SHRUNK_INPUT_RUN = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <mp/runtime.h>

static size_t bytes(const mp_tensor_desc *t) {
  size_t n = t->dtype == MP_DTYPE_INT64 ? 8 : 4;
  for (int d = 0; d < t->rank; ++d)
    n *= (size_t)t->shape[d];
  return n;
}

int main(int argc, char **argv) {
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib)
    return fprintf(stderr, "%s\n", dlerror()), 1;
  const mp_model_desc *desc =
      ((mp_model_describe_fn)dlsym(lib, MP_MODEL_DESCRIBE_SYMBOL))();
  mp_model_run_fn run = (mp_model_run_fn)dlsym(lib, MP_MODEL_RUN_SYMBOL);
  void *in[16], *out[16];
  int largest = 0;
  for (int i = 0; i < desc->num_inputs; ++i)
    if (bytes(&desc->inputs[i]) > bytes(&desc->inputs[largest]))
      largest = i;
  for (int i = 0; i < desc->num_inputs; ++i)
    in[i] = calloc(1, bytes(&desc->inputs[i]) / (i == largest ? 2 : 1));
  for (int i = 0; i < desc->num_outputs; ++i)
    out[i] = calloc(1, bytes(&desc->outputs[i]));
  return run((const void *const *)in, out);
}
"""


@pytest.mark.slow
@pytest.mark.skipif(VALGRIND is None, reason="valgrind is not installed on this machine")
def test_valgrind_sees_the_generated_code_read_past_a_buffer(libraries, tmp_path):
    """The control of the runs above: the same memcheck flags on a library
    whose input buffer is half the size it describes report the generated
    kernel's reads past its end (valgrind translates all machine code,
    compiled by MLIR or not)."""
    cc = next((p for p in map(shutil.which, ("clang-22", "clang", "cc")) if p), None)
    if cc is None:
        pytest.skip("no C compiler")
    path, _ = libraries("attention_nonpad_kv_seqlen")
    (tmp_path / "run.c").write_text(SHRUNK_INPUT_RUN)
    include = Path(__file__).resolve().parents[2] / "runtime" / "include"
    subprocess.run([cc, "-O1", "-I", str(include), str(tmp_path / "run.c"), "-o",
                    str(tmp_path / "run"), "-ldl"], check=True)
    proc = subprocess.run([VALGRIND, "--tool=memcheck", "--error-exitcode=99", "-q",
                           str(tmp_path / "run"), str(path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 99, proc.stdout + proc.stderr
    assert "Invalid read" in proc.stderr and "main_graph_kernel" in proc.stderr, proc.stderr
