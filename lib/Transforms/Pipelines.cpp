//===- Pipelines.cpp - named pass pipelines -------------------------------===//

#include "mp/Transforms/Passes.h"
#include "mp/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct MixedPrecisionOptions
    : public PassPipelineOptions<MixedPrecisionOptions> {
  Option<std::string> policy{*this, "policy",
                             llvm::cl::desc("JSON precision policy")};
  Option<std::string> plan{*this, "plan",
                           llvm::cl::desc("Write the precision plan here")};
  Option<bool> report{*this, "report",
                      llvm::cl::desc("Print the summary table on stderr"),
                      llvm::cl::init(false)};
  Option<int> keepIoTypes{
      *this, "keep-io-types",
      llvm::cl::desc("Keep graph input/output types (1/0; -1: policy)"),
      llvm::cl::init(-1)};
};
} // namespace

void mp::buildMixedPrecisionPipeline(OpPassManager &pm, StringRef policy,
                                     StringRef plan, bool report,
                                     int keepIoTypes) {
  AssignPrecisionOptions assign;
  assign.policyFile = policy.str();
  assign.planFile = plan.str();
  assign.report = report;
  assign.keepIoTypes = keepIoTypes;
  pm.addPass(createAssignPrecision(assign));
  InsertCastsOptions casts;
  casts.keepIoTypes = keepIoTypes;
  pm.addPass(createInsertCasts(casts));
}

void mp::buildCpuPipeline(OpPassManager &pm, bool resultsAsOutParams,
                          bool pooledAllocations) {
  pm.addPass(createMpToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createOutlineKernels());
  pm.addPass(createTileAndVectorize());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Loops may carry fresh tensors (streaming attention's running max, sum
  // and accumulator); the deallocation pipeline frees the old ones.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Loops that only forward a buffer fold away and identical subviews
  // merge, so self-copies of in-place tiles vanish and results are seen
  // as the allocations they are.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Kernels (private) always write into buffers their caller passes; the
  // public entry point too when asked (the JIT's convention). Static
  // allocations move to the caller, so nothing is copied.
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = resultsAsOutParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  // Clones the deallocation pipeline may insert become alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  // n-D vector transfers become 1-D ones that load and store directly.
  pm.addPass(createExpandStridedCopies());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = pooledAllocations;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // erf, tanh, expm1, log1p... have no LLVM intrinsic: call libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  // Padding values of vector transfers (ub.poison).
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mp::registerMpPipelines() {
  PassPipelineRegistration<>(
      "mp-cpu-pipeline",
      "Lower mp (static shapes) through linalg and bufferization to the LLVM "
      "dialect, for the JIT or an object file",
      [](OpPassManager &pm) { buildCpuPipeline(pm); });
  PassPipelineRegistration<MixedPrecisionOptions>(
      "mp-mixed-precision",
      "Assign fp16/fp32 per op from the policy, then insert casts",
      [](OpPassManager &pm, const MixedPrecisionOptions &o) {
        buildMixedPrecisionPipeline(pm, o.policy, o.plan, o.report,
                                    o.keepIoTypes);
      });
}
