// RUN: mp-opt %s --mp-map-to-gpu --split-input-file --verify-diagnostics
// RUN: not mp-opt %s --mp-map-to-gpu="block-size=2048" --split-input-file 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: error: mp-map-to-gpu: block-size must be in [1, 1024], not 2048

// The condition of an If read on the host from a device buffer.
func.func @host_read(%flag: memref<i1>, %out: memref<4xf32>) {
  // expected-error @+1 {{'memref.load' op would access device memory from the host; the CUDA target cannot run it yet}}
  %c = memref.load %flag[] : memref<i1>
  scf.if %c {
    %z = arith.constant 0.0 : f32
    linalg.fill ins(%z : f32) outs(%out : memref<4xf32>)
  }
  return
}

// -----

func.func @dynamic_reshape(%a: memref<12xf32>, %shape: memref<2xi64>) -> memref<?x?xf32> {
  // expected-error @+1 {{'memref.reshape' op with a dynamic result shape cannot run on the CUDA target yet: its target shape is computed in device memory (a shape computation on tensors feeding a Reshape); pin the input shapes, or use the CPU target}}
  %r = memref.reshape %a(%shape) : (memref<12xf32>, memref<2xi64>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}
