#!/usr/bin/env python3
"""Writes PyTorch's own outputs of the corpus's fp16 exports to bench/refs/torch_fp16/.

The corpus's references are onnxruntime's outputs. onnxruntime's CPU provider computes
many fp16 nodes in fp32, so where a value decides a shape (VITS: durations -> ceil ->
output length) its fp16 reference is not the fp16 model as written: on
speech/vits_dynamo_fp16 set 1 onnxruntime returns 30208 samples, PyTorch running the
same half-precision module 30464. bench/corpus.py compares a failing fp16 export with
these outputs too (mp.tools.corpus_bench.against_torch_fp16).

For each model, this rebuilds the module with the corpus generator's own builder and
seed (../shared/corpus/speech/make_speech_corpus.py), checks that in fp32 it reproduces
the fp32 export's stored outputs (so the rebuilt weights are the exported ones) and that
its inputs are the stored ones, then runs `copy.deepcopy(module).half()` -- what the
generator exported -- and writes test_data_set_K/{input,output}_N.pb in ONNX backend
layout, named after the graph's inputs and outputs.

Needs torch and transformers (the corpus's export venv, never CI):

    /work/venv-export/bin/python scripts/corpus/add_torch_fp16_reference.py \
        [--model speech/vits_dynamo_fp16]... [--corpus ../shared/corpus]
"""

import argparse
import copy
import os
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "refs" / "torch_fp16"
DEFAULT_MODELS = ["speech/vits_dynamo_fp16"]


def load_set(d: Path) -> tuple[dict, dict]:
    """The inputs and outputs of one backend-layout test set, by name."""
    ins, outs = {}, {}
    for f in sorted(d.glob("*.pb")):
        t = onnx.TensorProto()
        t.ParseFromString(f.read_bytes())
        (ins if f.name.startswith("input_") else outs)[t.name] = numpy_helper.to_array(t)
    return ins, outs


def fp32_sibling(model_dir: Path) -> Path:
    """speech/vits_dynamo_fp16 -> speech/vits_dynamo (same builder, fp32 export)."""
    name = model_dir.name.removesuffix("_fp16")
    if name == model_dir.name:
        sys.exit(f"error: {model_dir} is not an fp16 export (no _fp16 suffix)")
    return model_dir.parent / name


def tensors(result) -> list:
    import torch
    return [result] if isinstance(result, torch.Tensor) else list(result)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", default=None, metavar="GROUP/NAME",
                    help=f"fp16 export to reference (repeatable; default {DEFAULT_MODELS})")
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    import json

    import torch

    for label in args.model or DEFAULT_MODELS:
        model_dir = args.corpus / label
        meta = json.loads((model_dir / "meta.json").read_text())
        group = model_dir.parent
        sys.path.insert(0, str(group))
        os.environ.setdefault("OMP_NUM_THREADS", "2")
        gen = __import__(f"make_{group.name}_corpus")
        spec = gen.CASES[meta["arch"]]()
        graph = onnx.load(model_dir / "model.onnx", load_external_data=False).graph
        in_names = [i.name for i in graph.input]
        out_names = [o.name for o in graph.output]
        fp32_dir = fp32_sibling(model_dir)
        module16 = copy.deepcopy(spec.module).half().eval()
        for k, inputs in enumerate(spec.sets):
            set_name = f"test_data_set_{k}"
            stored_in, _ = load_set(model_dir / set_name)
            feed = [x.half() if x.is_floating_point() else x for x in inputs]
            for name, x in zip(spec.input_names, feed, strict=True):
                if not np.array_equal(stored_in[name], x.numpy()):
                    sys.exit(f"error: {label} {set_name}: input {name} differs from the stored one")
            # fp32 first: the rebuilt module must be the one that was exported.
            with torch.no_grad():
                got32 = tensors(spec.module(*inputs))
            _, want32 = load_set(fp32_dir / set_name)
            for name, y in zip(spec.output_names, got32, strict=True):
                ref = want32[name]
                y = y.numpy()
                if y.shape != ref.shape or not np.allclose(y, ref, rtol=1e-3, atol=1e-4):
                    sys.exit(f"error: {label} {set_name}: the rebuilt fp32 module does not reproduce "
                             f"{fp32_dir.name}'s {name} (shapes {y.shape} vs {ref.shape})")
            with torch.no_grad():
                got16 = tensors(module16(*feed))
            d = args.out / label / set_name
            d.mkdir(parents=True, exist_ok=True)
            for i, (name, x) in enumerate(zip(in_names, feed, strict=True)):
                (d / f"input_{i}.pb").write_bytes(
                    numpy_helper.from_array(x.numpy(), name).SerializeToString())
            for i, (name, y) in enumerate(zip(out_names, got16, strict=True)):
                (d / f"output_{i}.pb").write_bytes(
                    numpy_helper.from_array(y.numpy(), name).SerializeToString())
                print(f"{label} {set_name}: {name} {tuple(y.shape)} {y.dtype} "
                      f"(onnxruntime's: {tuple(load_set(model_dir / set_name)[1][name].shape)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
