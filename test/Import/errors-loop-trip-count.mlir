// The TorchScript export of a scripted for-loop over x.size(0)
// (test/Inputs/exports/script_loop_ts.onnx) with x's first dim dynamic, as
// mp-opt imports it without input shapes: the trip count is not known at
// import, and the error names the node and says what works.
// RUN: not mp-opt %S/../Inputs/exports/script_loop_ts.onnx 2>&1 | FileCheck %s
// CHECK: error: node 'Loop_9' (Loop, ai.onnx v16): the trip count is not known at import: mp unrolls Loop, so it must follow from constants, the input shapes or small integer inputs (as with mp-run and mp.compile without --dynamic-shapes)
