// Errors and warnings of policy files: the message names the file, the
// line:column and the key path; an unknown op type and a regex that matches
// no node are warnings only.
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-bad-json.json" 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-bad-class.json" 2>&1 | FileCheck %s --check-prefix=CLASS
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-bad-regex.json" 2>&1 | FileCheck %s --check-prefix=REGEX
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-not-object.json" 2>&1 | FileCheck %s --check-prefix=OBJECT
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-bad-compute.json" 2>&1 | FileCheck %s --check-prefix=COMPUTE
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-bad-keep-io.json" 2>&1 | FileCheck %s --check-prefix=KEEPIO
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-unknown-key.json" 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-bad-index-guard.json" 2>&1 | FileCheck %s --check-prefix=GUARD
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/does-not-exist.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mp-opt %s --mp-mixed-precision="policy=%S/Inputs/policy-bad-class.json" 2>&1 | FileCheck %s --check-prefix=CLASS
// RUN: mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-warnings.json" -o %t.mlir 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: FileCheck %s --check-prefix=WARN-IR < %t.mlir
// A regex shadowed by an earlier one still matched a node: no warning, and
// the first pattern applies.
// RUN: mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-shadowed-regex.json" 2>&1 | FileCheck %s --check-prefix=SHADOW
// SHADOW-NOT: warning
// SHADOW: mp.matmul {{.*}}compute = f32, cls = deny, rule = "user override: class deny"
// The position is that of the offending entry, not of the first occurrence
// of the same name elsewhere in the file.
// RUN: not mp-opt %s --mp-assign-precision="policy=%S/Inputs/policy-bad-class-second-key.json" 2>&1 | FileCheck %s --check-prefix=SECOND

func.func @f(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %0 = mp.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm0")
  return %0 : tensor<2x4xf32>
}

// JSON: error: policy: {{.*}}policy-bad-json.json: invalid JSON: {{.*}}4:3
// CLASS: error: policy: {{.*}}policy-bad-class.json:3:5: op_types.MatMul: unknown class 'sometimes' (expected allow, infer, deny or clear)
// REGEX: error: policy: {{.*}}policy-bad-regex.json:3:15: node_patterns[0].regex: bad regex 'layer(': parentheses not balanced
// OBJECT: error: policy: {{.*}}policy-not-object.json: the policy must be a JSON object
// COMPUTE: error: policy: {{.*}}policy-bad-compute.json:3:5: nodes.mm0.compute: compute must be "f16" or "f32"
// KEEPIO: error: policy: {{.*}}policy-bad-keep-io.json:2:3: keep_io_types: expected true or false
// KEY: error: policy: {{.*}}policy-unknown-key.json:2:3: op_typez: unknown key (expected op_types, nodes, node_patterns, keep_io_types, index_guard, unlisted_class, use_builtin)
// GUARD: error: policy: {{.*}}policy-bad-index-guard.json:2:3: index_guard: expected "arithmetic" or "exact"
// MISSING: error: policy: cannot read policy file '{{.*}}does-not-exist.json'
// WARN: warning: policy: {{.*}}policy-warnings.json:2:16: op_types.MatMull: no ONNX op of this type carries float data in mp (is the name right?)
// WARN: warning: policy: node_patterns regex 'nothing_.*' matches no node
// WARN-NOT: error
// WARN-IR: mp.matmul {{.*}}compute = f16
// SECOND: error: policy: {{.*}}policy-bad-class-second-key.json:3:13: nodes.MatMul: unknown class 'bogus'
