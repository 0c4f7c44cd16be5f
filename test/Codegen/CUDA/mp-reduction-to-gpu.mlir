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

// -----

#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

// LayerNorm of gpt2_ts's decode step (TorchScript export, mixed), trimmed
// from its lowering: the sum, the mean, the sum of squared deviations from
// the mean, then the normalization reading the row, the mean and the
// variance. One kernel: the block reduces the row to its mean, then again
// to its variance with the mean in registers, then writes the row; neither
// reduced value is stored, so no thread reads what another writes.
// CHECK-LABEL: func.func @layer_norm
//  CHECK-SAME:   (%[[X:.+]]: memref<1x1x64xf16>, %[[Y:.+]]: memref<1x1x64xf16>)
//       CHECK:   gpu.launch
//       CHECK:     %[[S:.+]] = gpu.all_reduce add
//       CHECK:     %[[MEAN:.+]] = arith.divf
//   CHECK-NOT:     memref.store
//       CHECK:     scf.for
//       CHECK:       memref.load %[[X]]
//       CHECK:       arith.subf %{{.+}}, %[[MEAN]]
//       CHECK:     %[[V:.+]] = gpu.all_reduce add
//   CHECK-NOT:     memref.store
//       CHECK:     scf.for
//       CHECK:       memref.load %[[X]]
//       CHECK:       arith.subf %{{.+}}, %[[MEAN]]
//       CHECK:       memref.store %{{.+}}, %[[Y]]
//   CHECK-NOT:   gpu.launch
//   CHECK-NOT:   linalg
func.func @layer_norm(%x: memref<1x1x64xf16>, %y: memref<1x1x64xf16>) {
  %cst = arith.constant 6.400000e+01 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %one = arith.constant 1.000000e+00 : f32
  %alloc_6 = memref.alloc() : memref<1x1xf32>
  %alloc_7 = memref.alloc() : memref<1x1xf32>
  %alloc_8 = memref.alloc() : memref<1x1xf32>
  linalg.fill ins(%zero : f32) outs(%alloc_6 : memref<1x1xf32>)
  linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<1x1x64xf16>) outs(%alloc_6 : memref<1x1xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.addf %0, %out fastmath<reassoc> : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%alloc_6 : memref<1x1xf32>) outs(%alloc_7 : memref<1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %in, %cst : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%alloc_8 : memref<1x1xf32>)
  linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %alloc_7 : memref<1x1x64xf16>, memref<1x1xf32>) outs(%alloc_8 : memref<1x1xf32>) {
  ^bb0(%in: f16, %m: f32, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.subf %0, %m : f32
    %2 = arith.mulf %1, %1 : f32
    %3 = arith.addf %2, %out fastmath<reassoc> : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [#x, #r, #r, #x], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %alloc_8, %alloc_7 : memref<1x1x64xf16>, memref<1x1xf32>, memref<1x1xf32>) outs(%y : memref<1x1x64xf16>) {
  ^bb0(%in: f16, %v: f32, %m: f32, %out: f16):
    %0 = arith.divf %v, %cst : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.sqrt %1 : f32
    %3 = arith.divf %one, %2 : f32
    %4 = arith.extf %in : f16 to f32
    %5 = arith.subf %4, %m : f32
    %6 = arith.mulf %5, %3 : f32
    %7 = arith.truncf %6 : f32 to f16
    linalg.yield %7 : f16
  }
  memref.dealloc %alloc_6 : memref<1x1xf32>
  memref.dealloc %alloc_7 : memref<1x1xf32>
  memref.dealloc %alloc_8 : memref<1x1xf32>
  return
}

// -----

#s = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#m = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// The softmax of gpt2_ts's decode step over 129 positions (4 heads),
// trimmed from its lowering: the max, exp(x - max) in f32, and its sum.
// One kernel: the block finds the max, writes exp, then sums what each of
// its threads wrote (the loops over the row stride alike, so every element
// is read back by the thread that wrote it). The sum is read by the next
// op, so thread 0 stores it; the max is not.
// CHECK-LABEL: func.func @softmax_max_exp_sum
//  CHECK-SAME:   (%[[S:.+]]: memref<1x4x1x129xf16>, %[[E:.+]]: memref<1x4x1x129xf32>, %[[SUM:.+]]: memref<1x4x1xf32>)
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce maximumf
//   CHECK-NOT:     memref.store
//       CHECK:     scf.for %[[I:.+]] = %[[TID:.+]] to %{{.+}} step %[[STEP:[^ ]+]]
//       CHECK:       math.exp
//       CHECK:       memref.store %{{.+}}, %[[E]]
//       CHECK:     scf.for %{{.+}} = %[[TID]] to %{{.+}} step %[[STEP]]
//       CHECK:       memref.load %[[E]]
//       CHECK:     gpu.all_reduce add
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.+}}, %[[SUM]]
//   CHECK-NOT:   gpu.launch
func.func @softmax_max_exp_sum(%s: memref<1x4x1x129xf16>, %e: memref<1x4x1x129xf32>, %sum: memref<1x4x1xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %max = memref.alloc() : memref<1x4x1xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<1x4x1xf32>)
  linalg.generic {indexing_maps = [#s, #m], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x4x1x129xf16>) outs(%max : memref<1x4x1xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.maximumf %0, %out : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#s, #m, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %max : memref<1x4x1x129xf16>, memref<1x4x1xf32>) outs(%e : memref<1x4x1x129xf32>) {
  ^bb0(%in: f16, %mx: f32, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.subf %0, %mx : f32
    %2 = math.exp %1 : f32
    linalg.yield %2 : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<1x4x1xf32>)
  linalg.generic {indexing_maps = [#s, #m], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%e : memref<1x4x1x129xf32>) outs(%sum : memref<1x4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %max : memref<1x4x1xf32>
  return
}

// -----

#x = affine_map<(r, c) -> (r, c)>
#t = affine_map<(r, c) -> (c, r)>
#red = affine_map<(r, c) -> (r)>

// The exp is written transposed and summed along its rows: the elements a
// block would sum are written by other blocks, so the sum keeps its own
// kernel.
// CHECK-LABEL: func.func @sum_of_transposed_exp_stays_apart
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce maximumf
//       CHECK:     math.exp
//   CHECK-NOT:     gpu.all_reduce add
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce add
func.func @sum_of_transposed_exp_stays_apart(%x: memref<64x64xf32>, %e: memref<64x64xf32>, %sum: memref<64xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %max = memref.alloc() : memref<64xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<64xf32>)
  linalg.generic {indexing_maps = [#x, #red], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x64xf32>) outs(%max : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #red, #t], iterator_types = ["parallel", "parallel"]} ins(%x, %max : memref<64x64xf32>, memref<64xf32>) outs(%e : memref<64x64xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
  linalg.generic {indexing_maps = [#x, #red], iterator_types = ["parallel", "reduction"]} ins(%e : memref<64x64xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %max : memref<64xf32>
  return
}

// -----

#x = affine_map<(r, c) -> (r, c)>
#red = affine_map<(r, c) -> (r)>

// Mean then variance, but the variance is written over bytes of the row
// the mean's part still reads (two views of one arena): a block finishing
// early would clobber another's input, so they stay two kernels.
// CHECK-LABEL: func.func @variance_over_its_input_stays_apart
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce add
//   CHECK-NOT:     gpu.all_reduce
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce add
func.func @variance_over_its_input_stays_apart(%arena: memref<16384xi8>) {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c8192 = arith.constant 8192 : index
  %x = memref.view %arena[%c0][] : memref<16384xi8> to memref<32x64xf32>
  %mean = memref.view %arena[%c8192][] : memref<16384xi8> to memref<32xf32>
  %var = memref.view %arena[%c0][] : memref<16384xi8> to memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%mean : memref<32xf32>)
  linalg.generic {indexing_maps = [#x, #red], iterator_types = ["parallel", "reduction"]} ins(%x : memref<32x64xf32>) outs(%mean : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%var : memref<32xf32>)
  linalg.generic {indexing_maps = [#x, #red, #red], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : memref<32x64xf32>, memref<32xf32>) outs(%var : memref<32xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    %1 = arith.mulf %0, %0 : f32
    %2 = arith.addf %1, %out : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

#x4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#r4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#b3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// RMSNorm of llama_ts's decode step at cache 128, trimmed from its
// lowering: reshapes lowered to expand_shape let elementwise fusion give
// the sum of squares a unit loop more than the scaling that reads the row
// again. The loops pair up by extent, so it is still one kernel.
// CHECK-LABEL: func.func @rms_norm_unit_loop_apart
//  CHECK-SAME:   (%[[X:.+]]: memref<1x1x64xf32>, %[[Y:.+]]: memref<1x1x64xf16>)
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce add
//       CHECK:     scf.for
//       CHECK:       memref.load %[[X]]
//       CHECK:       math.sqrt
//       CHECK:       memref.store %{{.+}}, %[[Y]]
//   CHECK-NOT:   gpu.launch
//   CHECK-NOT:   linalg
func.func @rms_norm_unit_loop_apart(%x: memref<1x1x64xf32>, %y: memref<1x1x64xf16>) {
  %zero = arith.constant 0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  %n = arith.constant 6.400000e+01 : f32
  %eps = arith.constant 9.99999997E-7 : f32
  %one = arith.constant 1.000000e+00 : f32
  %alloc_8 = memref.alloc() : memref<1x1xf32>
  %expand_shape_72 = memref.expand_shape %alloc_8 [[0], [1, 2]] output_shape [1, 1, 1] : memref<1x1xf32> into memref<1x1x1xf32>
  linalg.fill ins(%zero : f32) outs(%expand_shape_72 : memref<1x1x1xf32>)
  %expand_shape_73 = memref.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 1, 1, 64] : memref<1x1x64xf32> into memref<1x1x1x64xf32>
  linalg.generic {indexing_maps = [#x4, #r4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%expand_shape_73 : memref<1x1x1x64xf32>) outs(%expand_shape_72 : memref<1x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.powf %in, %two : f32
    %1 = arith.addf %0, %out fastmath<reassoc> : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#x3, #b3, #x3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %expand_shape_72 : memref<1x1x64xf32>, memref<1x1x1xf32>) outs(%y : memref<1x1x64xf16>) {
  ^bb0(%in: f32, %s: f32, %out: f16):
    %0 = arith.divf %s, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.sqrt %1 : f32
    %3 = arith.divf %one, %2 : f32
    %4 = arith.mulf %in, %3 : f32
    %5 = arith.truncf %4 : f32 to f16
    linalg.yield %5 : f16
  }
  memref.dealloc %alloc_8 : memref<1x1xf32>
  return
}

// -----

#s = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#m = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#s5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#m5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>

// The softmax of llama_ts's decode step (grouped-query attention, 4 query
// heads over 2 KV heads), trimmed from its lowering: the sum runs over
// the exp reshaped to [1, 2, 2, 1, 129], its heads split in two. Rows pair
// up by their row-major index (block b of the max is block b of the sum)
// and both the exp and the sum's read are row-major in views of one
// buffer, so each thread sums what it wrote: one kernel.
// CHECK-LABEL: func.func @gqa_softmax_heads_split
//  CHECK-SAME:   (%[[S:.+]]: memref<1x4x1x129xf16>, %[[SUM:.+]]: memref<1x4x1xf32>)
//       CHECK:   %[[E:.+]] = memref.alloc() : memref<1x4x1x129xf32>
//       CHECK:   %[[E5:.+]] = memref.expand_shape %[[E]]
//       CHECK:   gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in
//       CHECK:     gpu.all_reduce maximumf
//       CHECK:     scf.for
//       CHECK:       math.exp
//       CHECK:       memref.store %{{.+}}, %[[E]]
//       CHECK:     scf.for
//       CHECK:       memref.load %[[E5]]
//       CHECK:     gpu.all_reduce add
//       CHECK:     scf.if
//       CHECK:       memref.store
//   CHECK-NOT:   gpu.launch
func.func @gqa_softmax_heads_split(%s: memref<1x4x1x129xf16>, %sum: memref<1x4x1xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %alloc_20 = memref.alloc() : memref<1x4x1xf32>
  %alloc_21 = memref.alloc() : memref<1x4x1x129xf32>
  linalg.fill ins(%ninf : f32) outs(%alloc_20 : memref<1x4x1xf32>)
  linalg.generic {indexing_maps = [#s, #m], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x4x1x129xf16>) outs(%alloc_20 : memref<1x4x1xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.maximumf %0, %out : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#s, #m, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %alloc_20 : memref<1x4x1x129xf16>, memref<1x4x1xf32>) outs(%alloc_21 : memref<1x4x1x129xf32>) {
  ^bb0(%in: f16, %mx: f32, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.subf %0, %mx : f32
    %2 = math.exp %1 : f32
    linalg.yield %2 : f32
  }
  %expand_shape_113 = memref.expand_shape %sum [[0], [1, 2], [3]] output_shape [1, 2, 2, 1] : memref<1x4x1xf32> into memref<1x2x2x1xf32>
  linalg.fill ins(%zero : f32) outs(%expand_shape_113 : memref<1x2x2x1xf32>)
  %expand_shape_114 = memref.expand_shape %alloc_21 [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 1, 129] : memref<1x4x1x129xf32> into memref<1x2x2x1x129xf32>
  linalg.generic {indexing_maps = [#s5, #m5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%expand_shape_114 : memref<1x2x2x1x129xf32>) outs(%expand_shape_113 : memref<1x2x2x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %alloc_20 : memref<1x4x1xf32>
  memref.dealloc %alloc_21 : memref<1x4x1x129xf32>
  return
}

// -----

#s = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#m = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#swap5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3, d4)>
#m5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>

// As above, but the sum reads the two halves of the heads swapped: block b
// of the sum would read rows other blocks write, so it keeps its kernel.
// CHECK-LABEL: func.func @gqa_softmax_heads_swapped_stays_apart
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce maximumf
//   CHECK-NOT:     gpu.all_reduce add
//       CHECK:   gpu.launch
//       CHECK:     gpu.all_reduce add
func.func @gqa_softmax_heads_swapped_stays_apart(%s: memref<1x4x1x129xf16>, %sum: memref<1x4x1xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %alloc_20 = memref.alloc() : memref<1x4x1xf32>
  %alloc_21 = memref.alloc() : memref<1x4x1x129xf32>
  linalg.fill ins(%ninf : f32) outs(%alloc_20 : memref<1x4x1xf32>)
  linalg.generic {indexing_maps = [#s, #m], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x4x1x129xf16>) outs(%alloc_20 : memref<1x4x1xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.maximumf %0, %out : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#s, #m, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %alloc_20 : memref<1x4x1x129xf16>, memref<1x4x1xf32>) outs(%alloc_21 : memref<1x4x1x129xf32>) {
  ^bb0(%in: f16, %mx: f32, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.subf %0, %mx : f32
    %2 = math.exp %1 : f32
    linalg.yield %2 : f32
  }
  %expand_shape_113 = memref.expand_shape %sum [[0], [1, 2], [3]] output_shape [1, 2, 2, 1] : memref<1x4x1xf32> into memref<1x2x2x1xf32>
  linalg.fill ins(%zero : f32) outs(%expand_shape_113 : memref<1x2x2x1xf32>)
  %expand_shape_114 = memref.expand_shape %alloc_21 [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 1, 129] : memref<1x4x1x129xf32> into memref<1x2x2x1x129xf32>
  linalg.generic {indexing_maps = [#swap5, #m5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%expand_shape_114 : memref<1x2x2x1x129xf32>) outs(%expand_shape_113 : memref<1x2x2x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %alloc_20 : memref<1x4x1xf32>
  memref.dealloc %alloc_21 : memref<1x4x1x129xf32>
  return
}

// -----

#row = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#stat = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#k = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#kstat = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, 0)>
#table = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#krot = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, (d3 + 8) mod 16)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// qwen3_ts's key at batch 1 (TorchScript export, mixed), trimmed from its
// lowering: the per-head RMSNorm's sum of squares over rows of 16 (2 KV
// heads), then the value projection's output written (cut down to a copy;
// it touches neither k nor the statistic), then the scaling fused with the
// rotary (k at d and (d + 8) mod 16) into the cache's new row. Rows that
// fit a warp take a warp each, two in one block of 64 threads: butterfly
// shuffles instead of a block-wide reduction, so the kernel can share a
// launch of any width. The scaling joins the kernel past the copy, which
// moves above it.
// CHECK-LABEL: func.func @per_head_norm_past_a_projection
//  CHECK-SAME:   (%[[K:.+]]: memref<1x1x2x16xf32>, %{{.+}}: memref<1x1x1x16xf32>, %{{.+}}: memref<1x1x1x16xf32>, %[[VIN:.+]]: memref<1x1x32xf32>, %[[V:.+]]: memref<1x1x32xf32>, %[[CACHE:.+]]: memref<1x2x129x16xf32>)
//       CHECK:   linalg.generic {{.*}} ins(%[[VIN]] : memref<1x1x32xf32>) outs(%[[V]] : memref<1x1x32xf32>)
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.+}} = %[[C1:.+]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) threads(%[[T:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C64:.+]],
//       CHECK:     scf.for
//       CHECK:       math.powf
//   CHECK-NOT:     gpu.all_reduce
//       CHECK:     gpu.shuffle  xor %{{.+}}, %{{.+}}, %{{.+}} : f32
//       CHECK:     gpu.shuffle  xor
//       CHECK:     gpu.shuffle  xor
//       CHECK:     gpu.shuffle  xor
//       CHECK:     gpu.shuffle  xor
//   CHECK-NOT:     gpu.shuffle
//       CHECK:     scf.for
//       CHECK:       math.sqrt
//       CHECK:       memref.store
//   CHECK-NOT:   linalg.generic
func.func @per_head_norm_past_a_projection(
    %k: memref<1x1x2x16xf32>, %cos: memref<1x1x1x16xf32>, %sin: memref<1x1x1x16xf32>,
    %vin: memref<1x1x32xf32>, %v: memref<1x1x32xf32>, %cache: memref<1x2x129x16xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  %n = arith.constant 1.600000e+01 : f32
  %eps = arith.constant 9.99999997E-7 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c8 = arith.constant 8 : index
  %alloc = memref.alloc() : memref<1x1x2xf32>
  %s = memref.expand_shape %alloc [[0], [1], [2, 3]] output_shape [1, 1, 2, 1] : memref<1x1x2xf32> into memref<1x1x2x1xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x1x2x1xf32>)
  %rows = memref.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [1, 1, 2, 1, 16] : memref<1x1x2x16xf32> into memref<1x1x2x1x16xf32>
  linalg.generic {indexing_maps = [#row, #stat], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%rows : memref<1x1x2x1x16xf32>) outs(%s : memref<1x1x2x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.powf %in, %two : f32
    %1 = arith.addf %0, %out fastmath<reassoc> : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%vin : memref<1x1x32xf32>) outs(%v : memref<1x1x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  %row = memref.subview %cache[0, 0, 128, 0] [1, 2, 1, 16] [1, 1, 1, 1] : memref<1x2x129x16xf32> to memref<1x2x1x16xf32, strided<[4128, 2064, 16, 1], offset: 2048>>
  linalg.generic {indexing_maps = [#k, #kstat, #table, #krot, #table, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k, %s, %cos, %k, %sin : memref<1x1x2x16xf32>, memref<1x1x2x1xf32>, memref<1x1x1x16xf32>, memref<1x1x2x16xf32>, memref<1x1x1x16xf32>)
      outs(%row : memref<1x2x1x16xf32, strided<[4128, 2064, 16, 1], offset: 2048>>) {
  ^bb0(%in: f32, %sum: f32, %c: f32, %other: f32, %sn: f32, %out: f32):
    %0 = arith.divf %sum, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.sqrt %1 : f32
    %3 = arith.divf %one, %2 : f32
    %4 = arith.mulf %other, %3 : f32
    %5 = arith.mulf %in, %3 : f32
    %6 = linalg.index 3 : index
    %7 = arith.negf %4 : f32
    %8 = arith.cmpi ult, %6, %c8 : index
    %9 = arith.select %8, %7, %4 : f32
    %10 = arith.mulf %9, %sn : f32
    %11 = arith.mulf %5, %c : f32
    %12 = arith.addf %11, %10 : f32
    linalg.yield %12 : f32
  }
  memref.dealloc %alloc : memref<1x1x2xf32>
  return
}

// -----

#row = affine_map<(r, k) -> (r, k)>
#stat = affine_map<(r, k) -> (r)>
#bcast = affine_map<(r, k) -> (r)>

// The same statistic over rows of 16 with nothing reading the rows again:
// one thread per row (a loop), left to mp-map-to-gpu. Nine rows of 16
// with their scaling: a warp per row, eight to a block of 256 threads, so
// two blocks, the warps past the last row skipping it.
// CHECK-LABEL: func.func @short_rows
//   CHECK-DAG:   %[[C2:.+]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C256:.+]] = arith.constant 256 : index
//       CHECK:   linalg.generic
//       CHECK:   gpu.launch blocks({{.*}}) in (%{{.+}} = %[[C2]], {{.*}} threads({{.*}}) in (%{{.+}} = %[[C256]],
//       CHECK:     %[[INSIDE:.+]] = arith.cmpi ult
//       CHECK:     scf.if %[[INSIDE]]
//       CHECK:       gpu.shuffle  xor
func.func @short_rows(%x: memref<4x16xf32>, %s: memref<4xf32>, %y: memref<9x16xf32>, %t: memref<9xf32>, %z: memref<9x16xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<4xf32>)
  linalg.generic {indexing_maps = [#row, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x16xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<9xf32>)
  linalg.generic {indexing_maps = [#row, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<9x16xf32>) outs(%t : memref<9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #bcast, #row], iterator_types = ["parallel", "parallel"]}
      ins(%y, %t : memref<9x16xf32>, memref<9xf32>) outs(%z : memref<9x16xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.divf %in, %sum : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#row = affine_map<(r, k) -> (r, k)>
#stat = affine_map<(r, k) -> (r)>

// The statistic's input freed before the scaling: the free may not move
// above the statistic, so the scaling does not join it, and rows of 16
// with nothing fused stay one thread per row.
// CHECK-LABEL: func.func @input_freed_between
//   CHECK-NOT:   gpu.launch
//       CHECK:   linalg.generic
//       CHECK:   memref.dealloc
//       CHECK:   linalg.generic
func.func @input_freed_between(%x: memref<2x16xf32>, %y: memref<2x16xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %t = memref.alloc() : memref<2x16xf32>
  memref.copy %x, %t : memref<2x16xf32> to memref<2x16xf32>
  %s = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<2xf32>)
  linalg.generic {indexing_maps = [#row, #stat], iterator_types = ["parallel", "reduction"]}
      ins(%t : memref<2x16xf32>) outs(%s : memref<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %t : memref<2x16xf32>
  linalg.generic {indexing_maps = [#row, #stat, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<2x16xf32>, memref<2xf32>) outs(%y : memref<2x16xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.divf %in, %sum : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %s : memref<2xf32>
  return
}
