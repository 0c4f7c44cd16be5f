//===- MergeGpuModules.cpp - every kernel in one gpu.module ---------------===//
//
// gpu-kernel-outlining gives each launch a gpu.module of its own, and each
// becomes a binary that ptxas compiles and the runtime loads on its own: a
// decoder of a few hundred kernels meant as many ptxas runs per
// architecture and cuModuleLoadData calls when the library loads. Merged,
// it is one of each.
//
//===----------------------------------------------------------------------===//

#include "mp/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mp {
#define GEN_PASS_DEF_MERGEGPUMODULES
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

struct MergeGpuModulesPass
    : public mp::impl::MergeGpuModulesBase<MergeGpuModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.size() < 2)
      return;
    for (gpu::GPUModuleOp m : modules)
      if (m.getTargetsAttr() || m.getOffloadingHandlerAttr()) {
        m.emitOpError("has targets already: run mp-merge-gpu-modules before "
                      "attaching targets");
        return signalPassFailure();
      }

    OpBuilder builder(modules.front());
    auto merged = gpu::GPUModuleOp::create(builder, modules.front().getLoc(),
                                           moduleName.getValue());
    SymbolTable symbols(module);
    symbols.insert(merged); // renamed if the name is taken
    SymbolTable inMerged(merged);

    // Each kernel takes its module's (unique) name.
    DenseMap<Attribute, SymbolRefAttr> renamed;
    for (gpu::GPUModuleOp m : modules) {
      for (Operation &op :
           llvm::make_early_inc_range(m.getBody()->without_terminator())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol) {
          op.moveBefore(merged.getBody(), merged.getBody()->end());
          continue;
        }
        auto old = SymbolRefAttr::get(m.getNameAttr(),
                                      {FlatSymbolRefAttr::get(
                                          symbol.getNameAttr())});
        if (isa<gpu::GPUFuncOp>(op))
          symbol.setName(m.getNameAttr());
        // Declarations (libdevice functions) may repeat: keep one.
        if (symbol.isDeclaration() && inMerged.lookup(symbol.getName())) {
          op.erase();
          continue;
        }
        op.remove();
        inMerged.insert(&op, merged.getBody()->end());
        renamed[old] = SymbolRefAttr::get(
            merged.getNameAttr(),
            {FlatSymbolRefAttr::get(symbol.getNameAttr())});
      }
    }
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it == renamed.end()) {
        launch.emitOpError("launches a kernel that is not in a gpu.module");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(it->second);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp m : modules)
      m.erase();
  }
};

} // namespace
