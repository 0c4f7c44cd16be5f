// mp-run --test-dir walks an ONNX backend-test tree: one line per case
// (PASS, FAIL with the first wrong output, SKIP with the unsupported op),
// then the totals; the exit code is non-zero when a case failed. fp32
// tolerances default to the ONNX backend runner's (rtol 1e-3, atol 1e-7) for
// cases named test_*, to mp-run's model tolerances (1e-4, 1e-5) for others.
// RUN: rm -rf %t && mkdir -p %t/tree/a_pass %t/tree/nested/b_wrong %t/tree/c_unsupported
// RUN: cp %S/Inputs/add_matmul_softmax.onnx %t/tree/a_pass/model.onnx
// RUN: cp -r %S/Inputs/test_data_set_0 %t/tree/a_pass/
// RUN: cp %S/Inputs/add_matmul_softmax.onnx %t/tree/nested/b_wrong/model.onnx
// RUN: cp -r %S/Inputs/test_data_set_0 %t/tree/nested/b_wrong/
// RUN: cp -r %S/Inputs/wrong_expected %t/tree/nested/b_wrong/test_data_set_1
// RUN: cp %S/Inputs/unsupported_op.onnx %t/tree/c_unsupported/model.onnx
// RUN: cp -r %S/Inputs/test_data_set_0 %t/tree/c_unsupported/
// RUN: not mp-run --test-dir %t/tree | FileCheck %s
// CHECK:      PASS a_pass
// CHECK-NEXT: SKIP c_unsupported: error: node 'foo': unsupported op Foo (domain ai.onnx, opset 17)
// CHECK-NEXT: FAIL nested/b_wrong: test_data_set_1: output 'probs': max abs err 0.1 (1 elements beyond rtol=1.000000e-04 atol=1.000000e-05)
// CHECK-NEXT: 1 passed, 1 failed, 1 skipped

// Looser tolerances pass the wrong reference; mixed precision runs too.
// RUN: mp-run --test-dir %t/tree --atol 0.2 | FileCheck %s --check-prefix=LOOSE
// LOOSE: PASS nested/b_wrong
// LOOSE: 2 passed, 0 failed, 1 skipped
// RUN: mp-run --test-dir %t/tree/a_pass --precision mixed | FileCheck %s --check-prefix=ONE
// ONE:      PASS a_pass
// ONE-NEXT: 1 passed, 0 failed, 0 skipped

// Cases may be symlinks (a selection of a larger tree).
// RUN: mkdir -p %t/links && ln -s %t/tree/a_pass %t/links/linked
// RUN: mp-run --test-dir %t/links | FileCheck %s --check-prefix=LINKED
// LINKED:      PASS linked
// LINKED-NEXT: 1 passed, 0 failed, 0 skipped

// RUN: not mp-run --test-dir %t/nonexistent 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: mp-run: error: --test-dir: '{{.*}}nonexistent' is not a folder
// RUN: not mp-run %S/Inputs/add_matmul_softmax.onnx --test-dir %t/tree 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BOTH
// BOTH: mp-run: error: --test-dir takes no model, --input or --compare
// RUN: not mp-run 2>&1 | FileCheck %s --check-prefix=NOMODEL
// NOMODEL: mp-run: error: no model given
