// RUN: not mp-opt %s --mp-reduction-to-gpu="block-size=48" 2>&1 | FileCheck %s
// RUN: not mp-opt %s --mp-reduction-to-gpu="block-size=2048" 2>&1 | FileCheck %s --check-prefix=BIG

// CHECK: error: mp-reduction-to-gpu: block-size must be a multiple of 32 in [32, 1024], not 48
// BIG: error: mp-reduction-to-gpu: block-size must be a multiple of 32 in [32, 1024], not 2048

func.func @empty() {
  return
}
