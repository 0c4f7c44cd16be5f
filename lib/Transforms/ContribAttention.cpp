//===- ContribAttention.cpp - contrib attention as mp.attention -----------===//
//
// The rewrites build the same arithmetic as the contrib ops' own lowering
// (ContribAttentionToLinalg.cpp): the key padding mask adds
// mask_filter_value to the scores of the keys it marks, unidirectional is
// the causal rule counted from the end of the past, and the default scale is
// 1/sqrt(head size). Forms with no exact mp.attention equivalent are kept.
//
//===----------------------------------------------------------------------===//

#include "ContribAttention.h"

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mp;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

Value i64Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  return ConstantOp::create(
      b, loc,
      DenseIntElementsAttr::get(
          RankedTensorType::get({(int64_t)values.size()}, b.getI64Type()),
          values));
}

Value scalarConstant(OpBuilder &b, Location loc, Type element, double value) {
  auto type = RankedTensorType::get({}, element);
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getFloatAttr(element, value)));
}

/// x[..., begin:end] on the last axis.
Value sliceLast(OpBuilder &b, Location loc, Value x, int64_t begin,
                int64_t end) {
  return SliceOp::create(b, loc, x, i64Constant(b, loc, {begin}),
                         i64Constant(b, loc, {end}),
                         i64Constant(b, loc, {-1}), Value());
}

/// The additive mask of a [B, T] key padding mask: `fill` where it is <= 0,
/// 0 elsewhere, as [B, 1, 1, T] in `element`; plus `bias` if given.
Value paddingMask(OpBuilder &b, Location loc, Value padding, double fill,
                  Type element, Value bias) {
  Type paddingElement = getElementTypeOrSelf(padding.getType());
  Value zero = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({}, paddingElement),
                             b.getIntegerAttr(paddingElement, 0)));
  Value masked = LessOrEqualOp::create(b, loc, padding, zero);
  Value mask = WhereOp::create(b, loc, masked,
                               scalarConstant(b, loc, element, fill),
                               scalarConstant(b, loc, element, 0.0));
  mask = UnsqueezeOp::create(b, loc, mask, b.getDenseI64ArrayAttr({1, 2}));
  return bias ? AddOp::create(b, loc, mask, bias).getResult() : mask;
}

/// Gives `result` the type the graph had, when the inferred one is
/// compatible (more or less refined); false if not.
bool adopt(Value result, Type want) {
  if (result.getType() == want)
    return true;
  if (!isCompatibleReturnTypes(TypeRange{result.getType()}, TypeRange{want}))
    return false;
  result.setType(want);
  return true;
}

/// The parts both contrib ops share once their Q, K, V and past are 3-D
/// and 4-D tensors: the mask (attention_bias plus the padding mask's
/// filter where it is <= 0) and the op itself, causal if unidirectional.
template <typename ContribOp>
AttentionOp buildAttention(RewriterBase &rewriter, ContribOp op, Value q,
                           Value k, Value v, Value padding, Value pastK,
                           Value pastV) {
  Location loc = op.getLoc();
  Value mask = op.getAttentionBias();
  if (padding)
    mask = paddingMask(rewriter, loc, padding,
                       op.getMaskFilterValue().convertToDouble(),
                       getElementTypeOrSelf(q.getType()), mask);
  int64_t n = op.getNumHeads();
  return AttentionOp::create(
      rewriter, loc, q, k, v, mask, pastK, pastV, Value(), Value(),
      rewriter.getBoolAttr(op.getUnidirectional()),
      rewriter.getI64IntegerAttr(n), rewriter.getI64IntegerAttr(n),
      rewriter.getI64IntegerAttr(0), op.getScaleAttr(),
      rewriter.getF32FloatAttr(0), TypeAttr());
}

/// Erases what was built in front of `op` since `before` (the op that
/// preceded it then, or null at the block's start), last first.
void eraseBuilt(RewriterBase &rewriter, Operation *op, Operation *before) {
  SmallVector<Operation *> built;
  for (Operation *x = op->getPrevNode(); x && x != before; x = x->getPrevNode())
    built.push_back(x);
  for (Operation *x : built)
    rewriter.eraseOp(x);
}

/// Why `op` keeps its own lowering, or "".
std::string whyKept(MultiHeadAttentionOp op) {
  Value key = op.getKey(), value = op.getValue();
  if (typeOf(op.getQuery()).getRank() != 3 || !key || !value ||
      typeOf(key).getRank() != 3 || typeOf(value).getRank() != 3)
    return "packed or projected Q/K/V (only 3-D query, key and value map to "
           "mp.attention)";
  if (Value kp = op.getKeyPaddingMask(); kp && typeOf(kp).getRank() != 2)
    return "a key_padding_mask that is not [batch, keys]";
  if (Value bias = op.getBias(); bias && typeOf(bias).isDynamicDim(0))
    return "a bias of run-time width";
  for (Value x : {Value(op.getQuery()), key, value})
    if (typeOf(x).isDynamicDim(2))
      return "Q/K/V widths known only at run time";
  return "";
}

/// Why `op` keeps its own lowering, or "".
std::string whyKept(MsAttentionOp op) {
  auto weights = typeOf(op.getWeights());
  if (weights.isDynamicDim(1) || typeOf(op.getInput()).getRank() != 3)
    return "a projection of run-time width";
  ArrayRef<int64_t> widths = op.getQkvHiddenSizes();
  if (!widths.empty() && (widths[0] != widths[1] || widths[1] != widths[2]))
    return "qkv_hidden_sizes of different widths";
  if (Value mask = op.getMaskIndex(); mask && typeOf(mask).getRank() != 2)
    return "a mask_index that is not [batch, keys] (key ranges or a 3-D "
           "mask)";
  if (op.getPast() && typeOf(op.getPast()).getRank() != 5)
    return "a past that is not [2, batch, heads, past, head size]";
  return "";
}

/// MultiHeadAttention as mp.attention; false (IR unchanged) if the fused op
/// would not have the graph's types.
bool rewrite(RewriterBase &rewriter, MultiHeadAttentionOp op) {
  Location loc = op.getLoc();
  Operation *before = op->getPrevNode();
  rewriter.setInsertionPoint(op);
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  if (Value bias = op.getBias()) {
    int64_t wq = typeOf(q).getDimSize(2), wk = typeOf(k).getDimSize(2),
            wv = typeOf(v).getDimSize(2);
    q = AddOp::create(rewriter, loc, q, sliceLast(rewriter, loc, bias, 0, wq));
    k = AddOp::create(rewriter, loc, k,
                      sliceLast(rewriter, loc, bias, wq, wq + wk));
    v = AddOp::create(rewriter, loc, v,
                      sliceLast(rewriter, loc, bias, wq + wk, wq + wk + wv));
  }
  AttentionOp attention =
      buildAttention(rewriter, op, q, k, v, op.getKeyPaddingMask(),
                     op.getPastKey(), op.getPastValue());
  bool fits = adopt(attention.getOutput(), op.getOutput().getType()) &&
              adopt(attention.getPresentKey(), op.getPresentKey().getType()) &&
              adopt(attention.getPresentValue(),
                    op.getPresentValue().getType());
  if (!fits) {
    eraseBuilt(rewriter, op, before);
    return false;
  }
  rewriter.replaceOp(op, {attention.getOutput(), attention.getPresentKey(),
                          attention.getPresentValue()});
  return true;
}

/// Attention (packed projection, stacked past) as MatMul, Add, Slice and
/// mp.attention; false (IR unchanged) if the fused op would not have the
/// graph's types.
bool rewrite(RewriterBase &rewriter, MsAttentionOp op) {
  Location loc = op.getLoc();
  Operation *before = op->getPrevNode();
  rewriter.setInsertionPoint(op);
  Value qkv = MatMulOp::create(rewriter, loc, op.getInput(), op.getWeights());
  if (Value bias = op.getBias())
    qkv = AddOp::create(rewriter, loc, qkv, bias);
  int64_t width = typeOf(op.getWeights()).getDimSize(1) / 3;
  Value q = sliceLast(rewriter, loc, qkv, 0, width),
        k = sliceLast(rewriter, loc, qkv, width, 2 * width),
        v = sliceLast(rewriter, loc, qkv, 2 * width, 3 * width);
  Value pastK, pastV;
  if (Value past = op.getPast()) {
    auto half = [&](int64_t i) -> Value {
      Value index = ConstantOp::create(
          rewriter, loc,
          DenseIntElementsAttr::get(
              RankedTensorType::get({}, rewriter.getI64Type()), {i}));
      return GatherOp::create(rewriter, loc, past, index,
                              rewriter.getI64IntegerAttr(0));
    };
    pastK = half(0);
    pastV = half(1);
  }
  AttentionOp attention =
      buildAttention(rewriter, op, q, k, v, op.getMaskIndex(), pastK, pastV);
  // The present stacks the two caches again: [2, B, N, P + S, H].
  auto stacked = [&](Value cache) {
    return UnsqueezeOp::create(rewriter, loc, cache,
                               rewriter.getDenseI64ArrayAttr({0}));
  };
  Value present = ConcatOp::create(
      rewriter, loc,
      ValueRange{stacked(attention.getPresentKey()),
                 stacked(attention.getPresentValue())},
      rewriter.getI64IntegerAttr(0));
  if (!adopt(attention.getOutput(), op.getOutput().getType()) ||
      !adopt(present, op.getPresent().getType())) {
    eraseBuilt(rewriter, op, before);
    return false;
  }
  rewriter.replaceOp(op, {attention.getOutput(), present});
  return true;
}

/// The report's name of `op`: its ONNX node name, else its op name.
std::string nodeName(Operation *op) {
  std::string name = onnxNodeName(op);
  return name.empty() ? op->getName().getStringRef().str() : name;
}

} // namespace

void mp::rewriteContribAttention(ModuleOp module, RewriterBase &rewriter,
                                 llvm::json::Array &fused,
                                 llvm::json::Array &kept) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<MultiHeadAttentionOp, MsAttentionOp, GroupQueryAttentionOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    std::string node = nodeName(op), opType, reason;
    bool done = false, causal = false;
    if (auto mha = dyn_cast<MultiHeadAttentionOp>(op)) {
      opType = "com.microsoft.MultiHeadAttention";
      causal = mha.getUnidirectional();
      reason = whyKept(mha);
      done = reason.empty() && rewrite(rewriter, mha);
    } else if (auto attention = dyn_cast<MsAttentionOp>(op)) {
      opType = "com.microsoft.Attention";
      causal = attention.getUnidirectional();
      reason = whyKept(attention);
      done = reason.empty() && rewrite(rewriter, attention);
    } else {
      opType = "com.microsoft.GroupQueryAttention";
      reason = "seqlens_k, total_sequence_length and the rotary inputs have "
               "no mp.attention form";
    }
    if (done) {
      fused.push_back(llvm::json::Object{
          {"node", node},
          {"nodes", llvm::json::Array{node}},
          {"pattern", llvm::json::Array{opType}},
          {"causal", causal}});
      continue;
    }
    if (reason.empty())
      reason = "the fused op's types differ from the graph's";
    kept.push_back(
        llvm::json::Object{{"node", node}, {"op", opType}, {"reason", reason}});
  }
}
