//===- WeightLayout.h - weights in Tensor Core fragment order ---*- C++ -*-===//
//
// A decode step multiplies one row (or a few) by each weight matrix: the
// kernel is bound by how fast the weights stream in. Gathered in the PTX
// fragment layout from a row-major [K, N] matrix, a warp's loads touch 4
// rows of 16 bytes each, half of every 32-byte sector they move. Laid out
// at compile time in fragment order instead, each register of a warp's B
// fragment of one 16 x 8 tile is 128 contiguous bytes: every lane loads its
// two values with one 4-byte load and every sector moved is used.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_CODEGEN_CUDA_WEIGHTLAYOUT_H
#define MP_LIB_CODEGEN_CUDA_WEIGHTLAYOUT_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mp {

/// The constant global an f16 operand reads (directly or through reshapes:
/// its elements in the same row-major order), if it is one whose data is
/// here (not an elided blob).
mlir::memref::GlobalOp constantHalfGlobal(mlir::Value operand);

/// A new private constant global of `tiles.n` x `tiles.k` x 2 x 32 x 2
/// f16 holding the B operand whose element at column `n` and reduction
/// index `k` is `source`'s element at flat offset `columnOffsets[n] +
/// reductionOffsets[k]`: tile (nt, kt) covers columns 8nt..8nt+7 and
/// reduction indices 16kt..16kt+15; in register r, lane l = 4g + t holds
/// column 8nt + g at k = 16kt + 8r + 2t + {0, 1}, or, with `quadK`, at
/// k = 16kt + 4t + 2r + {0, 1} (the kernel then numbers the reduction so
/// that each lane's A values are 4 adjacent elements). Elements past the
/// offsets given are zeros. Placed right after `source` in `symbols`
/// (renamed if its name is taken).
struct TileCounts {
  int64_t n, k;
};
mlir::memref::GlobalOp buildFragmentOrderedWeight(
    mlir::SymbolTable &symbols, mlir::memref::GlobalOp source, TileCounts tiles,
    llvm::ArrayRef<int64_t> columnOffsets,
    llvm::ArrayRef<int64_t> reductionOffsets, bool quadK);

} // namespace mp

#endif // MP_LIB_CODEGEN_CUDA_WEIGHTLAYOUT_H
