//===- ValueRanges.cpp - value statistics measured on calibration data ----===//

#include "mp/Precision/ValueRanges.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace llvm;

namespace mp {

void ValueRange::add(ArrayRef<float> values) {
  bool first = count == nonFinite;
  for (float v : values) {
    ++count;
    if (!std::isfinite(v)) {
      ++nonFinite;
      continue;
    }
    double d = v;
    if (first) {
      min = max = d;
      first = false;
    }
    min = std::min(min, d);
    max = std::max(max, d);
    double a = std::fabs(d);
    absMax = std::max(absMax, a);
    if (a != 0) {
      ++nonzero;
      if (a < kFp16MinNormal)
        ++belowNormal;
      if (a < kFp16FlushBelow)
        ++flushToZero;
    }
  }
}

const ValueRange *ValueRanges::find(StringRef key, unsigned result) const {
  auto it = nodes.find(key);
  if (it == nodes.end() || result >= it->second.size() || !it->second[result])
    return nullptr;
  return &*it->second[result];
}

void ValueRanges::add(StringRef key, unsigned result, ArrayRef<float> values) {
  auto &outputs = nodes[key];
  if (outputs.size() <= result)
    outputs.resize(result + 1);
  if (!outputs[result])
    outputs[result].emplace();
  outputs[result]->add(values);
}

SmallVector<StringRef> ValueRanges::keys() const {
  SmallVector<StringRef> out;
  for (const auto &entry : nodes)
    out.push_back(entry.getKey());
  llvm::sort(out);
  return out;
}

json::Value ValueRanges::toJSON(StringRef model) const {
  json::Object out;
  for (StringRef key : keys()) {
    json::Array results;
    for (auto [i, r] : llvm::enumerate(nodes.find(key)->second))
      if (r)
        results.push_back(json::Object{{"result", int64_t(i)},
                                       {"min", r->min},
                                       {"max", r->max},
                                       {"abs_max", r->absMax},
                                       {"count", r->count},
                                       {"nonzero", r->nonzero},
                                       {"below_normal", r->belowNormal},
                                       {"flush_to_zero", r->flushToZero},
                                       {"non_finite", r->nonFinite}});
    out[key] = std::move(results);
  }
  return json::Object{{"version", 1},
                      {"kind", "mp-calibration"},
                      {"model", model},
                      {"samples", numSamples},
                      {"nodes", std::move(out)}};
}

static bool fromJSON(const json::Value &v, ValueRange &r, json::Path p) {
  json::ObjectMapper o(v, p);
  return o && o.map("min", r.min) && o.map("max", r.max) &&
         o.map("abs_max", r.absMax) && o.map("count", r.count) &&
         o.map("nonzero", r.nonzero) && o.map("below_normal", r.belowNormal) &&
         o.map("flush_to_zero", r.flushToZero) &&
         o.map("non_finite", r.nonFinite);
}

std::unique_ptr<ValueRanges> ValueRanges::load(StringRef path,
                                               std::string &error) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer) {
    error = ("cannot read calibration ranges '" + path +
             "': " + buffer.getError().message())
                .str();
    return nullptr;
  }
  Expected<json::Value> root = json::parse((*buffer)->getBuffer());
  if (!root) {
    error = (path + ": invalid JSON: " + toString(root.takeError())).str();
    return nullptr;
  }
  auto ranges = std::make_unique<ValueRanges>();
  json::Path::Root rootPath("calibration");
  auto fail = [&](json::Path::Root &at) {
    std::string message;
    raw_string_ostream os(message);
    os << toString(at.getError());
    error =
        (path + ": " + message + " (expected the output of mp-run --calibrate)")
            .str();
    return nullptr;
  };
  json::Path p(rootPath);
  const json::Object *obj = root->getAsObject();
  if (!obj) {
    p.report("expected an object");
    return fail(rootPath);
  }
  if (obj->getString("kind") != "mp-calibration") {
    p.field("kind").report("expected \"mp-calibration\"");
    return fail(rootPath);
  }
  if (std::optional<int64_t> n = obj->getInteger("samples"))
    ranges->numSamples = *n;
  const json::Object *nodes = obj->getObject("nodes");
  if (!nodes) {
    p.field("nodes").report("expected an object");
    return fail(rootPath);
  }
  json::Path nodesPath = p.field("nodes");
  for (const auto &[key, value] : *nodes) {
    json::Path at = nodesPath.field(key);
    const json::Array *results = value.getAsArray();
    if (!results) {
      at.report("expected an array");
      return fail(rootPath);
    }
    auto &outputs = ranges->nodes[key.str()];
    for (auto [i, item] : llvm::enumerate(*results)) {
      json::Path itemPath = at.index(i);
      std::optional<int64_t> result;
      if (const json::Object *o = item.getAsObject())
        result = o->getInteger("result");
      ValueRange r;
      if (!result || *result < 0 || *result > 1024) {
        itemPath.field("result").report("expected an output index");
        return fail(rootPath);
      }
      if (!fromJSON(item, r, itemPath))
        return fail(rootPath);
      if (outputs.size() <= size_t(*result))
        outputs.resize(*result + 1);
      outputs[*result] = r;
    }
  }
  return ranges;
}

} // namespace mp
