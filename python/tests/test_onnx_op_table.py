"""mp's table of reviewed ONNX since-versions (`mp-opt --list-onnx-ops`) against onnx.defs.

mp dispatches a node on the largest since-version it lists that is <= the
model's opset. That version must be the one ONNX has in force at that opset;
otherwise mp would import an operator version whose semantics it never
reviewed (a newer ONNX revision that changed inputs, attributes or types).
"""

import os
from pathlib import Path

import onnx.defs
import pytest

from mp.tools import node_tests

REPO = Path(__file__).resolve().parents[2]
OPSETS = range(node_tests.MIN_OPSET, node_tests.MAX_OPSET + 1)

# The coverage list of the foundation issue.
REQUIRED_DEFAULT = """
Abs Add And ArgMax Attention AveragePool BatchNormalization Cast CastLike Ceil Clip
Concat Constant ConstantOfShape Conv ConvTranspose Cos CumSum Div Dropout Einsum Elu
Equal Erf Exp Expand Flatten Floor Gather GatherElements GatherND Gelu Gemm
GlobalAveragePool Greater GreaterOrEqual GroupNormalization HardSigmoid Identity If
InstanceNormalization IsInf IsNaN LayerNormalization LeakyRelu Less LessOrEqual Log
LogSoftmax LSTM MatMul Max MaxPool Mean Min Mod Mul Neg Not Or Pad Pow PRelu Range
Reciprocal ReduceL2 ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare
Relu Reshape Resize RMSNormalization RotaryEmbedding ScatterND Shape Sigmoid Sign Sin
Size Slice Softmax Softplus Split Sqrt Squeeze Sub Sum Tanh TensorScatter Tile
Transpose Trilu Unsqueeze Where
SimplifiedLayerNormalization
NonZero
""".split()
# Added since: the random generators (VITS noise), Round, ScatterElements,
# TopK, OneHot.
REQUIRED_DEFAULT += """
RandomNormal RandomNormalLike RandomUniform RandomUniformLike Round ScatterElements
TopK OneHot
""".split()
# The recurrent ops alongside LSTM.
REQUIRED_DEFAULT += """
GRU RNN
""".split()
# Loops (unrolled at import) and the sequence ops exporters emit with them.
REQUIRED_DEFAULT += """
Loop Scan SequenceEmpty SequenceConstruct SequenceInsert SequenceErase SequenceAt
SequenceLength SplitToSequence ConcatFromSequence
""".split()
REQUIRED_MS = """
Attention MultiHeadAttention GroupQueryAttention RotaryEmbedding SkipLayerNormalization
SimplifiedLayerNormalization SkipSimplifiedLayerNormalization EmbedLayerNormalization
FastGelu BiasGelu QuickGelu
""".split()


def _mp_opt() -> Path:
    build = Path(os.environ.get("MP_BUILD_DIR", "build"))
    return (build if build.is_absolute() else REPO / build) / "bin" / "mp-opt"


@pytest.fixture(scope="module")
def table():
    mp_opt = _mp_opt()
    if not mp_opt.is_file():
        pytest.skip(f"mp-opt is not built ({mp_opt} missing; set MP_BUILD_DIR or build mp)")
    return node_tests.load_op_table(mp_opt)


def _onnx_history() -> dict[str, list]:
    """Default-domain op name -> its schemas (every since-version), ascending."""
    history: dict[str, list] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain == "":
            history.setdefault(schema.name, []).append(schema)
    for schemas in history.values():
        schemas.sort(key=lambda s: s.since_version)
    return history


HISTORY = _onnx_history()


def _default_ops(table):
    return sorted(op for (domain, op) in table if domain == node_tests.DEFAULT_DOMAIN)


def test_table_parses_and_is_not_empty(table):
    assert table, "mp-opt --list-onnx-ops printed no ops"
    for key, versions in table.items():
        assert versions == sorted(set(versions)), f"{key}: versions not ascending/unique: {versions}"
        assert all(v >= 1 for v in versions), f"{key}: invalid version in {versions}"


# Default-domain versions that onnxruntime registers below ONNX's first one
# (same meaning as ONNX's), which models optimized by onnxruntime use.
ORT_DEFAULT_DOMAIN_VERSIONS = {"LayerNormalization": {1}}


def test_listed_versions_exist_in_onnx(table):
    """Every since-version mp lists for a default-domain op is one ONNX defines
    (or onnxruntime, for the few listed above)."""
    problems = []
    for op in _default_ops(table):
        if op not in HISTORY:
            continue  # not an ONNX op (e.g. onnxruntime's SimplifiedLayerNormalization)
        known = {s.since_version for s in HISTORY[op]} | ORT_DEFAULT_DOMAIN_VERSIONS.get(op, set())
        for v in table[(node_tests.DEFAULT_DOMAIN, op)]:
            if v not in known:
                problems.append(f"{op}: mp lists since-version {v}; ONNX has {sorted(known)}")
    assert not problems, "\n".join(problems)


def test_picked_version_matches_onnx_at_every_opset(table):
    """At each opset 7..27 where ONNX defines the op, mp's pick is ONNX's since-version in force."""
    mismatches = []
    for op in _default_ops(table):
        schemas = HISTORY.get(op)
        if not schemas:
            continue
        listed = table[(node_tests.DEFAULT_DOMAIN, op)]
        for opset in OPSETS:
            in_force = [s for s in schemas if s.since_version <= opset]
            if not in_force or in_force[-1].deprecated:
                continue  # the op does not exist (yet, or any more) at this opset
            onnx_since = in_force[-1].since_version
            mp_since = node_tests.picked_version(listed, opset)
            if mp_since != onnx_since:
                what = (
                    "mp does not support it at this opset"
                    if mp_since is None
                    else f"mp dispatches on v{mp_since}, which it reviewed instead"
                )
                mismatches.append(
                    f"{op} at opset {opset}: ONNX has v{onnx_since} in force; {what} "
                    f"(mp lists {listed}; ONNX since-versions "
                    f"{[s.since_version for s in schemas]})"
                )
    for line in mismatches:
        print(line)
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)


@pytest.mark.parametrize("op", REQUIRED_DEFAULT)
def test_default_domain_coverage(table, op):
    assert (node_tests.DEFAULT_DOMAIN, op) in table, f"ai.onnx {op} is missing from mp's op table"


@pytest.mark.parametrize("op", REQUIRED_MS)
def test_com_microsoft_coverage(table, op):
    assert ("com.microsoft", op) in table, f"com.microsoft {op} is missing from mp's op table"
