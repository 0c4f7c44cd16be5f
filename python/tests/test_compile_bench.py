"""bench/compile.py (mp.tools.compile_bench) and its measuring helper (mp.tools.measure):
the parsing of mp-run's output, the targets and tables from fake measurements, and one
run of the script at a tiny size."""

import json
import re
import subprocess
import sys
import time

import pytest

from conftest import BUILD, REPO, require_built
from mp.tools import compile_bench as cb
from mp.tools import measure

MB = cb.MB

COLD = """\
mp-run: progress: load: 4.2 ms
mp-run: progress: import: 0.3 ms
mp-run: progress: fusion and precision: 1.5 ms
mp-run: progress: lowering: 549.0 ms
mp-run: progress: LLVM: 2449.4 ms
mp-run: progress: cache store: 2.0 ms
time: compile 3010.2 ms (compiled); run mean 0.036 ms, min 0.036 ms over 1 runs
output                       type                    max abs err  max rel err   argmax  result
logits                       f32[1, 4, 256]             1.94e-07     7.75e-05   100.0%  PASS
present.0.key                f32[1, 4, 4, 16]           5.96e-08     7.39e-05   100.0%  PASS
"""

CACHED = """\
mp-run: progress: load: 15.0 ms
mp-run: progress: cache load: 11.1 ms
time: compile 11.0 ms (cached); run mean 0.032 ms, min 0.032 ms over 1 runs
logits                       f32[1, 4, 256]             1.94e-07     7.75e-05   100.0%  PASS
"""


# ----------------------------------------------------------------------------- parsing


def test_parse_compile():
    assert cb.parse_compile(COLD) == (3010.2, "compiled")
    assert cb.parse_compile(CACHED) == (11.0, "cached")
    assert cb.parse_compile("mp-run: error: no such file\n") is None


def test_parse_progress_keeps_order_and_sums_repeats():
    stages = cb.parse_progress(COLD)
    assert list(stages) == ["load", "import", "fusion and precision", "lowering", "LLVM",
                            "cache store"]
    assert stages["LLVM"] == pytest.approx(2449.4)
    twice = "mp-run: progress: lowering: 10.5 ms\nnoise\nmp-run: progress: lowering: 2 ms\n"
    assert cb.parse_progress(twice) == {"lowering": 12.5}
    assert cb.parse_progress("time: compile 1 ms (compiled)\n") == {}
    # Not a progress line: another tool's prefix, or no unit.
    assert cb.parse_progress("mp-opt: progress: x: 1 ms\nmp-run: progress: x: 1\n") == {}


def test_compare_result():
    assert cb.compare_result(0, COLD) == "PASS"
    failing = COLD.replace("100.0%  PASS\npresent", "100.0%  FAIL\npresent")
    assert cb.compare_result(1, failing) == "FAIL (1 of 2 outputs)"
    err = cb.compare_result(1, "mp-run: error: model.onnx: unsupported op Foo\n")
    assert err.startswith("error (exit 1): ") and "unsupported op Foo" in err
    assert cb.compare_result(-11, "").startswith("error (exit -11)")


def test_supports_progress():
    assert cb.supports_progress("  --precision=<string> - fp32 or mixed\n"
                                "  --progress                - print each compile stage\n")
    assert not cb.supports_progress("  --precision=<string> - fp32 or mixed\n"
                                    "  --max-seq-len=<long>  - ... in progress ...\n")


def test_same_outputs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert cb.same_outputs(a, b) == (False, "no outputs")
    for d in (a, b):
        (d / "logits.npy").write_bytes(b"\x93NUMPY1234")
        (d / "present.0.key.npy").write_bytes(b"xyz")
    assert cb.same_outputs(a, b) == (True, "")
    (b / "present.0.key.npy").write_bytes(b"xyw")
    same, why = cb.same_outputs(a, b)
    assert not same and "present.0.key.npy" in why
    (b / "extra.npy").write_bytes(b"")
    assert cb.same_outputs(a, b) == (False, "different output files")


def test_layers_for_hits_the_node_counts():
    base, per_layer = cb.decoder_layout()
    assert (base, per_layer) == (12, 72)
    for nodes in (10_000, 20_000, 100_000):
        layers = cb.layers_for(nodes, base, per_layer)
        assert abs(base + per_layer * layers - nodes) <= per_layer / 2
    assert cb.layers_for(5, base, per_layer) == 1


def test_written_graph_has_the_planned_nodes(tmp_path):
    g = cb.write_front_end_graph(tmp_path / "g.onnx", 3, shared=True)
    assert g["nodes"] == 12 + 72 * 3 and g["bytes"] > 0


# ----------------------------------------------------------------------------- measuring


def test_measure_reports_exit_output_and_timeout():
    m = measure.run(["/bin/sh", "-c", "echo hello; echo oops >&2; exit 3"], check=False)
    assert m["rc"] == 3 and not m["timed_out"]
    assert "hello" in m["output"] and "oops" in m["output"]
    assert m["wall"] > 0 and m["max_rss"] > 0
    with pytest.raises(measure.Failed, match="rc 3"):
        measure.run(["/bin/sh", "-c", "exit 3"])
    t0 = time.perf_counter()
    m = measure.run(["/bin/sleep", "30"], timeout_s=0.3, check=False)
    assert m["timed_out"] and time.perf_counter() - t0 < 10


def test_measure_passes_env(tmp_path):
    m = measure.run(["/bin/sh", "-c", "echo $MP_CACHE_DIR"], env={"MP_CACHE_DIR": str(tmp_path)})
    assert m["output"].strip() == str(tmp_path)


# ----------------------------------------------------------------------------- targets, page


def fake_graphs(walls: dict[int, float], rss: dict[int, float]) -> tuple[list, dict]:
    graphs, runs = [], {}
    for nodes, wall in walls.items():
        graphs.append({"nodes": nodes, "layers": (nodes - 12) // 72, "bytes": 2 * MB,
                       "initializers": 10, "fused": 2 * ((nodes - 12) // 72)})
        # Three rounds; the median is `wall`.
        runs[nodes] = [{"wall": w, "max_rss": rss[nodes], "user": w, "sys": 0.0, "rc": 0}
                       for w in (wall * 1.1, wall, wall * 0.95)]
    return graphs, {"runs": runs, "baseline": [{"wall": 0.03, "max_rss": 100 * MB}]}


def jit_run(cold: float, cached: float, identical: bool = True, kind: str = "cached") -> dict:
    return {"cold": {"wall": cold, "max_rss": 150 * MB, "compile_ms": cold * 900,
                     "compile_kind": "compiled", "compare": "PASS", "timed_out": False,
                     "stages": {"lowering": cold * 200, "LLVM": cold * 700}},
            "cached": {"wall": cached, "max_rss": 120 * MB, "compile_ms": 9.0,
                       "compile_kind": kind, "compare": "PASS", "timed_out": False,
                       "stages": {"cache load": 6.0}},
            "identical": identical, "identical_why": "" if identical else "1 of 3 differ: x.npy"}


def fake_jit(corpus_cold=(2.5, 2.9), step_cold=(7.0, 7.5), cached=0.1, identical=True):
    return [{"name": "gpt2_ts", "kind": "corpus", "nodes": 552,
             "runs": {"fp32": [jit_run(corpus_cold[0], cached)],
                      "mixed": [jit_run(corpus_cold[1], cached, identical)]}},
            {"name": "tts_decoder step, 12 layers", "kind": "step", "nodes": 876,
             "runs": {"fp32": [jit_run(step_cold[0], cached)],
                      "mixed": [jit_run(step_cold[1], cached)]}}]


def verdicts(rows) -> dict[str, str]:
    return {target: verdict for target, _, verdict in rows}


def find(targets: dict, start: str) -> str:
    (v,) = [v for k, v in targets.items() if k.startswith(start)]
    return v


def test_targets_met():
    graphs, fe = fake_graphs({10_020: 0.2, 20_028: 0.4, 100_020: 1.9},
                             {10_020: 120 * MB, 20_028: 140 * MB, 100_020: 290 * MB})
    rows = cb.front_rows(graphs, fe)
    assert [r["nodes"] for r in rows] == [10_020, 20_028, 100_020]
    assert rows[1]["ratio"] == pytest.approx(2.0)
    assert rows[2]["per_node"] == pytest.approx(9.5 / (100_020 / 10_020))
    t = cb.target_rows(rows, fake_jit(), 12)
    v = verdicts(t)
    assert set(v.values()) == {"holds"}, t
    linear = [m for k, m, _ in t if k.startswith("front end linear")][0]
    assert "t(20 028) / t(10 020) = 2.00" in linear


def test_targets_missed():
    # Quadratic front end, too slow and too big at 100k; one corpus decoder over 3 s, the
    # step over 8 s, a cached start over 0.5 s, and outputs that differ.
    graphs, fe = fake_graphs({10_020: 0.2, 20_028: 0.8, 100_020: 20.0},
                             {10_020: 120 * MB, 20_028: 140 * MB, 100_020: 400 * MB})
    rows = cb.front_rows(graphs, fe)
    v = verdicts(cb.target_rows(rows, fake_jit(corpus_cold=(2.5, 3.2), step_cold=(9.0, 7.0),
                                               cached=0.6, identical=False), 12))
    assert find(v, "front end, 100 000-node graph: <= 2 s") == "does not hold"
    assert find(v, "front end, 100 000-node graph: <= 300 MB") == "does not hold"
    assert find(v, "front end linear") == "does not hold"
    assert find(v, "JIT first result, each corpus") == "does not hold"
    assert find(v, "JIT first result, 12-layer") == "does not hold"
    assert find(v, "second start (cached)") == "does not hold"
    assert find(v, "cached outputs bit-identical") == "does not hold"


def test_targets_not_measured_at_small_sizes_and_cache_misses():
    graphs, fe = fake_graphs({228: 0.05, 372: 0.05}, {228: 110 * MB, 372: 110 * MB})
    jit = fake_jit()
    jit[0]["runs"]["fp32"][0]["cached"]["compile_kind"] = "compiled"
    t = cb.target_rows(cb.front_rows(graphs, fe), jit, 1)
    v = verdicts(t)
    assert find(v, "front end, 100 000-node graph: <= 2 s") == "n/a"
    assert find(v, "JIT first result, 12-layer") == "n/a"
    assert find(v, "second start loads from the cache") == "does not hold"
    assert "the largest graph has 372 nodes" in t[0][1]


def fake_payload(progress: bool) -> dict:
    graphs, fe = fake_graphs({10_020: 0.2, 20_028: 0.4, 100_020: 1.9},
                             {10_020: 120 * MB, 20_028: 140 * MB, 100_020: 290 * MB})
    occ = {10_020: {"wall": 24.0, "load": 0.1, "convert": 23.0, "max_rss": 90 * MB,
                    "import_rss": 46 * MB, "imports": 1.0, "rc": 0, "timed_out": False},
           20_028: {"wall": 95.0, "load": 0.2, "convert": 93.0, "max_rss": 120 * MB,
                    "import_rss": 46 * MB, "imports": 1.0, "rc": 0, "timed_out": False},
           100_020: {"wall": 600.0, "max_rss": 0, "rc": -9, "timed_out": True,
                     "error": "timed out (600 s)"}}
    meta = {"command": ".venv/bin/python bench/compile.py", "commit": "abc1234",
            "date": "2026-12-05 04:00 UTC", "mp_opt": "build/bin/mp-opt", "mp_opt_built": "built x",
            "mp_opt_sha": "0" * 64, "mp_run": "build/bin/mp-run", "mp_run_built": "built y",
            "mp_run_sha": "1" * 64, "onnx": "1.22.0", "python": "3.11.7", "repeat": 3,
            "jit_repeat": 1, "sizes": [10_000, 20_000, 100_000], "shared_weights": True,
            "step_layers": 12, "occ": "1.16.0", "occ_reason": None, "progress": progress,
            "layout": [12, 72], "corpus_count": 1, "step_name": "tts_decoder step, 12 layers",
            "load_before": 2.0, "load_after": 2.5, "started": "s", "ended": "e", "seconds": 900.0}
    return {"meta": meta, "graphs": graphs, "fe": fe, "occ": occ, "jit_results": fake_jit(identical=False)}


def test_render_with_stage_split():
    # Through JSON, as --json writes it and --render reads it.
    payload = cb._keys_to_int(json.loads(json.dumps(fake_payload(True))))
    text = "\n".join(cb.render(**payload))
    assert text.startswith("# Compile time: front end and JIT")
    for head in ("- Date: 2026-12-05 04:00 UTC", "- Machine: ", "- mp commit: abc1234",
                 "- Regenerate: `.venv/bin/python bench/compile.py`"):
        assert head in text
    assert re.search(r"^\| 10 020 \| 139 \| 2\.0 MB \| 278 \| 0\.20 s \| 0\.22 / 0\.20 / 0\.19 "
                     r"\| 120 MB \| 1\.00 \| 1\.00 \| 1\.00 \| 24\.00 s \| 23\.10 s \| 90 MB "
                     r"\| 115\.5x \|$", text, re.M), text
    assert "| 100 020 |" in text and "timed out (600 s)" in text
    assert re.search(r"^\| `gpt2_ts` \| 552 \| mixed \| 2\.90 s \| 2 610 ms \| 150 MB \| "
                     r"0\.10 s \| 9 ms \| PASS \| \*\*no\*\* \(1 of 3 differ: x\.npy\) \|$",
                     text, re.M), text
    assert "| model | precision | run | lowering ms | LLVM ms | cache load ms |" in text
    assert "No stage split" not in text and "{" not in text


def test_render_without_progress():
    text = "\n".join(cb.render(**fake_payload(False)))
    assert "No stage split (mp-run lacks --progress)." in text
    assert "lowering ms" not in text


# ----------------------------------------------------------------------------- the script


MP_OPT = BUILD / "bin" / "mp-opt"
MP_RUN = BUILD / "bin" / "mp-run"
DECODERS = REPO.parent / "shared" / "corpus" / "decoders"


def test_compile_bench_writes_the_page(tmp_path):
    require_built(MP_OPT)
    require_built(MP_RUN)
    if not (DECODERS / "gpt2_ts" / "model.onnx").is_file():
        pytest.skip(f"no {DECODERS}/gpt2_ts")
    out, js = tmp_path / "compile.md", tmp_path / "compile.json"
    cmd = [sys.executable, str(REPO / "bench" / "compile.py"), "--sizes", "200", "400",
           "--models", "gpt2_ts", "--repeat", "1", "--step-layers", "1", "--occ-timeout", "120",
           "--shared", str(REPO.parent / "shared"), "--mp-opt", str(MP_OPT),
           "--mp-run", str(MP_RUN), "--out", str(out), "--json", str(js)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    text = out.read_text()
    assert "- Regenerate: `.venv/bin/python bench/compile.py --sizes 200 400 " in text
    # Graphs of 3 and 5 layers: 228 and 372 nodes.
    for nodes in ("228", "372"):
        assert re.search(rf"^\| {nodes} \| \d+ \| [\d.]+ MB \| \d+ \| [\d.]+ s \|", text, re.M), text
    for prec in ("fp32", "mixed"):
        m = re.search(rf"^\| `gpt2_ts` \| 552 \| {prec} \| ([\d.]+) s \| [\d ]+ ms \| .* \| "
                      rf"([\d.]+) s \| [\d ]+ ms \| PASS \| yes \|$", text, re.M)
        assert m, text
        assert float(m.group(2)) < float(m.group(1))  # cached starts faster than cold
        assert re.search(rf"^\| `tts_decoder step, 1 layers` \| 84 \| {prec} \|", text, re.M)
    help_text = subprocess.run([str(MP_RUN), "--help"], capture_output=True, text=True).stdout
    if cb.supports_progress(help_text):
        assert re.search(r"^\| `gpt2_ts` \| fp32 \| cold \|", text, re.M), text
    else:
        assert "No stage split (mp-run lacks --progress)." in text
    # --render of the JSON gives the same page.
    again = tmp_path / "again.md"
    p = subprocess.run([sys.executable, str(REPO / "bench" / "compile.py"), "--render", str(js),
                        "--out", str(again)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert again.read_text() == text
