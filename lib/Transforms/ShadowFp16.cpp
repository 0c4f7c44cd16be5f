//===- ShadowFp16.cpp - each fp16 node's own error, in one run ------------===//
//
// How much fp16 hurts a node by itself, without the error its inputs bring:
// the node computed in fp16 from exact fp32 inputs, next to the same node in
// fp32. Cloning every fp16 node beside its fp32 original measures all of
// them in one run of one graph.
//
//===----------------------------------------------------------------------===//

#include "NamedSignature.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/Materialize.h"
#include "mp/Precision/OpInfo.h"
#include "mp/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mp {
#define GEN_PASS_DEF_SHADOWFP16
#include "mp/Transforms/Passes.h.inc"
} // namespace mp

using namespace mlir;
using namespace mp;

std::string mp::shadowKey(StringRef key) { return ("f16:" + key).str(); }

namespace {

bool isFloatTensor(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && isa<FloatType>(ranked.getElementType());
}

struct ShadowFp16Pass : public mp::impl::ShadowFp16Base<ShadowFp16Pass> {
  void runOnOperation() override {
    func::FuncOp func = entryFunction(getOperation(), getArgument());
    if (!func)
      return signalPassFailure();
    DenseMap<Operation *, std::string> keys = precisionNodeKeys(func);
    MLIRContext *ctx = &getContext();
    SmallVector<NamedValue> originals, shadows;
    for (Operation &op :
         llvm::make_early_inc_range(func.getBody().front())) {
      auto key = keys.find(&op);
      if (key == keys.end())
        continue;
      auto decision = op.getAttrOfType<PrecisionAttr>(kPrecisionAttrName);
      bool shadow = decision && decision.getCompute().isF16() &&
                    op.getNumRegions() == 0;
      if (shadow) {
        OpBuilder b(ctx);
        b.setInsertionPointAfter(&op);
        Operation *clone = b.clone(op);
        for (OpResult r : clone->getResults())
          if (isFloatTensor(r.getType()))
            shadows.push_back(
                {exposedValueName(shadowKey(key->second), r.getResultNumber()),
                 r});
        // The original is the fp32 reference.
        op.setAttr(kPrecisionAttrName,
                   PrecisionAttr::get(ctx, Float32Type::get(ctx), Type(),
                                      decision.getCls(),
                                      "fp32 reference of its fp16 shadow"));
      }
      for (OpResult r : op.getResults())
        if (isFloatTensor(r.getType()))
          originals.push_back(
              {exposedValueName(key->second, r.getResultNumber()), r});
    }
    llvm::append_range(originals, shadows);
    if (failed(appendNamedResults(func, originals)))
      return signalPassFailure();
  }
};

} // namespace
