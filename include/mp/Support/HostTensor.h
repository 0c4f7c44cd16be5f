//===- HostTensor.h - tensors in host memory, .npy files, comparison -*- C++ -*-===//

#ifndef MP_SUPPORT_HOSTTENSOR_H
#define MP_SUPPORT_HOSTTENSOR_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mp {

/// A dense row-major tensor in host memory. Bools take one byte each.
struct HostTensor {
  std::string name;
  mlir::Type elementType;
  llvm::SmallVector<int64_t> shape;
  std::vector<char> data;

  int64_t numElements() const;
  /// Bytes per element in `data`.
  static int64_t elementBytes(mlir::Type type);
  /// Element `i` as a double (floats, integers, bools).
  double at(int64_t i) const;
  /// "f32[1, 16]" ("?" for a dynamic dim of a signature).
  std::string describe() const;
};

/// NumPy's dtype string for an element type ("<f4", "|b1", "<i8", ...);
/// bf16 and other types NumPy lacks are not supported (empty string).
std::string npyDescr(mlir::Type type);

/// The element type of a NumPy dtype string, or null if mp has none.
/// Signed integers are signless, as the ONNX importer makes them.
mlir::Type npyType(llvm::StringRef descr, mlir::MLIRContext *ctx);

/// `t` converted to f32 (for bf16, which NumPy lacks).
HostTensor widenToF32(const HostTensor &t);

/// Reads a NumPy .npy file (little-endian, C order). Errors go to `error`.
bool readNpy(llvm::StringRef path, mlir::MLIRContext *ctx, HostTensor &out,
             std::string &error);

/// Writes `t` as a NumPy .npy file.
bool writeNpy(llvm::StringRef path, const HostTensor &t, std::string &error);

/// Accuracy of `actual` against `expected`.
struct Comparison {
  double maxAbs = 0, maxRel = 0;
  int64_t mismatches = 0;
  /// NaN or inf where the reference is finite.
  int64_t nonFinite = 0;
  /// For float outputs of the logits kind: share of rows whose argmax over
  /// the last axis agrees (1 when not computed).
  double argmaxAgreement = 1;
  bool shapeMatches = true;
  bool passed() const { return shapeMatches && mismatches == 0; }
};

/// Compares elementwise with |a - e| <= atol + rtol * |e| (NaN matches NaN).
Comparison compare(const HostTensor &actual, const HostTensor &expected,
                   double rtol, double atol);

} // namespace mp

#endif // MP_SUPPORT_HOSTTENSOR_H
