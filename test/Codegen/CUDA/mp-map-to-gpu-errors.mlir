// RUN: mp-opt %s --mp-map-to-gpu --split-input-file --verify-diagnostics
// RUN: not mp-opt %s --mp-map-to-gpu="block-size=2048" --split-input-file 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: error: mp-map-to-gpu: block-size must be in [1, 1024], not 2048

// A buffer on the host stack that a kernel would write.
func.func @host_alloca(%out: memref<4xf32>) {
  // expected-error @+1 {{'memref.alloca' op would access device memory from the host; the CUDA target cannot run it yet}}
  %a = memref.alloca() : memref<4xf32>
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%a : memref<4xf32>)
  linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}
