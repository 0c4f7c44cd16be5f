"""Command line: build an example model and its test data.

    python -m mp.models NAME [-o PATH/model.onnx]
    python -m mp.models all  [-o DIR]          (DIR/<name>/model.onnx, default examples)
    python -m mp.models --list
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import BUILDERS, write_example


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mp.models",
        description="Write an example ONNX model and test_data_set_0/ beside it "
        "(outputs from onnxruntime CPU, graph optimizations disabled).",
    )
    parser.add_argument("name", nargs="?", choices=[*BUILDERS, "all"], help="model to build")
    parser.add_argument("-o", "--output", type=Path,
                        help="model path (default examples/NAME/model.onnx); "
                        "for 'all', the parent folder of the NAME/ folders (default examples)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    args = parser.parse_args(argv)

    if args.list:
        for name, module in BUILDERS.items():
            summary = (module.__doc__ or "").strip().splitlines()[0]
            print(f"{name:20s} {summary}")
        return 0
    if args.name is None:
        parser.error("a model name (or 'all', or --list) is required")

    if args.name == "all":
        root = args.output or Path("examples")
        targets = [(name, root / name / "model.onnx") for name in BUILDERS]
    else:
        targets = [(args.name, args.output or Path("examples") / args.name / "model.onnx")]

    for name, path in targets:
        write_example(name, path)
        data = path.parent / "test_data_set_0"
        size = path.stat().st_size + sum(f.stat().st_size for f in data.glob("*.pb"))
        print(f"{name}: wrote {path} and {data}/ ({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
