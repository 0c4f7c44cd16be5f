//===- MpAttentionOps.cpp - attention ops: type inference, verifiers ------===//

#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mp;

static constexpr int64_t kDyn = ShapedType::kDynamic;
static bool isDyn(int64_t d) { return ShapedType::isDynamic(d); }
static int64_t addDims(int64_t a, int64_t b) {
  return isDyn(a) || isDyn(b) ? kDyn : a + b;
}
static int64_t divDim(int64_t a, int64_t b) {
  return isDyn(a) || b <= 0 ? kDyn : a / b;
}

namespace {
/// Q, K, V of ONNX Attention seen as 4-D [B, H, S, D].
struct HeadView {
  int64_t batch, heads, seq, headDim;
};
} // namespace

/// Views a 3-D [B, S, H*D] or 4-D [B, H, S, D] tensor with `numHeads` heads.
static FailureOr<HeadView> headView(Value v, int64_t numHeads,
                                    std::optional<Location> loc,
                                    StringRef name) {
  ArrayRef<int64_t> s = shapeOf(v);
  if (s.size() == 4)
    return HeadView{s[0], s[1], s[2], s[3]};
  if (s.size() == 3) {
    if (numHeads <= 0)
      return (void)emitOptionalError(loc, "3-D ", name,
                                     " needs q_num_heads and kv_num_heads"),
             failure();
    if (!isDyn(s[2]) && s[2] % numHeads != 0)
      return (void)emitOptionalError(loc, name, " hidden size ", s[2],
                                     " is not divisible by ", numHeads,
                                     " heads"),
             failure();
    return HeadView{s[0], numHeads, s[1], divDim(s[2], numHeads)};
  }
  return (void)emitOptionalError(loc, name, " must be 3-D or 4-D, got ",
                                 v.getType()),
         failure();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  FailureOr<HeadView> q =
      headView(adaptor.getQ(), adaptor.getQNumHeads(), loc, "Q");
  FailureOr<HeadView> k =
      headView(adaptor.getK(), adaptor.getKvNumHeads(), loc, "K");
  FailureOr<HeadView> v =
      headView(adaptor.getV(), adaptor.getKvNumHeads(), loc, "V");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  int64_t past = 0;
  if (Value pk = adaptor.getPastKey()) {
    if (shapeOf(pk).size() != 4)
      return emitOptionalError(loc, "past_key must be 4-D [B, Hkv, P, D]");
    past = shapeOf(pk)[2];
  }
  // A fixed-capacity cache keeps its length; otherwise past and new join.
  int64_t total = adaptor.getPastLength() ? past : addDims(past, k->seq);
  Type elt = elementTypeOf(adaptor.getQ());
  SmallVector<int64_t> y;
  if (shapeOf(adaptor.getQ()).size() == 3)
    y = {q->batch, q->seq,
         isDyn(v->headDim) ? kDyn : q->heads * v->headDim};
  else
    y = {q->batch, q->heads, q->seq, v->headDim};
  types.push_back(RankedTensorType::get(y, elt));
  types.push_back(RankedTensorType::get(
      {k->batch, k->heads, total, k->headDim}, elementTypeOf(adaptor.getK())));
  types.push_back(RankedTensorType::get(
      {v->batch, v->heads, total, v->headDim}, elementTypeOf(adaptor.getV())));
  types.push_back(
      RankedTensorType::get({q->batch, q->heads, q->seq, total}, elt));
  return success();
}

LogicalResult AttentionOp::verify() {
  FailureOr<HeadView> q = headView(getQ(), getQNumHeads(), getLoc(), "Q");
  FailureOr<HeadView> k = headView(getK(), getKvNumHeads(), getLoc(), "K");
  if (failed(q) || failed(k))
    return failure();
  if (!isDyn(q->heads) && !isDyn(k->heads) &&
      (k->heads == 0 || q->heads % k->heads != 0))
    return emitOpError("query heads (")
           << q->heads << ") must be a multiple of key/value heads ("
           << k->heads << ")";
  if (!isDyn(q->headDim) && !isDyn(k->headDim) && q->headDim != k->headDim)
    return emitOpError("Q and K head sizes differ: ")
           << q->headDim << " vs " << k->headDim;
  if ((bool)getPastKey() != (bool)getPastValue())
    return emitOpError("past_key and past_value go together");
  if (Value length = getPastLength()) {
    if (!getPastKey())
      return emitOpError("past_length needs past_key and past_value (the "
                         "caches it indexes)");
    if (shapeOf(length).size() != 0)
      return emitOpError("past_length must be a scalar, got ")
             << length.getType();
    if (getNonpadKvSeqlen())
      return emitOpError("past_length and nonpad_kv_seqlen cannot be "
                         "combined");
    int64_t capacity = shapeOf(getPastKey())[2];
    if (!isDyn(capacity) && !isDyn(k->seq) && k->seq > capacity)
      return emitOpError("the cache holds ")
             << capacity << " positions, fewer than the " << k->seq
             << " new ones";
  }
  if (Value mask = getAttnMask()) {
    Type m = elementTypeOf(mask);
    if (!m.isInteger(1) && m != elementTypeOf(getQ()))
      return emitOpError("attn_mask must be boolean or have Q's element "
                         "type, got ")
             << mask.getType();
  }
  if (getQkMatmulOutputMode() < 0 || getQkMatmulOutputMode() > 3)
    return emitOpError("qk_matmul_output_mode must be 0..3");
  if (getSoftcap().convertToFloat() < 0)
    return emitOpError("softcap must be >= 0");
  return success();
}

LogicalResult MsAttentionOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> w = shapeOf(adaptor.getWeights());
  if (in.size() != 3 || w.size() != 2)
    return emitOptionalError(loc, "input must be [B, S, input_hidden] and "
                                  "weights [input_hidden, 3*hidden]");
  int64_t n = adaptor.getNumHeads();
  ArrayRef<int64_t> qkv = adaptor.getQkvHiddenSizes();
  int64_t qHidden = qkv.empty() ? divDim(w[1], 3) : qkv[0];
  int64_t kHidden = qkv.empty() ? qHidden : qkv[1];
  int64_t vHidden = qkv.empty() ? qHidden : qkv[2];
  int64_t past = 0;
  if (Value p = adaptor.getPast()) {
    if (shapeOf(p).size() != 5)
      return emitOptionalError(loc, "past must be [2, B, N, P, H]");
    past = shapeOf(p)[3];
  }
  Type elt = elementTypeOf(adaptor.getInput());
  types.push_back(RankedTensorType::get({in[0], in[1], vHidden}, elt));
  types.push_back(RankedTensorType::get(
      {2, in[0], n, addDims(past, in[1]), divDim(kHidden, n)}, elt));
  return success();
}

LogicalResult MsAttentionOp::verify() {
  if ((int64_t)getNumHeads() <= 0)
    return emitOpError("num_heads must be positive");
  if (!getQkvHiddenSizes().empty() && getQkvHiddenSizes().size() != 3)
    return emitOpError("qkv_hidden_sizes must have 3 entries");
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeights());
  if (!isDyn(in[2]) && !isDyn(w[0]) && in[2] != w[0])
    return emitOpError("weights rows (")
           << w[0] << ") must equal the input hidden size (" << in[2] << ")";
  if (Value mask = getMaskIndex()) {
    ArrayRef<int64_t> m = shapeOf(mask);
    if (m.size() == 0 || m.size() > 3)
      return emitOpError("mask_index must be key lengths [B] or [2B], a key "
                         "padding mask [B, T] or a mask [B, S, T] (Megatron's "
                         "4-D mask is not supported); got rank ")
             << m.size();
    if (m.size() == 1 && !isDyn(m[0]) && !isDyn(in[0]) && m[0] != in[0] &&
        m[0] != 2 * in[0])
      return emitOpError("a 1-D mask_index holds the batch's key lengths (")
             << in[0] << " entries) or also their starts (" << 2 * in[0]
             << "); got " << m[0];
    // [B, T] or [B, S, T], T the past and new keys.
    int64_t keys = in[1];
    if (Value past = getPast())
      keys = isDyn(shapeOf(past)[3]) || isDyn(in[1]) ? kDyn
                                                     : shapeOf(past)[3] + in[1];
    SmallVector<int64_t> want = {in[0], keys};
    if (m.size() == 3)
      want.insert(want.begin() + 1, in[1]);
    for (auto [got, w] : llvm::zip(m, want))
      if (m.size() > 1 && !isDyn(got) && !isDyn(w) && got != w)
        return emitOpError("mask_index ")
               << mask.getType() << " does not match the batch (" << in[0]
               << "), queries (" << in[1] << ") and keys (" << keys
               << "): it must be [batch, keys] or [batch, queries, keys]";
  }
  return success();
}

LogicalResult MultiHeadAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> q = shapeOf(adaptor.getQuery());
  int64_t n = adaptor.getNumHeads();
  if (q.size() != 3 && q.size() != 5)
    return emitOptionalError(loc, "query must be [B, S, hidden] (or packed "
                                  "[B, S, N, 3, H])");
  int64_t batch = q[0], seq = q[1];
  int64_t qHidden = q.size() == 3 ? q[2] : (isDyn(q[4]) ? kDyn : n * q[4]);
  int64_t vHidden = qHidden, kvSeq = seq, headDim = divDim(qHidden, n);
  if (Value v = adaptor.getValue()) {
    ArrayRef<int64_t> vs = shapeOf(v);
    if (vs.size() == 3) {
      vHidden = vs[2];
      kvSeq = vs[1];
    } else if (vs.size() == 4) { // [B, N, L, H]: already projected
      vHidden = isDyn(vs[3]) ? kDyn : n * vs[3];
      kvSeq = vs[2];
    }
  } else if (Value k = adaptor.getKey(); k && shapeOf(k).size() == 5) {
    // Packed K and V: [B, L, N, 2, H].
    ArrayRef<int64_t> ks = shapeOf(k);
    vHidden = isDyn(ks[4]) ? kDyn : n * ks[4];
    kvSeq = ks[1];
  }
  int64_t past = 0;
  if (Value pk = adaptor.getPastKey())
    past = shapeOf(pk).size() == 4 ? shapeOf(pk)[2] : kDyn;
  Type elt = elementTypeOf(adaptor.getQuery());
  types.push_back(RankedTensorType::get({batch, seq, vHidden}, elt));
  int64_t total = addDims(past, kvSeq);
  types.push_back(RankedTensorType::get({batch, n, total, headDim}, elt));
  types.push_back(
      RankedTensorType::get({batch, n, total, divDim(vHidden, n)}, elt));
  return success();
}

LogicalResult MultiHeadAttentionOp::verify() {
  if ((int64_t)getNumHeads() <= 0)
    return emitOpError("num_heads must be positive");
  if ((bool)getPastKey() != (bool)getPastValue())
    return emitOpError("past_key and past_value go together");
  bool packedKv = getKey() && !getValue() && shapeOf(getKey()).size() == 5;
  if ((bool)getKey() != (bool)getValue() && shapeOf(getQuery()).size() == 3 &&
      !packedKv)
    return emitOpError("key and value go together unless query is packed "
                       "[B, S, N, 3, H] or key is packed [B, L, N, 2, H]");
  ArrayRef<int64_t> q = shapeOf(getQuery());
  int64_t n = getNumHeads();
  if (q.size() == 3 && !isDyn(q[2]) && q[2] % n != 0)
    return emitOpError("query hidden size ")
           << q[2] << " is not divisible by num_heads " << n;
  return success();
}

LogicalResult GroupQueryAttentionOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> q = shapeOf(adaptor.getQuery());
  if (q.size() != 3)
    return emitOptionalError(loc, "query must be [B, S, hidden]");
  int64_t n = adaptor.getNumHeads(), kvn = adaptor.getKvNumHeads();
  // Without key/value the query packs Q, K and V: hidden = (N + 2*Nkv) * H.
  int64_t headDim = adaptor.getKey() ? divDim(q[2], n) : divDim(q[2], n + 2 * kvn);
  Type elt = elementTypeOf(adaptor.getQuery());
  types.push_back(RankedTensorType::get(
      {q[0], q[1], isDyn(headDim) ? kDyn : n * headDim}, elt));
  // The present length is max(past, total_sequence_length), as onnxruntime
  // sizes it: known when total_sequence_length is a constant (mp-run
  // compiles it in) and the past length is static.
  int64_t presentLen = kDyn;
  DenseIntElementsAttr total;
  if (matchPattern(adaptor.getTotalSequenceLength(), m_Constant(&total)) &&
      total.getNumElements() == 1) {
    int64_t t = (*total.value_begin<APInt>()).getSExtValue();
    int64_t past = 0;
    if (adaptor.getPastKey())
      past = shapeOf(adaptor.getPastKey()).size() == 4
                 ? shapeOf(adaptor.getPastKey())[2]
                 : kDyn;
    presentLen = isDyn(past) ? kDyn : std::max(t, past);
  }
  auto present = RankedTensorType::get({q[0], kvn, presentLen, headDim}, elt);
  types.push_back(present);
  types.push_back(present);
  return success();
}

LogicalResult GroupQueryAttentionOp::verify() {
  int64_t n = (int64_t)getNumHeads(), kvn = (int64_t)getKvNumHeads();
  if (n <= 0 || kvn <= 0 || n % kvn != 0)
    return emitOpError("num_heads (")
           << n << ") must be a positive multiple of kv_num_heads (" << kvn
           << ")";
  if ((bool)getPastKey() != (bool)getPastValue())
    return emitOpError("past_key and past_value go together");
  if (getDoRotary() && (!getCosCache() || !getSinCache()))
    return emitOpError("do_rotary needs cos_cache and sin_cache");
  return success();
}

LogicalResult MsRotaryEmbeddingOp::verify() {
  ArrayRef<int64_t> pos = shapeOf(getPositionIds());
  if (pos.size() == 2 || (pos.size() == 1 && (isDyn(pos[0]) || pos[0] == 1)))
    return success();
  return emitOpError("position_ids must be [batch, sequence] or [1] (a start "
                     "position); got ")
         << getPositionIds().getType();
}

LogicalResult RotaryEmbeddingOp::verify() {
  ArrayRef<int64_t> cos = shapeOf(getCosCache()), sin = shapeOf(getSinCache());
  if (failed(verifyCompatibleShape(cos, sin)))
    return emitOpError("cos_cache and sin_cache must have the same shape");
  // With position ids the caches are tables [max_position, rotary_dim/2];
  // without, they are already gathered: [batch, sequence, rotary_dim/2].
  int64_t want = getPositionIds() ? 2 : 3;
  if ((int64_t)cos.size() != want)
    return emitOpError("cos_cache must be ")
           << (getPositionIds() ? "[max_position, rotary_dim/2]"
                                : "[batch, sequence, rotary_dim/2] "
                                  "(no position_ids)")
           << ", got " << getCosCache().getType();
  return success();
}
