// --generate-inputs fills inputs that are not given (deterministically);
// --input-shape gives their shape where the model leaves dims dynamic and
// checks given inputs; --repeat times the runs.
// RUN: mp-run %S/Inputs/add_matmul_softmax.onnx --generate-inputs --repeat 3 \
// RUN:   2>&1 | FileCheck %s
// CHECK-DAG: mp-run: note: generated input 'x' f32[2, 4]
// CHECK-DAG: mp-run: note: generated input 'w' f32[4, 3]
// CHECK:     time: compile {{[0-9.]+}} ms ({{compiled|cached}}); run mean {{[0-9.]+}} ms, min {{[0-9.]+}} ms over 3 runs
// CHECK:     sum f32[2, 4]
// CHECK:     probs f32[2, 3]

// Generated data is the same on every run.
// RUN: rm -rf %t && mp-run %S/Inputs/add_matmul_softmax.onnx --generate-inputs --output-dir %t/a
// RUN: mp-run %S/Inputs/add_matmul_softmax.onnx --generate-inputs --output-dir %t/b
// RUN: cmp %t/a/probs.npy %t/b/probs.npy

// Only the input with a pin is generated; the other is given.
// RUN: mp-run %S/Inputs/add_matmul_softmax.onnx --input x=%S/Inputs/x.npy \
// RUN:   --input-shape w=4x3 2>&1 | FileCheck %s --check-prefix=PIN
// PIN-NOT: generated input 'x'
// PIN:     mp-run: note: generated input 'w' f32[4, 3]

// A dynamic batch dim needs a pin.
// RUN: not mp-run %examples/tts_decoder/model.onnx --generate-inputs 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: mp-run: error: input '{{.*}}' has dynamic dims (tensor<?x{{.*}}>): give its shape with --input-shape {{.*}}=...

// RUN: not mp-run %S/Inputs/add_matmul_softmax.onnx --input x=%S/Inputs/x.npy \
// RUN:   --input-shape x=3x4 --input w=%S/Inputs/w.npy 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: mp-run: error: input 'x' is f32[2, 4], but --input-shape gives x=3x4
// RUN: not mp-run %S/Inputs/add_matmul_softmax.onnx --input-shape w=4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANK
// RANK: mp-run: error: --input-shape w has rank 1, the model's input is tensor<4x3xf32>
// RUN: not mp-run %S/Inputs/add_matmul_softmax.onnx --input-shape w=4xa 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: mp-run: error: --input-shape must be NAME=DIMS like x=1x16, got 'w=4xa'
// RUN: not mp-run %S/Inputs/add_matmul_softmax.onnx --input-shape z=4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NONAME
// NONAME: mp-run: error: --input-shape: the model has no input named 'z'
// RUN: not mp-run %S/Inputs/add_matmul_softmax.onnx --policy %S/Inputs/w.npy \
// RUN:   --generate-inputs 2>&1 | FileCheck %s --check-prefix=POLICY
// POLICY: error: a precision policy only applies to mixed precision
