"""Generate a large transformer-like ONNX model to measure import time/memory.

    python -m mp.tools.big_model --gb 1 -o /tmp/big/model.onnx [--external]
        [--d-model 1024] [--vocab 32000] [--seed 0]

Decoder blocks of a GPT-like model (opset 18, fp32): token embedding (Gather),
then per layer LayerNormalization, Q/K/V/O projections (MatMul + Add bias),
scaled dot-product attention (Reshape/Transpose/MatMul/Softmax), MLP
(MatMul, Gelu as x*0.5*(1+erf(x/sqrt2)), MatMul) and residual Adds, final
LayerNorm and an LM head. The number of layers is picked so the weights total
about --gb GiB (random normal values, so nothing compresses or dedups); there
is at least one, so the embedding and LM head (2 x vocab x d_model floats)
plus one layer is the smallest model: use a smaller --d-model and --vocab for
tiny ones (bench/import.py's test).

Variant A (default): every weight inline as raw_data (the model must stay
under protobuf's 2 GiB limit). Variant B (--external): weights in
<model>.data next to the model, 64-byte aligned, referenced by external_data
(location, offset, length). Not for committing: the files are ~GB.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

ALIGN = 64
HEADS = 16
FFN_MULT = 4
OPSET = 18


class Weights:
    def __init__(self, rng, external: Path | None, model_dir: Path):
        self.rng = rng
        self.inits: list[onnx.TensorProto] = []
        self.bytes = 0
        self.external = external
        self.fh = open(external, "wb") if external else None
        self.model_dir = model_dir

    def add(self, name, shape, scale=0.02, const=None):
        if const is not None:
            a = np.full(shape, const, np.float32)
        else:
            a = self.rng.standard_normal(shape, dtype=np.float32)
            a *= scale
        t = onnx.TensorProto()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(shape)
        if self.fh:
            off = self.fh.tell()
            pad = (-off) % ALIGN
            if pad:
                self.fh.write(b"\0" * pad)
                off += pad
            self.fh.write(a.tobytes())
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", self.external.name), ("offset", str(off)),
                         ("length", str(a.nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
        else:
            t.raw_data = a.tobytes()
        self.bytes += a.nbytes
        self.inits.append(t)
        return name

    def close(self):
        if self.fh:
            self.fh.close()


def build(gb: float, out: Path, external: bool, d=1024, heads=HEADS, vocab=32000,
          ffn_mult=FFN_MULT, seed=0):
    """Writes the model to ``out`` (and ``out``.data with ``external``); returns
    what it holds: layers, initializers, weight_bytes, parameters, model_bytes,
    data_bytes and the shape parameters (d_model, heads, ffn, vocab, opset)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    target = gb * (1 << 30)
    per_layer = (4 * d * d + 2 * ffn_mult * d * d + 4 * d + ffn_mult * d + d + 4 * d) * 4
    fixed = (vocab * d * 2 + 2 * d) * 4
    layers = max(1, round((target - fixed) / per_layer))
    data_path = out.with_name(out.name + ".data") if external else None
    W = Weights(np.random.default_rng(seed), data_path, out.parent)
    nodes = []
    consts = []

    def const_i64(name, vals):
        consts.append(helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals))
        return name

    def const_f(name, v):
        consts.append(helper.make_tensor(name, TensorProto.FLOAT, [], [v]))
        return name

    def node(op, ins, outs, **kw):
        nodes.append(helper.make_node(op, ins, outs, name=outs[0], **kw))
        return outs[0]

    hd = d // heads
    shape_heads = const_i64("shape_heads", [0, 0, heads, hd])
    shape_merge = const_i64("shape_merge", [0, 0, d])
    scale = const_f("attn_scale", 1.0 / np.sqrt(hd))
    half, one, rsqrt2 = const_f("half", 0.5), const_f("one", 1.0), const_f("rsqrt2", 1 / np.sqrt(2))

    emb = W.add("embed.weight", [vocab, d])
    x = node("Gather", [emb, "input_ids"], ["embed"], axis=0)
    for i in range(layers):
        p = f"layers.{i}."
        ln = node("LayerNormalization", [x, W.add(p + "ln1.g", [d], const=1.0),
                                         W.add(p + "ln1.b", [d], const=0.0)],
                  [p + "ln1"], axis=-1, epsilon=1e-5)
        qkv = []
        for nm in "qkv":
            mm = node("MatMul", [ln, W.add(p + nm + ".w", [d, d])], [p + nm + ".mm"])
            b = node("Add", [mm, W.add(p + nm + ".b", [d], scale=0.0)], [p + nm])
            r = node("Reshape", [b, shape_heads], [p + nm + ".heads"])
            perm = [0, 2, 3, 1] if nm == "k" else [0, 2, 1, 3]
            qkv.append(node("Transpose", [r], [p + nm + ".t"], perm=perm))
        q, k, v = qkv
        s = node("MatMul", [q, k], [p + "scores"])
        s = node("Mul", [s, scale], [p + "scores.scaled"])
        a = node("Softmax", [s], [p + "probs"], axis=-1)
        ctx = node("MatMul", [a, v], [p + "ctx"])
        ctx = node("Transpose", [ctx], [p + "ctx.t"], perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, shape_merge], [p + "ctx.merge"])
        o = node("MatMul", [ctx, W.add(p + "o.w", [d, d])], [p + "o.mm"])
        o = node("Add", [o, W.add(p + "o.b", [d], scale=0.0)], [p + "o"])
        x = node("Add", [x, o], [p + "res1"])
        ln = node("LayerNormalization", [x, W.add(p + "ln2.g", [d], const=1.0),
                                         W.add(p + "ln2.b", [d], const=0.0)],
                  [p + "ln2"], axis=-1, epsilon=1e-5)
        h = node("MatMul", [ln, W.add(p + "fc1.w", [d, ffn_mult * d])], [p + "fc1.mm"])
        h = node("Add", [h, W.add(p + "fc1.b", [ffn_mult * d], scale=0.0)], [p + "fc1"])
        g = node("Mul", [h, rsqrt2], [p + "gelu.s"])
        g = node("Erf", [g], [p + "gelu.erf"])
        g = node("Add", [g, one], [p + "gelu.1p"])
        g = node("Mul", [g, half], [p + "gelu.half"])
        g = node("Mul", [h, g], [p + "gelu"])
        h = node("MatMul", [g, W.add(p + "fc2.w", [ffn_mult * d, d])], [p + "fc2.mm"])
        h = node("Add", [h, W.add(p + "fc2.b", [d], scale=0.0)], [p + "fc2"])
        x = node("Add", [x, h], [p + "res2"])
    x = node("LayerNormalization", [x, W.add("ln_f.g", [d], const=1.0),
                                     W.add("ln_f.b", [d], const=0.0)], ["ln_f"], axis=-1)
    node("MatMul", [x, W.add("lm_head.w", [d, vocab])], ["logits"])
    W.close()

    graph = helper.make_graph(
        nodes, "big_transformer",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", vocab])],
        initializer=consts + W.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="mp-big-model")
    model.ir_version = 8
    data = model.SerializeToString()
    out.write_bytes(data)
    return {"layers": layers, "weight_bytes": W.bytes, "model_bytes": len(data),
            "data_bytes": data_path.stat().st_size if data_path else 0,
            "initializers": len(W.inits), "parameters": W.bytes // 4,
            "d_model": d, "heads": heads, "ffn": ffn_mult * d, "vocab": vocab, "opset": OPSET}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=1.0, help="weight size in GiB")
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--external", action="store_true",
                    help="weights in <output>.data (external data)")
    ap.add_argument("--d-model", type=int, default=1024, help=f"a multiple of {HEADS}")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.d_model <= 0 or args.d_model % HEADS:
        ap.error(f"--d-model must be a positive multiple of {HEADS}")
    info = build(args.gb, args.output, args.external, d=args.d_model, vocab=args.vocab,
                 seed=args.seed)
    print(f"{args.output}: {info['layers']} layers, {info['initializers']} weights, "
          f"{info['weight_bytes']} weight bytes ({info['weight_bytes'] / (1 << 30):.3f} GiB), "
          f"model file {info['model_bytes']} bytes"
          + (f", data file {info['data_bytes']} bytes" if args.external else ""))


if __name__ == "__main__":
    main()
