"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (imported as mp ops)
against the ONNX backend node tests shipped in the onnx wheel: every
non-expanded test_nllloss_* and test_sce_* case (weights, ignore_index,
reductions, [N, C, d1..d5] inputs, the optional log_prob output)."""

import os
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import mp  # noqa: E402
from mp.models import load_test_data  # noqa: E402
from conftest import assert_outputs_close  # noqa: E402

NODE_TESTS = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "node"
CASES = sorted(p.name for p in NODE_TESTS.glob("test_*")
               if p.name.startswith(("test_nllloss_", "test_sce_"))
               and "expanded" not in p.name)


@pytest.mark.skipif(not mp.library_path().is_file(), reason="libMPCAPI.so is not built")
@pytest.mark.parametrize("case", CASES)
def test_loss_node(case):
    folder = NODE_TESTS / case
    inputs, outputs = load_test_data(folder / "test_data_set_0")
    got = mp.compile(folder / "model.onnx").run(inputs)
    assert_outputs_close(got, outputs, rtol=1e-3, atol=1e-7, where=case)


def test_cases_found():
    assert len(CASES) >= 50
