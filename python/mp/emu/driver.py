"""The emulated CUDA driver: build emu_driver.c, point the mp runtime at it,
and execute its kernel launches with :func:`mp.emu.execute.run_launch`.

    from mp.emu import Emulator
    emu = Emulator.install()           # before the first CUDA library loads
    lib = mp.load("libmodel.so")       # built with --gpu compute_80
    outs = lib.run(feeds)              # kernels run in the emulator
    print(emu.stats)
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .execute import run_launch
from .profile import LaunchProfile
from .ptx import Kernel, PtxError, module_variables, parse_module
from .simt import EmulationError, Memory, Stats

SOURCE = Path(__file__).with_name("emu_driver.c")
# The shared fake driver emu_driver.c includes (see _fake_driver_dir).
FAKE_DRIVER = Path("runtime", "fake", "fake_driver.c")

_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_char_p,
                           ctypes.POINTER(ctypes.c_uint), ctypes.c_uint,
                           ctypes.POINTER(ctypes.c_void_p))
# Stream capture: a launch's kernel and arguments kept (a handle, or a negated
# CUresult), run again by a graph launch, dropped with the graph.
_RECORD = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_char_p,
                           ctypes.POINTER(ctypes.c_uint), ctypes.c_uint,
                           ctypes.POINTER(ctypes.c_void_p))
_REPLAY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int64)
_FORGET = ctypes.CFUNCTYPE(None, ctypes.c_int64)
_LAUNCH_FAILED = 719


def _fake_driver_dir() -> Path:
    """The folder of the shared fake driver: $MP_FAKE_DRIVER_DIR, else
    runtime/fake of the first folder above this package that has it (the mp
    source tree, wherever the package sits in it)."""
    if os.environ.get("MP_FAKE_DRIVER_DIR"):
        return Path(os.environ["MP_FAKE_DRIVER_DIR"])
    for root in Path(__file__).resolve().parents:
        if (root / FAKE_DRIVER).is_file():
            return (root / FAKE_DRIVER).parent
    raise RuntimeError(f"mp.emu needs {FAKE_DRIVER} of the mp sources to build its driver: "
                       "set MP_FAKE_DRIVER_DIR to that folder")


def build_driver(out_dir: Path | None = None) -> Path:
    """Compiles emu_driver.c (once per source version) and returns the .so."""
    fake = _fake_driver_dir()
    # What the driver is built from: this file, the shared core and the
    # runtime's list of entry points that the core includes.
    sources = [SOURCE, fake / FAKE_DRIVER.name, fake.parent / "lib" / "CudaSymbols.def"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:12]
    # A folder of this user's own: a shared one would let another user
    # plant the library this process loads.
    out_dir = out_dir or Path(os.environ.get("MP_EMU_CACHE", tempfile.gettempdir())) / \
        f"mp_emu-{os.getuid()}"
    out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if out_dir.stat().st_uid != os.getuid():
        raise RuntimeError(f"{out_dir} belongs to another user: set MP_EMU_CACHE")
    out = out_dir / f"libmp_emu_cuda-{digest}.so"
    if out.is_file():
        return out
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise RuntimeError("mp.emu needs a C compiler (cc, gcc or clang) to build its driver")
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-I", str(fake), "-o", str(tmp), str(SOURCE)],
                   check=True)
    tmp.replace(out)
    return out


class Emulator:
    """The emulated driver of this process (one: the runtime loads one driver)."""

    _installed: "Emulator | None" = None

    def __init__(self, path: Path):
        self.path = path
        self.lib = ctypes.CDLL(str(path))
        self.lib.mp_emu_arena.restype = ctypes.c_void_p
        self.lib.mp_emu_arena.argtypes = [ctypes.POINTER(ctypes.c_size_t)]
        self.lib.mp_emu_allocations.restype = ctypes.c_size_t
        self.lib.mp_emu_allocations.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_size_t]
        self.lib.mp_emu_set_error.argtypes = [ctypes.c_char_p]
        self.stats = Stats()
        self.seconds = 0.0
        self.errors: list[str] = []
        self.trace = os.environ.get("MP_EMU_TRACE") == "1"
        self._modules: dict[int, dict[str, Kernel]] = {}
        self._symbols: dict[int, dict[str, int]] = {}  # module -> variable addresses
        self._callback = _LAUNCH(self._launch)  # kept alive with the emulator
        self.lib.mp_emu_set_launch(self._callback)
        self._graph_callbacks = (_RECORD(self._record), _REPLAY(self._replay),
                                 _FORGET(self._forget))
        self.lib.mp_emu_set_graph_hooks(*self._graph_callbacks)
        #: Launches kept by stream captures, by handle: (module serial, kernel,
        #: grid, block, dynamic shared bytes, argument bytes by name).
        self._recorded: dict[int, tuple] = {}
        self._next_handle = 0
        #: Launches recorded by stream captures, and run again by graph launches.
        self.captured = self.replayed = 0
        self._bytes: np.ndarray | None = None
        #: A list to profile launches into (mp.emu.profile), None otherwise.
        self.profile: list[LaunchProfile] | None = None

    @classmethod
    def install(cls, path: Path | None = None) -> "Emulator":
        """Builds the driver and sets MP_CUDA_DRIVER, before the runtime first
        initializes CUDA in this process."""
        if cls._installed is not None:
            return cls._installed
        path = path or build_driver()
        os.environ["MP_CUDA_DRIVER"] = str(path)
        cls._installed = cls(path)
        return cls._installed

    def _memory(self) -> Memory:
        if self._bytes is None:
            size = ctypes.c_size_t()
            base = self.lib.mp_emu_arena(ctypes.byref(size))
            if not base:
                raise EmulationError("the emulated device memory could not be mapped")
            self._base = base
            self._bytes = np.ctypeslib.as_array((ctypes.c_uint8 * size.value).from_address(base))
        n = self.lib.mp_emu_allocations(None, None, None, 0)
        starts, sizes = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
        live = np.zeros(n, np.int32)
        self.lib.mp_emu_allocations(starts.ctypes.data, sizes.ctypes.data, live.ctypes.data, n)
        return Memory(self._base, self._bytes, starts, starts + sizes, live.astype(bool))

    def _load_variables(self, text: str) -> dict[str, int]:
        """Allocates and initializes the module's variables in device memory,
        as the driver does when it loads a module (here: at its first launch)."""
        addresses = {}
        for v in module_variables(text):
            pointer = ctypes.c_uint64()
            if self.lib.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(max(v.size, 1))):
                raise EmulationError(f"no device memory for the module variable {v.name}")
            memory = self._memory()
            offset = pointer.value - memory.base
            memory.bytes[offset:offset + v.size] = np.frombuffer(v.data, np.uint8)
            addresses[v.name] = pointer.value
        return addresses

    def _decode(self, serial, ptx, name, dims, shared, params) -> tuple:
        """The launch's module serial, kernel, grid, block, dynamic shared
        bytes and argument bytes by parameter name (read now)."""
        module = self._modules.get(serial)
        if module is None:
            text = ctypes.string_at(ptx).decode()
            module = self._modules[serial] = parse_module(text)
            self._symbols[serial] = self._load_variables(text)
        kernel = module[name.decode()]
        values = {p.name: ctypes.string_at(params[i], p.size) for i, p in enumerate(kernel.params)}
        return serial, kernel, tuple(dims[0:3]), tuple(dims[3:6]), shared, values

    def _execute(self, launch: tuple) -> None:
        serial, kernel, grid, block, shared, values = launch
        start = time.perf_counter()
        run_launch(kernel, grid, block, shared, values, self._memory(), self.stats,
                   symbols=self._symbols[serial], profile=self.profile)
        elapsed = time.perf_counter() - start
        self.seconds += elapsed
        if self.trace:
            print(f"mp_emu: {kernel.name} grid {grid} block {block}: {elapsed * 1e3:.1f} ms",
                  file=sys.stderr)

    def _failed(self, what: str, e: BaseException) -> int:
        """Reports `e` as the launch's failure (nothing may cross the C callback)."""
        if isinstance(e, (EmulationError, PtxError)):
            message = str(e)
        else:
            # An emulator bug or an interrupt: the launch fails (ctypes would
            # otherwise return an undefined CUresult to the runtime).
            message = f"kernel {what}: emulator failure: {type(e).__name__}: {e}"
        self.errors.append(message)
        self.lib.mp_emu_set_error(message.encode()[:4000])
        return _LAUNCH_FAILED

    def _launch(self, serial, ptx, name, dims, shared, params) -> int:
        try:
            self._execute(self._decode(serial, ptx, name, dims, shared, params))
            return 0
        except BaseException as e:  # noqa: BLE001 -- see _failed
            return self._failed(name.decode(), e)

    def _record(self, serial, ptx, name, dims, shared, params) -> int:
        try:
            launch = self._decode(serial, ptx, name, dims, shared, params)
        except BaseException as e:  # noqa: BLE001 -- see _failed
            return -self._failed(name.decode(), e)
        handle, self._next_handle = self._next_handle, self._next_handle + 1
        self._recorded[handle] = launch
        self.captured += 1
        return handle

    def _replay(self, handle) -> int:
        launch = self._recorded[handle]
        try:
            self._execute(launch)
            self.replayed += 1
            return 0
        except BaseException as e:  # noqa: BLE001 -- see _failed
            return self._failed(launch[1].name, e)

    def _forget(self, handle) -> None:
        self._recorded.pop(handle, None)
