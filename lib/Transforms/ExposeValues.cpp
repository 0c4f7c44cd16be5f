//===- ExposeValues.cpp - return every node's float outputs ---------------===//

#include "NamedSignature.h"
#include "mp/Precision/OpInfo.h"
#include "mp/Transforms/Passes.h"

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

bool isFloatTensor(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && isa<FloatType>(ranked.getElementType());
}

struct ExposeValuesPass : public mp::impl::ExposeValuesBase<ExposeValuesPass> {
  void runOnOperation() override {
    func::FuncOp func = entryFunction(getOperation(), getArgument());
    if (!func)
      return signalPassFailure();
    DenseMap<Operation *, std::string> keys = precisionNodeKeys(func);
    SmallVector<NamedValue> exposed;
    for (Operation &op : func.getBody().front()) {
      auto key = keys.find(&op);
      if (key == keys.end())
        continue;
      for (OpResult result : op.getResults())
        if (isFloatTensor(result.getType()))
          exposed.push_back(
              {exposedValueName(key->second, result.getResultNumber()),
               result});
    }
    if (failed(appendNamedResults(func, exposed)))
      return signalPassFailure();
  }
};

} // namespace
