#!/usr/bin/env python3
"""Regenerates the small real exports beside this file (tests read them).

Each is what torch's exporters write for a form that speech models use:
  repeat_interleave_ts.onnx  torch.repeat_interleave(x, counts, dim=0), counts
                             from the data (TorchScript: SplitToSequence, a
                             Loop over SequenceAt/Expand/SequenceInsert,
                             ConcatFromSequence)
  script_loop_ts.onnx        a torch.jit.script for-loop over x.size(0) that
                             stacks running sums (Loop with a scan-like
                             sequence, ConcatFromSequence new_axis=1)
  gru_ts.onnx, gru_dynamo.onnx  a bidirectional batch_first GRU + Linear
  topk_ts.onnx               torch.topk(logits, 5, dim=-1)

Not for CI (needs torch): `python3 -m venv .venv-export &&
.venv-export/bin/pip install torch onnx onnxscript`, then run this script
from this folder. torch 2.15, opset 17 (TorchScript) / 18 (dynamo).
"""

import torch

torch.manual_seed(0)


class RepeatInterleave(torch.nn.Module):
    def forward(self, x, counts):
        return torch.repeat_interleave(x, counts, dim=0)


class GruFrontEnd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(8, 16, num_layers=1, batch_first=True, bidirectional=True)
        self.proj = torch.nn.Linear(32, 4)

    def forward(self, x):
        y, h = self.gru(x)
        return self.proj(y), h


class TopK(torch.nn.Module):
    def forward(self, logits):
        return torch.topk(logits, 5, dim=-1)


@torch.jit.script
def cumulative(x: torch.Tensor) -> torch.Tensor:
    acc = torch.zeros_like(x[0])
    outs = []
    for i in range(x.size(0)):
        acc = acc + x[i]
        outs.append(acc)
    return torch.stack(outs)


class ScriptLoop(torch.nn.Module):
    def forward(self, x):
        return cumulative(x)


def ts(model, args, path, inputs, outputs, dynamic_axes):
    torch.onnx.export(model, args, path, dynamo=False, opset_version=17,
                      input_names=inputs, output_names=outputs, dynamic_axes=dynamic_axes)


def main():
    ts(RepeatInterleave(), (torch.randn(3, 4), torch.tensor([2, 0, 3])),
       "repeat_interleave_ts.onnx", ["x", "counts"], ["y"],
       {"x": {0: "n"}, "counts": {0: "n"}, "y": {0: "m"}})
    ts(ScriptLoop(), (torch.randn(4, 3),), "script_loop_ts.onnx", ["x"], ["y"],
       {"x": {0: "n"}, "y": {0: "n"}})
    gru = GruFrontEnd().eval()
    ts(gru, (torch.randn(2, 7, 8),), "gru_ts.onnx", ["x"], ["y", "h"],
       {"x": {0: "b", 1: "t"}, "y": {0: "b", 1: "t"}})
    torch.onnx.export(gru, (torch.randn(2, 7, 8),), "gru_dynamo.onnx", dynamo=True,
                      external_data=False)
    ts(TopK(), (torch.randn(2, 50),), "topk_ts.onnx", ["logits"], ["v", "i"],
       {"logits": {0: "b", 1: "v"}})


if __name__ == "__main__":
    main()
