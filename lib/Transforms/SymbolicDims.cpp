//===- SymbolicDims.cpp - dims of dynamically shaped graphs ---------------===//

#include "SymbolicDims.h"

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Dialect/Mp/IR/MpTypeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace mp {

/// Dim `i` of the result of an elementwise op over broadcast operands: a
/// size > 1 that one operand has, else the dim every operand shares.
SymDim SymbolicDims::broadcastDim(Operation *op, int64_t rank, int64_t i) {
  std::optional<SymDim> shared;
  bool allShare = true;
  for (Value operand : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(operand.getType());
    if (!t)
      return {};
    int64_t j = i - (rank - t.getRank());
    if (j < 0)
      continue;
    SymDim d = dimOf(operand, j);
    if (d.value && *d.value > 1)
      return d;
    if (d.value && *d.value == 1)
      continue;
    if (!shared)
      shared = d;
    else if (!shared->sameAs(d))
      allShare = false;
  }
  if (!shared)
    return SymDim::constant(1);
  return allShare ? *shared : SymDim{};
}

SymDim SymbolicDims::computeDim(Value v, int64_t i) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return {};
  int64_t rank = type.getRank();
  if (i < 0)
    i += rank;
  if (i < 0 || i >= rank)
    return {};
  if (!type.isDynamicDim(i))
    return SymDim::constant(type.getDimSize(i));
  SymDim self{std::nullopt, v, i, {}};
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func =
        dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (func && arg.getOwner()->isEntryBlock())
      if (auto names =
              func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "mp.dims"))
        if (i < (int64_t)names.size())
          if (auto n = dyn_cast<StringAttr>(names[i]); n && !n.empty())
            self.name = n;
    return self;
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return self;
  auto orSelf = [&](SymDim d) { return d.isKnown() ? d : self; };
  if (auto reshape = dyn_cast<ReshapeOp>(def)) {
    std::optional<SmallVector<SymDim>> e = shapeEntries(reshape.getShape());
    if (!e || (int64_t)e->size() != rank)
      return self;
    SymDim d = (*e)[i];
    if (d.value && *d.value == 0 && !reshape.getAllowzero())
      return orSelf(dimOf(reshape.getInput(), i));
    if (d.value && *d.value < 0) {
      // -1: what the others leave of the input's elements. Constants
      // multiply; symbolic dims must cancel one for one.
      auto in = cast<RankedTensorType>(reshape.getInput().getType());
      int64_t inConst = 1, outConst = 1;
      SmallVector<SymDim> inSyms, outSyms;
      for (int64_t j = 0; j < in.getRank(); ++j) {
        SymDim x = dimOf(reshape.getInput(), j);
        if (x.value)
          inConst *= *x.value;
        else if (x.isKnown())
          inSyms.push_back(x);
        else
          return self;
      }
      for (int64_t j = 0; j < rank; ++j) {
        if (j == i)
          continue;
        SymDim x = (*e)[j];
        if (x.value && *x.value == 0 && !reshape.getAllowzero())
          x = dimOf(reshape.getInput(), j);
        if (x.value && *x.value > 0) {
          outConst *= *x.value;
          continue;
        }
        if (x.value || !x.isKnown())
          return self;
        auto it =
            llvm::find_if(inSyms, [&](const SymDim &y) { return y.sameAs(x); });
        if (it == inSyms.end())
          outSyms.push_back(x);
        else
          inSyms.erase(it);
      }
      if (!outSyms.empty() || outConst == 0 || inConst % outConst)
        return self;
      if (inSyms.empty())
        return SymDim::constant(inConst / outConst);
      if (inSyms.size() == 1 && inConst == outConst)
        return inSyms.front();
      return self;
    }
    return orSelf(d);
  }
  if (auto t = dyn_cast<TransposeOp>(def))
    return orSelf(dimOf(t.getInput(), t.getPerm()[i]));
  if (auto u = dyn_cast<UnsqueezeOp>(def)) {
    SmallVector<int64_t> axes;
    for (int64_t a : u.getAxes())
      axes.push_back(a < 0 ? a + rank : a);
    if (llvm::is_contained(axes, i))
      return SymDim::constant(1);
    int64_t j = i - llvm::count_if(axes, [&](int64_t a) { return a < i; });
    return orSelf(dimOf(u.getInput(), j));
  }
  if (auto c = dyn_cast<ConcatOp>(def)) {
    // (I64Attr getters are unsigned: read as signed first.)
    int64_t axis = static_cast<int64_t>(c.getAxis());
    if (axis < 0)
      axis += rank;
    if (axis == i)
      return self;
    for (Value in : c.getInputs())
      if (SymDim d = dimOf(in, i); d.value)
        return d;
    return self;
  }
  if (auto e = dyn_cast<ExpandOp>(def)) {
    std::optional<SmallVector<SymDim>> entries = shapeEntries(e.getShape());
    auto in = cast<RankedTensorType>(e.getInput().getType());
    int64_t j = i - (rank - in.getRank());
    SymDim x = j >= 0 ? dimOf(e.getInput(), j) : SymDim::constant(1);
    SymDim s = SymDim::constant(1);
    if (entries && (int64_t)entries->size() == rank)
      s = (*entries)[i];
    else if (entries)
      return self;
    if (x.value && *x.value > 1)
      return x;
    if (s.value && *s.value > 1)
      return s;
    if (x.value && *x.value == 1)
      return orSelf(s);
    if (s.value && *s.value == 1)
      return orSelf(x);
    return self;
  }
  if (auto gather = dyn_cast<GatherOp>(def)) {
    // data[:axis] + indices.shape + data[axis+1:].
    auto data = cast<RankedTensorType>(gather.getData().getType());
    int64_t q = cast<RankedTensorType>(gather.getIndices().getType()).getRank();
    int64_t axis = static_cast<int64_t>(gather.getAxis());
    if (axis < 0)
      axis += data.getRank();
    if (i < axis)
      return orSelf(dimOf(gather.getData(), i));
    if (i < axis + q)
      return orSelf(dimOf(gather.getIndices(), i - axis));
    return orSelf(dimOf(gather.getData(), i - q + 1));
  }
  if (isa<ReduceMeanOp, ReduceSumOp, ReduceMaxOp>(def) &&
      def->getAttrOfType<BoolAttr>("keepdims") &&
      def->getAttrOfType<BoolAttr>("keepdims").getValue()) {
    auto axes = def->getAttrOfType<DenseI64ArrayAttr>("axes");
    if (!axes || axes.empty())
      return self;
    for (int64_t a : axes.asArrayRef())
      if ((a < 0 ? a + rank : a) == i)
        return SymDim::constant(1);
    return orSelf(dimOf(def->getOperand(0), i));
  }
  if (auto slice = dyn_cast<SliceOp>(def)) {
    // Dims the slice does not cut keep their size.
    std::optional<SmallVector<int64_t>> axes;
    if (slice.getAxes())
      axes = getConstantInts(slice.getAxes());
    else if (auto starts = getConstantInts(slice.getStarts()))
      axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
    if (!axes)
      return self;
    for (int64_t a : *axes)
      if ((a < 0 ? a + rank : a) == i)
        return self;
    return orSelf(dimOf(slice.getInput(), i));
  }
  if (auto mm = dyn_cast<MatMulOp>(def)) {
    if (i == rank - 1)
      return orSelf(dimOf(mm.getRhs(), -1));
    if (i == rank - 2)
      return orSelf(dimOf(mm.getLhs(), -2));
    // Batch dims broadcast like elementwise ones, without the matrix dims.
    std::optional<SymDim> shared;
    for (Value operand : {mm.getLhs(), mm.getRhs()}) {
      int64_t r = cast<RankedTensorType>(operand.getType()).getRank();
      int64_t j = i - (rank - r);
      if (j < 0 || j >= r - 2)
        continue;
      SymDim d = dimOf(operand, j);
      if (d.value && *d.value > 1)
        return d;
      if (!shared && !(d.value && *d.value == 1))
        shared = d;
    }
    return shared ? orSelf(*shared) : self;
  }
  if (auto split = dyn_cast<SplitOp>(def)) {
    int64_t axis = static_cast<int64_t>(split.getAxis());
    if (axis < 0)
      axis += rank;
    if (i != axis)
      return orSelf(dimOf(split.getInput(), i));
    ArrayRef<int64_t> sizes = split.getSplit();
    unsigned r = cast<OpResult>(v).getResultNumber();
    if (r < sizes.size() && sizes[r] >= 0)
      return SymDim::constant(sizes[r]);
    // An equal split (all sizes dynamic) of a known size.
    SymDim whole = dimOf(split.getInput(), i);
    int64_t n = split.getNumResults();
    if (llvm::all_of(sizes, [](int64_t x) { return x < 0; }) && whole.value &&
        *whole.value % n == 0)
      return SymDim::constant(*whole.value / n);
    return self;
  }
  if (auto ln = dyn_cast<LayerNormOp>(def)) {
    if (v == ln.getOutput())
      return orSelf(dimOf(ln.getInput(), i));
    return self;
  }
  // Elementwise ops, by name: unary ones keep their operand's shape, the
  // others broadcast.
  static const llvm::StringSet<> elementwise = {
      "add",  "sub",     "mul",        "div",         "where", "pow",
      "neg",  "cast",    "is_nan",     "softmax",     "tanh",  "sin",
      "cos",  "sqrt",    "reciprocal", "equal",       "and",   "or",
      "not",  "sigmoid", "exp",        "erf",         "relu",  "gelu",
      "log",  "abs",     "softplus",   "log_softmax", "max",   "min",
      "less", "greater", "clip",       "identity",    "silu"};
  StringRef opName = def->getName().getStringRef();
  if (def->getNumResults() == 1 && opName.consume_front("mp.") &&
      elementwise.contains(opName))
    return orSelf(broadcastDim(def, rank, i));
  return self;
}

/// `a op b` entrywise with one-entry broadcast.
std::optional<SmallVector<SymDim>>
SymbolicDims::combine(Operation *op,
                      function_ref<SymDim(const SymDim &, const SymDim &)> f) {
  auto a = shapeEntries(op->getOperand(0));
  auto b = shapeEntries(op->getOperand(1));
  if (!a || !b)
    return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1))
    return std::nullopt;
  SmallVector<SymDim> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(
        f((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]));
  return out;
}

std::optional<SmallVector<SymDim>> SymbolicDims::computeEntries(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() > 1 || !type.hasStaticShape() ||
      !isa<IntegerType>(type.getElementType()))
    return std::nullopt;
  if (std::optional<SmallVector<int64_t>> ints = getConstantInts(v)) {
    SmallVector<SymDim> out;
    for (int64_t x : *ints)
      out.push_back(SymDim::constant(x));
    return out;
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto shape = dyn_cast<ShapeOp>(def)) {
    auto in = dyn_cast<RankedTensorType>(shape.getInput().getType());
    if (!in)
      return std::nullopt;
    int64_t r = in.getRank();
    auto clampIndex = [&](int64_t x) {
      return std::clamp<int64_t>(x < 0 ? x + r : x, 0, r);
    };
    int64_t start = clampIndex(shape.getStart());
    int64_t end = shape.getEnd() ? clampIndex(*shape.getEnd()) : r;
    SmallVector<SymDim> out;
    for (int64_t i = start; i < end; ++i)
      out.push_back(dimOf(shape.getInput(), i));
    return out;
  }
  if (auto c = dyn_cast<ConcatOp>(def)) {
    SmallVector<SymDim> out;
    for (Value in : c.getInputs()) {
      auto e = shapeEntries(in);
      if (!e)
        return std::nullopt;
      out.append(*e);
    }
    return out;
  }
  if (isa<UnsqueezeOp, SqueezeOp, ReshapeOp, CastOp>(def))
    return shapeEntries(def->getOperand(0));
  if (auto g = dyn_cast<GatherOp>(def)) {
    auto data = shapeEntries(g.getData());
    auto idx = getConstantInts(g.getIndices());
    if (!data || !idx)
      return std::nullopt;
    SmallVector<SymDim> out;
    for (int64_t i : *idx) {
      if (i < 0)
        i += data->size();
      if (i < 0 || i >= (int64_t)data->size())
        return std::nullopt;
      out.push_back((*data)[i]);
    }
    return out;
  }
  if (auto s = dyn_cast<SliceOp>(def)) {
    auto data = shapeEntries(s.getInput());
    auto starts = getConstantInts(s.getStarts());
    auto ends = getConstantInts(s.getEnds());
    if (!data || !starts || !ends || starts->size() != 1 || ends->size() != 1)
      return std::nullopt;
    if (s.getSteps()) {
      auto steps = getConstantInts(s.getSteps());
      if (!steps || steps->size() != 1 || (*steps)[0] != 1)
        return std::nullopt;
    }
    if (s.getAxes()) {
      auto axes = getConstantInts(s.getAxes());
      if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))
        return std::nullopt;
    }
    int64_t n = data->size();
    auto clampIndex = [&](int64_t x) {
      return std::clamp<int64_t>(x < 0 ? std::max<int64_t>(x, -n) + n : x, 0,
                                 n);
    };
    int64_t b = clampIndex((*starts)[0]), e = clampIndex((*ends)[0]);
    return SmallVector<SymDim>(data->begin() + b,
                               data->begin() + std::max(b, e));
  }
  if (auto w = dyn_cast<WhereOp>(def)) {
    auto c = shapeEntries(w.getCondition());
    auto x = shapeEntries(w.getX());
    auto y = shapeEntries(w.getY());
    if (!c || !x || !y)
      return std::nullopt;
    size_t n = std::max({c->size(), x->size(), y->size()});
    auto at = [&](const SmallVector<SymDim> &e, size_t i) -> const SymDim & {
      return e[e.size() == 1 ? 0 : i];
    };
    SmallVector<SymDim> out;
    for (size_t i = 0; i < n; ++i) {
      const SymDim &ci = at(*c, i);
      out.push_back(!ci.value ? SymDim{} : *ci.value ? at(*x, i) : at(*y, i));
    }
    return out;
  }
  if (isa<EqualOp>(def))
    // A dim is never negative: it differs from a negative constant.
    return combine(def, [](const SymDim &a, const SymDim &b) {
      if (a.sameAs(b))
        return SymDim::constant(1);
      if (a.value && b.value)
        return SymDim::constant(0);
      const SymDim &c = a.value ? a : b, &d = a.value ? b : a;
      if (c.value && *c.value < 0 && d.source)
        return SymDim::constant(0);
      return SymDim{};
    });
  if (isa<MulOp, AddOp>(def)) {
    bool mul = isa<MulOp>(def);
    return combine(def, [&](const SymDim &a, const SymDim &b) {
      if (a.value && b.value)
        return SymDim::constant(mul ? *a.value * *b.value
                                    : *a.value + *b.value);
      if (mul && a.value && *a.value == 1)
        return b;
      if (mul && b.value && *b.value == 1)
        return a;
      return SymDim{};
    });
  }
  // Integer division of sizes (a head count halved for grouped queries):
  // exact only, and a division by 1 keeps the dim.
  if (isa<DivOp>(def))
    return combine(def, [](const SymDim &a, const SymDim &b) {
      if (a.value && b.value && *b.value > 0 && *a.value % *b.value == 0)
        return SymDim::constant(*a.value / *b.value);
      if (b.value && *b.value == 1)
        return a;
      return SymDim{};
    });
  return std::nullopt;
}

SymDim SymbolicDims::dimOf(Value v, int64_t i) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return {};
  if (i < 0)
    i += type.getRank();
  auto key = std::make_pair(v, i);
  if (auto it = dims.find(key); it != dims.end())
    return it->second;
  SymDim d = computeDim(v, i);
  dims[key] = d;
  return d;
}

std::optional<SmallVector<SymDim>> SymbolicDims::shapeEntries(Value v) {
  if (auto it = entries.find(v); it != entries.end())
    return it->second;
  std::optional<SmallVector<SymDim>> e = computeEntries(v);
  entries[v] = e;
  return e;
}

} // namespace mp
