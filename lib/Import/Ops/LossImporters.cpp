//===- LossImporters.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss -===//
//
// The training losses are spelled out in mp ops (one-hot selection by
// comparing the targets with the class indices), so that they lower and
// differentiate like any other graph.
//
//===----------------------------------------------------------------------===//

#include "../NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace mp::import {
namespace {

/// Builds single-result mp ops at the node; the first failure sticks.
struct Spelled {
  NodeContext &n;
  bool failed = false;

  template <typename OpTy, typename... Args> Value op(Args &&...args) {
    if (failed)
      return {};
    FailureOr<ValueList> r = n.results<OpTy>(std::forward<Args>(args)...);
    if (mlir::failed(r)) {
      failed = true;
      return {};
    }
    return (*r)[0];
  }
};

/// NegativeLogLikelihoodLoss on log-probabilities `logp` [N, C, d...].
FailureOr<ValueList> nllLoss(NodeContext &n, Value logp, Value target,
                             Value weight) {
  auto type = dyn_cast<RankedTensorType>(logp.getType());
  auto targetType = dyn_cast<RankedTensorType>(target.getType());
  if (!type || type.getRank() < 2 || !targetType ||
      targetType.getRank() != type.getRank() - 1)
    return n.error() << "input must be [N, C, d...] and target [N, d...], got "
                     << logp.getType() << " and " << target.getType();
  int64_t classes = type.getDimSize(1);
  if (ShapedType::isDynamic(classes))
    return n.error() << "the number of classes (dim 1 of the input) must be "
                        "static, got "
                     << logp.getType();
  std::string reduction = n.getString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return n.error() << "unknown reduction '" << reduction
                     << "' (expected mean, sum or none)";
  Type elt = type.getElementType();
  int64_t rank = type.getRank();
  Spelled s{n};
  Value t64 = s.op<CastOp>(target, TypeAttr::get(n.b.getI64Type()));
  Value t1 = s.op<UnsqueezeOp>(t64, n.intsAttr({1}));
  // Class indices shaped [1, C, 1...] to compare with [N, 1, d...].
  SmallVector<int64_t> classShape(rank, 1);
  classShape[1] = classes;
  auto classType = RankedTensorType::get(classShape, n.b.getI64Type());
  Value classIds = ConstantOp::create(
      n.b, n.loc,
      DenseIntElementsAttr::get(
          classType, llvm::to_vector(llvm::seq<int64_t>(0, classes))));
  Value oneHot = s.op<CastOp>(s.op<EqualOp>(t1, classIds), TypeAttr::get(elt));
  Value picked = s.op<ReduceSumOp>(s.op<MulOp>(logp, oneHot),
                                   n.intsAttr({1}), n.b.getBoolAttr(false),
                                   n.b.getBoolAttr(false));
  // The weight of each target (ignored targets weigh 0; an ignore_index
  // outside [0, C) selects no class at all).
  Value w;
  if (weight) {
    Value wc = s.op<ReshapeOp>(weight, n.i64Vector(classShape),
                               n.b.getBoolAttr(false));
    w = s.op<ReduceSumOp>(s.op<MulOp>(oneHot, wc), n.intsAttr({1}),
                          n.b.getBoolAttr(false), n.b.getBoolAttr(false));
  }
  if (n.hasAttr("ignore_index")) {
    Value ignore = n.scalar(n.b.getI64Type(), n.getInt("ignore_index", 0));
    Value keep = s.op<CastOp>(s.op<NotOp>(s.op<EqualOp>(t64, ignore)),
                              TypeAttr::get(elt));
    w = w ? s.op<MulOp>(w, keep) : keep;
  }
  Value loss = s.op<NegOp>(w ? s.op<MulOp>(picked, w) : picked);
  if (reduction == "sum") {
    loss = s.op<ReduceSumOp>(loss, n.intsAttr({}), n.b.getBoolAttr(false),
                             n.b.getBoolAttr(false));
  } else if (reduction == "mean") {
    if (w)
      loss = s.op<DivOp>(
          s.op<ReduceSumOp>(loss, n.intsAttr({}), n.b.getBoolAttr(false),
                            n.b.getBoolAttr(false)),
          s.op<ReduceSumOp>(w, n.intsAttr({}), n.b.getBoolAttr(false),
                            n.b.getBoolAttr(false)));
    else
      loss = s.op<ReduceMeanOp>(loss, n.intsAttr({}), n.b.getBoolAttr(false),
                                n.b.getBoolAttr(false));
  }
  if (s.failed)
    return failure();
  return ValueList{loss};
}

FailureOr<ValueList> importNegativeLogLikelihoodLoss(NodeContext &n) {
  FailureOr<Value> input = n.required(0, "input");
  FailureOr<Value> target = n.required(1, "target");
  if (failed(input) || failed(target))
    return failure();
  return nllLoss(n, *input, *target, n.in(2));
}

FailureOr<ValueList> importSoftmaxCrossEntropyLoss(NodeContext &n) {
  FailureOr<Value> scores = n.required(0, "scores");
  FailureOr<Value> labels = n.required(1, "labels");
  if (failed(scores) || failed(labels))
    return failure();
  FailureOr<ValueList> logp =
      n.results<LogSoftmaxOp>(*scores, n.intsAttr({1}));
  if (failed(logp))
    return failure();
  FailureOr<ValueList> loss = nllLoss(n, (*logp)[0], *labels, n.in(2));
  if (failed(loss))
    return failure();
  return ValueList{(*loss)[0], (*logp)[0]};
}

} // namespace

void registerLossImporters(OpTable &t) {
  t.add("NegativeLogLikelihoodLoss", {12, 13, 22},
        importNegativeLogLikelihoodLoss);
  t.add("SoftmaxCrossEntropyLoss", {12, 13}, importSoftmaxCrossEntropyLoss);
}

} // namespace mp::import
