//===- ElementwiseToLinalg.cpp - elementwise mp ops to linalg.generic -----===//
//
// Every elementwise op becomes one linalg.generic with numpy broadcasting.
// f16/bf16 values are computed in f32 and rounded once per op: for + - * /
// this equals native f16 arithmetic (f32 holds every exact f16 result to
// more than twice f16's precision), and transcendental functions get
// correctly rounded f16 results.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "Patterns.h"
#include "mp/Conversion/Passes.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mp::lowering;

namespace mp {
namespace {

bool isElementwise(Operation *op) {
  return isa<AbsOp, NegOp, SignOp, CeilOp, FloorOp, CosOp, SinOp, ErfOp, ExpOp,
             LogOp, ReciprocalOp, ReluOp, SigmoidOp, SoftplusOp, SqrtOp, TanhOp,
             NotOp, IdentityOp, EluOp, LeakyReluOp, HardSigmoidOp, GeluOp,
             QuickGeluOp, IsInfOp, IsNaNOp, CastOp, ClipOp, AddOp, SubOp, MulOp,
             DivOp, PowOp, ModOp, AndOp, OrOp, XorOp, BitShiftOp, PReluOp,
             BiasGeluOp, FastGeluOp, EqualOp, GreaterOp, GreaterOrEqualOp,
             LessOp, LessOrEqualOp, MaxOp, MinOp, MeanOp, SumOp, WhereOp,
             RoundOp>(op);
}

/// The type scalars are computed in: f32 for half types.
Type computeTypeOf(Type elt) {
  return isa<FloatType>(elt) ? accumulatorType(elt) : elt;
}

struct Scalar {
  OpBuilder &b;
  Location loc;
  Type t; // compute type of the operands

  bool isFloat() const { return isa<FloatType>(t); }
  bool isUnsigned() const { return t.isUnsignedInteger(); }
  Value c(double v) const { return scalarConst(b, loc, t, v); }
  Value add(Value x, Value y) const {
    return isFloat() ? Value(arith::AddFOp::create(b, loc, x, y))
                     : Value(arith::AddIOp::create(b, loc, x, y));
  }
  Value sub(Value x, Value y) const {
    return isFloat() ? Value(arith::SubFOp::create(b, loc, x, y))
                     : Value(arith::SubIOp::create(b, loc, x, y));
  }
  Value mul(Value x, Value y) const {
    return isFloat() ? Value(arith::MulFOp::create(b, loc, x, y))
                     : Value(arith::MulIOp::create(b, loc, x, y));
  }
  Value div(Value x, Value y) const {
    if (isFloat())
      return arith::DivFOp::create(b, loc, x, y);
    return isUnsigned() ? Value(arith::DivUIOp::create(b, loc, x, y))
                        : Value(arith::DivSIOp::create(b, loc, x, y));
  }
  Value max(Value x, Value y) const {
    if (isFloat())
      return arith::MaximumFOp::create(b, loc, x, y);
    return isUnsigned() ? Value(arith::MaxUIOp::create(b, loc, x, y))
                        : Value(arith::MaxSIOp::create(b, loc, x, y));
  }
  Value min(Value x, Value y) const {
    if (isFloat())
      return arith::MinimumFOp::create(b, loc, x, y);
    return isUnsigned() ? Value(arith::MinUIOp::create(b, loc, x, y))
                        : Value(arith::MinSIOp::create(b, loc, x, y));
  }
  Value cmp(arith::CmpFPredicate fp, arith::CmpIPredicate sp,
            arith::CmpIPredicate up, Value x, Value y) const {
    if (isFloat())
      return arith::CmpFOp::create(b, loc, fp, x, y);
    return arith::CmpIOp::create(b, loc, isUnsigned() ? up : sp, x, y);
  }
  Value select(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value sigmoid(Value x) const {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, c(1), add(c(1), e));
  }
  Value geluErf(Value x) const {
    Value e = math::ErfOp::create(b, loc, mul(x, c(M_SQRT1_2)));
    return mul(mul(x, c(0.5)), add(c(1), e));
  }
  Value geluTanh(Value x) const {
    Value inner = mul(c(std::sqrt(2.0 / M_PI)),
                      add(x, mul(c(0.044715), mul(x, mul(x, x)))));
    return mul(mul(x, c(0.5)), add(c(1), math::TanhOp::create(b, loc, inner)));
  }
};

/// The scalar computation of `op` on operands converted to `t`.
Value scalarBody(Operation *op, OpBuilder &b, Location loc, Type t,
                 ValueRange a) {
  Scalar s{b, loc, t};
  using FP = arith::CmpFPredicate;
  using IP = arith::CmpIPredicate;
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](AbsOp) {
        return s.isFloat() ? Value(math::AbsFOp::create(b, loc, a[0]))
                           : Value(math::AbsIOp::create(b, loc, a[0]));
      })
      .Case([&](NegOp) {
        return s.isFloat() ? Value(arith::NegFOp::create(b, loc, a[0]))
                           : s.sub(s.c(0), a[0]);
      })
      .Case([&](SignOp) {
        Value pos = s.cmp(FP::OGT, IP::sgt, IP::ugt, a[0], s.c(0));
        Value neg = s.cmp(FP::OLT, IP::slt, IP::ult, a[0], s.c(0));
        return s.select(pos, s.c(1), s.select(neg, s.c(-1), s.c(0)));
      })
      .Case([&](CeilOp) { return math::CeilOp::create(b, loc, a[0]); })
      .Case([&](FloorOp) { return math::FloorOp::create(b, loc, a[0]); })
      .Case([&](RoundOp) { return math::RoundEvenOp::create(b, loc, a[0]); })
      .Case([&](CosOp) { return math::CosOp::create(b, loc, a[0]); })
      .Case([&](SinOp) { return math::SinOp::create(b, loc, a[0]); })
      .Case([&](ErfOp) { return math::ErfOp::create(b, loc, a[0]); })
      .Case([&](ExpOp) { return math::ExpOp::create(b, loc, a[0]); })
      .Case([&](LogOp) { return math::LogOp::create(b, loc, a[0]); })
      .Case([&](SqrtOp) { return math::SqrtOp::create(b, loc, a[0]); })
      .Case([&](TanhOp) { return math::TanhOp::create(b, loc, a[0]); })
      .Case([&](ReciprocalOp) { return s.div(s.c(1), a[0]); })
      .Case([&](ReluOp) { return s.max(a[0], s.c(0)); })
      .Case([&](SigmoidOp) { return s.sigmoid(a[0]); })
      .Case([&](SoftplusOp) {
        return math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, a[0]));
      })
      .Case([&](NotOp) {
        return arith::XOrIOp::create(b, loc, a[0],
                                     scalarConst(b, loc, a[0].getType(), 1));
      })
      .Case([&](IdentityOp) { return a[0]; })
      .Case([&](EluOp o) {
        Value em1 = math::ExpM1Op::create(b, loc, a[0]);
        Value neg = s.mul(s.c(o.getAlpha().convertToDouble()), em1);
        return s.select(s.cmp(FP::OGE, IP::sge, IP::uge, a[0], s.c(0)), a[0],
                        neg);
      })
      .Case([&](LeakyReluOp o) {
        Value neg = s.mul(s.c(o.getAlpha().convertToDouble()), a[0]);
        return s.select(s.cmp(FP::OGE, IP::sge, IP::uge, a[0], s.c(0)), a[0],
                        neg);
      })
      .Case([&](HardSigmoidOp o) {
        Value y = s.add(s.mul(s.c(o.getAlpha().convertToDouble()), a[0]),
                        s.c(o.getBeta().convertToDouble()));
        return s.max(s.c(0), s.min(s.c(1), y));
      })
      .Case([&](GeluOp o) {
        return o.getApproximate() == "tanh" ? s.geluTanh(a[0])
                                            : s.geluErf(a[0]);
      })
      .Case([&](QuickGeluOp o) {
        return s.mul(a[0],
                     s.sigmoid(s.mul(s.c(o.getAlpha().convertToDouble()), a[0])));
      })
      .Case([&](BiasGeluOp) { return s.geluErf(s.add(a[0], a[1])); })
      .Case([&](FastGeluOp) {
        return s.geluTanh(a.size() > 1 ? s.add(a[0], a[1]) : a[0]);
      })
      .Case([&](IsNaNOp) {
        return arith::CmpFOp::create(b, loc, FP::UNO, a[0], a[0]);
      })
      .Case([&](IsInfOp o) {
        Value isPos = arith::CmpFOp::create(b, loc, FP::OEQ, a[0], s.c(INFINITY));
        Value isNeg =
            arith::CmpFOp::create(b, loc, FP::OEQ, a[0], s.c(-INFINITY));
        Value none = scalarConst(b, loc, b.getI1Type(), 0);
        Value pos = o.getDetectPositive() ? isPos : none;
        Value neg = o.getDetectNegative() ? isNeg : none;
        return arith::OrIOp::create(b, loc, pos, neg);
      })
      .Case([&](ClipOp o) {
        Value v = a[0];
        unsigned next = 1;
        if (o.getMin())
          v = s.max(v, a[next++]);
        if (o.getMax())
          v = s.min(v, a[next++]);
        return v;
      })
      .Case([&](AddOp) { return s.add(a[0], a[1]); })
      .Case([&](SubOp) { return s.sub(a[0], a[1]); })
      .Case([&](MulOp) { return s.mul(a[0], a[1]); })
      .Case([&](DivOp) { return s.div(a[0], a[1]); })
      .Case([&](PowOp) { return math::PowFOp::create(b, loc, a[0], a[1]); })
      .Case([&](ModOp o) -> Value {
        if (s.isFloat())
          return arith::RemFOp::create(b, loc, a[0], a[1]);
        if (s.isUnsigned())
          return arith::RemUIOp::create(b, loc, a[0], a[1]);
        Value r = arith::RemSIOp::create(b, loc, a[0], a[1]);
        if (o.getFmod())
          return r;
        // Python-style: the remainder takes the divisor's sign.
        Value rNeg = s.cmp(FP::OLT, IP::slt, IP::ult, r, s.c(0));
        Value bNeg = s.cmp(FP::OLT, IP::slt, IP::ult, a[1], s.c(0));
        Value fix = arith::AndIOp::create(
            b, loc, arith::XOrIOp::create(b, loc, rNeg, bNeg),
            s.cmp(FP::ONE, IP::ne, IP::ne, r, s.c(0)));
        return s.select(fix, s.add(r, a[1]), r);
      })
      .Case([&](AndOp) { return arith::AndIOp::create(b, loc, a[0], a[1]); })
      .Case([&](OrOp) { return arith::OrIOp::create(b, loc, a[0], a[1]); })
      .Case([&](XorOp) { return arith::XOrIOp::create(b, loc, a[0], a[1]); })
      .Case([&](BitShiftOp o) -> Value {
        // Shifts by the width or more give 0 in ONNX; arith leaves them
        // undefined.
        Type t = a[0].getType();
        Value width = scalarConst(b, loc, t, t.getIntOrFloatBitWidth());
        Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              a[1], width);
        Value shifted =
            o.getDirection() == "LEFT"
                ? Value(arith::ShLIOp::create(b, loc, a[0], a[1]))
                : Value(arith::ShRUIOp::create(b, loc, a[0], a[1]));
        return arith::SelectOp::create(b, loc, inRange, shifted,
                                       scalarConst(b, loc, t, 0));
      })
      .Case([&](PReluOp) {
        return s.select(s.cmp(FP::OLT, IP::slt, IP::ult, a[0], s.c(0)),
                        s.mul(a[0], a[1]), a[0]);
      })
      .Case([&](EqualOp) {
        return s.cmp(FP::OEQ, IP::eq, IP::eq, a[0], a[1]);
      })
      .Case([&](GreaterOp) {
        return s.cmp(FP::OGT, IP::sgt, IP::ugt, a[0], a[1]);
      })
      .Case([&](GreaterOrEqualOp) {
        return s.cmp(FP::OGE, IP::sge, IP::uge, a[0], a[1]);
      })
      .Case([&](LessOp) { return s.cmp(FP::OLT, IP::slt, IP::ult, a[0], a[1]); })
      .Case([&](LessOrEqualOp) {
        return s.cmp(FP::OLE, IP::sle, IP::ule, a[0], a[1]);
      })
      .Case([&](MaxOp) {
        Value v = a[0];
        for (Value x : a.drop_front())
          v = s.max(v, x);
        return v;
      })
      .Case([&](MinOp) {
        Value v = a[0];
        for (Value x : a.drop_front())
          v = s.min(v, x);
        return v;
      })
      .Case<SumOp, MeanOp>([&](Operation *o) {
        Value v = a[0];
        for (Value x : a.drop_front())
          v = s.add(v, x);
        return isa<MeanOp>(o) ? s.div(v, s.c((double)a.size())) : v;
      })
      .Case([&](WhereOp) { return s.select(a[0], a[1], a[2]); })
      .Default([&](Operation *) { return Value(); });
}

struct ElementwiseLowering : public RewritePattern {
  ElementwiseLowering(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwise(op))
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType)
      return rewriter.notifyMatchFailure(op, "unranked result");
    Type outElt = resultType.getElementType();
    Value result;
    if (auto cast = dyn_cast<CastOp>(op)) {
      result = elementwise(rewriter, op->getLoc(), resultType, op->getOperands(),
                           [&](OpBuilder &b, Location loc, ValueRange a) {
                             return castScalar(b, loc, a[0], outElt);
                           });
    } else {
      // Operands share a compute type, except the condition of Where; Pow
      // with a float operand computes in float whatever the other is.
      Value data = isa<WhereOp>(op) ? op->getOperand(1) : op->getOperand(0);
      Type t = computeTypeOf(getElementTypeOrSelf(data.getType()));
      if (isa<PowOp>(op) && !isa<FloatType>(t)) {
        Type other = getElementTypeOrSelf(op->getOperand(1).getType());
        t = isa<FloatType>(other) ? computeTypeOf(other)
                                  : Type(rewriter.getF64Type());
      }
      result = elementwise(
          rewriter, op->getLoc(), resultType, op->getOperands(),
          [&](OpBuilder &b, Location loc, ValueRange args) {
            SmallVector<Value> a;
            for (Value v : args)
              a.push_back(v.getType().isInteger(1) && !t.isInteger(1)
                              ? v
                              : castScalar(b, loc, v, t));
            Value r = scalarBody(op, b, loc, t, a);
            return castScalar(b, loc, r, outElt);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering>(patterns.getContext());
}

} // namespace mp
