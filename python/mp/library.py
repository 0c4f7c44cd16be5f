"""Run libraries written by ``mp-compile`` through the mp runtime.

    import mp
    lib = mp.load("out/libtts.so")        # CPU or CUDA target
    outs = lib.run({"x": x})              # {name: numpy array}

Data that stays between runs (KV caches, recurrent state) can live in the
library's own memory, device memory for a CUDA library, so that runs copy
nothing between host and device:

    k = lib.to_device(np.zeros(shape, np.float16))      # mp.DeviceArray
    outs = lib.run_device({"x": x, "past_key_0": k, ...},
                          out={"present_key_0": k})    # {name: DeviceArray}
    y = outs["y"].numpy()

Only ``libmp_runtime.so`` is used (no MLIR), with ctypes. It is found through
``$MP_RUNTIME_LIBRARY``, else next to libMPCAPI.so (see ``mp.library_path``).
Failures raise :class:`mp.Error` whose ``status`` is the runtime's
``mp_status`` (3: no CUDA driver, 4: no device, 5: no kernels for this GPU,
6: a CUDA call failed, 7: out of memory; docs/runtime.md).
"""

from __future__ import annotations

import ctypes
import os
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

# ONNX TensorProto data types (the runtime's mp_dtype) as numpy dtypes.
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
           6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16,
           11: np.float64, 12: np.uint32, 13: np.uint64}


class _TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


class _ModelDesc(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("target", ctypes.c_char_p),
                ("precision", ctypes.c_char_p), ("source", ctypes.c_char_p),
                ("num_inputs", ctypes.c_int32),
                ("inputs", ctypes.POINTER(_TensorDesc)),
                ("num_outputs", ctypes.c_int32),
                ("outputs", ctypes.POINTER(_TensorDesc)),
                ("num_gpu_archs", ctypes.c_int32),
                ("gpu_archs", ctypes.POINTER(ctypes.c_char_p))]


class _MemoryStats(ctypes.Structure):
    _fields_ = [("buffer_bytes", ctypes.c_size_t), ("peak_buffer_bytes", ctypes.c_size_t),
                ("cached_bytes", ctypes.c_size_t), ("constant_bytes", ctypes.c_size_t)]


def runtime_path() -> Path:
    """Where libmp_runtime.so is looked for."""
    if os.environ.get("MP_RUNTIME_LIBRARY"):
        return Path(os.environ["MP_RUNTIME_LIBRARY"])
    from . import library_path
    return library_path().parent / "libmp_runtime.so"


_rt = None


MAX_RANK = 8  # MP_MAX_RANK


class _ShapedTensor(ctypes.Structure):
    """mp_shaped_tensor (runtime/include/mp/runtime.h)."""
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * MAX_RANK)]


def _runtime() -> ctypes.CDLL:
    global _rt
    if _rt is not None:
        return _rt
    from . import Error
    path = runtime_path()
    if not path.is_file():
        raise Error(f"cannot find the mp runtime at {path}: build mp, or set "
                    "MP_RUNTIME_LIBRARY to libmp_runtime.so")
    rt = ctypes.CDLL(str(path))
    P = ctypes.c_void_p
    sigs = {
        "mp_last_error": ([], ctypes.c_char_p),
        "mp_library_open": ([ctypes.c_char_p, ctypes.POINTER(P)], ctypes.c_int),
        "mp_library_describe": ([P], ctypes.POINTER(_ModelDesc)),
        "mp_library_run": ([P, ctypes.POINTER(P), ctypes.POINTER(P)], ctypes.c_int),
        "mp_library_has_dynamic_shapes": ([P], ctypes.c_int),
        "mp_library_run_shaped": ([P, ctypes.POINTER(_ShapedTensor),
                                   ctypes.POINTER(_ShapedTensor)], ctypes.c_int),
        "mp_free": ([P], None),
        "mp_library_close": ([P], None),
        "mp_cuda_memory_stats": ([ctypes.POINTER(_MemoryStats)], None),
        "mp_library_device_alloc": ([P, ctypes.c_size_t, ctypes.POINTER(P)], ctypes.c_int),
        "mp_library_device_free": ([P, P], None),
        "mp_library_upload": ([P, P, P, ctypes.c_size_t], ctypes.c_int),
        "mp_library_download": ([P, P, P, ctypes.c_size_t], ctypes.c_int),
        "mp_library_synchronize": ([P], ctypes.c_int),
        "mp_library_input_on_host": ([P, ctypes.c_int32], ctypes.c_int),
        "mp_library_run_device": ([P, ctypes.POINTER(P), ctypes.POINTER(P)], ctypes.c_int),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(rt, name)
        fn.argtypes, fn.restype = args, res
    _rt = rt
    return rt


def _dense(a) -> np.ndarray:
    """``a`` as a C-contiguous array of its own rank (0-d stays 0-d)."""
    return np.ascontiguousarray(a) if np.ndim(a) else np.asarray(a)


def _raise(status: int) -> None:
    from . import Error
    message = (_runtime().mp_last_error() or b"").decode(errors="replace")
    error = Error(message or f"mp runtime status {status}")
    error.status = status
    raise error


class DeviceArray:
    """A dense tensor in the memory a library computes in: device memory for
    a CUDA library, host memory for a CPU one. Made by
    :meth:`Library.to_device` and :meth:`Library.empty_device`, taken and
    returned by :meth:`Library.run_device`; freed when it is garbage
    collected, or when its library is closed (it is then unusable)."""

    def __init__(self, library: "Library", shape, dtype):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self._library = library
        self._ptr = ctypes.c_void_p()
        status = library._rt.mp_library_device_alloc(
            library._open_handle(), self.nbytes, ctypes.byref(self._ptr))
        if status:
            _raise(status)
        library._device_arrays.add(self)

    @property
    def library(self) -> "Library":
        return self._library

    def _pointer(self) -> int:
        from . import Error
        if not self._ptr.value:
            raise Error("this DeviceArray was freed (its library was closed)")
        return self._ptr.value

    def copy_from(self, array) -> "DeviceArray":
        """Uploads ``array`` (of this dtype and shape) into the buffer, after
        the runs queued before have finished."""
        from . import Error
        a = _dense(array)
        if a.dtype != self.dtype or a.shape != self.shape:
            raise Error(f"cannot copy {a.dtype}{list(a.shape)} into a DeviceArray of "
                        f"{self.dtype}{list(self.shape)}")
        status = self._library._rt.mp_library_upload(
            self._library._open_handle(), self._pointer(), a.ctypes.data, self.nbytes)
        if status:
            _raise(status)
        return self

    def numpy(self) -> np.ndarray:
        """A host copy, once the runs queued before have finished (a GPU
        failure of those runs is raised here)."""
        a = np.empty(self.shape, self.dtype)
        status = self._library._rt.mp_library_download(
            self._library._open_handle(), a.ctypes.data, self._pointer(), self.nbytes)
        if status:
            _raise(status)
        return a

    def _release(self) -> None:
        if self._ptr.value and self._library._handle.value:
            self._library._rt.mp_library_device_free(self._library._handle, self._ptr)
        self._ptr = ctypes.c_void_p()

    def __del__(self):
        self._release()

    def __repr__(self) -> str:
        return (f"mp.DeviceArray({self.dtype}{list(self.shape)}, "
                f"target={self._library.target!r})")


class Library:
    """A library written by mp-compile; see :func:`load`."""

    def __init__(self, path: str | os.PathLike):
        rt = _runtime()
        self._rt = rt
        self.path = Path(path)
        self._handle = ctypes.c_void_p()
        status = rt.mp_library_open(os.fsencode(path), ctypes.byref(self._handle))
        if status:
            _raise(status)
        desc = rt.mp_library_describe(self._handle).contents
        self.target = desc.target.decode()
        self.precision = desc.precision.decode()
        self.gpu_archs = [desc.gpu_archs[i].decode() for i in range(desc.num_gpu_archs)]

        def specs(array, n):
            return [(array[i].name.decode(), np.dtype(_DTYPES[array[i].dtype]),
                     tuple(array[i].shape[d] for d in range(array[i].rank)))
                    for i in range(n)]
        self.inputs = specs(desc.inputs, desc.num_inputs)
        self.outputs = specs(desc.outputs, desc.num_outputs)
        #: Dims fixed at run time (mp-compile --dynamic-shapes): -1 in the
        #: shapes of ``inputs`` and ``outputs``.
        self.dynamic_shapes = bool(rt.mp_library_has_dynamic_shapes(self._handle))
        #: Inputs that :meth:`run_device` reads from host memory (the fill
        #: level of in-place KV caches on the CUDA target).
        self.host_inputs = {name for i, (name, _, _) in enumerate(self.inputs)
                            if rt.mp_library_input_on_host(self._handle, i)}
        self._device_arrays = weakref.WeakSet()

    def _open_handle(self) -> ctypes.c_void_p:
        from . import Error
        if not self._handle.value:
            raise Error(f"library {str(self.path)!r} is closed")
        return self._handle

    def run(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
            out: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Runs once. ``inputs`` maps input names to arrays (or is a sequence
        in input order) of exactly the compiled dtypes and shapes (any size
        where a dim is -1, for a library with dynamic shapes; its outputs
        come in the shapes the run produced, and ``out`` is not taken).

        ``out`` optionally maps output names to preallocated C-contiguous
        writable arrays of their dtypes and shapes, which receive those
        outputs (and are returned). A KV cache compiled with
        ``--max-seq-len`` is updated in place without a copy when its output
        array is its input array."""
        from . import Error
        inputs, given = self._named(inputs, out)
        keep, pointers = [], (ctypes.c_void_p * max(len(self.inputs), 1))()
        for i, (name, dtype, shape) in enumerate(self.inputs):
            a = _dense(inputs[name])
            if a.dtype != dtype or a.ndim != len(shape) or any(
                    d >= 0 and d != g for d, g in zip(shape, a.shape)):
                raise Error(f"input {name!r} is {a.dtype}{list(a.shape)}, the "
                            f"library was compiled for {dtype}{list(shape)}")
            keep.append(a)
            pointers[i] = a.ctypes.data
        if self.dynamic_shapes:
            if out:
                raise Error("a library with dynamic shapes allocates its outputs: "
                            "out= is not taken")
            return self._run_shaped(keep)
        outs = {}
        for name, dtype, shape in self.outputs:
            a = given.get(name)
            if a is None:
                a = np.empty(shape, dtype)
            elif (not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != shape
                  or not a.flags.c_contiguous or not a.flags.writeable):
                raise Error(f"output array for {name!r} must be a writable C-contiguous "
                            f"{dtype}{list(shape)} array")
            outs[name] = a
        out_pointers = (ctypes.c_void_p * max(len(outs), 1))(
            *[a.ctypes.data for a in outs.values()])
        status = self._rt.mp_library_run(self._handle, pointers, out_pointers)
        if status:
            _raise(status)
        return outs

    def _named(self, inputs, out) -> tuple[dict, dict]:
        """``inputs`` by name (a sequence is in input order) and ``out`` as a
        dict; raises for a missing input or a name the library lacks."""
        from . import Error
        if not isinstance(inputs, Mapping):
            inputs = {name: a for (name, _, _), a in zip(self.inputs, inputs)}
        given = dict(out or {})
        for kind, names, specs in (("input", inputs, self.inputs),
                                   ("output", given, self.outputs)):
            unknown = set(names) - {name for name, _, _ in specs}
            if unknown:
                raise Error(f"the library has no {kind} named {sorted(unknown)[0]!r}")
        for name, dtype, shape in self.inputs:
            if name not in inputs:
                raise Error(f"missing input {name!r} ({dtype}{list(shape)})")
        return inputs, given

    def to_device(self, array) -> DeviceArray:
        """``array`` copied into the library's memory."""
        a = _dense(array)
        return DeviceArray(self, a.shape, a.dtype).copy_from(a)

    def empty_device(self, shape, dtype) -> DeviceArray:
        """An uninitialized tensor in the library's memory."""
        return DeviceArray(self, shape, dtype)

    def synchronize(self) -> None:
        """Waits until the runs queued by :meth:`run_device` have finished."""
        status = self._rt.mp_library_synchronize(self._open_handle())
        if status:
            _raise(status)

    def run_device(self, inputs: Mapping[str, object] | Sequence[object],
                   out: Mapping[str, DeviceArray] | None = None) -> dict[str, DeviceArray]:
        """Runs once on tensors in the library's memory, copying nothing
        between host and device (CUDA: the kernels are queued and this
        returns before they finish; ``DeviceArray.numpy`` waits).

        ``inputs`` maps input names (or is a sequence in input order) to
        DeviceArrays of this library, or to host arrays, which are
        uploaded first (an upload waits for the runs queued before); the inputs in ``host_inputs`` are read from host
        memory. ``out`` optionally maps output names to DeviceArrays that
        receive them; the others are new. A KV cache compiled with
        ``--max-seq-len`` is updated without a copy when its output is its
        input's DeviceArray. Static shapes only."""
        from . import Error
        if self.dynamic_shapes:
            raise Error("run_device needs a library of static shapes; this one has dims "
                        "fixed at run time (use run)")
        inputs, given = self._named(inputs, out)

        def check(kind, name, a, dtype, shape):
            if isinstance(a, DeviceArray) and a.library is not self:
                raise Error(f"{kind} {name!r} is a DeviceArray of another library")
            if a.dtype != dtype or tuple(a.shape) != tuple(shape):
                raise Error(f"{kind} {name!r} is {a.dtype}{list(a.shape)}, the "
                            f"library was compiled for {dtype}{list(shape)}")

        keep, pointers = [], (ctypes.c_void_p * max(len(self.inputs), 1))()
        for i, (name, dtype, shape) in enumerate(self.inputs):
            a = inputs[name]
            if not isinstance(a, DeviceArray):
                a = _dense(a)
            check("input", name, a, dtype, shape)
            if name in self.host_inputs:
                a = a.numpy() if isinstance(a, DeviceArray) else a
                pointers[i] = a.ctypes.data
            else:
                # A temporary is freed while the run may be queued: the
                # runtime reuses its memory only for later work.
                a = a if isinstance(a, DeviceArray) else self.to_device(a)
                pointers[i] = a._pointer()
            keep.append(a)
        outs = {}
        for name, dtype, shape in self.outputs:
            a = given.get(name)
            if a is None:
                a = self.empty_device(shape, dtype)
            elif not isinstance(a, DeviceArray):
                raise Error(f"output {name!r} must be given as a DeviceArray")
            check("output", name, a, dtype, shape)
            outs[name] = a
        # Kernels would read and write one buffer at once (a cache updated
        # in place is an input given as its output, which is fine).
        seen = {}
        for name, a in outs.items():
            if id(a) in seen:
                raise Error(f"outputs {seen[id(a)]!r} and {name!r} are the same DeviceArray")
            seen[id(a)] = name
        out_pointers = (ctypes.c_void_p * max(len(outs), 1))(
            *[a._pointer() for a in outs.values()])
        status = self._rt.mp_library_run_device(self._handle, pointers, out_pointers)
        if status:
            _raise(status)
        return outs

    def _run_shaped(self, arrays: list[np.ndarray]) -> dict[str, np.ndarray]:
        """mp_library_run_shaped on the checked input arrays."""
        ins = (_ShapedTensor * max(len(arrays), 1))()
        for t, a in zip(ins, arrays):
            t.data = a.ctypes.data
            t.shape[:a.ndim] = a.shape
        res = (_ShapedTensor * max(len(self.outputs), 1))()
        status = self._rt.mp_library_run_shaped(self._handle, ins, res)
        if status:
            _raise(status)
        outs = {}
        for t, (name, dtype, shape) in zip(res, self.outputs):
            dims = tuple(t.shape[:len(shape)])
            a = np.empty(dims, dtype)
            if a.nbytes:
                ctypes.memmove(a.ctypes.data, t.data, a.nbytes)
            self._rt.mp_free(t.data)
            outs[name] = a
        return outs

    def close(self) -> None:
        if getattr(self, "_handle", None) and self._handle.value:
            for a in list(self._device_arrays):
                a._release()
            self._rt.mp_library_close(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"mp.Library({str(self.path)!r}, target={self.target!r})"


def memory_stats() -> dict[str, int]:
    """Device memory the runtime holds for CUDA libraries, in bytes:
    activation buffers in use and their peak, cached free buffers, and
    constants (weights)."""
    stats = _MemoryStats()
    _runtime().mp_cuda_memory_stats(ctypes.byref(stats))
    return {name: int(getattr(stats, name)) for name, _ in _MemoryStats._fields_}


def load(path: str | os.PathLike) -> Library:
    """Opens a library written by mp-compile (CPU or CUDA target)."""
    return Library(path)
