//===- StaticBounds.h - provable magnitude bounds without data --*- C++ -*-===//
//
// Interval propagation from values whose magnitude is known without running
// the model (constants and weights, normalization outputs, softmax, bounded
// activations) through linear and elementwise ops. A bound is the largest
// |x| some admissible input can produce, so a bound beyond fp16's range
// means fp16 can overflow on real inputs: mp-assign-precision keeps such
// nodes in fp32 when no calibration data is given.
//
//===----------------------------------------------------------------------===//

#ifndef MP_PRECISION_STATICBOUNDS_H
#define MP_PRECISION_STATICBOUNDS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mp {

/// An upper bound on |x| over every element of a value, and how it follows
/// (for plans: "LayerNormalization 'ln' output x weights 'Wk'").
struct StaticBound {
  double absMax = 0;
  std::string why;
};

/// Bounds of the float values under `root` (a function) that follow from
/// bounded sources; values without a provable bound are absent.
llvm::DenseMap<mlir::Value, StaticBound>
computeStaticBounds(mlir::Operation *root);

} // namespace mp

#endif // MP_PRECISION_STATICBOUNDS_H
