//===- RandomToLinalg.cpp - RandomNormal/RandomUniform to linalg ----------===//
//
// A random op becomes one parallel linalg.generic over linalg.index: a
// counter-based generator hashes the element's row-major index with the
// seed, so there is no state, every element is computed on its own
// (vectorizable), and the values are the same on every run and for static
// and dynamic shapes. The generator is splitmix64 (Steele, Lea and Flood,
// "Fast splittable pseudorandom number generators", OOPSLA 2014) read at
// position n:
//
//   mix64(z) = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
//              z ^= z >> 27; z *= 0x94D049BB133111EB; z ^ (z >> 31)
//   key      = mix64(the 32 bits of the f32 seed; seed 0.0 when absent)
//   word(n)  = mix64(key + (n + 1) * 0x9E3779B97F4A7C15)   (mod 2^64)
//
// Uniform element i: u = the top 24 bits of word(i) / 2^24 in [0, 1) (53
// bits for f64), low + (high - low) * u, kept below high. Normal element i:
// Box-Muller on word(2i) and word(2i + 1), with u1 = (top bits + 1) / 2^24
// in (0, 1] so that log(u1) is finite and u2 in [0, 1):
// mean + scale * sqrt(-2 log u1) * cos(2 pi u2). Values are computed in f32
// (f64 for f64 results) and rounded once to the result type.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/bit.h"

#include <cmath>

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMul1 = 0xBF58476D1CE4E5B9ull;
constexpr uint64_t kMul2 = 0x94D049BB133111EBull;

/// splitmix64's finalizer, at compile time (for the key).
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * kMul1;
  z = (z ^ (z >> 27)) * kMul2;
  return z ^ (z >> 31);
}

/// The generator's key for an op's optional `seed`.
uint64_t keyOf(std::optional<llvm::APFloat> seed) {
  float s = seed ? seed->convertToFloat() : 0.0f;
  return mix64(llvm::bit_cast<uint32_t>(s));
}

/// Scalar i64 arithmetic of the generator inside a generic's body.
struct Generator {
  OpBuilder &b;
  Location loc;
  uint64_t key;

  Value c(uint64_t v) const {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value xorShift(Value z, uint64_t s) const {
    return arith::XOrIOp::create(b, loc, z,
                                 arith::ShRUIOp::create(b, loc, z, c(s)));
  }
  /// splitmix64's finalizer on an i64 value.
  Value mix(Value z) const {
    z = arith::MulIOp::create(b, loc, xorShift(z, 30), c(kMul1));
    z = arith::MulIOp::create(b, loc, xorShift(z, 27), c(kMul2));
    return xorShift(z, 31);
  }
  /// word(n) = mix(key + (n + 1) * gamma).
  Value word(Value n) const {
    Value n1 = arith::AddIOp::create(b, loc, n, c(1));
    return mix(arith::AddIOp::create(
        b, loc, c(key), arith::MulIOp::create(b, loc, n1, c(kGamma))));
  }
  /// The top bits of `w` as a float of type `ft` in [0, 1), or in (0, 1]
  /// when `openAtZero`: 24 bits for f32, 53 for f64 (exact conversions).
  Value unit(Value w, FloatType ft, bool openAtZero) const {
    unsigned bits = ft.isF64() ? 53 : 24;
    Value m = arith::ShRUIOp::create(b, loc, w, c(64 - bits));
    if (openAtZero)
      m = arith::AddIOp::create(b, loc, m, c(1));
    Value f = arith::UIToFPOp::create(b, loc, ft, m);
    return arith::MulFOp::create(
        b, loc, f, scalarConst(b, loc, ft, std::ldexp(1.0, -bits)));
  }
  /// Uniform element n in [low, high) (before rounding), in `ft`.
  Value uniform(Value n, FloatType ft, double low, double high) const {
    Value u = unit(word(n), ft, /*openAtZero=*/false);
    return arith::AddFOp::create(
        b, loc, scalarConst(b, loc, ft, low),
        arith::MulFOp::create(b, loc, scalarConst(b, loc, ft, high - low), u));
  }
  /// Normal element n, in `ft`: Box-Muller on words 2n (u1 in (0, 1]) and
  /// 2n + 1 (u2 in [0, 1)), mean + scale * sqrt(-2 log u1) * cos(2 pi u2).
  Value normal(Value n, FloatType ft, double mean, double scale) const {
    auto f = [&](double v) { return scalarConst(b, loc, ft, v); };
    Value n2 = arith::MulIOp::create(b, loc, n, c(2));
    Value u1 = unit(word(n2), ft, /*openAtZero=*/true);
    Value u2 = unit(word(arith::AddIOp::create(b, loc, n2, c(1))), ft,
                    /*openAtZero=*/false);
    Value logU1 = math::LogOp::create(b, loc, u1);
    Value radius = math::SqrtOp::create(
        b, loc, arith::MulFOp::create(b, loc, f(-2), logU1));
    Value angle = arith::MulFOp::create(b, loc, f(2 * M_PI), u2);
    Value z = arith::MulFOp::create(b, loc, radius,
                                    math::CosOp::create(b, loc, angle));
    return arith::AddFOp::create(b, loc, f(mean),
                                 arith::MulFOp::create(b, loc, f(scale), z));
  }
};

/// The row-major position of the current element of a generic whose dims
/// are `sizes`, as an i64.
Value linearIndex(OpBuilder &b, Location loc, ArrayRef<Value> sizes) {
  Value lin = indexConst(b, loc, 0);
  for (auto [d, size] : llvm::enumerate(sizes))
    lin =
        arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, lin, size),
                              linalg::IndexOp::create(b, loc, d));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), lin);
}

/// Lowers a random op: `value(gen, n, ft)` computes the element at
/// row-major position `n` in the compute type `ft`; `finish` may adjust it
/// once rounded to the result type.
template <typename OpTy>
LogicalResult lowerRandom(
    OpTy op, PatternRewriter &rewriter,
    llvm::function_ref<Value(const Generator &, Value, FloatType)> value,
    llvm::function_ref<Value(OpBuilder &, Location, Value)> finish = {}) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  Type elt = type.getElementType();
  FloatType ft = elt.isF64() ? FloatType(rewriter.getF64Type())
                             : FloatType(rewriter.getF32Type());
  // Run-time sizes come from the like operand, the only source of dynamic
  // dims (a shape attribute is static).
  SmallVector<Value> sizes, dynSizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d)) {
      sizes.push_back(indexConst(rewriter, loc, type.getDimSize(d)));
      continue;
    }
    if (!op.getLike())
      return rewriter.notifyMatchFailure(op, "dynamic dim without a like");
    sizes.push_back(dimValue(rewriter, loc, op.getLike(), d));
    dynSizes.push_back(sizes.back());
  }
  uint64_t key = keyOf(op.getSeed());
  Value r = parallelGeneric(
      rewriter, loc, type, {}, {},
      [&](OpBuilder &b, Location l, ValueRange) {
        Generator gen{b, l, key};
        Value v =
            castScalar(b, l, value(gen, linearIndex(b, l, sizes), ft), elt);
        return finish ? finish(b, l, v) : v;
      },
      dynSizes);
  rewriter.replaceOp(op, r);
  return success();
}

/// mean + scale * sqrt(-2 log u1) * cos(2 pi u2) (Box-Muller, u1 in (0, 1]).
struct RandomNormalLowering : public OpRewritePattern<RandomNormalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RandomNormalOp op,
                                PatternRewriter &rewriter) const override {
    double mean = op.getMean().convertToFloat();
    double scale = op.getScale().convertToFloat();
    return lowerRandom(op, rewriter,
                       [&](const Generator &g, Value n, FloatType ft) {
                         return g.normal(n, ft, mean, scale);
                       });
  }
};

/// low + (high - low) * u, u in [0, 1); a value that rounds up to high
/// (in the result type) becomes the largest one below it.
struct RandomUniformLowering : public OpRewritePattern<RandomUniformOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RandomUniformOp op,
                                PatternRewriter &rewriter) const override {
    double low = op.getLow().convertToFloat();
    double high = op.getHigh().convertToFloat();
    auto elt = cast<FloatType>(op.getType().getElementType());
    bool lost;
    llvm::APFloat top(high);
    top.convert(elt.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
    llvm::APFloat below = top;
    below.next(/*nextDown=*/true);
    return lowerRandom(
        op, rewriter,
        [&](const Generator &g, Value n, FloatType ft) {
          return g.uniform(n, ft, low, high);
        },
        [&](OpBuilder &b, Location l, Value v) {
          Value limit =
              arith::ConstantOp::create(b, l, b.getFloatAttr(elt, top));
          Value under =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, v, limit);
          return Value(arith::SelectOp::create(
              b, l, under, v,
              arith::ConstantOp::create(b, l, b.getFloatAttr(elt, below))));
        });
  }
};

} // namespace

void populateRandomToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RandomNormalLowering, RandomUniformLowering>(
      patterns.getContext());
}

} // namespace mp
