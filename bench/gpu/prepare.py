"""Second half of bench/gpu/build.sh (runs here, needs onnx and the mp runtime).

    python bench/gpu/prepare.py ARTIFACTS RUNTIME MODEL_DIR...

For each model folder, after build.sh compiled ARTIFACTS/NAME/{fp32,mixed}/{cuda,cpu}/:

- NAME/onnx/: model.onnx (and model.onnx.data), for onnxruntime on the GPU machine;
- NAME/inputs/input_N.npy and NAME/onnx_ref/output_N.npy: test_data_set_0's
  .pb files as numpy (the GPU machine needs no onnx package), with their names
  in the manifest (tensor names like 'onnx::Flatten_0' make poor file names);
- NAME/P/ref_cpu/output_N.npy: the outputs of the CPU library of precision P,
  run here through mp.load. The CUDA library of the same precision must match
  these (same lowering and precision policy, only the target differs); the
  ONNX outputs are reported beside them for information.

Writes ARTIFACTS/manifest.json, which bench/gpu/run.py reads. Exits 1 if a
CPU library failed to run (its builds get no reference).
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

ART, RUNTIME = Path(sys.argv[1]), Path(sys.argv[2])
# mp.load finds the runtime through this variable (no libMPCAPI.so needed).
os.environ["MP_RUNTIME_LIBRARY"] = str(RUNTIME.resolve())
import mp  # noqa: E402
from mp.tools.report import commit  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def tensors(folder: Path, prefix: str, names: list[str], out: Path) -> list[dict]:
    """Saves folder/prefix_N.pb as out/prefix_N.npy. A .pb without a name
    takes the graph's N-th name (the backend-test layout is in graph order)."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    files = sorted(folder.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
    for i, pb in enumerate(files):
        t = onnx.load_tensor(str(pb))
        a = numpy_helper.to_array(t)
        np.save(out / f"{pb.stem}.npy", a)
        rows.append({"name": t.name or names[i], "file": str((out / f"{pb.stem}.npy").relative_to(ART)),
                     "dtype": str(a.dtype), "shape": list(a.shape)})
    return rows


def main() -> int:
    ok = True
    models = []
    for model_dir in map(Path, sys.argv[3:]):
        name = model_dir.name
        dst = ART / name
        graph = onnx.load(str(model_dir / "model.onnx"), load_external_data=False).graph
        inits = {i.name for i in graph.initializer}
        in_names = [i.name for i in graph.input if i.name not in inits]
        out_names = [o.name for o in graph.output]
        (dst / "onnx").mkdir(parents=True, exist_ok=True)
        for f in model_dir.glob("model.onnx*"):   # model.onnx.data: external weights
            shutil.copy(f, dst / "onnx" / f.name)
        data = model_dir / "test_data_set_0"
        inputs = tensors(data, "input", in_names, dst / "inputs")
        onnx_ref = tensors(data, "output", out_names, dst / "onnx_ref")
        feeds = {r["name"]: np.load(ART / r["file"]) for r in inputs}
        expected = {r["name"]: np.load(ART / r["file"]) for r in onnx_ref}
        try:
            source = str(model_dir.resolve().relative_to(REPO.parent))
        except ValueError:
            source = str(model_dir)
        entry = {"name": name, "source": source,
                 "onnx": str((dst / "onnx" / "model.onnx").relative_to(ART)),
                 "inputs": inputs, "onnx_outputs": onnx_ref, "builds": []}
        for p in ("fp32", "mixed"):
            build = {"precision": p}
            for target in ("cuda", "cpu"):
                folder = dst / p / target
                lib = folder / f"lib{name}.so"
                if not lib.is_file():
                    log = (folder / "compile.log").read_text(errors="replace") if (folder / "compile.log").is_file() else ""
                    build[target] = {"ok": False, "error": "compile failed: " + " | ".join(log.strip().splitlines()[-3:])}
                    continue
                desc = json.loads(lib.with_suffix(".json").read_text())
                build[target] = {"ok": True, "library": str(lib.relative_to(ART)),
                                 "runtime": str((folder / "libmp_runtime.so").relative_to(ART)),
                                 "inputs": [i["name"] for i in desc["inputs"]],
                                 "outputs": [o["name"] for o in desc["outputs"]],
                                 "gpu_archs": desc.get("gpu_archs", [])}
            build["reference"] = None
            if build["cpu"]["ok"]:
                try:
                    with mp.load(ART / build["cpu"]["library"]) as lib:
                        outs = lib.run({n: feeds[n] for n, _, _ in lib.inputs})
                    ref_dir = dst / p / "ref_cpu"
                    ref_dir.mkdir(exist_ok=True)
                    build["reference"] = []
                    for k, (oname, a) in enumerate(outs.items()):
                        np.save(ref_dir / f"output_{k}.npy", a)
                        build["reference"].append({"name": oname, "file": str((ref_dir / f"output_{k}.npy").relative_to(ART))})
                        info = ""
                        if oname in expected and expected[oname].shape == a.shape:
                            err = np.max(np.abs(a.astype(np.float64) - expected[oname].astype(np.float64)), initial=0.0)
                            info = f", max |cpu - onnx| {err:.3g}"
                        print(f"  {name} {p} cpu reference {oname} {a.dtype}{list(a.shape)}{info}")
                except Exception as e:  # noqa: BLE001 -- recorded, the others go on
                    ok = False
                    build["cpu"]["ok"] = False
                    build["cpu"]["error"] = f"CPU library failed to run here: {e}"
                    print(f"  {name} {p} cpu: FAILED to run: {e}")
            entry["builds"].append(build)
        models.append(entry)

    manifest = {"created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "mp_commit": commit(),
                "gpu_arch": os.environ.get("MP_GPU_ARCH", "sm_90"), "models": models}
    (ART / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {ART / 'manifest.json'} ({len(models)} models)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
