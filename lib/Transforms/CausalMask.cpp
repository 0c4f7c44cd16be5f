//===- CausalMask.cpp - recognize constant causal attention masks ---------===//

#include "CausalMask.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace mp {
namespace {

/// Masks larger than this are not evaluated.
constexpr int64_t kMaxElements = 1 << 20;

/// A tensor's values, row-major, as doubles (bools 0/1).
struct ConstTensor {
  SmallVector<int64_t> shape;
  std::vector<double> values;

  /// The flat index of `idx`.
  int64_t offset(ArrayRef<int64_t> idx) const {
    int64_t o = 0;
    for (auto [i, d] : llvm::zip(idx, shape))
      o = o * d + i;
    return o;
  }
};

/// Advances a row-major index over `shape`; false after the last.
bool next(SmallVectorImpl<int64_t> &idx, ArrayRef<int64_t> shape) {
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    if (++idx[d] < shape[d])
      return true;
    idx[d] = 0;
  }
  return false;
}

std::optional<ConstTensor> evaluate(Value v, int depth);

std::optional<ConstTensor> evaluateConstant(DenseElementsAttr attr) {
  ConstTensor t;
  t.shape.assign(attr.getType().getShape().begin(),
                 attr.getType().getShape().end());
  Type elt = attr.getElementType();
  if (isa<FloatType>(elt)) {
    for (const APFloat &f : attr.getValues<APFloat>())
      t.values.push_back(f.convertToDouble());
  } else if (elt.isInteger(1)) {
    for (bool b : attr.getValues<bool>())
      t.values.push_back(b);
  } else if (isa<IntegerType>(elt)) {
    for (const APInt &i : attr.getValues<APInt>())
      t.values.push_back((double)i.getSExtValue());
  } else {
    return std::nullopt;
  }
  return t;
}

/// ONNX Slice with constant parameters and unit steps.
std::optional<ConstTensor> evaluateSlice(SliceOp slice, int depth) {
  std::optional<ConstTensor> in = evaluate(slice.getInput(), depth + 1);
  auto starts = getConstantInts(slice.getStarts());
  auto ends = getConstantInts(slice.getEnds());
  std::optional<SmallVector<int64_t>> axes, steps;
  if (slice.getAxes() && !(axes = getConstantInts(slice.getAxes())))
    return std::nullopt;
  if (slice.getSteps() && !(steps = getConstantInts(slice.getSteps())))
    return std::nullopt;
  if (!in || !starts || !ends)
    return std::nullopt;
  int64_t rank = in->shape.size();
  SmallVector<int64_t> begin(rank, 0), size(in->shape);
  for (size_t i = 0; i < starts->size(); ++i) {
    int64_t a = axes ? (*axes)[i] : (int64_t)i;
    if (a < 0)
      a += rank;
    if (a < 0 || a >= rank || (steps && (*steps)[i] != 1))
      return std::nullopt;
    int64_t dim = in->shape[a];
    auto clampIndex = [&](int64_t x) {
      return std::clamp<int64_t>(x < 0 ? x + dim : x, 0, dim);
    };
    begin[a] = clampIndex((*starts)[i]);
    size[a] = std::max<int64_t>(0, clampIndex((*ends)[i]) - begin[a]);
  }
  ConstTensor out;
  out.shape = size;
  if (llvm::is_contained(size, 0))
    return out;
  SmallVector<int64_t> idx(rank, 0), src(rank);
  do {
    for (int64_t d = 0; d < rank; ++d)
      src[d] = begin[d] + idx[d];
    out.values.push_back(in->values[in->offset(src)]);
  } while (next(idx, size));
  return out;
}

/// ONNX Trilu: keeps j - i >= k (upper) or j - i <= k (lower) of the last
/// two dims, zeros elsewhere.
std::optional<ConstTensor> evaluateTrilu(TriluOp trilu, int depth) {
  std::optional<ConstTensor> t = evaluate(trilu.getInput(), depth + 1);
  int64_t k = 0;
  if (Value kv = trilu.getK()) {
    auto ks = getConstantInts(kv);
    if (!ks || ks->size() != 1)
      return std::nullopt;
    k = ks->front();
  }
  if (!t || t->shape.size() < 2 || t->values.empty())
    return t;
  int64_t rank = t->shape.size();
  SmallVector<int64_t> idx(rank, 0);
  int64_t flat = 0;
  do {
    int64_t diff = idx[rank - 1] - idx[rank - 2];
    bool kept = trilu.getUpper() ? diff >= k : diff <= k;
    if (!kept)
      t->values[flat] = 0;
    ++flat;
  } while (next(idx, t->shape));
  return t;
}

std::optional<ConstTensor> evaluate(Value v, int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (depth > 8 || !type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxElements)
    return std::nullopt;
  DenseElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return evaluateConstant(attr);
  if (auto slice = v.getDefiningOp<SliceOp>())
    return evaluateSlice(slice, depth);
  if (auto trilu = v.getDefiningOp<TriluOp>())
    return evaluateTrilu(trilu, depth);
  if (auto cast = v.getDefiningOp<CastOp>()) {
    std::optional<ConstTensor> t = evaluate(cast.getInput(), depth + 1);
    if (t && type.getElementType().isInteger(1))
      for (double &x : t->values)
        x = x != 0;
    return t;
  }
  return std::nullopt;
}

} // namespace

bool isCausalMask(Value mask, MaskKind kind, int64_t queries, int64_t keys,
                  int64_t offset) {
  std::optional<ConstTensor> t = evaluate(mask, 0);
  if (!t || t->shape.size() < 2 || t->values.empty())
    return false;
  int64_t rank = t->shape.size();
  if (t->shape[rank - 2] != queries || t->shape[rank - 1] != keys)
    return false;
  SmallVector<int64_t> idx(rank, 0);
  int64_t flat = 0;
  do {
    bool allowed = idx[rank - 1] <= idx[rank - 2] + offset;
    double x = t->values[flat++];
    bool ok = false;
    switch (kind) {
    case MaskKind::Keep:
      ok = (x != 0) == allowed;
      break;
    case MaskKind::Drop:
      ok = (x != 0) != allowed;
      break;
    case MaskKind::Additive:
      ok = allowed ? x == 0 : (std::isinf(x) && x < 0) || x <= -1e30;
      break;
    }
    if (!ok)
      return false;
  } while (next(idx, t->shape));
  return true;
}

} // namespace mp
