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
    return corpus_bench.sweep(dirs, TOOLS, steps=("import", "fp32"), timeout=120)


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
