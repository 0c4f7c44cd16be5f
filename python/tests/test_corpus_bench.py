"""A sampled corner of bench/corpus.md: two small real-exporter models through mp.tools.corpus_bench.

The full table is ``.venv/bin/python bench/corpus.py`` (~40 min); here two
small models of ``../shared/corpus`` (whisper's encoder exported by dynamo,
gpt2 by TorchScript) must import and pass fp32 on both test sets at mp-run's
default tolerances (rtol 1e-4, atol 1e-5), and the report must have one row
per model with every column filled. About 10 s on 2 cores.
"""

from pathlib import Path

import pytest

from mp.tools import conformance, corpus_bench

SAMPLE = ["speech/whisper_encoder_dynamo", "decoders/gpt2_ts"]
TOOLS = corpus_bench.Tools.default()


@pytest.fixture(scope="module")
def results():
    if not corpus_bench.CORPUS.is_dir():
        pytest.skip(f"the corpus is absent ({corpus_bench.CORPUS})")
    for tool in (TOOLS.mp_run, TOOLS.mp_opt):
        if not tool.is_file():
            pytest.skip(f"{tool.name} is not built ({tool} missing; set MP_BUILD_DIR or build mp)")
    dirs = [corpus_bench.CORPUS / name for name in SAMPLE]
    missing = [str(d) for d in dirs if not (d / "model.onnx").is_file()]
    if missing:
        pytest.skip(f"sample models absent: {', '.join(missing)}")
    PARTIALS.clear()
    return corpus_bench.sweep(dirs, TOOLS, steps=("import", "fp32"), timeout=120,
                              on_result=lambda done: PARTIALS.append([r.name for r in done]))


# What sweep's on_result saw after each model (the report is rewritten from it).
PARTIALS: list[list[str]] = []


def test_selection_by_substring():
    dirs = [Path("/c/decoders/gpt2_ts"), Path("/c/speech/vits_ts"), Path("/m/models/silero")]
    assert corpus_bench.select(dirs, ["speech/"]) == [dirs[1]]
    assert corpus_bench.select(dirs, ["gpt2", "silero"]) == [dirs[0], dirs[2]]
    assert corpus_bench.select(dirs, []) == dirs


@pytest.mark.parametrize("index", range(len(SAMPLE)), ids=SAMPLE)
def test_fp32_passes_both_sets(results, index):
    r = results[index]
    assert r.name == SAMPLE[index]
    assert r.import_.status == corpus_bench.OK, r.import_.text()
    for data_set in corpus_bench.DATA_SETS:
        cell = r.fp32[data_set]
        assert cell.status == conformance.PASSED, f"{r.name} {data_set}: {cell.text()}"
        # The cell carries the worst max abs error, within mp-run's fp32 atol-dominated budget.
        assert float(cell.detail) < 1e-3, cell.text()
    # Every output was compared on both sets.
    assert r.outputs and all(len(d.fp32) == 2 and all(v.startswith("PASS") for v in d.fp32.values())
                             for d in r.outputs.values())


def test_sweep_reports_each_finished_model(results):
    assert PARTIALS == [SAMPLE[:1], SAMPLE]
    text = corpus_bench.render(results[:1], command="test", elapsed_s=0.0, tools=TOOLS,
                               timeout=120, repeat=1, pending=1)
    assert "**In progress**: 1 models done, 1 still running or queued" in text
    assert f"| {SAMPLE[0]} |" in text and f"| {SAMPLE[1]} |" not in text


def test_report_has_one_full_row_per_model(results):
    text = corpus_bench.render(results, command="test", elapsed_s=0.0, tools=TOOLS, timeout=120,
                               repeat=1)
    lines = text.splitlines()
    header = "| " + " | ".join(corpus_bench.COLUMNS) + " |"
    start = lines.index(header)
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    assert [r.split(" | ")[0].removeprefix("| ") for r in rows] == SAMPLE
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == len(corpus_bench.COLUMNS), line
        assert all(cells), f"empty cell in {line}"
        assert cells[2].startswith("PASS") and cells[3].startswith("PASS"), line
        # Steps not run are shown as such, not as results.
        assert cells[corpus_bench.COLUMNS.index("CUDA build")] == "skipped", line


def _identity_model(d: Path, refs: Path, ref: "np.ndarray", torch_ref: "np.ndarray | None") -> Path:
    """An fp16 Identity model whose stored reference is `ref` and, when given, whose
    PyTorch fp16 reference in `refs` is `torch_ref` (input: ones[4])."""
    import numpy as np
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4])])
    d.mkdir(parents=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]),
              d / "model.onnx")
    x = np.ones(4, np.float16)
    for where, out in ((d / "test_data_set_0", ref),
                       (refs / corpus_bench.label(d) / "test_data_set_0", torch_ref)):
        if out is None:
            continue
        where.mkdir(parents=True)
        (where / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
        (where / "output_0.pb").write_bytes(
            numpy_helper.from_array(out, "y").SerializeToString())
    return d / "model.onnx"


@pytest.mark.parametrize("torch_matches", [True, False, None], ids=["torch-passes", "torch-fails",
                                                                     "no-torch-reference"])
def test_fp16_failure_is_checked_against_torch_fp16(tmp_path, monkeypatch, torch_matches):
    """A FAIL against the stored (onnxruntime) reference becomes PASS only when PyTorch's fp16
    outputs beside the model match; onnxruntime's result stays in the cell."""
    import numpy as np
    if not TOOLS.mp_run.is_file():
        pytest.skip(f"mp-run is not built ({TOOLS.mp_run})")
    torch_ref = None if torch_matches is None else np.full(4, 1 if torch_matches else 3, np.float16)
    monkeypatch.setattr(corpus_bench, "TORCH_FP16_REFS", tmp_path / "refs")
    model = _identity_model(tmp_path / "speech" / "m", tmp_path / "refs", np.full(4, 2, np.float16),
                            torch_ref)
    r = corpus_bench.ModelResult("m", model.parent)
    corpus_bench.step_fp32(TOOLS, r, "test_data_set_0", timeout=120)
    cell = r.fp32["test_data_set_0"]
    if torch_matches:
        assert cell.status == conformance.PASSED, cell.text()
        assert "vs torch fp16 (onnxruntime: FAIL 1" in cell.text()
    else:
        assert cell.status == conformance.FAILED, cell.text()
        assert "torch" not in cell.text()


def test_emulator_step_runs_the_cuda_library_on_the_ptx_emulator(tmp_path):
    """The emulator columns: gpt2_ts's CUDA library (PTX, set 0's shapes) runs on
    the emulator in fp32 and mixed precision and passes against onnxruntime's
    outputs, with the worst max abs error in the cell (about 10 s)."""
    model = corpus_bench.CORPUS / "decoders" / "gpt2_ts"
    if not (model / "model.onnx").is_file() or not TOOLS.mp_compile.is_file():
        pytest.skip("the corpus or mp-compile is absent")
    pytest.importorskip("onnxruntime")
    r = corpus_bench.ModelResult(corpus_bench.label(model), model)
    corpus_bench.step_emulator(TOOLS, r, 600, tmp_path)
    assert list(r.emulator) == ["fp32", "mixed"]
    for precision, cell in r.emulator.items():
        assert cell.status == conformance.PASSED, f"{precision}: {cell.text()}"
        bound = 1e-4 if precision == "fp32" else 1e-2
        assert 0 < float(cell.detail) < bound, cell.text()


@pytest.mark.parametrize("stdout, returncode, want", [
    ("mp.emu: lib.so: 3 launches\nPASS y vs expected: max abs err 1e-07\n"
     "PASS z vs expected: max abs err 2e-05\n", 0, "PASS 2e-05"),
    ("PASS y vs expected: max abs err 1e-07\n"
     "FAIL z vs expected: max abs err 0.5, 3 of 8 outside rtol 0.0001 atol 1e-05\n", 1,
     "FAIL 0.5 (z)"),
    ("mp.emu: error: 'ld.local.v8' is not emulated\n", 2, "error"),
])
def test_emulator_cell_reads_the_verdicts(stdout, returncode, want):
    run = conformance.Run(returncode, stdout, "error: 'ld.local.v8' is not emulated", 1.0)
    cell = corpus_bench.emulator_cell(run, Path("model.onnx"))
    assert cell.text().startswith(want), cell.text()
