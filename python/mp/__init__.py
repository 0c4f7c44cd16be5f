"""mp: compile ONNX models in mixed precision and run them on the CPU.

    import mp
    m = mp.compile("model.onnx", precision="mixed")   # or "fp32"
    outs = m.run({"x": x})                           # {name: numpy array}

``compile`` imports the model (errors in the file or unsupported ops are
raised here unless the import needs the values of integer inputs); the first
``run`` with a given set of input shapes JIT-compiles it for the CPU and later
runs with the same shapes reuse that code (inputs whose values decide shapes
are compiled in; see docs/running.md). Everything goes through the
project's C API (``include/mp-c/Model.h``, ``libMPCAPI.so``) with ctypes --
no subprocess.

    lib = mp.load("out/libtts.so")                   # written by mp-compile
    outs = lib.run({"x": x})

``load`` runs a compiled library through the runtime alone (libmp_runtime.so,
no MLIR; see ``mp.library``).

The library is found through ``$MP_LIBRARY`` (a path to libMPCAPI.so), else
``$MP_BUILD_DIR/lib``, else inside the package (``mp/lib``, where ``pip
install .`` puts it), else the repository's ``build/lib``. Importing mp or its
subpackages (``mp.models``, ``mp.tools``, ``mp.emu``) does not load it.
"""

from __future__ import annotations

import ctypes
import logging
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["DeviceArray", "Error", "Library", "Model", "TensorInfo", "compile",
           "library_path", "load", "version"]


class Error(RuntimeError):
    """An error reported by mp (the message names the file, input or node).
    Errors of the runtime (:func:`load`) carry its ``status`` code."""

    status: int = 1


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("rank", ctypes.c_int64),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("data", ctypes.c_void_p),
        ("nbytes", ctypes.c_size_t),
    ]


# void (*)(const char *stage, double milliseconds, void *user)
_PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_double, ctypes.c_void_p)

# Compile stages go to this logger (INFO) unless compile() is given a callback.
_log = logging.getLogger("mp")


def _log_stage(stage: str, milliseconds: float) -> None:
    _log.info("compile stage %s: %.1f ms", stage, milliseconds)


class _Options(ctypes.Structure):
    """MpModelOptions (include/mp-c/Model.h)."""
    _fields_ = [("precision", ctypes.c_char_p), ("policy", ctypes.c_char_p),
                ("trainingStep", ctypes.c_char_p), ("lossScaling", ctypes.c_char_p),
                ("fuseAttention", ctypes.c_int), ("maxSeqLen", ctypes.c_int64),
                ("dynamicShapes", ctypes.c_int), ("ranges", ctypes.c_char_p),
                ("cacheDir", ctypes.c_char_p), ("progress", _PROGRESS),
                ("progressUser", ctypes.c_void_p)]


def library_path() -> Path:
    """Where libMPCAPI.so is looked for (see the module docstring)."""
    if os.environ.get("MP_LIBRARY"):
        return Path(os.environ["MP_LIBRARY"])
    if os.environ.get("MP_BUILD_DIR"):
        return Path(os.environ["MP_BUILD_DIR"]) / "lib" / "libMPCAPI.so"
    installed = Path(__file__).resolve().parent / "lib" / "libMPCAPI.so"
    if installed.is_file():
        return installed
    return Path(__file__).resolve().parents[2] / "build" / "lib" / "libMPCAPI.so"


_lib = None


def _library() -> ctypes.CDLL:
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    if not path.is_file():
        raise Error(f"cannot find the mp C library at {path}: build mp "
                    "(./scripts/test.sh or ninja -C build MPCAPI), or set "
                    "MP_LIBRARY to libMPCAPI.so")
    lib = ctypes.CDLL(str(path))
    P, c_char_pp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "mpVersion": ([], ctypes.c_char_p),
        "mpModelLoad": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                         ctypes.POINTER(P), c_char_pp], ctypes.c_int),
        "mpModelLoadTraining": ([ctypes.c_char_p] * 5 + [ctypes.POINTER(P), c_char_pp],
                                ctypes.c_int),
        "mpModelLoadWithOptions": ([ctypes.c_char_p, ctypes.POINTER(_Options),
                                    ctypes.POINTER(P), c_char_pp], ctypes.c_int),
        "mpCalibrate": ([ctypes.c_char_p, ctypes.POINTER(_Options), ctypes.POINTER(_Tensor),
                         ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t, ctypes.c_char_p,
                         c_char_pp], ctypes.c_int),
        "mpModelDestroy": ([P], None),
        "mpModelNumInputs": ([P], ctypes.c_size_t),
        "mpModelInput": ([P, ctypes.c_size_t], _Tensor),
        "mpModelNumOutputs": ([P], ctypes.c_size_t),
        "mpModelOutput": ([P, ctypes.c_size_t], _Tensor),
        "mpModelNumVariants": ([P], ctypes.c_size_t),
        "mpModelRun": ([P, ctypes.POINTER(_Tensor), ctypes.c_size_t,
                        ctypes.POINTER(P), c_char_pp], ctypes.c_int),
        "mpResultNumOutputs": ([P], ctypes.c_size_t),
        "mpResultOutput": ([P, ctypes.c_size_t], _Tensor),
        "mpResultDestroy": ([P], None),
        "mpFreeString": ([P], None),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    _lib = lib
    return lib


def _check(rc: int, error: ctypes.c_void_p) -> None:
    if rc == 0:
        return
    lib = _library()
    message = ctypes.string_at(error.value).decode(errors="replace") if error.value else "mp: unknown error"
    lib.mpFreeString(error)
    raise Error(message)


def version() -> str:
    return _library().mpVersion().decode()


@dataclass(frozen=True)
class TensorInfo:
    """A graph input or output: shape dims are None where dynamic; dtype is
    None for outputs whose type the model does not declare."""
    name: str
    dtype: np.dtype | None
    shape: tuple[int | None, ...] | None

    @staticmethod
    def _from(t: _Tensor) -> "TensorInfo":
        dtype = np.dtype(t.dtype.decode()) if t.dtype else None
        shape = tuple(None if t.shape[i] < 0 else int(t.shape[i]) for i in range(t.rank)) \
            if t.dtype else None
        return TensorInfo(t.name.decode(), dtype, shape)


def _items(inputs) -> list:
    """(name or None, array) pairs of a feed: a mapping by input name or a
    sequence in graph-input order."""
    return list(inputs.items()) if isinstance(inputs, Mapping) \
        else [(None, a) for a in inputs]


def _pack(items: list) -> tuple:
    """MpTensor descriptions of ``items``, and what must stay alive while
    they are used (the arrays and shapes they point into)."""
    keep, tensors = [], (_Tensor * max(len(items), 1))()
    for i, (name, a) in enumerate(items):
        # np.ascontiguousarray would turn a 0-d array into shape (1,).
        a = np.asarray(a)
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
        if a.dtype.byteorder == ">":
            raise Error(f"input {name or i}: big-endian arrays are not supported")
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        keep += [a, shape]
        tensors[i] = _Tensor(name.encode() if name is not None else None,
                             a.dtype.str.encode(), a.ndim, shape,
                             a.ctypes.data, a.nbytes)
    return tensors, keep


def _options(precision="fp32", policy=None, ranges=None, training=None, loss_scaling=None,
             fuse_attention=False, max_seq_len=None, dynamic_shapes=False,
             cache=True) -> _Options:
    def opt(s):
        return s.encode() if s is not None else None

    def path(p):
        return os.fsencode(p) if p is not None else None
    return _Options(precision=precision.encode(), policy=path(policy), ranges=path(ranges),
                    trainingStep=opt(training), lossScaling=opt(loss_scaling),
                    fuseAttention=int(bool(fuse_attention)),
                    maxSeqLen=int(max_seq_len or 0),
                    dynamicShapes=int(bool(dynamic_shapes)),
                    cacheDir=(None if cache is True else b"off" if cache is False
                              else os.fsencode(cache)))


def calibrate(path: str | os.PathLike, feeds: Sequence, ranges_out: str | os.PathLike, *,
              fuse_attention: bool = False, max_seq_len: int | None = None) -> Path:
    """Runs the fp32 build of the model on each feed of ``feeds`` (each as
    :meth:`Model.run` takes its inputs) and writes every node's measured value
    range to ``ranges_out`` (JSON, as ``mp-run --calibrate --ranges-out``
    writes it). ``compile(..., precision="mixed", ranges=ranges_out)`` then
    keeps in fp32 the nodes whose values would overflow fp16 (docs/precision.md,
    "Calibration"). Attention fusion must match the compile. Returns the path."""
    lib = _library()
    sets = [_items(feed) for feed in feeds]
    if not sets:
        raise Error("calibrate: no calibration inputs")
    flat = [item for items in sets for item in items]
    tensors, _keep = _pack(flat)
    sizes = (ctypes.c_size_t * len(sets))(*[len(items) for items in sets])
    options = _options(fuse_attention=fuse_attention, max_seq_len=max_seq_len)
    error = ctypes.c_void_p()
    rc = lib.mpCalibrate(os.fsencode(path), ctypes.byref(options), tensors, sizes, len(sets),
                         os.fsencode(ranges_out), ctypes.byref(error))
    _check(rc, error)
    return Path(ranges_out)


class Model:
    """A loaded model; see :func:`compile`."""

    def __init__(self, path: str | os.PathLike, precision: str = "fp32",
                 policy: str | os.PathLike | None = None, *,
                 training: str | None = None, loss_scaling: str | None = None,
                 fuse_attention: bool = False, max_seq_len: int | None = None,
                 dynamic_shapes: bool = False, ranges: str | os.PathLike | None = None,
                 calibration: Sequence | None = None, cache: bool | str | os.PathLike = True,
                 progress: Callable[[str, float], None] | None = None):
        lib = _library()
        self._lib = lib
        self._handle = ctypes.c_void_p()
        self.path = Path(path)
        self.precision = precision
        # Measured ranges are read whenever a variant compiles: the file
        # lives as long as the model.
        self._ranges_dir = None
        if calibration is not None:
            if ranges is not None:
                raise Error("give calibration data or ranges, not both")
            self._ranges_dir = tempfile.TemporaryDirectory(prefix="mp-ranges-")
            ranges = calibrate(path, calibration, Path(self._ranges_dir.name) / "ranges.json",
                               fuse_attention=fuse_attention, max_seq_len=max_seq_len)
        error = ctypes.c_void_p()
        options = _options(precision, policy, ranges, training, loss_scaling,
                           fuse_attention, max_seq_len, dynamic_shapes, cache)
        # Variants compile at runs, long after this call: the callback lives
        # as long as the model.
        report = progress or _log_stage
        self._progress = _PROGRESS(lambda stage, ms, _user: report(stage.decode(), ms))
        options.progress = self._progress
        rc = lib.mpModelLoadWithOptions(os.fsencode(path), ctypes.byref(options),
                                        ctypes.byref(self._handle), ctypes.byref(error))
        _check(rc, error)
        self.inputs = [TensorInfo._from(lib.mpModelInput(self._handle, i))
                       for i in range(lib.mpModelNumInputs(self._handle))]
        self.outputs = [TensorInfo._from(lib.mpModelOutput(self._handle, i))
                        for i in range(lib.mpModelNumOutputs(self._handle))]

    def run(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        """Runs the model. ``inputs`` maps graph input names to arrays (or is
        a sequence in graph-input order). Returns ``{output name: array}`` in
        graph order. Arrays are not converted: a float64 array for a float32
        input is an error, as is a wrong rank or static dim."""
        items = _items(inputs)
        tensors, _keep = _pack(items)
        result, error = ctypes.c_void_p(), ctypes.c_void_p()
        rc = self._lib.mpModelRun(self._handle, tensors, len(items),
                                  ctypes.byref(result), ctypes.byref(error))
        _check(rc, error)
        try:
            outs = {}
            for i in range(self._lib.mpResultNumOutputs(result)):
                t = self._lib.mpResultOutput(result, i)
                shape = tuple(int(t.shape[d]) for d in range(t.rank))
                out = np.empty(shape, dtype=np.dtype(t.dtype.decode()))
                if t.nbytes:
                    ctypes.memmove(out.ctypes.data, t.data, t.nbytes)
                outs[t.name.decode()] = out
            return outs
        finally:
            self._lib.mpResultDestroy(result)

    @property
    def num_variants(self) -> int:
        """Compiled variants held: one per set of input shapes (and values of
        inputs that decide shapes)."""
        return int(self._lib.mpModelNumVariants(self._handle))

    def close(self) -> None:
        if getattr(self, "_handle", None) and self._handle.value:
            self._lib.mpModelDestroy(self._handle)
            self._handle = ctypes.c_void_p()
        if getattr(self, "_ranges_dir", None) is not None:
            self._ranges_dir.cleanup()
            self._ranges_dir = None

    def __del__(self):
        self.close()

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"mp.Model({str(self.path)!r}, precision={self.precision!r})"


def compile(path: str | os.PathLike, precision: str = "fp32",
            policy: str | os.PathLike | None = None, *,
            training: str | None = None,
            loss_scaling: str | None = None,
            fuse_attention: bool = False,
            max_seq_len: int | None = None,
            dynamic_shapes: bool = False,
            calibration: Sequence | None = None,
            ranges: str | os.PathLike | None = None,
            cache: bool | str | os.PathLike = True,
            progress: Callable[[str, float], None] | None = None) -> Model:
    """Loads an ONNX model for CPU execution in ``precision`` ("fp32" or
    "mixed", with an optional precision ``policy`` JSON file).

    With ``training`` (mp-build-training-step options, e.g. ``"loss=loss
    optimizer=adamw lr=1e-3"``) the model runs as one training step, with
    ``loss_scaling`` (mp-insert-loss-scaling options, e.g.
    ``"mode=dynamic"``) if given; see :mod:`mp.training` for a trainer.

    ``fuse_attention`` runs mp-fuse-attention first. With it,
    ``max_seq_len`` keeps the KV caches in buffers of that many positions
    updated in place: the cache inputs take the full capacity, the model
    gains the int64 scalar input ``past_sequence_length`` (the filled
    positions), and each present output is its past input after the step
    (docs/compile.md, "KV caches updated in place").

    ``dynamic_shapes`` compiles one variant for every input shape: the
    model's dynamic dims stay dynamic through the lowering instead of being
    specialized to each new shape (docs/running.md, "Dynamic shapes").

    ``calibration`` (feeds, each as :meth:`Model.run` takes its inputs) runs
    the fp32 build on them first and measures every node's value range; the
    mixed build then keeps in fp32 the nodes whose values would overflow fp16
    (|x| > 65504/4) or mostly fall below its normal range, and says so in the
    plan. ``ranges`` takes ranges measured before (:func:`calibrate`,
    ``mp-run --calibrate --ranges-out``). See docs/precision.md, "Calibration".

    ``cache`` keeps compiled variants between processes, so the next
    ``compile`` of the same model, options and input shapes loads instead of
    compiling: ``True`` uses ``MP_CACHE_DIR`` (default ``~/.cache/mp``),
    ``False`` compiles every time, a path names the folder
    (docs/running.md, "Compile cache").

    ``progress(stage, milliseconds)`` is called as each compile stage ends
    ("load", "import", "fusion and precision", "lowering", "LLVM",
    "cache store", or "cache load" on a cache hit); without it the stages go
    to the ``mp`` logger at INFO level (``logging.basicConfig(level="INFO")``
    shows them)."""
    if (calibration is not None or ranges is not None) and precision != "mixed":
        raise Error("calibration and ranges apply to precision='mixed'")
    return Model(path, precision, policy, training=training,
                 loss_scaling=loss_scaling, fuse_attention=fuse_attention,
                 max_seq_len=max_seq_len, dynamic_shapes=dynamic_shapes,
                 ranges=ranges, calibration=calibration, cache=cache,
                 progress=progress)


from .library import DeviceArray, Library, load  # noqa: E402  (needs Error above)
