//===- BindCudaRuntime.cpp - host buffers and constants on the device -----===//

#include "mp/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/IR/SymbolTable.h"

namespace mp {
#define GEN_PASS_DEF_BINDCUDARUNTIME
#include "mp/Codegen/CUDA/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// MLIR's generic allocation functions and the runtime's device versions.
constexpr std::pair<StringLiteral, StringLiteral> kAllocFunctions[] = {
    {"_mlir_memref_to_llvm_alloc", "mp_cuda_memref_alloc"},
    {"_mlir_memref_to_llvm_aligned_alloc", "mp_cuda_memref_aligned_alloc"},
    {"_mlir_memref_to_llvm_free", "mp_cuda_memref_free"},
};

constexpr StringLiteral kConstantFunction = "mp_cuda_constant";

struct BindCudaRuntimePass
    : public mp::impl::BindCudaRuntimeBase<BindCudaRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [from, to] : kAllocFunctions) {
      auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(from);
      if (!decl)
        continue;
      if (module.lookupSymbol(to)) {
        decl.emitOpError("cannot be renamed to '") << to << "': taken";
        return signalPassFailure();
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              decl, StringAttr::get(&getContext(), to), module))) {
        decl.emitOpError("has uses that cannot be renamed");
        return signalPassFailure();
      }
      SymbolTable::setSymbolName(decl, to);
    }
    if (failed(bindConstants(module)))
      signalPassFailure();
  }

  /// Host code takes the address of constant globals only to pass them to
  /// kernels (or to device copies): give it their device copies instead.
  LogicalResult bindConstants(ModuleOp module) {
    OpBuilder builder(module.getContext());
    auto ptrType = LLVM::LLVMPointerType::get(module.getContext());
    auto i64 = builder.getI64Type();
    LLVM::LLVMFuncOp constantFn;
    DataLayout layout(module);
    SmallVector<LLVM::AddressOfOp> uses;
    module.walk([&](LLVM::AddressOfOp addr) {
      if (addr->getParentOfType<gpu::GPUModuleOp>())
        return;
      auto global = dyn_cast_or_null<LLVM::GlobalOp>(
          SymbolTable::lookupNearestSymbolFrom(addr, addr.getGlobalNameAttr()));
      if (global && global.getConstant())
        uses.push_back(addr);
    });
    if (uses.empty())
      return success();
    builder.setInsertionPointToEnd(module.getBody());
    constantFn = LLVM::LLVMFuncOp::create(
        builder, module.getLoc(), kConstantFunction,
        LLVM::LLVMFunctionType::get(ptrType, {ptrType, i64}));
    for (LLVM::AddressOfOp addr : uses) {
      auto global = cast<LLVM::GlobalOp>(
          SymbolTable::lookupNearestSymbolFrom(addr, addr.getGlobalNameAttr()));
      uint64_t bytes = layout.getTypeSize(global.getType());
      builder.setInsertionPointAfter(addr);
      Value size = LLVM::ConstantOp::create(builder, addr.getLoc(), i64,
                                            builder.getI64IntegerAttr(bytes));
      auto call = LLVM::CallOp::create(builder, addr.getLoc(), constantFn,
                                       ValueRange{addr.getResult(), size});
      addr.getResult().replaceAllUsesExcept(call.getResult(), call);
    }
    return success();
  }
};

} // namespace
