//===- ExposeValues.cpp - return every node's float outputs ---------------===//

#include "NamedSignature.h"
#include "mp/Precision/OpInfo.h"
#include "mp/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mp {
#define GEN_PASS_DEF_EXPOSEVALUES
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

std::string mp::exposedValueName(StringRef key, unsigned result) {
  return (Twine(result) + ":" + key).str();
}

bool mp::parseExposedValueName(StringRef name, StringRef &key,
                               unsigned &result) {
  auto [index, rest] = name.split(':');
  if (rest.empty() || index.getAsInteger(10, result))
    return false;
  key = rest;
  return true;
}

namespace {

struct ExposeValuesPass : public mp::impl::ExposeValuesBase<ExposeValuesPass> {
  void runOnOperation() override {
    func::FuncOp func = entryFunction(getOperation(), getArgument());
    if (!func)
      return signalPassFailure();
    DenseMap<Operation *, std::string> keys = precisionNodeKeys(func);
    Builder b(func.getContext());
    SmallVector<Value> values;
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    for (Operation &op : func.getBody().front()) {
      auto key = keys.find(&op);
      if (key == keys.end())
        continue;
      for (OpResult result : op.getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type || !isa<FloatType>(type.getElementType()))
          continue;
        values.push_back(result);
        types.push_back(type);
        attrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
            "mp.name", b.getStringAttr(exposedValueName(
                           key->second, result.getResultNumber())))));
      }
    }
    // Appended: the graph's own results keep their attributes.
    unsigned end = func.getNumResults();
    SmallVector<unsigned> indices(values.size(), end);
    if (failed(func.insertResults(indices, types, attrs)))
      return signalPassFailure();
    func.front().getTerminator()->insertOperands(end, values);
  }
};

} // namespace
