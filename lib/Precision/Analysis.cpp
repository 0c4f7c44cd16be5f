//===- Analysis.cpp - deciding fp16 or fp32 for every op ------------------===//

#include "mp/Precision/Analysis.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/OpInfo.h"
#include "mp/Precision/StaticBounds.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <deque>

using namespace mlir;

namespace mp {

static std::string formatNumber(double v) {
  return llvm::formatv("{0}", llvm::format("%g", v)).str();
}

/// The built-in policy's row for `op`: by its ONNX op type, else its mp op.
static const DefaultPolicyEntry *defaultEntryOf(Operation *op) {
  if (const DefaultPolicyEntry *e = findDefaultEntry(onnxOpType(op)))
    return e;
  return findDefaultEntry(op->getName().getStringRef());
}

static std::string quoted(Operation *op) {
  std::string name = onnxNodeName(op);
  return "'" + (name.empty() ? op->getName().getStringRef().str() : name) + "'";
}

PrecisionAnalysis::PrecisionAnalysis(Operation *root,
                                     const PrecisionPolicy &policy,
                                     const RangeOptions &ranges,
                                     bool keepIoTypes, IndexGuard indexGuard)
    : root(root), keepIoTypes(keepIoTypes), keys(precisionNodeKeys(root)) {
  root->walk([&](Operation *op) {
    if (op != root && isPrecisionNode(op)) {
      order.push_back(op);
      decisions[op] = Decision();
    }
  });
  classify(policy);
  applyGuards(indexGuard);
  checkConstants();
  checkRanges(ranges);
  propagate();
  for (Operation *op : order) {
    Decision &d = decisions[op];
    const DefaultPolicyEntry *e = defaultEntryOf(op);
    d.accumulateF32 = d.compute == Compute::F16 && e && e->accumulateF32;
  }
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

SmallVector<Operation *> PrecisionAnalysis::predecessors(Operation *op) const {
  SmallVector<Operation *> preds;
  auto add = [&](Value v) {
    if (Operation *def = v.getDefiningOp())
      if (isNode(def) && !llvm::is_contained(preds, def))
        preds.push_back(def);
  };
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (!isIndexOperand(op, i))
      add(v);
  // Values leave an If through its branches' yields.
  if (auto ifOp = dyn_cast<IfOp>(op))
    for (Region *r : {&ifOp.getThenBranch(), &ifOp.getElseBranch()})
      for (Value v : r->front().getTerminator()->getOperands())
        add(v);
  return preds;
}

SmallVector<Operation *> PrecisionAnalysis::successors(Operation *op) const {
  SmallVector<Operation *> succs;
  for (Value result : op->getResults())
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      if (isa<YieldOp>(user))
        user = user->getParentOp();
      else if (isIndexOperand(user, use.getOperandNumber()))
        continue;
      if (isNode(user) && !llvm::is_contained(succs, user))
        succs.push_back(user);
    }
  return succs;
}

//===----------------------------------------------------------------------===//
// Classes, overrides and safety rules
//===----------------------------------------------------------------------===//

void PrecisionAnalysis::classify(const PrecisionPolicy &policy) {
  for (Operation *op : order) {
    Decision &d = decisions[op];
    std::string type = onnxOpType(op);
    d.cls = isa<CastOp>(op) ? PrecisionClass::clear : policy.classOf(type);
    d.rule = (stringifyPrecisionClass(d.cls) + " class of " + type).str();
    NodeOverride o = policy.overrideFor(keys[op]);
    if (o.cls) {
      d.cls = *o.cls;
      d.rule = ("user override: class " + stringifyPrecisionClass(d.cls)).str();
    }
    if (o.compute) {
      d.compute = *o.compute;
      d.rule = o.rule ? *o.rule : "user override";
      fixed.insert(op);
      decided.insert(op);
    }
  }
}

/// True for the ops the built-in policy allows (contractions, convolutions,
/// attention, recurrent cells): their outputs are learned values, not
/// arithmetic on positions. The built-in class, so that a policy that allows
/// an elementwise op does not let the guard stop there.
static bool isBuiltinAllowOp(Operation *op) {
  const DefaultPolicyEntry *e = defaultEntryOf(op);
  return e && e->cls == PrecisionClass::allow;
}

void PrecisionAnalysis::applyGuards(IndexGuard indexGuard) {
  // Everything that computes a shape, index or count operand keeps its
  // type: an fp16 position or size is silently wrong beyond 2048. With
  // IndexGuard::Arithmetic the walk stops at contractions: what they
  // compute is a learned value (a duration, a logit) whose fp16 error the
  // policy accepts everywhere else, and the ops between them and the index
  // (exp, rounding, sums) still compute in fp32.
  SmallVector<std::pair<Operation *, unsigned>> roots;
  root->walk([&](Operation *op) {
    for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
      if (isIndexOperand(op, i))
        roots.push_back({op, i});
  });
  DenseSet<Operation *> visited;
  for (auto [user, index] : roots) {
    std::string operand =
        "operand #" + std::to_string(index) + " of " + quoted(user);
    std::string why = "shape/index guard: feeds " + operand;
    SmallVector<Operation *> stack;
    if (Operation *def = user->getOperand(index).getDefiningOp())
      stack.push_back(def);
    while (!stack.empty()) {
      Operation *op = stack.pop_back_val();
      if (readsOnlyShape(op) || !visited.insert(op).second)
        continue;
      if (indexGuard == IndexGuard::Arithmetic && isNode(op) &&
          isBuiltinAllowOp(op)) {
        findings.push_back(
            {op, "guard",
             quoted(op) + " follows its class although its output reaches " +
                 operand +
                 " (index-guard=arithmetic; exact would keep it "
                 "in its type)"});
        continue;
      }
      if (isNode(op) && !fixed.count(op)) {
        Decision &d = decisions[op];
        d.compute = Compute::F32;
        d.rule = why;
        fixed.insert(op);
        decided.insert(op);
        findings.push_back({op, "guard", quoted(op) + " kept in its type: " + why});
      } else if (isNode(op) && decisions[op].compute == Compute::F16) {
        decisions[op].compute = Compute::F32;
        decisions[op].rule = why + " (overrides the user's f16)";
        findings.push_back({op, "guard", quoted(op) + ": " + why +
                                             "; the user's f16 is ignored"});
      }
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          stack.push_back(def);
    }
  }
}

/// True when `use` ends in a softmax input or an attention mask operand.
static bool isMaskSink(OpOperand &use) {
  Operation *user = use.getOwner();
  Value v = use.get();
  if (isa<SoftmaxOp, LogSoftmaxOp>(user))
    return true;
  if (auto a = dyn_cast<AttentionOp>(user))
    return v == a.getAttnMask();
  if (auto a = dyn_cast<MultiHeadAttentionOp>(user))
    return v == a.getAttentionBias();
  if (auto a = dyn_cast<GroupQueryAttentionOp>(user))
    return v == a.getAttentionBias();
  if (auto a = dyn_cast<MsAttentionOp>(user))
    return v == a.getAttentionBias();
  return false;
}

/// True when the value `use` reads reaches a softmax or an attention mask
/// through `use` and then elementwise or data-movement ops: along this use
/// the value is an additive mask.
static bool reachesMask(OpOperand &start) {
  auto transparent = [](Operation *op) {
    return isa<WhereOp, ExpandOp, ReshapeOp, UnsqueezeOp, SqueezeOp, SliceOp,
               ConcatOp, TransposeOp, TileOp, CastOp, MulOp, SubOp, AddOp,
               GatherOp, ConstantOfShapeOp, TriluOp, MinOp, MaxOp>(op);
  };
  if (isMaskSink(start))
    return true;
  if (!transparent(start.getOwner()))
    return false;
  std::deque<std::pair<Operation *, int>> queue{{start.getOwner(), 0}};
  DenseSet<Operation *> seen{start.getOwner()};
  while (!queue.empty()) {
    auto [op, depth] = queue.front();
    queue.pop_front();
    if (depth > 16)
      continue;
    for (Value result : op->getResults())
      for (OpOperand &use : result.getUses()) {
        if (isMaskSink(use))
          return true;
        Operation *user = use.getOwner();
        if (transparent(user) && seen.insert(user).second)
          queue.push_back({user, depth + 1});
      }
  }
  return false;
}

void PrecisionAnalysis::checkConstants() {
  auto describe = [](const ConstantStats &s) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (s.overflow)
      os << s.overflow << " value(s) that overflow fp16 (max |v| = "
         << formatNumber(s.maxAbs) << ")";
    if (s.overflow && s.flushToZero)
      os << "; ";
    if (s.flushToZero)
      os << s.flushToZero << " of " << s.nonzero
         << " nonzero value(s) would flush to zero in fp16";
    return text;
  };
  root->walk([&](Operation *op) {
    ElementsAttr value;
    if (auto c = dyn_cast<ConstantOp>(op))
      value = c.getValue();
    else if (auto c = dyn_cast<ConstantOfShapeOp>(op))
      value = c.getValue();
    else
      return;
    if (!isa<FloatType>(value.getElementType()))
      return;
    ConstantStats s = computeConstantStats(value);
    // A few tiny weights in a big matrix are harmless; a tiny epsilon or a
    // tensor that is mostly tiny is not.
    bool underflow = s.flushToZero > 0 &&
                     (s.count <= 16 || s.flushToZero * 100 > s.nonzero);
    // A mask: its large values are large negatives (at or below -1e4, in or
    // beyond fp16's range), and some of its uses reach a softmax or an
    // attention mask. fp16 models' -65504 masks count too: two of them add
    // up to -inf.
    SmallVector<Operation *> maskUsers;
    if (!underflow && s.minValue <= kSentinelThreshold && s.maxValue < 65520.0)
      for (OpOperand &use : op->getUses())
        if (reachesMask(use))
          maskUsers.push_back(use.getOwner());
    if (!maskUsers.empty()) {
      sentinels.insert(op);
      // Other uses see the real value: they stay in fp32.
      std::string why = "constant " + quoted(op) +
                        " out of fp16 range: " + describe(s) +
                        " (used here outside the mask)";
      for (OpOperand &use : op->getUses()) {
        Operation *user = use.getOwner();
        if (llvm::is_contained(maskUsers, user) || !isNode(user))
          continue;
        decisions[user].compute = Compute::F32;
        decisions[user].rule = why;
        fixed.insert(user);
        decided.insert(user);
      }
      findings.push_back(
          {op, "mask",
           quoted(op) + ": attention mask sentinel " +
               formatNumber(s.minValue) + " becomes " +
               formatNumber(kFp16SafeSentinel) +
               " in fp16 (softmax output unchanged)"});
      return;
    }
    if (!s.overflow && !underflow)
      return;
    std::string why = "constant " + quoted(op) + " out of fp16 range: " +
                      describe(s);
    // Every float consumer keeps fp32: the constant is never clamped.
    SmallVector<Operation *> users;
    if (isNode(op))
      users.push_back(op);
    for (Operation *user : op->getUsers()) {
      // A value yielded by a branch is consumed by its mp.if.
      if (isa<YieldOp>(user))
        user = user->getParentOp();
      if (isNode(user))
        users.push_back(user);
    }
    for (Operation *user : users) {
      Decision &d = decisions[user];
      if (d.compute == Compute::F16 && fixed.count(user))
        findings.push_back({user, "range", quoted(user) +
                                               ": the user's f16 is ignored: " +
                                               why});
      d.compute = Compute::F32;
      d.rule = why;
      fixed.insert(user);
      decided.insert(user);
    }
    findings.push_back({op, "range", why + " (consumers kept in fp32)"});
  });
}

void PrecisionAnalysis::keepValueFp32(Operation *op, unsigned result,
                                      StringRef kind, const std::string &why) {
  // The producer's own rule replaces a rule it got as a reader of another
  // value; readers keep the first reason they got.
  auto keep = [&](Operation *node, const std::string &rule, bool own) {
    Decision &d = decisions[node];
    if (fixed.count(node)) {
      if (d.compute == Compute::F16)
        findings.push_back(
            {node, kind.str(),
             quoted(node) + ": the user's f16 is ignored: " + rule});
      else if (!own || !rangeRules.count(node))
        return;
    }
    d.compute = Compute::F32;
    d.rule = rule;
    fixed.insert(node);
    decided.insert(node);
    rangeRules.insert(node);
  };
  // Statistics outputs (normalization mean and inverse deviation) keep
  // their own type whatever the node computes in: only readers matter.
  if (isNode(op) && resultFollowsCompute(op, result))
    keep(op, why, /*own=*/true);
  for (OpOperand &use : op->getResult(result).getUses()) {
    Operation *user = use.getOwner();
    if (isa<YieldOp>(user))
      user = user->getParentOp();
    else if (isIndexOperand(user, use.getOperandNumber()))
      continue;
    if (user != op && isNode(user))
      keep(user, "reads " + quoted(op) + ": " + why, /*own=*/false);
  }
  findings.push_back(
      {op, kind.str(),
       quoted(op) + ": " + why + " (kept in fp32 with its readers)"});
}

/// True for an additive mask measured with its sentinels (large negatives,
/// no large positives) on its way to a softmax or attention mask: the
/// sentinel rule stores such masks in fp16 with safe values, so their size
/// is no reason for fp32.
static bool isMaskValue(Value v, const ValueRange &r,
                        const RangeOptions &options) {
  if (r.min > kSentinelThreshold || r.max > kFp16Max / options.overflowMargin)
    return false;
  for (OpOperand &use : v.getUses())
    if (reachesMask(use))
      return true;
  return false;
}

std::optional<std::string> rangeRule(const ValueRange &r,
                                     const RangeOptions &options,
                                     llvm::StringRef outputText) {
  std::string output = outputText.str();
  if (r.absMax > kFp16Max / options.overflowMargin)
    return "calibrated |x| max " + formatNumber(r.absMax) + output +
           " > 65504/" + formatNumber(options.overflowMargin);
  // Every element subnormal: none keeps fp16's 11 significant bits.
  if (r.nonzero && r.absMax < kFp16MinNormal)
    return "calibrated |x| max " + formatNumber(r.absMax) + output +
           " < 6.1e-05: no value in fp16's normal range";
  if (r.flushFraction() > options.underflowFraction)
    return "calibrated: " +
           formatNumber(std::round(r.flushFraction() * 1000) / 10) +
           "% of nonzero |x|" + output + " flush to zero in fp16 (< 3e-08)";
  return std::nullopt;
}

void PrecisionAnalysis::checkRanges(const RangeOptions &options) {
  if (options.measured) {
    for (Operation *op : order) {
      if (op->getParentOp() != root)
        continue;
      for (unsigned i = 0, e = op->getNumResults(); i < e; ++i) {
        const ValueRange *r = options.measured->find(keys[op], i);
        if (!r)
          continue;
        std::string output = e > 1 ? " (output " + std::to_string(i) + ")" : "";
        if (isMaskValue(op->getResult(i), *r, options))
          continue;
        if (std::optional<std::string> why = rangeRule(*r, options, output))
          keepValueFp32(op, i, "calibrated", *why);
      }
    }
    return;
  }
  if (!options.staticBounds)
    return;
  DenseMap<Value, StaticBound> bounds = computeStaticBounds(root);
  for (Operation *op : order)
    for (OpResult result : op->getResults()) {
      auto it = bounds.find(result);
      if (it == bounds.end() || it->second.absMax <= kFp16Max)
        continue;
      keepValueFp32(op, result.getResultNumber(), "bound",
                    "static bound |x| <= " + formatNumber(it->second.absMax) +
                        " > 65504 (" + it->second.why + ")");
    }
}

//===----------------------------------------------------------------------===//
// Propagation
//===----------------------------------------------------------------------===//

/// The graph input (a block argument of the function) that `v` is, or null.
static BlockArgument graphInput(Operation *root, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &root->getRegion(0).front())
    return nullptr;
  return arg;
}

std::optional<std::pair<Compute, std::string>>
PrecisionAnalysis::carriedState(Operation *op) const {
  auto func = dyn_cast<func::FuncOp>(root);
  if (!func || op->getParentOp() != root)
    return std::nullopt;
  auto computeOf = [](Type t) -> std::optional<Compute> {
    Type e = getElementTypeOrSelf(t);
    if (e.isF32())
      return Compute::F32;
    if (e.isF16())
      return Compute::F16;
    return std::nullopt;
  };
  std::optional<unsigned> input, output;
  std::optional<Compute> type;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (BlockArgument arg = graphInput(root, v);
        arg && !isIndexOperand(op, i) && computeOf(arg.getType())) {
      input = arg.getArgNumber();
      type = computeOf(arg.getType());
    }
  for (Value result : op->getResults())
    for (OpOperand &use : result.getUses())
      if (isa<func::ReturnOp>(use.getOwner()) && type &&
          computeOf(result.getType()) == type)
        output = use.getOperandNumber();
  if (!input || !output)
    return std::nullopt;
  auto inName = func.getArgAttrOfType<StringAttr>(*input, "mp.name");
  auto outName = func.getResultAttrOfType<StringAttr>(*output, "mp.name");
  return std::make_pair(
      *type,
      std::string("carries ") + (*type == Compute::F16 ? "fp16" : "fp32") +
          " state from graph input '" +
          (inName ? inName.str() : "#" + std::to_string(*input)) +
          "' to graph output '" +
          (outName ? outName.str() : "#" + std::to_string(*output)) + "'");
}

void PrecisionAnalysis::propagate() {
  auto cls = [&](Operation *op) { return decisions[op].cls; };
  auto open = [&](Operation *op) { return !decided.count(op); };
  auto set = [&](Operation *op, Compute c, std::string rule) {
    Decision &d = decisions[op];
    d.compute = c;
    d.rule = std::move(rule);
    decided.insert(op);
  };

  // 1. Allow and deny classes.
  for (Operation *op : order) {
    if (!open(op))
      continue;
    if (cls(op) == PrecisionClass::allow)
      set(op, Compute::F16, decisions[op].rule);
    else if (cls(op) == PrecisionClass::deny)
      set(op, Compute::F32, decisions[op].rule);
  }

  // 2. Data movement carrying state from a graph input to a graph output of
  // the same type (a KV cache's Concat or TensorScatter) computes in that
  // type while the graph keeps its I/O types: fp32 state in fp16 would be
  // rounded, and all of it cast and cast back every step, as would fp16
  // state through fp32.
  if (keepIoTypes)
    for (Operation *op : order)
      if (open(op) && cls(op) == PrecisionClass::clear)
        if (auto state = carriedState(op))
          set(op, state->first, state->second);

  // 3. Deny spreads forward through infer ops, and through clear ops that
  // lead (through clear ops) to an infer or deny op.
  DenseMap<Operation *, bool> leadsToInferOrDeny;
  std::function<bool(Operation *)> leads = [&](Operation *op) -> bool {
    auto it = leadsToInferOrDeny.find(op);
    if (it != leadsToInferOrDeny.end())
      return it->second;
    leadsToInferOrDeny[op] = false; // cycles through If regions
    bool result = false;
    for (Operation *s : successors(op)) {
      PrecisionClass c = cls(s);
      if (c == PrecisionClass::infer || c == PrecisionClass::deny ||
          (c == PrecisionClass::clear && leads(s))) {
        result = true;
        break;
      }
    }
    return leadsToInferOrDeny[op] = result;
  };
  std::deque<Operation *> queue;
  for (Operation *op : order)
    if (decided.count(op) && decisions[op].compute == Compute::F32 &&
        cls(op) == PrecisionClass::deny)
      queue.push_back(op);
  while (!queue.empty()) {
    Operation *from = queue.front();
    queue.pop_front();
    for (Operation *s : successors(from)) {
      if (!open(s))
        continue;
      PrecisionClass c = cls(s);
      if (c == PrecisionClass::infer ||
          (c == PrecisionClass::clear && leads(s))) {
        set(s, Compute::F32, "propagated from deny node " + quoted(from));
        queue.push_back(s);
      }
    }
  }

  // 4. Infer/clear ops on a path between two f16 allow ops become f16.
  auto reach = [&](bool forward) {
    DenseSet<Operation *> seen;
    std::deque<Operation *> q;
    for (Operation *op : order)
      if (decided.count(op) && decisions[op].compute == Compute::F16 &&
          cls(op) == PrecisionClass::allow)
        q.push_back(op);
    while (!q.empty()) {
      Operation *op = q.front();
      q.pop_front();
      for (Operation *n : forward ? successors(op) : predecessors(op))
        if (open(n) && seen.insert(n).second)
          q.push_back(n);
    }
    return seen;
  };
  DenseSet<Operation *> down = reach(true), up = reach(false);
  for (Operation *op : order)
    if (open(op) && down.count(op) && up.count(op))
      set(op, Compute::F16, "between fp16 allow ops");

  // 5. f16 spreads through neighbouring clear ops.
  for (Operation *op : order)
    if (decided.count(op) && decisions[op].compute == Compute::F16)
      queue.push_back(op);
  while (!queue.empty()) {
    Operation *from = queue.front();
    queue.pop_front();
    SmallVector<Operation *> next = successors(from);
    llvm::append_range(next, predecessors(from));
    for (Operation *n : next)
      if (open(n) && cls(n) == PrecisionClass::clear) {
        set(n, Compute::F16, "data movement next to fp16 node " + quoted(from));
        queue.push_back(n);
      }
  }

  // 6. What is left follows its inputs, in program order. Producers that
  // adapt to their users (constants, casts from integers, ops fed only by
  // those) are neutral; graph inputs count in their own type.
  DenseSet<Operation *> neutral;
  for (Operation *op : order) {
    if (!open(op))
      continue;
    bool anyF16 = false, anyF32 = false;
    auto count = [&](bool f16) { (f16 ? anyF16 : anyF32) = true; };
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      if (isIndexOperand(op, i) || !isa<FloatType>(getElementTypeOrSelf(v)))
        continue;
      Operation *def = v.getDefiningOp();
      if (def && isNode(def)) {
        if (!neutral.count(def))
          count(decisions[def].compute == Compute::F16);
      } else if (!def) {
        count(getElementTypeOrSelf(v).isF16());
      } else if (!isa<ConstantOp, CastOp>(def)) {
        count(getElementTypeOrSelf(v).isF16());
      }
    }
    if (auto ifOp = dyn_cast<IfOp>(op))
      for (Operation *p : predecessors(ifOp))
        if (!neutral.count(p))
          count(decisions[p].compute == Compute::F16);
    if (anyF16 && !anyF32)
      set(op, Compute::F16, "inputs are fp16");
    else if (anyF32)
      set(op, Compute::F32, "an input is fp32");
    else
      neutral.insert(op);
  }
  // Neutral ops (constant inputs only, e.g. mask builders) take the type
  // their users compute in, so their constants fold into that type.
  for (Operation *op : llvm::reverse(order)) {
    if (!neutral.count(op))
      continue;
    SmallVector<Operation *> users = successors(op);
    bool allF16 = !users.empty() && llvm::all_of(users, [&](Operation *u) {
      return decisions[u].compute == Compute::F16 && !neutral.count(u);
    });
    neutral.erase(op);
    set(op, allF16 ? Compute::F16 : Compute::F32,
        allF16 ? "constant inputs only; its users are fp16"
               : "constant inputs only; a user is fp32");
  }
}

} // namespace mp
