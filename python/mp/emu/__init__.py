"""A PTX emulator for mp's CUDA libraries, on the CPU.

A library built with ``mp-compile --target cuda --gpu compute_80`` carries
PTX; :class:`Emulator` stands in for libcuda.so.1 and executes its kernels
from that PTX with numpy, so that the CUDA target's kernels (Tensor Core
``mma.sync``, warp-shuffle reductions, flash attention) run against
references on a machine without a GPU. ``python -m mp.emu`` runs a library
on a model's test data. See docs/emulator.md.
"""

from .driver import Emulator, build_driver
from .ptx import PtxError, parse_module
from .simt import EmulationError

__all__ = ["Emulator", "EmulationError", "PtxError", "build_driver", "parse_module"]
