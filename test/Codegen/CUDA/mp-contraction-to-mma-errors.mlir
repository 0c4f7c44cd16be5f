// RUN: not mp-opt %s --mp-contraction-to-mma="warps-per-block=0" 2>&1 | FileCheck %s
// RUN: not mp-opt %s --mp-contraction-to-mma="subtiles=0" 2>&1 | FileCheck %s

// CHECK: error: mp-contraction-to-mma: warps-per-block must be in [1, 32] and subtiles at least 1

func.func @empty() {
  return
}
