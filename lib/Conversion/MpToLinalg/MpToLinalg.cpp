//===- MpToLinalg.cpp - the mp-lower-to-linalg pass -----------------------===//

#include "Patterns.h"
#include "mp/Conversion/Passes.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Precision/OpInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mp {
#define GEN_PASS_DEF_MPTOLINALG
#include "mp/Conversion/Passes.h.inc"

void populateMpToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                AttentionLowering attention,
                                GpuAttentionBuilder gpuAttention,
                                bool indexChecks,
                                ConvolutionLowering convolution) {
  populateElementwiseToLinalgPatterns(patterns);
  populateContractionToLinalgPatterns(patterns);
  populateReductionToLinalgPatterns(patterns);
  populateShapeToTensorPatterns(patterns, indexChecks);
  populateAttentionToLinalgPatterns(patterns, attention, gpuAttention,
                                    indexChecks);
  populateContribAttentionToLinalgPatterns(patterns, attention, gpuAttention);
  populateGroupQueryAttentionToLinalgPatterns(patterns, attention, gpuAttention,
                                              indexChecks);
  populateRotaryToLinalgPatterns(patterns, indexChecks);
  populateNNToLinalgPatterns(patterns, convolution);
  populateIndexingToLinalgPatterns(patterns, indexChecks);
  populateDataDependentToLinalgPatterns(patterns);
  populateRecurrentToLinalgPatterns(patterns);
  populateResizeToLinalgPatterns(patterns);
  populateTrainingToLinalgPatterns(patterns);
  populateRandomToLinalgPatterns(patterns);
}
} // namespace mp

using namespace mlir;
using namespace mp;

namespace {

struct MpToLinalgPass : public mp::impl::MpToLinalgBase<MpToLinalgPass> {
  using Base::Base;
  MpToLinalgPass(const MpToLinalgOptions &options,
                 GpuAttentionBuilder gpuAttention)
      : Base(options), gpuAttention(std::move(gpuAttention)) {}

  void runOnOperation() override {
    if (attention == AttentionLowering::GpuFlash && !gpuAttention) {
      getOperation()->emitError()
          << "attention=gpu-flash needs the CUDA target's attention kernels, "
             "which this pass was not given: run the mp-lower-to-nvvm "
             "pipeline, or use attention=materialized";
      return signalPassFailure();
    }
    // Constant indices out of range are the model's error, found now.
    if (failed(checkConstantIndices(getOperation())))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateMpToLinalgPatterns(patterns, attention, gpuAttention, indexChecks,
                               convolution);
    // Concats last, when what feeds them is lowered and can be seen whole.
    RewritePatternSet concats(&getContext());
    populateConcatToLinalgPatterns(concats);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))) ||
        failed(applyPatternsGreedily(getOperation(), std::move(concats)))) {
      // A pattern that changed the IR and then failed keeps the driver from
      // converging: a bug in the lowering, not in the model.
      getOperation()->emitError()
          << "the mp to linalg lowering did not converge (an internal "
             "error: please report it with the model)";
      return signalPassFailure();
    }
    // Whatever is left names what is missing, node by node.
    bool failedAny = false;
    getOperation().walk([&](Operation *op) {
      if (!isa<MpDialect>(op->getDialect()))
        return;
      auto isDynamic = [](Type t) {
        auto r = dyn_cast<RankedTensorType>(t);
        return r && !r.hasStaticShape();
      };
      bool dynamic = llvm::any_of(op->getResultTypes(), isDynamic) ||
                     llvm::any_of(op->getOperandTypes(), isDynamic);
      std::string node = onnxNodeName(op);
      emitError(op->getLoc())
          << "cannot lower '" << op->getName() << "'"
          << (node.empty() ? "" : " (node '" + node + "')") << ": "
          << (dynamic ? "its shapes are dynamic and it has no "
                        "dynamic-shape lowering yet (pin the "
                        "graph inputs with --mp-specialize-shapes "
                        "or --input-shape)"
                      : "this op has no CPU lowering yet");
      failedAny = true;
    });
    if (failedAny)
      return signalPassFailure();
    makeIntegersSignless(getOperation());
  }

  /// The lowering picked unsigned arith ops (divui, maxui, cmpi ult,
  /// uitofp, extui) from the mp types; arith itself only takes signless
  /// integers, so ui8..ui64 become i8..i64 everywhere (values, block
  /// arguments, function types, constants) with the same bits.
  static void makeIntegersSignless(Operation *root) {
    auto signless = [](Type t) -> Type {
      auto i = dyn_cast<IntegerType>(t);
      return i && !i.isSignless()
                 ? IntegerType::get(t.getContext(), i.getWidth())
                 : Type();
    };
    // Constants first: their payload is re-typed bit for bit.
    root->walk([&](arith::ConstantOp c) {
      if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue())) {
        if (Type to = signless(dense.getElementType()))
          c.setValueAttr(dense.bitcast(to));
      } else if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
        if (Type to = signless(i.getType()))
          c.setValueAttr(IntegerAttr::get(to, i.getValue()));
      }
    });
    AttrTypeReplacer replacer;
    replacer.addReplacement([](IntegerType t) -> std::optional<Type> {
      if (t.isSignless())
        return std::nullopt;
      return IntegerType::get(t.getContext(), t.getWidth());
    });
    replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
  }

  GpuAttentionBuilder gpuAttention;
};

} // namespace

std::unique_ptr<Pass> mp::createMpToLinalg(const MpToLinalgOptions &options,
                                           GpuAttentionBuilder gpuAttention) {
  return std::make_unique<MpToLinalgPass>(options, std::move(gpuAttention));
}
