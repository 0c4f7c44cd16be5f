"""Run a CUDA library on the PTX emulator against a test data set.

    python -m mp.emu out/libtts.so examples/tts_decoder/test_data_set_0
        [--reference out/libtts_cpu.so] [--rtol R --atol A] [--trace]
        [--profile [--profile-json FILE] [--launch-us US] [--profile-sites N]]

The library must carry PTX (``mp-compile --target cuda --gpu compute_80``).
Inputs are the folder's ``input_N.pb`` (in the library's input order, or by
name); each output is compared with ``output_N.pb`` and, with
``--reference``, with another library's outputs on the same inputs (the CPU
library: the kernels against the host code of the same graph). Tolerances
against the folder default to mp-run's: 1e-4/1e-5 for fp32 libraries,
1e-2/1e-2 for mixed ones and fp16 outputs; against ``--reference``, which
differs only in summation order, to an absolute bound of 4e-5 (fp32) or two
f16 ulps (mixed, fp16 outputs) of the output's max abs value.
``--rtol``/``--atol`` set both. ``--profile`` prints, per launch and for
the whole run, the global memory traffic in 32-byte sectors, coalescing,
FLOPs on Tensor Cores and CUDA cores and a modeled H200 time next to the
run's roofline (mp.emu.profile says what the model assumes);
``--profile-sites N`` adds, under each launch, the N load/store instructions
that waste the most sector bytes. Exit status: 0 if every comparison passes, 1 if one
fails, 2 if the library cannot run (an emulation error names the kernel, the
PTX line and the thread).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .check import check_library
from .driver import Emulator
from .profile import LAUNCH_SECONDS, StepProfile


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mp.emu", description=__doc__.split("\n\n")[0])
    ap.add_argument("library")
    ap.add_argument("data", type=Path, help="test_data_set folder (input_N.pb, output_N.pb)")
    ap.add_argument("--reference", help="another library to run on the same inputs")
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--atol", type=float)
    ap.add_argument("--trace", action="store_true", help="print every launch and its time")
    ap.add_argument("--profile", action="store_true",
                    help="memory traffic, FLOPs and modeled H200 time per launch and run")
    ap.add_argument("--profile-json", type=Path, help="also write the profile as JSON")
    ap.add_argument("--profile-sites", type=int, default=0, metavar="N",
                    help="with --profile: under each launch, its N global loads and stores "
                         "that move the most bytes no lane asked for")
    ap.add_argument("--launch-us", type=float, default=LAUNCH_SECONDS * 1e6,
                    help="modeled cost of one launch in microseconds (default %(default)g)")
    args = ap.parse_args(argv)
    if args.trace:
        os.environ["MP_EMU_TRACE"] = "1"
    emu = Emulator.install()
    if args.profile or args.profile_json:
        emu.profile = []
    report = check_library(args.library, args.data, args.reference, args.rtol, args.atol)
    if report.error:
        print(f"mp.emu: {report.error}", file=sys.stderr)
        return 2
    s = emu.stats
    print(f"mp.emu: {args.library}: {s.launches} launches, {s.threads} threads, "
          f"{s.instructions} instructions issued, {report.seconds:.1f} s")
    if emu.profile is not None:
        step = StepProfile(emu.profile, report.constant_bytes + report.io_bytes,
                           args.launch_us * 1e-6)
        if args.profile:
            print("\n".join(step.lines(args.profile_sites)))
        if args.profile_json:
            args.profile_json.write_text(json.dumps(step.to_dict(), indent=1) + "\n")
    for verdict in report.verdicts:
        print(verdict)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
