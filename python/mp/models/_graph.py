"""A small helper over onnx.helper for writing graphs the way exporters name them.

Nodes are named ``<scope>/<OpType>`` (``_1``, ``_2``... on repeats within a
scope), e.g. ``layers.0.self_attn.q_proj/MatMul``; their outputs are named
``<node name>_output_<i>`` unless a graph output name is given. Parameters are
initializers named like the PyTorch module parameters
(``layers.0.self_attn.q_proj.weight``); scalar and shape constants are
``Constant`` nodes, as torch.onnx emits them.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Fixed, so that the serialized model does not change with the onnx package.
IR_VERSION = 8  # the IR version of opset 17 (ONNX 1.12)
PRODUCER_NAME = "mp_models"
PRODUCER_VERSION = "1"

Dim = int | str | None


class GraphBuilder:
    def __init__(self, name: str, seed: int, opset: int = 17) -> None:
        self.name = name
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._names: set[str] = set()
        self._node_counts: Counter[str] = Counter()

    # ------------------------------------------------------------ graph I/O
    def input(self, name: str, shape: Sequence[Dim], elem=TensorProto.FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem, list(shape)))
        self._claim(name)
        return name

    def output(self, name: str, shape: Sequence[Dim], elem=TensorProto.FLOAT) -> None:
        self.outputs.append(helper.make_tensor_value_info(name, elem, list(shape)))

    # ------------------------------------------------------------ parameters
    def param(self, name: str, array: np.ndarray) -> str:
        self._claim(name)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def uniform(self, name: str, shape: Sequence[int], bound: float) -> str:
        a = self.rng.uniform(-bound, bound, size=tuple(shape)).astype(np.float32)
        return self.param(name, a)

    def normal(self, name: str, shape: Sequence[int], mean: float, std: float) -> str:
        a = (mean + std * self.rng.standard_normal(size=tuple(shape))).astype(np.float32)
        return self.param(name, a)

    # ------------------------------------------------------------ nodes
    def node(
        self,
        op_type: str,
        inputs: Iterable[str],
        scope: str,
        outputs: Sequence[str] | None = None,
        num_outputs: int = 1,
        **attrs,
    ) -> str | list[str]:
        """Adds a node named ``scope/op_type`` and returns its output name(s)."""
        base = f"{scope}/{op_type}"
        k = self._node_counts[base]
        self._node_counts[base] += 1
        node_name = base if k == 0 else f"{base}_{k}"
        if outputs is None:
            outputs = [f"{node_name}_output_{i}" for i in range(num_outputs)]
        for o in outputs:
            self._claim(o)
        self.nodes.append(
            helper.make_node(op_type, list(inputs), list(outputs), name=node_name, **attrs)
        )
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def const(self, value, scope: str, dtype=np.float32) -> str:
        """A ``Constant`` node holding a scalar (0-d) or a 1-D tensor."""
        array = np.asarray(value, dtype=dtype)
        out = self.node("Constant", [], scope, value=numpy_helper.from_array(array))
        return out

    # ------------------------------------------------------------ model
    def model(self, doc: str = "") -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, self.name, self.inputs, self.outputs, self.initializers
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", self.opset)],
            producer_name=PRODUCER_NAME,
            producer_version=PRODUCER_VERSION,
            doc_string=doc,
        )
        model.ir_version = IR_VERSION
        return model

    def _claim(self, name: str) -> None:
        if name in self._names:
            raise ValueError(f"duplicate value name {name!r}")
        self._names.add(name)


def linear(g: GraphBuilder, x: str, scope: str, d_in: int, d_out: int,
           params: str | None = None, out: str | None = None) -> str:
    """``x @ W + b`` as MatMul + Add, nn.Linear init (uniform +-1/sqrt(d_in)).

    ``params`` names an existing module whose ``.weight``/``.bias``
    initializers are reused (tied weights); by default the module is ``scope``.
    ``out`` names the result (e.g. a graph output).
    """
    if params is None:
        bound = 1.0 / np.sqrt(d_in)
        w = g.uniform(f"{scope}.weight", (d_in, d_out), bound)
        b = g.uniform(f"{scope}.bias", (d_out,), bound)
    else:
        w, b = f"{params}.weight", f"{params}.bias"
    y = g.node("MatMul", [x, w], scope)
    return g.node("Add", [y, b], scope, outputs=[out] if out else None)


def layer_norm(g: GraphBuilder, x: str, scope: str, dim: int, eps: float = 1e-5) -> str:
    """LayerNormalization over the last axis; gamma ~ 1, beta ~ 0 (perturbed)."""
    gamma = g.normal(f"{scope}.weight", (dim,), 1.0, 0.1)
    beta = g.normal(f"{scope}.bias", (dim,), 0.0, 0.1)
    return g.node("LayerNormalization", [x, gamma, beta], scope, axis=-1, epsilon=eps)
