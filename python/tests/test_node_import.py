"""Regression guard: the ONNX backend node tests through mp-opt's importer.

Runs the sweep of ``mp.tools.node_tests`` (every node test of the onnx wheel and
of Debian's libonnx-testdata whose ops mp lists at the model's opset is imported
with ``$MP_BUILD_DIR/bin/mp-opt``) and checks that

* mp-opt never crashes (signal or exit code >= 128) on any of them, and
* every case listed in ``data/node_tests_importing.txt`` still imports (cases
  that start importing are reported so the list can grow).

The full report (every failure with its first error line) is written to
``$MP_BUILD_DIR/test-logs/import-node-tests.md`` for inspection; the committed
one is ``bench/import-node-tests.md`` (``python bench/import-node-tests.py``).
About 50 s on 2 idle cores.
"""

import time
from pathlib import Path

import pytest

from mp.tools import build_dir, node_tests

REPO = Path(__file__).resolve().parents[2]

# The cases that import, one `source/name` per line: every one must keep
# importing, and a case that starts importing is reported so it can be added.
IMPORTING = Path(__file__).with_name("data") / "node_tests_importing.txt"
# Sanity floor on how many cases each source must have, so that a missing or
# truncated test-data folder does not make the guard vacuous.
MIN_CASES = {
    node_tests.SOURCE_WHEEL: 1700,
    node_tests.SOURCE_DEBIAN: 900,
}


MP_OPT = build_dir() / "bin" / "mp-opt"


@pytest.fixture(scope="module")
def sweep():
    if not MP_OPT.is_file():
        pytest.skip(f"mp-opt is not built ({MP_OPT} missing; set MP_BUILD_DIR or build mp)")
    sources = node_tests.default_sources()
    if not sources[node_tests.SOURCE_WHEEL].is_dir():
        pytest.skip(f"the onnx wheel has no backend node tests at {sources[node_tests.SOURCE_WHEEL]}")
    start = time.monotonic()
    cases = node_tests.sweep(MP_OPT, sources)
    elapsed = time.monotonic() - start
    log_dir = build_dir() / "test-logs"
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / "import-node-tests.md").write_text(
            node_tests.render_report(cases, MP_OPT, elapsed, sources)
        )
    except OSError:
        pass
    return cases


def test_no_crashes(sweep):
    crashes = [f"{c.source}/{c.name}: {c.error}" for c in sweep if c.status == node_tests.CRASHED]
    assert not crashes, "mp-opt crashed on:\n  " + "\n  ".join(crashes)


def _listed() -> list[str]:
    return [line.strip() for line in IMPORTING.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("source", sorted(MIN_CASES))
def test_listed_cases_import(sweep, source):
    """Every listed case of `source` is found and imports; cases that import and
    are not listed are reported (a warning naming them)."""
    cases = {f"{c.source}/{c.name}": c for c in sweep if c.source == source}
    if not cases and source != node_tests.SOURCE_WHEEL:
        pytest.skip(f"{source} is not installed on this machine")
    assert len(cases) >= MIN_CASES[source], f"{source}: only {len(cases)} node tests found"
    listed = [k for k in _listed() if k.startswith(source + "/")]
    assert len(listed) == len(set(listed)), f"duplicate keys in {IMPORTING.name}"
    missing = [k for k in listed if k not in cases]
    assert not missing, f"listed cases not found (test data changed?): {missing[:20]}"
    failing = [f"  {k}: {cases[k].status}: {cases[k].error}" for k in listed
               if cases[k].status != node_tests.OK]
    counts = node_tests.counts(cases.values())
    assert not failing, (f"{source}: {len(failing)} listed cases no longer import "
                         f"({counts.ok}/{counts.attempted} attempted import):\n"
                         + "\n".join(failing[:40]))
    new = sorted(k for k, c in cases.items() if c.status == node_tests.OK and k not in set(listed))
    if new:
        import warnings
        warnings.warn(f"{len(new)} {source} cases import and are not listed in {IMPORTING}; "
                      f"add them: {', '.join(new)}")


# --------------------------------------------------------------- the classifier itself (no mp-opt)

TABLE_TEXT = """\
ai.onnx Add 7,13,14
ai.onnx Gelu 20
ai.onnx If 1,11,13
com.microsoft FastGelu 1
"""


def _model(nodes, opset=17, extra_opsets=(), inputs=None, outputs=None):
    import onnx
    from onnx import TensorProto, helper

    inputs = inputs or [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])]
    outputs = outputs or [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    return onnx.helper.make_model(graph, opset_imports=opsets)


def _reasons(model, tmp_path):
    import onnx

    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    table = node_tests.parse_op_table(TABLE_TEXT)
    return node_tests.unsupported_reasons(node_tests.read_model_info(path), table)


def test_parse_op_table_and_pick():
    table = node_tests.parse_op_table(TABLE_TEXT)
    assert table[("ai.onnx", "Add")] == [7, 13, 14]
    assert table[("com.microsoft", "FastGelu")] == [1]
    assert node_tests.picked_version([7, 13, 14], 12) == 7
    assert node_tests.picked_version([7, 13, 14], 14) == 14
    assert node_tests.picked_version([20], 19) is None
    with pytest.raises(ValueError):
        node_tests.parse_op_table("ai.onnx Add\n")


def test_classification(tmp_path):
    from onnx import TensorProto, helper

    add = helper.make_node("Add", ["x", "x"], ["y"])
    assert _reasons(_model([add]), tmp_path) == []
    assert _reasons(_model([add], opset=6), tmp_path) == ["opset 6"]
    assert _reasons(_model([add], opset=28), tmp_path) == ["opset 28"]
    gelu = helper.make_node("Gelu", ["x"], ["y"])
    assert _reasons(_model([gelu], opset=19), tmp_path) == ["Gelu@19"]
    fast = helper.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft")
    assert _reasons(_model([fast], extra_opsets=[("com.microsoft", 1)]), tmp_path) == []
    # Ops inside subgraphs count.
    branch = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["b"])], "b", [],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
    )
    cond = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    if_node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
    assert _reasons(_model([if_node], inputs=[cond, x]), tmp_path) == ["Relu"]
    # String tensors are outside mp's dialect.
    s = helper.make_tensor_value_info("x", TensorProto.STRING, [2])
    ident = helper.make_node("Identity", ["x"], ["y"])
    so = helper.make_tensor_value_info("y", TensorProto.STRING, [2])
    assert _reasons(_model([ident], inputs=[s], outputs=[so]), tmp_path) == ["type STRING", "Identity"]


def test_crash_detection():
    assert node_tests.is_crash(-11) and node_tests.is_crash(139)
    assert not node_tests.is_crash(1) and not node_tests.is_crash(0)
    assert node_tests.describe_exit(-11) == "killed by signal 11 (SIGSEGV)"
