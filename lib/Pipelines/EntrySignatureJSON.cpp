//===- EntrySignatureJSON.cpp - an entry signature as JSON ----------------===//

#include "mp/Pipelines/Entry.h"

#include "mlir/AsmParser/AsmParser.h"

using namespace mlir;
using llvm::json::Array;
using llvm::json::Object;
using JSON = llvm::json::Value;

namespace mp {

static JSON typeToJSON(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

static JSON tensorsToJSON(const std::vector<HostTensor> &tensors) {
  Array out;
  for (const HostTensor &t : tensors)
    out.push_back(Object{{"name", t.name},
                         {"type", typeToJSON(t.elementType)},
                         {"shape", Array(t.shape)}});
  return out;
}

static JSON
declaredToJSON(const std::vector<EntrySignature::DeclaredShape> &shapes) {
  Array out;
  for (const auto &s : shapes)
    out.push_back(Object{{"sizes", Array(s.sizes)}, {"names", Array(s.names)}});
  return out;
}

JSON toJSON(const EntrySignature &entry) {
  return Object{
      {"symbol", entry.symbol},
      {"inputs", tensorsToJSON(entry.inputs)},
      {"outputs", tensorsToJSON(entry.outputs)},
      {"declared_inputs", declaredToJSON(entry.declaredInputs)},
      {"declared_outputs", declaredToJSON(entry.declaredOutputs)},
      {"in_place_of", Array(entry.inPlaceOf)},
      {"kv_cache", Object{{"length_input", entry.kvCache.lengthInput},
                          {"capacity", entry.kvCache.capacity},
                          {"new_positions", entry.kvCache.newPositions}}},
      {"returns_outputs", entry.returnsOutputs},
      {"reads_device_on_host", entry.readsDeviceOnHost}};
}

namespace {
/// Reads the JSON of toJSON, remembering the first problem.
struct Reader {
  MLIRContext *ctx;
  std::string error;

  bool fail(const llvm::Twine &what) {
    if (error.empty())
      error = what.str();
    return false;
  }

  /// `v` as an array, or null after recording that it is not one.
  const Array *array(const JSON *v, const llvm::Twine &what) {
    const Array *a = v ? v->getAsArray() : nullptr;
    if (!a)
      fail(what + " is not an array");
    return a;
  }

  template <typename T>
  bool numbers(const JSON *v, T &out, const llvm::Twine &what) {
    const Array *a = array(v, what);
    if (!a)
      return false;
    for (const JSON &x : *a) {
      std::optional<int64_t> n = x.getAsInteger();
      if (!n)
        return fail(what + " holds a non-integer");
      out.push_back(*n);
    }
    return true;
  }

  bool tensors(const JSON *v, std::vector<HostTensor> &out,
               llvm::StringRef what) {
    const Array *a = array(v, what);
    if (!a)
      return false;
    for (const JSON &x : *a) {
      const Object *o = x.getAsObject();
      std::optional<llvm::StringRef> name =
          o ? o->getString("name") : std::nullopt;
      std::optional<llvm::StringRef> type =
          o ? o->getString("type") : std::nullopt;
      if (!name || !type)
        return fail("a tensor of " + what + " lacks its name or type");
      HostTensor t;
      t.name = name->str();
      t.elementType = parseType(*type, ctx);
      if (!t.elementType)
        return fail("tensor '" + t.name + "' has the unknown type '" + *type +
                    "'");
      if (!numbers(o->get("shape"), t.shape, "the shape of '" + t.name + "'"))
        return false;
      out.push_back(std::move(t));
    }
    return true;
  }

  bool declared(const JSON *v, std::vector<EntrySignature::DeclaredShape> &out,
                llvm::StringRef what) {
    const Array *a = array(v, what);
    if (!a)
      return false;
    for (const JSON &x : *a) {
      const Object *o = x.getAsObject();
      const Array *names = o ? o->getArray("names") : nullptr;
      EntrySignature::DeclaredShape s;
      if (!names || !numbers(o->get("sizes"), s.sizes, what))
        return fail(what + " is malformed");
      for (const JSON &n : *names) {
        std::optional<llvm::StringRef> str = n.getAsString();
        if (!str)
          return fail(what + " has a non-string dim name");
        s.names.push_back(str->str());
      }
      out.push_back(std::move(s));
    }
    return true;
  }
};
} // namespace

bool entrySignatureFromJSON(const JSON &value, MLIRContext *ctx,
                            EntrySignature &entry, std::string &error) {
  Reader r{ctx, {}};
  const Object *o = value.getAsObject();
  const Object *kv = o ? o->getObject("kv_cache") : nullptr;
  std::optional<llvm::StringRef> symbol =
      o ? o->getString("symbol") : std::nullopt;
  std::optional<bool> returns =
      o ? o->getBoolean("returns_outputs") : std::nullopt;
  std::optional<bool> readsDevice =
      o ? o->getBoolean("reads_device_on_host") : std::nullopt;
  bool ok = o && kv && symbol && returns && readsDevice;
  if (!ok)
    r.fail("the entry signature lacks a field");
  ok = ok && r.tensors(o->get("inputs"), entry.inputs, "inputs") &&
       r.tensors(o->get("outputs"), entry.outputs, "outputs") &&
       r.declared(o->get("declared_inputs"), entry.declaredInputs,
                  "declared_inputs") &&
       r.declared(o->get("declared_outputs"), entry.declaredOutputs,
                  "declared_outputs") &&
       r.numbers(o->get("in_place_of"), entry.inPlaceOf, "in_place_of");
  if (ok) {
    std::optional<int64_t> length = kv->getInteger("length_input");
    std::optional<int64_t> capacity = kv->getInteger("capacity");
    std::optional<int64_t> positions = kv->getInteger("new_positions");
    ok = length && capacity && positions;
    if (!ok)
      r.fail("kv_cache is malformed");
    else {
      entry.kvCache.lengthInput = *length;
      entry.kvCache.capacity = *capacity;
      entry.kvCache.newPositions = *positions;
      entry.symbol = symbol->str();
      entry.returnsOutputs = *returns;
      entry.readsDeviceOnHost = *readsDevice;
    }
  }
  // Indices into the input list must be in range: callers index with them.
  int numInputs = entry.inputs.size();
  for (int of : entry.inPlaceOf)
    if (ok && (of < -1 || of >= numInputs))
      ok = r.fail("in_place_of names input " + llvm::Twine(of));
  if (ok && (entry.inPlaceOf.size() < entry.outputs.size() ||
             entry.kvCache.lengthInput < -1 ||
             entry.kvCache.lengthInput >= numInputs))
    ok = r.fail("the entry signature's indices are out of range");
  if (!ok)
    error = "malformed entry signature: " + r.error;
  return ok;
}

} // namespace mp
