//===- Plan.cpp - precision plans and reports -----------------------------===//

#include "mp/Precision/Plan.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/CastPlan.h"
#include "mp/Precision/Materialize.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace mp {

static int64_t dim(int64_t d) { return ShapedType::isDynamic(d) ? 1 : d; }

/// Multiply-add FLOPs of a contraction (dynamic dims count as 1), else 0.
static double contractionFlops(Operation *op) {
  auto shape = [](Value v) { return cast<ShapedType>(v.getType()).getShape(); };
  auto prod = [](ArrayRef<int64_t> s) {
    double n = 1;
    for (int64_t d : s)
      n *= dim(d);
    return n;
  };
  if (auto m = dyn_cast<MatMulOp>(op)) {
    ArrayRef<int64_t> a = shape(m.getLhs());
    return 2.0 * prod(shape(m.getOutput())) * dim(a.back());
  }
  if (auto g = dyn_cast<GemmOp>(op)) {
    ArrayRef<int64_t> a = shape(g.getA());
    return 2.0 * prod(shape(g.getOutput())) * dim(g.getTransA() ? a[0] : a[1]);
  }
  if (auto c = dyn_cast<ConvOp>(op)) {
    ArrayRef<int64_t> w = shape(c.getWeight());
    return 2.0 * prod(shape(c.getOutput())) * prod(w.drop_front(1));
  }
  if (auto c = dyn_cast<ConvTransposeOp>(op)) {
    ArrayRef<int64_t> w = shape(c.getWeight());
    return 2.0 * prod(shape(c.getInput())) * prod(w.drop_front(1));
  }
  if (auto a = dyn_cast<AttentionOp>(op)) {
    ArrayRef<int64_t> qk = shape(a.getQkMatmulOutput());
    ArrayRef<int64_t> k = shape(a.getPresentKey());
    return 4.0 * prod(qk) * dim(k.back());
  }
  // Q.K^T and P.V: 4 * B * heads * S * T * head_dim, from the output
  // [B, S, heads*head_dim] and the present cache [.., T, head_dim].
  auto attention = [&](Value output, Value presentKey) {
    ArrayRef<int64_t> o = shape(output), k = shape(presentKey);
    return 4.0 * prod(o) * dim(k[k.size() - 2]);
  };
  if (auto a = dyn_cast<MultiHeadAttentionOp>(op))
    return attention(a.getOutput(), a.getPresentKey());
  if (auto a = dyn_cast<GroupQueryAttentionOp>(op))
    return attention(a.getOutput(), a.getPresentKey());
  if (auto a = dyn_cast<MsAttentionOp>(op)) {
    // The packed QKV projection, then attention over the present cache.
    ArrayRef<int64_t> w = shape(a.getWeights());
    return 2.0 * prod(shape(a.getInput())) * dim(w[1]) +
           attention(a.getOutput(), a.getPresent());
  }
  return 0;
}

/// Bytes of a float constant.
static int64_t bytesOf(ConstantOp c) {
  auto type = cast<ShapedType>(c.getType());
  return type.getNumElements() *
         (type.getElementType().getIntOrFloatBitWidth() / 8);
}

namespace {
/// What the plan and report need of one node.
struct NodeRow {
  Operation *op;
  std::string name, opType;
  PrecisionAttr decision;
  int64_t castsIn = 0, bytesSaved = 0;
};
} // namespace

/// Collects node rows and fills the summary.
static std::vector<NodeRow> collectRows(func::FuncOp func, bool keepIoTypes,
                                        PlanSummary &s) {
  CastPlan plan = planCasts(func, recordedCompute, keepIoTypes);
  std::vector<NodeRow> rows;
  DenseMap<Operation *, size_t> rowOf;
  DenseMap<Operation *, std::string> keys = precisionNodeKeys(func);
  func.walk([&](Operation *op) {
    auto d = op->getAttrOfType<PrecisionAttr>(kPrecisionAttrName);
    if (!d)
      return;
    NodeRow row{op, keys.lookup(op), onnxOpType(op), d};
    row.castsIn = plan.castsInto(op);
    rowOf[op] = rows.size();
    rows.push_back(row);
    s.nodes++;
    bool f16 = d.getCompute().isF16();
    s.nodesF16 += f16;
    double flops = contractionFlops(op);
    s.contractionFlops += flops;
    s.contractionFlopsF16 += f16 ? flops : 0;
  });
  // After mp-insert-casts: the casts it made are in the IR (they carry no
  // decision), and the weights before conversion were recorded.
  s.casts = plan.numRuntimeCasts();
  func.walk([&](CastOp c) {
    if (!c->hasAttr(kPrecisionAttrName) &&
        isa<FloatType>(getElementTypeOrSelf(c.getInput().getType())) &&
        isa<FloatType>(getElementTypeOrSelf(c.getType())))
      s.casts++;
  });
  // Weights: a constant converted for all its uses shrinks (or grows) in
  // place; one with uses of both types is kept and copied.
  func.walk([&](ConstantOp c) {
    if (!isa<FloatType>(getElementTypeOrSelf(c.getType())))
      return;
    int64_t bytes = bytesOf(c);
    int64_t numElements = cast<ShapedType>(c.getType()).getNumElements();
    s.weightBytesBefore += bytes;
    int64_t convertedUses = 0, after = 0;
    Operation *firstUser = nullptr;
    for (auto &[key, uses] : plan.conversions) {
      if (key.first != c.getResult())
        continue;
      convertedUses += uses.size();
      after += numElements * (key.second.getIntOrFloatBitWidth() / 8);
      if (!firstUser && !uses.empty())
        firstUser = uses.front()->getOwner();
    }
    bool keepsOriginal =
        convertedUses < (int64_t)std::distance(c->use_begin(), c->use_end());
    if (keepsOriginal)
      after += bytes;
    s.weightBytesAfter += after;
    if (firstUser && rowOf.count(firstUser))
      rows[rowOf[firstUser]].bytesSaved += bytes - after;
  });
  if (auto before = func->getAttrOfType<IntegerAttr>(kWeightBytesAttrName))
    s.weightBytesBefore = before.getInt();
  return rows;
}

static llvm::json::Array findingsJson(
    ArrayRef<PrecisionAnalysis::Finding> findings) {
  llvm::json::Array out;
  for (const auto &f : findings)
    out.push_back(llvm::json::Object{{"kind", f.kind}, {"message", f.message}});
  return out;
}

llvm::json::Object buildPlan(func::FuncOp func, bool keepIoTypes,
                             ArrayRef<PrecisionAnalysis::Finding> findings,
                             PlanSummary &s) {
  std::vector<NodeRow> rows = collectRows(func, keepIoTypes, s);
  llvm::json::Object nodes;
  for (const NodeRow &r : rows) {
    llvm::json::Object entry{
        {"op_type", r.opType},
        {"class", stringifyPrecisionClass(r.decision.getCls())},
        {"compute", r.decision.getCompute().isF16() ? "f16" : "f32"},
        {"rule", r.decision.getRule()},
        {"casts_in", r.castsIn},
        {"weight_bytes_saved", r.bytesSaved}};
    if (r.decision.getAccumulate())
      entry["accumulate"] = "f32";
    nodes[r.name] = std::move(entry);
  }
  llvm::json::Object summary{
      {"nodes_f16", s.nodesF16},
      {"nodes_total", s.nodes},
      {"casts", s.casts},
      {"contraction_flops_f16_share",
       s.contractionFlops > 0 ? s.contractionFlopsF16 / s.contractionFlops
                              : 0.0},
      {"weight_bytes_fp32", s.weightBytesBefore},
      {"weight_bytes_mixed", s.weightBytesAfter},
      {"findings", findingsJson(findings)}};
  return llvm::json::Object{{"version", 1},
                            {"function", func.getName()},
                            {"keep_io_types", keepIoTypes},
                            {"nodes", std::move(nodes)},
                            {"summary", std::move(summary)}};
}

static std::string mib(int64_t bytes) {
  return llvm::formatv("{0:f2} MiB", bytes / double(1 << 20)).str();
}

void printReport(func::FuncOp func, bool keepIoTypes,
                 ArrayRef<PrecisionAnalysis::Finding> findings,
                 llvm::raw_ostream &os) {
  PlanSummary s;
  std::vector<NodeRow> rows = collectRows(func, keepIoTypes, s);
  // Per op type: count, f16, f32, classes seen.
  std::map<std::string, std::array<int64_t, 3>> byType;
  std::map<std::string, std::string> classOf;
  for (const NodeRow &r : rows) {
    auto &c = byType[r.opType];
    c[0]++;
    c[r.decision.getCompute().isF16() ? 1 : 2]++;
    classOf[r.opType] =
        stringifyPrecisionClass(r.decision.getCls()).str();
  }
  os << "mp precision report: @" << func.getName() << "\n";
  os << llvm::format("  %-34s %-6s %6s %6s %6s\n", "op type", "class",
                     "nodes", "f16", "f32");
  for (auto &[type, c] : byType)
    os << llvm::format("  %-34s %-6s %6lld %6lld %6lld\n", type.c_str(),
                       classOf[type].c_str(), (long long)c[0],
                       (long long)c[1], (long long)c[2]);
  os << llvm::formatv("  nodes in f16: {0} / {1}; casts: {2}; fp16 share of "
                      "matmul/conv FLOPs: {3:f1}%\n",
                      s.nodesF16, s.nodes, s.casts,
                      s.contractionFlops > 0
                          ? 100.0 * s.contractionFlopsF16 / s.contractionFlops
                          : 0.0);
  os << "  weights: " << mib(s.weightBytesBefore) << " -> "
     << mib(s.weightBytesAfter) << "; keep-io-types: "
     << (keepIoTypes ? "yes" : "no") << "\n";
  for (const auto &f : findings)
    os << "  [" << f.kind << "] " << f.message << "\n";
}

} // namespace mp
