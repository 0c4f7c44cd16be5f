// The compile cache (MP_CACHE_DIR): a second run of the same model, options
// and input shapes loads the compiled variant instead of compiling it, with
// bit-identical outputs; any change of the key compiles; a damaged entry is
// detected, removed and rebuilt; --no-cache and MP_CACHE_DIR=off compile.

// RUN: rm -rf %t && mkdir -p %t
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --output-dir %t/cold 2>&1 | FileCheck %s --check-prefix=COLD
// COLD: time: compile {{[0-9.]+}} ms (compiled)
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --output-dir %t/warm 2>&1 | FileCheck %s --check-prefix=WARM
// WARM: time: compile {{[0-9.]+}} ms (cached)
// RUN: cmp %t/cold/probs.npy %t/warm/probs.npy
// RUN: cmp %t/cold/sum.npy %t/warm/sum.npy

// Another precision, other input shapes, another policy's content: misses.
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --precision mixed 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --precision mixed 2>&1 | FileCheck %s --check-prefix=WARM
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/dynamic_relu.onnxtext \
// RUN:   --input-shape x=1x4 --repeat 1 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/dynamic_relu.onnxtext \
// RUN:   --input-shape x=2x4 --repeat 1 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/dynamic_relu.onnxtext \
// RUN:   --input-shape x=1x4 --repeat 1 2>&1 | FileCheck %s --check-prefix=WARM
// RUN: echo '{"version": 1, "op_types": {"Softmax": "allow"}}' > %t/policy.json
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --precision mixed --policy %t/policy.json 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COLD
// RUN: echo '{"version": 1, "op_types": {"Softmax": "deny"}}' > %t/policy.json
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --precision mixed --policy %t/policy.json 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COLD

// --no-cache compiles and MP_CACHE_DIR=off stores nothing.
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --no-cache 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: env MP_CACHE_DIR=off mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: env MP_CACHE_DIR=off mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: not ls off

// A damaged entry is never loaded: a truncated object, then an edited
// manifest key.
// RUN: rm -rf %t/one && env MP_CACHE_DIR=%t/one mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: truncate -s 100 %t/one/jit/*/variant.o
// RUN: env MP_CACHE_DIR=%t/one mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --output-dir %t/rebuilt 2>&1 | FileCheck %s --check-prefix=DAMAGED
// DAMAGED: warning: compile cache entry {{.*}}/jit/{{[0-9a-f]+}} is unusable ('variant.o' has 100 bytes, the manifest says {{[0-9]+}}); it is removed and rebuilt
// DAMAGED: time: compile {{[0-9.]+}} ms (compiled)
// RUN: cmp %t/cold/probs.npy %t/rebuilt/probs.npy
// RUN: env MP_CACHE_DIR=%t/one mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 2>&1 | FileCheck %s --check-prefix=WARM
// RUN: sed -i 's/mp-jit 1/mp-jit 0/' %t/one/jit/*/manifest.json
// RUN: env MP_CACHE_DIR=%t/one mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 2>&1 | FileCheck %s --check-prefix=OTHERKEY
// OTHERKEY: is unusable (the entry was written for another key); it is removed and rebuilt
// OTHERKEY: time: compile {{[0-9.]+}} ms (compiled)

// What the compile warned about is said again when the cache has it.
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --precision mixed --ranges %S/Inputs/ranges_unknown_node.json \
// RUN:   2>&1 | FileCheck %s --check-prefix=RCOLD
// RUN: env MP_CACHE_DIR=%t/cache mp-run %S/Inputs/add_matmul_softmax.onnx \
// RUN:   --generate-inputs --repeat 1 --precision mixed --ranges %S/Inputs/ranges_unknown_node.json \
// RUN:   2>&1 | FileCheck %s --check-prefix=RWARM
// RCOLD: add_matmul_softmax.onnx:0:0: warning: ranges: 1 of 1 measured nodes are not in this graph (first: 'no_such_node')
// RCOLD: time: compile {{[0-9.]+}} ms (compiled)
// RWARM: add_matmul_softmax.onnx:0:0: warning: ranges: 1 of 1 measured nodes are not in this graph (first: 'no_such_node')
// RWARM: time: compile {{[0-9.]+}} ms (cached)
