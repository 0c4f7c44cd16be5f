// RUN: mp-opt %s --mp-reduction-to-gpu --canonicalize --split-input-file | FileCheck %s

#in = affine_map<(r, c) -> (r, c)>
#out = affine_map<(r, c) -> (r)>

// Row sums of 1000 elements: one block of 256 threads per row, each
// thread folding every 256th element from 0, a block-wide add, and thread
// 0 adding the total to the output.
// CHECK-LABEL: func.func @row_sum
//  CHECK-SAME:   (%[[X:.+]]: memref<4x1000xf32>, %[[S:.+]]: memref<4xf32>)
//   CHECK-DAG:   %[[C4:.+]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C256:.+]] = arith.constant 256 : index
//       CHECK:   gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C4]], {{.*}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C256]],
//       CHECK:     %[[P:.+]] = scf.for %[[I:.+]] = %[[T]] to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (f32)
//       CHECK:       %[[V:.+]] = memref.load %[[X]][%[[B]], %[[I]]]
//       CHECK:       %[[NEXT:.+]] = arith.addf %[[V]], %[[ACC]] : f32
//       CHECK:       scf.yield %[[NEXT]]
//       CHECK:     %[[SUM:.+]] = gpu.all_reduce add %[[P]] uniform {
//       CHECK:     scf.if
//       CHECK:       %[[OLD:.+]] = memref.load %[[S]][%[[B]]]
//       CHECK:       %[[NEW:.+]] = arith.addf %[[SUM]], %[[OLD]] : f32
//       CHECK:       memref.store %[[NEW]], %[[S]][%[[B]]]
//   CHECK-NOT:   linalg.generic
func.func @row_sum(%x: memref<4x1000xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1000xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.addf %v, %acc : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#in = affine_map<(r, c) -> (r, c)>
#out = affine_map<(r, c) -> (r)>

// Softmax's max over f16 logits widened to f32 (a fused cast): the cast is
// evaluated per element; the fold starts from -inf and keeps NaN.
// 64 elements: a block of 64 threads, one element each.
// CHECK-LABEL: func.func @row_max_f16
//       CHECK:   %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %[[C64:.+]],
//       CHECK:     scf.for {{.*}} iter_args(%{{.+}} = %[[NEGINF]])
//       CHECK:       %[[H:.+]] = memref.load
//       CHECK:       %[[F:.+]] = arith.extf %[[H]] : f16 to f32
//       CHECK:       arith.maximumf %[[F]], %{{.+}} : f32
//       CHECK:     gpu.all_reduce maximumf
func.func @row_max_f16(%x: memref<8x64xf16>, %m: memref<8xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf16>) outs(%m : memref<8xf32>) {
  ^bb0(%v: f16, %acc: f32):
    %0 = arith.extf %v : f16 to f32
    %1 = arith.maximumf %0, %acc : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

#in = affine_map<(b, c, t) -> (b, c, t)>
#out = affine_map<(b, c, t) -> (b)>

// A reduction over two dims (ReduceSum over axes 1 and 2): the flat index
// splits into channel and time.
// CHECK-LABEL: func.func @two_axes
//       CHECK:   gpu.launch
//       CHECK:     scf.for %[[I:[^ ]+]] =
//   CHECK-DAG:       %[[CH:.+]] = arith.divui %[[I]], %[[C64:.+]] : index
//   CHECK-DAG:       %[[TM:.+]] = arith.remui %[[I]], %[[C64]] : index
//       CHECK:       memref.load %{{.+}}[%{{.+}}, %[[CH]], %[[TM]]]
//       CHECK:     gpu.all_reduce add
func.func @two_axes(%x: memref<2x8x64xf32>, %s: memref<2xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : memref<2x8x64xf32>) outs(%s : memref<2xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %0 = arith.addf %v, %acc : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#col = affine_map<(c, r) -> (r, c)>
#out = affine_map<(c, r) -> (c)>
#small = affine_map<(r, c) -> (r, c)>
#rows = affine_map<(r, c) -> (r)>
#a = affine_map<(n, k) -> (k)>
#b = affine_map<(n, k) -> (k, n)>
#o = affine_map<(n, k) -> (n)>

// Left for one thread per output: a column sum (threads of a block would
// read a column apart), a short row, an f16 accumulator, and a
// matrix-vector product with a row-major matrix (coalesced over n).
// CHECK-LABEL: func.func @left_alone
//   CHECK-NOT:   gpu.launch
// CHECK-COUNT-4: linalg.generic
func.func @left_alone(%x: memref<256x4xf32>, %s: memref<4xf32>, %y: memref<4x16xf32>,
                      %h: memref<4x256xf16>, %hs: memref<4xf16>,
                      %v: memref<512xf32>, %w: memref<512x128xf32>, %o: memref<128xf32>) {
  linalg.generic {indexing_maps = [#col, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x4xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%e: f32, %acc: f32):
    %0 = arith.addf %e, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#small, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<4x16xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%e: f32, %acc: f32):
    %0 = arith.addf %e, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#small, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<4x256xf16>) outs(%hs : memref<4xf16>) {
  ^bb0(%e: f16, %acc: f16):
    %0 = arith.addf %e, %acc : f16
    linalg.yield %0 : f16
  }
  linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction"]}
      ins(%v, %w : memref<512xf32>, memref<512x128xf32>) outs(%o : memref<128xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

#x = affine_map<(b, s, k) -> (b, s, k)>
#r = affine_map<(b, s, k) -> (b, s)>

// RMSNorm's sum of squares in a decode step of llama_ts (TorchScript
// export): 2 rows of 64, the sum zero-filled right before. The block's
// total is folded with the fill's value, the output is never read and the
// fill is no kernel of its own.
// CHECK-LABEL: func.func @rms_sum_after_fill
//  CHECK-SAME:   (%[[X:.+]]: memref<2x1x64xf32>, %[[S:.+]]: memref<2x1xf32>)
//   CHECK-NOT:   linalg.fill
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce add
//   CHECK-NOT:     memref.load %[[S]]
//       CHECK:     memref.store {{.*}}, %[[S]]
//   CHECK-NOT:   linalg
func.func @rms_sum_after_fill(%x: memref<2x1x64xf32>, %s: memref<2x1xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%s : memref<2x1xf32>)
  linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x1x64xf32>) outs(%s : memref<2x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.powf %in, %two : f32
    %1 = arith.addf %0, %out fastmath<reassoc> : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

#x = affine_map<(b, s, k) -> (b, s, k)>
#r = affine_map<(b, s, k) -> (b, s)>
#id2 = affine_map<(b, s) -> (b, s)>
#bcast = affine_map<(b, s, k) -> (b, s, 0)>

// RMSNorm of llama_ts's decode step (TorchScript export), trimmed from its
// lowering: the sum of squares, the mean, then the scaling that reads each
// row again with the mean broadcast (through a reshape to [2, 1, 1]). One
// kernel: every thread of the row's block computes the mean from the total
// and strides over the row writing f16; the sum and the mean are
// temporaries nothing else reads, so they are never stored.
// CHECK-LABEL: func.func @rms_norm
//  CHECK-SAME:   (%[[X:.+]]: memref<2x1x64xf32>, %{{.+}}: memref<3xi64>, %[[Y:.+]]: memref<2x1x64xf16>)
//   CHECK-NOT:   memref.alloc
//       CHECK:   gpu.launch
//       CHECK:     %[[TOTAL:.+]] = gpu.all_reduce add
//       CHECK:     %[[SUM:.+]] = arith.addf %[[TOTAL]], %{{.+}}
//       CHECK:     %[[MEAN:.+]] = arith.divf %[[SUM]]
//       CHECK:     scf.for
//       CHECK:       memref.load %[[X]]
//       CHECK:       arith.addf %[[MEAN]]
//       CHECK:       math.sqrt
//       CHECK:       arith.truncf
//       CHECK:       memref.store %{{.+}}, %[[Y]]
//   CHECK-NOT:   gpu.launch
//   CHECK-NOT:   linalg
func.func @rms_norm(%x: memref<2x1x64xf32>, %shape: memref<3xi64>, %y: memref<2x1x64xf16>) {
  %cst = arith.constant 0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  %n = arith.constant 6.400000e+01 : f32
  %eps = arith.constant 9.99999997E-7 : f32
  %one = arith.constant 1.000000e+00 : f32
  %alloc = memref.alloc() : memref<512xi8>
  %c0 = arith.constant 0 : index
  %s = memref.view %alloc[%c0][] : memref<512xi8> to memref<2x1xf32>
  linalg.fill ins(%cst : f32) outs(%s : memref<2x1xf32>)
  linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x1x64xf32>) outs(%s : memref<2x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.powf %in, %two : f32
    %1 = arith.addf %0, %out fastmath<reassoc> : f32
    linalg.yield %1 : f32
  }
  %c256 = arith.constant 256 : index
  %m = memref.view %alloc[%c256][] : memref<512xi8> to memref<2x1xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<2x1xf32>) outs(%m : memref<2x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %in, %n : f32
    linalg.yield %0 : f32
  }
  %mr = memref.reshape %m(%shape) : (memref<2x1xf32>, memref<3xi64>) -> memref<2x1x1xf32>
  linalg.generic {indexing_maps = [#x, #bcast, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mr : memref<2x1x64xf32>, memref<2x1x1xf32>) outs(%y : memref<2x1x64xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
    %0 = arith.addf %in_1, %eps : f32
    %1 = math.sqrt %0 : f32
    %2 = arith.divf %one, %1 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.truncf %3 : f32 to f16
    linalg.yield %4 : f16
  }
  memref.dealloc %alloc : memref<512xi8>
  return
}

// -----

#x = affine_map<(r, k) -> (r, k)>
#red = affine_map<(r, k) -> (r)>
#bcast = affine_map<(r, k) -> (r)>

// Softmax's max then exp(x - max), where the max is also an output of the
// function: the exp joins the reduction's kernel and the max is stored
// (by one thread per row).
// CHECK-LABEL: func.func @max_then_exp_max_kept
//  CHECK-SAME:   (%[[X:.+]]: memref<4x128xf32>, %[[M:.+]]: memref<4xf32>, %[[E:.+]]: memref<4x128xf32>)
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce maxnumf
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.+}}, %[[M]]
//       CHECK:     scf.for
//       CHECK:       math.exp
//       CHECK:       memref.store %{{.+}}, %[[E]]
//   CHECK-NOT:   gpu.launch
func.func @max_then_exp_max_kept(%x: memref<4x128xf32>, %m: memref<4xf32>, %e: memref<4x128xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<4xf32>)
  linalg.generic {indexing_maps = [#x, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x128xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #bcast, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<4x128xf32>, memref<4xf32>) outs(%e : memref<4x128xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  return
}
