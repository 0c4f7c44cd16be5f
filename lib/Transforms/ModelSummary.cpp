//===- ModelSummary.cpp - print what the compiler sees of a model ---------===//

#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mp {
#define GEN_PASS_DEF_MODELSUMMARY
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

/// "f32[batch, 16]" with dynamic dims named by their ONNX dim_param.
std::string describeType(Type type, ArrayAttr dimNames) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto shaped = cast<ShapedType>(type);
  os << shaped.getElementType() << "[";
  for (auto [i, d] : llvm::enumerate(shaped.getShape())) {
    if (i)
      os << ", ";
    StringRef name;
    if (dimNames && i < dimNames.size())
      name = cast<StringAttr>(dimNames[i]).getValue();
    if (!ShapedType::isDynamic(d))
      os << d;
    else
      os << (name.empty() ? "?" : name);
  }
  os << "]";
  return s;
}

std::string humanBytes(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes >= (1 << 20))
    os << llvm::format("%.2f MiB", bytes / double(1 << 20));
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    os << bytes << " B";
  return s;
}

struct ModelSummaryPass : public mp::impl::ModelSummaryBase<ModelSummaryPass> {
  using ModelSummaryBase::ModelSummaryBase;

  void runOnOperation() override {
    std::string error;
    auto file = openOutputFile(outputFile, &error);
    if (!file) {
      emitError(getOperation().getLoc(), "cannot open summary output: ")
          << error;
      return signalPassFailure();
    }
    llvm::raw_ostream &os = file->os();
    ModuleOp module = getOperation();
    if (auto producer = module->getAttrOfType<StringAttr>("mp.producer"))
      os << "producer: " << producer.getValue() << "\n";
    if (auto opsets = module->getAttrOfType<DictionaryAttr>("mp.opsets")) {
      os << "opsets:";
      for (NamedAttribute a : opsets)
        os << " " << a.getName().getValue() << "="
           << cast<IntegerAttr>(a.getValue()).getInt();
      os << "\n";
    }
    module.walk([&](func::FuncOp func) { summarize(func, os); });
    file->keep();
  }

  void summarize(func::FuncOp func, llvm::raw_ostream &os) {
    os << "function @" << func.getName() << "\n";
    auto printValues = [&](StringRef title, TypeRange types,
                           function_ref<DictionaryAttr(unsigned)> attrs) {
      os << title << ":\n";
      for (auto [i, t] : llvm::enumerate(types)) {
        DictionaryAttr d = attrs(i);
        auto name = d ? d.getAs<StringAttr>("mp.name") : StringAttr();
        auto dims = d ? d.getAs<ArrayAttr>("mp.dims") : ArrayAttr();
        os << "  " << (name ? name.getValue() : StringRef("#" + std::to_string(i)))
           << "  " << describeType(t, dims) << "\n";
      }
    };
    printValues("inputs", func.getArgumentTypes(),
                [&](unsigned i) { return func.getArgAttrDict(i); });
    printValues("outputs", func.getResultTypes(),
                [&](unsigned i) { return func.getResultAttrDict(i); });

    std::map<std::string, int64_t> histogram;
    std::map<std::string, std::pair<int64_t, int64_t>> weights; // count, bytes
    int64_t ops = 0, params = 0, weightBytes = 0;
    func.walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() != "mp")
        return;
      if (isa<YieldOp>(op))
        return;
      if (auto c = dyn_cast<ConstantOp>(op)) {
        auto type = cast<ShapedType>(c.getType());
        int64_t n = type.getNumElements();
        int64_t bytes =
            n * ((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
        std::string key;
        llvm::raw_string_ostream(key) << type.getElementType();
        weights[key].first += n;
        weights[key].second += bytes;
        params += n;
        weightBytes += bytes;
        return;
      }
      ++ops;
      histogram[op->getName().getStringRef().str()]++;
    });
    os << "ops: " << ops << " (excluding constants)\n";
    std::vector<std::pair<std::string, int64_t>> sorted(histogram.begin(),
                                                        histogram.end());
    // Most frequent first, ties by name (the map's order). Not stable_sort:
    // libstdc++ 12's version warns under clang 22 (get_temporary_buffer).
    llvm::sort(sorted, [](auto &a, auto &b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    for (auto &[name, count] : sorted)
      os << llvm::format("  %-32s %6lld\n", name.c_str(), (long long)count);
    os << "parameters: " << params << " in constants, " << humanBytes(weightBytes)
       << "\n";
    for (auto &[type, cb] : weights)
      os << llvm::format("  %-8s %12lld elements  %s\n", type.c_str(),
                         (long long)cb.first, humanBytes(cb.second).c_str());
  }
};

} // namespace
