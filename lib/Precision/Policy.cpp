//===- Policy.cpp - mixed-precision policy files --------------------------===//

#include "mp/Precision/Policy.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mp;
using llvm::StringRef;
using llvm::Twine;
using llvm::json::Object;
using llvm::json::Value;

StringRef mp::stringifyIndexGuard(IndexGuard guard) {
  return guard == IndexGuard::Exact ? "exact" : "arithmetic";
}

std::optional<IndexGuard> mp::parseIndexGuard(StringRef name) {
  return llvm::StringSwitch<std::optional<IndexGuard>>(name)
      .Case("arithmetic", IndexGuard::Arithmetic)
      .Case("exact", IndexGuard::Exact)
      .Default(std::nullopt);
}

PrecisionPolicy PrecisionPolicy::builtin() {
  PrecisionPolicy p;
  for (const DefaultPolicyEntry &e : defaultPolicyTable())
    p.opClasses.try_emplace(e.opType, e.cls);
  return p;
}

PrecisionClass PrecisionPolicy::classOf(StringRef opType) const {
  auto it = opClasses.find(opType);
  if (it != opClasses.end())
    return it->second;
  if (unlistedClass)
    return *unlistedClass;
  // Unknown ops are kept in fp32: precision is never lowered by accident.
  return PrecisionClass::deny;
}

NodeOverride PrecisionPolicy::overrideFor(StringRef name) const {
  NodeOverride result;
  bool applied = false;
  for (const Pattern &p : patterns) {
    if (!p.regex->match(name))
      continue;
    // Every matching pattern counts as used; the first one applies.
    p.matched = true;
    if (!applied)
      result = p.value;
    applied = true;
  }
  auto it = nodes.find(name);
  if (it != nodes.end()) {
    if (it->second.cls)
      result.cls = it->second.cls;
    if (it->second.compute)
      result.compute = it->second.compute;
    if (it->second.rule)
      result.rule = it->second.rule;
  }
  return result;
}

std::vector<std::string> PrecisionPolicy::unmatchedPatterns() const {
  std::vector<std::string> out;
  for (const Pattern &p : patterns)
    if (!p.matched)
      out.push_back(p.text);
  return out;
}

namespace {

/// Parser state: the text (to locate keys) and the first error.
struct Parser {
  StringRef text;
  StringRef source;
  std::string &error;
  std::vector<std::string> &warnings;

  /// "file:line:col" of the first occurrence of `"key"` in the text after
  /// the first occurrence of `"parent"` (the enclosing key).
  std::string where(StringRef key, StringRef parent = "") const {
    size_t from = parent.empty()
                      ? 0
                      : text.find(("\"" + parent + "\"").str());
    if (from == StringRef::npos)
      from = 0;
    size_t pos = text.find(("\"" + key + "\"").str(), from);
    if (pos == StringRef::npos)
      return source.str();
    StringRef before = text.take_front(pos);
    size_t line = before.count('\n') + 1;
    size_t col = pos - (before.rfind('\n') == StringRef::npos
                            ? -1
                            : before.rfind('\n'));
    return (source + ":" + Twine(line) + ":" + Twine(col)).str();
  }

  /// The enclosing key of the entry being parsed (for positions).
  StringRef parent;

  bool fail(StringRef key, const Twine &path, const Twine &message) {
    if (error.empty())
      error = (where(key, parent) + ": " + path + ": " + message).str();
    return false;
  }

  bool parseClass(const Value &v, StringRef key, const Twine &path,
                  PrecisionClass &out) {
    std::optional<StringRef> s = v.getAsString();
    std::optional<PrecisionClass> cls =
        s ? symbolizePrecisionClass(*s) : std::nullopt;
    if (!cls)
      return fail(key, path,
                  "unknown class " + (s ? "'" + *s + "'" : Twine("(not a string)")) +
                      " (expected allow, infer, deny or clear)");
    out = *cls;
    return true;
  }

  bool parseCompute(const Value &v, StringRef key, const Twine &path,
                    Compute &out) {
    std::optional<StringRef> s = v.getAsString();
    if (s && (*s == "f16" || *s == "float16")) {
      out = Compute::F16;
      return true;
    }
    if (s && (*s == "f32" || *s == "float32" || *s == "float")) {
      out = Compute::F32;
      return true;
    }
    return fail(key, path, "compute must be \"f16\" or \"f32\"");
  }

  /// A node entry: a class name, or an object with `class` and/or `compute`
  /// (other keys, as written in plan files, are informational).
  bool parseOverride(const Value &v, StringRef key, const Twine &path,
                     NodeOverride &out) {
    if (v.getAsString()) {
      PrecisionClass cls;
      if (!parseClass(v, key, path, cls))
        return false;
      out.cls = cls;
      return true;
    }
    const Object *obj = v.getAsObject();
    if (!obj)
      return fail(key, path, "expected a class name or an object");
    if (const Value *c = obj->get("class")) {
      PrecisionClass cls;
      if (!parseClass(*c, key, path + ".class", cls))
        return false;
      out.cls = cls;
    }
    if (const Value *c = obj->get("compute")) {
      Compute compute;
      if (!parseCompute(*c, key, path + ".compute", compute))
        return false;
      out.compute = compute;
    }
    if (std::optional<StringRef> rule = obj->getString("rule"))
      out.rule = rule->str();
    if (!out.cls && !out.compute)
      return fail(key, path, "needs \"class\" or \"compute\"");
    return true;
  }
};

} // namespace

std::unique_ptr<PrecisionPolicy>
PrecisionPolicy::parse(StringRef json, StringRef source, std::string &error,
                       std::vector<std::string> &warnings) {
  llvm::Expected<Value> root = llvm::json::parse(json);
  if (!root) {
    error = (source + ": invalid JSON: " + llvm::toString(root.takeError())).str();
    return nullptr;
  }
  Parser p{json, source, error, warnings, ""};
  const Object *top = root->getAsObject();
  if (!top) {
    error = (source + ": the policy must be a JSON object").str();
    return nullptr;
  }
  auto policy = std::make_unique<PrecisionPolicy>();
  bool useBuiltin = true;
  if (const Value *v = top->get("use_builtin")) {
    if (!v->getAsBoolean())
      return p.fail("use_builtin", "use_builtin", "expected true or false"),
             nullptr;
    useBuiltin = *v->getAsBoolean();
  }
  if (useBuiltin)
    *policy = builtin();

  for (const auto &[key, value] : *top) {
    StringRef k = key;
    p.parent = "";
    // Plan files are policies too: their bookkeeping keys are ignored.
    if (k == "use_builtin" || k == "version" || k == "model" ||
        k == "function" || k == "summary" || k == "summaries" ||
        k == "comment")
      continue;
    if (k == "keep_io_types") {
      if (!value.getAsBoolean())
        return p.fail(k, k, "expected true or false"), nullptr;
      policy->keepIoTypes = *value.getAsBoolean();
    } else if (k == "index_guard") {
      std::optional<StringRef> name = value.getAsString();
      std::optional<IndexGuard> guard =
          name ? parseIndexGuard(*name) : std::nullopt;
      if (!guard)
        return p.fail(k, k, "expected \"arithmetic\" or \"exact\""), nullptr;
      policy->indexGuard = *guard;
    } else if (k == "unlisted_class") {
      PrecisionClass cls;
      if (!p.parseClass(value, k, k, cls))
        return nullptr;
      policy->unlistedClass = cls;
    } else if (k == "op_types") {
      const Object *obj = value.getAsObject();
      if (!obj)
        return p.fail(k, k, "expected an object of op type -> class"), nullptr;
      p.parent = "op_types";
      for (const auto &[op, cls] : *obj) {
        PrecisionClass c;
        if (!p.parseClass(cls, op, Twine("op_types.") + StringRef(op), c))
          return nullptr;
        if (!findDefaultEntry(op))
          warnings.push_back((p.where(op, "op_types") + ": op_types." +
                              StringRef(op) +
                              ": no ONNX op of this type carries float data "
                              "in mp (is the name right?)")
                                 .str());
        policy->opClasses[op] = c;
      }
    } else if (k == "nodes") {
      const Object *obj = value.getAsObject();
      if (!obj)
        return p.fail(k, k, "expected an object of node name -> class or "
                            "{\"class\", \"compute\"}"),
               nullptr;
      p.parent = "nodes";
      for (const auto &[name, entry] : *obj) {
        NodeOverride o;
        if (!p.parseOverride(entry, name, Twine("nodes.") + StringRef(name), o))
          return nullptr;
        policy->nodes[name] = o;
      }
    } else if (k == "node_patterns") {
      const llvm::json::Array *arr = value.getAsArray();
      if (!arr)
        return p.fail(k, k, "expected an array of {\"regex\", \"class\" or "
                            "\"compute\"}"),
               nullptr;
      p.parent = "node_patterns";
      for (auto [i, entry] : llvm::enumerate(*arr)) {
        std::string path = ("node_patterns[" + Twine(i) + "]").str();
        const Object *obj = entry.getAsObject();
        std::optional<StringRef> re =
            obj ? obj->getString("regex") : std::nullopt;
        if (!re)
          return p.fail(k, path, "needs a \"regex\" string"), nullptr;
        Pattern pat;
        pat.text = re->str();
        // Anchor: a pattern names whole node names.
        pat.regex = std::make_unique<llvm::Regex>(("^(" + *re + ")$").str());
        std::string reError;
        if (!pat.regex->isValid(reError))
          return p.fail(*re, path + ".regex",
                        "bad regex '" + *re + "': " + reError),
                 nullptr;
        if (!p.parseOverride(entry, *re, path, pat.value))
          return nullptr;
        policy->patterns.push_back(std::move(pat));
      }
    } else {
      return p.fail(k, k,
                    "unknown key (expected op_types, nodes, node_patterns, "
                    "keep_io_types, index_guard, unlisted_class, "
                    "use_builtin)"),
             nullptr;
    }
  }
  return policy;
}

std::unique_ptr<PrecisionPolicy>
PrecisionPolicy::load(StringRef path, std::string &error,
                      std::vector<std::string> &warnings) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = ("cannot read policy file '" + path +
             "': " + buffer.getError().message())
                .str();
    return nullptr;
  }
  return parse((*buffer)->getBuffer(), path, error, warnings);
}
