//===- Pipelines.cpp - named pass pipelines -------------------------------===//

#include "mp/Pipelines/Pipelines.h"
#include "mp/Codegen/CPU/Passes.h"
#include "mp/Codegen/CUDA/FlashAttention.h"
#include "mp/Codegen/CUDA/Passes.h"
#include "mp/Codegen/Common/Passes.h"
#include "mp/Conversion/Passes.h"
#include "mp/Pipelines/CudaToolkit.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
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
  Option<mp::KeepIoTypes> keepIoTypes{
      *this, "keep-io-types", llvm::cl::desc("Keep graph input/output types"),
      llvm::cl::init(mp::KeepIoTypes::Policy),
      llvm::cl::values(
          clEnumValN(mp::KeepIoTypes::Policy, "policy",
                     "as the policy says (default: keep)"),
          clEnumValN(mp::KeepIoTypes::Yes, "1", "keep their types"),
          clEnumValN(mp::KeepIoTypes::No, "0",
                     "let them become f16 where all users are"))};
  Option<std::string> ranges{
      *this, "ranges",
      llvm::cl::desc("Value ranges from mp-run --calibrate (see "
                     "mp-assign-precision)")};
  Option<double> overflowMargin{
      *this, "overflow-margin",
      llvm::cl::desc("With ranges: a measured |x| above 65504 / margin keeps "
                     "fp32"),
      llvm::cl::init(4.0)};
  Option<bool> staticBounds{
      *this, "static-bounds",
      llvm::cl::desc("Without ranges: keep fp32 where static magnitude "
                     "bounds show fp16 can overflow"),
      llvm::cl::init(true)};
  Option<mp::IndexGuardChoice> indexGuard{
      *this, "index-guard",
      llvm::cl::desc("How far back the shape/index guard keeps ops in their "
                     "types (see mp-assign-precision)"),
      llvm::cl::init(mp::IndexGuardChoice::Policy),
      llvm::cl::values(
          clEnumValN(mp::IndexGuardChoice::Policy, "policy",
                     "as the policy says (default: arithmetic)"),
          clEnumValN(mp::IndexGuardChoice::Arithmetic, "arithmetic",
                     "up to the contractions the index arithmetic reads"),
          clEnumValN(mp::IndexGuardChoice::Exact, "exact",
                     "everything the index depends on"))};
};

struct NvvmPipelineOptions : public PassPipelineOptions<NvvmPipelineOptions> {
  ListOption<std::string> chips{
      *this, "chip",
      llvm::cl::desc("GPU architectures to compile for (default sm_90)")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  enum class Format { Bin, Isa };
  Option<Format> format{
      *this, "format", llvm::cl::desc("What the kernels become"),
      llvm::cl::init(Format::Bin),
      llvm::cl::values(
          clEnumValN(Format::Bin, "bin",
                     "binaries packed for the mp runtime (cubins, or PTX "
                     "for compute_XY)"),
          clEnumValN(Format::Isa, "isa", "PTX text"))};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};
  Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("f16 contractions on Tensor Cores (mma.sync, sm_80+)"),
      llvm::cl::init(true)};
  Option<bool> flashAttention{
      *this, "flash-attention",
      llvm::cl::desc("attention without mask tensors as split-KV flash "
                     "attention kernels"),
      llvm::cl::init(true)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root holding bin/ptxas and nvvm/libdevice "
                     "(default: CUDA_ROOT, CUDA_HOME, CUDA_PATH, ptxas on "
                     "PATH, /usr/local/cuda)")};
};
} // namespace

void mp::buildMixedPrecisionPipeline(OpPassManager &pm,
                                     const AssignPrecisionOptions &assign) {
  pm.addPass(createAssignPrecision(assign));
  InsertCastsOptions casts;
  casts.keepIoTypes = assign.keepIoTypes;
  pm.addPass(createInsertCasts(casts));
}

/// The lowering both targets share: mp -> linalg -> bufferized buffers with
/// results written into caller-provided buffers and deallocations placed.
static void buildBufferizedLinalgPipeline(OpPassManager &pm,
                                          bool resultsAsOutParams,
                                          bool outlineAndVectorize,
                                          bool flashAttention = false) {
  // The CPU streams attention over long caches; the GPU runs its flash
  // kernels or materializes the scores, whose matmuls and softmax map to
  // its generic kernels.
  mp::MpToLinalgOptions toLinalg;
  toLinalg.attention = outlineAndVectorize ? mp::AttentionLowering::Streaming
                       : flashAttention    ? mp::AttentionLowering::GpuFlash
                                        : mp::AttentionLowering::Materialized;
  // The checks of indices read from data read them on the host, which the
  // GPU's kernels keep in device memory.
  toLinalg.indexChecks = outlineAndVectorize;
  // Tap by tap for the CPU's register tiling; one kernel per Conv on GPUs.
  toLinalg.convolution = outlineAndVectorize ? mp::ConvolutionLowering::Taps
                                             : mp::ConvolutionLowering::Direct;
  pm.addPass(mp::createMpToLinalg(toLinalg, mp::buildFlashAttentionGpu));
  pm.addPass(createCanonicalizerPass());
  if (outlineAndVectorize) {
    pm.addPass(mp::createOutlineKernels());
    // Layers repeat: their kernels are identical functions. One of each is
    // tiled, vectorized and compiled; the calls share it.
    pm.addPass(func::createDuplicateFunctionEliminationPass());
    pm.addPass(mp::createTileAndVectorize());
  } else {
    // GPU: an elementwise producer with one use joins its consumer, so a
    // chain (bias, activation, cast, transpose) is one kernel, not one per
    // op.
    pm.addPass(mp::createGeneralizeLayoutOps());
    // Gathers read their indices where they are produced, not from the
    // index tensors an export assembles (dynamo's attention mask).
    pm.addPass(mp::createForwardExtracts());
    pm.addPass(createLinalgElementwiseOpFusionPass());
    // Casts with several consumers are recomputed in each of them.
    pm.addPass(mp::createFuseCasts());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(mp::createHoistDestinations());
  }
  // An op whose result is inserted into a larger tensor (a Concat's
  // operands, the past cache copied into present) writes into that
  // tensor's slice instead of a buffer of its own that is then copied.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
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
  // Results that are their input's state after the call (in-place KV
  // caches) leave the signature before the others become out-params.
  pm.addPass(mp::createDropInPlaceResults());
  // A kernel of dynamic shape writes into the buffer its caller passed
  // (its init): that result is the argument, so it is dropped rather than
  // made an out-param (which needs a static size).
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  // An allocation returned twice would become two out-params.
  pm.addPass(mp::createDistinctResults());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = resultsAsOutParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  // Clones the deallocation pipeline may insert become alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// Temporaries share one arena: one allocation per call. Planned after the
/// target has fused its kernels, so a fused kernel's buffers are live
/// together and never share bytes.
static void addArenaPlanning(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(mp::createPlanArena());
}

/// Loops, memrefs and vectors on the host CPU -> the LLVM dialect.
static void buildCpuLoweringTail(OpPassManager &pm, bool pooledAllocations) {
  // n-D vector transfers become 1-D ones that load and store directly.
  pm.addPass(mp::createExpandStridedCopies());
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

void mp::buildCpuPipeline(OpPassManager &pm, bool resultsAsOutParams,
                          bool pooledAllocations) {
  buildBufferizedLinalgPipeline(pm, resultsAsOutParams,
                                /*outlineAndVectorize=*/true);
  addArenaPlanning(pm);
  buildCpuLoweringTail(pm, pooledAllocations);
}

void mp::buildGpuMappingOnCpuPipeline(OpPassManager &pm,
                                      bool resultsAsOutParams,
                                      bool pooledAllocations) {
  buildBufferizedLinalgPipeline(pm, resultsAsOutParams,
                                /*outlineAndVectorize=*/false);
  pm.addNestedPass<func::FuncOp>(mp::createHoistBuffers());
  MapToGpuOptions map;
  map.memory = BufferMemory::Host;
  pm.addPass(createMapToGpu(map));
  addArenaPlanning(pm);
  buildCpuLoweringTail(pm, pooledAllocations);
}

void mp::buildCudaPipeline(OpPassManager &pm,
                           const CudaPipelineOptions &options) {
  buildBufferizedLinalgPipeline(pm, options.resultsAsOutParams,
                                /*outlineAndVectorize=*/false,
                                options.flashAttention);
  pm.addNestedPass<func::FuncOp>(mp::createHoistBuffers());
  // mma.sync m16n8k16 on f16 needs sm_80: every image must have it.
  bool allAmpere = llvm::all_of(options.chips, [](StringRef chip) {
    std::optional<unsigned> sm = parseGpuArch(chip);
    return sm && *sm >= 80;
  });
  // compute_XY asks for PTX images (the tool refuses a mix of kinds).
  bool ptxImages = hasPtxImages(options.chips);
  if (options.tensorCores && allAmpere)
    pm.addPass(createContractionToMma());
  ReductionToGpuOptions reductions;
  reductions.blockSize =
      std::clamp<int64_t>(options.blockSize / 32 * 32, 32, 1024);
  pm.addPass(createReductionToGpu(reductions));
  MapToGpuOptions map;
  map.blockSize = options.blockSize;
  pm.addPass(createMapToGpu(map));
  // Not before: canonicalization would merge the block and thread loops
  // and drop their mapping.
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Independent neighbours (a layer's q/k/v projections) share a launch.
  pm.addPass(mp::createMergeLaunches());
  addArenaPlanning(pm);
  // Constants and index arithmetic move into the kernels, so loop bounds
  // and strides are known there (unrolling, no parameter loads).
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createMergeGpuModules());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Views at run-time offsets (a KV cache written at its fill level) leave
  // affine.apply on the host.
  pm.addPass(createLowerAffinePass());
  for (const std::string &chip : options.chips) {
    GpuNVVMAttachTargetOptions target;
    std::optional<unsigned> sm = parseGpuArch(chip);
    target.chip = sm ? "sm_" + std::to_string(*sm) : chip;
    target.features = options.features;
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  // Device code: gpu.func -> NVVM (math through libdevice, mma.sync from
  // nvgpu).
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(toNVVM));
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  // Host code: buffers through the generic allocation functions, which
  // mp-bind-cuda-runtime points at device memory.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = options.assembly || ptxImages ? "isa" : "bin";
  // The toolkit gives ptxas and libdevice (expf, erff, ... in kernels).
  toBinary.toolkitPath =
      options.toolkit.empty() ? findCudaToolkit() : options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
  if (!options.assembly)
    pm.addPass(createPackGpuBinaries());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createBindCudaRuntime());
}

void mp::registerMpPipelines() {
  PassPipelineRegistration<>(
      "mp-cpu-pipeline",
      "Lower mp through linalg and bufferization to the LLVM dialect, for "
      "the JIT or an object file",
      [](OpPassManager &pm) { buildCpuPipeline(pm); });
  PassPipelineRegistration<NvvmPipelineOptions>(
      "mp-lower-to-nvvm",
      "Lower mp to GPU kernels in NVVM, compiled by ptxas "
      "into cubins (or PTX with format=isa), and host code in the LLVM "
      "dialect that launches them through the mp runtime",
      [](OpPassManager &pm, const NvvmPipelineOptions &o) {
        CudaPipelineOptions options;
        options.chips.assign(o.chips.begin(), o.chips.end());
        if (options.chips.empty())
          options.chips.push_back("sm_90");
        options.features = o.features;
        options.assembly = o.format == NvvmPipelineOptions::Format::Isa;
        options.blockSize = o.blockSize;
        options.tensorCores = o.tensorCores;
        options.flashAttention = o.flashAttention;
        options.toolkit = o.toolkit;
        buildCudaPipeline(pm, options);
      });
  PassPipelineRegistration<>(
      "mp-test-gpu-mapping-on-cpu",
      "Lower mp as for CUDA up to mp-map-to-gpu (every op a generic kernel), "
      "then run the mapped loops on the CPU (testing only)",
      [](OpPassManager &pm) { buildGpuMappingOnCpuPipeline(pm); });
  PassPipelineRegistration<MixedPrecisionOptions>(
      "mp-mixed-precision",
      "Assign fp16/fp32 per op from the policy, then insert casts",
      [](OpPassManager &pm, const MixedPrecisionOptions &o) {
        AssignPrecisionOptions assign;
        assign.policyFile = o.policy;
        assign.planFile = o.plan;
        assign.report = o.report;
        assign.keepIoTypes = o.keepIoTypes;
        assign.rangesFile = o.ranges;
        assign.overflowMargin = o.overflowMargin;
        assign.staticBounds = o.staticBounds;
        assign.indexGuard = o.indexGuard;
        buildMixedPrecisionPipeline(pm, assign);
      });
}

void mp::registerAllMpPasses() {
  registerMpPasses();
  registerMpConversionPasses();
  registerMpCodegenCommonPasses();
  registerMpCodegenCPUPasses();
  registerMpCodegenCUDAPasses();
  registerMpPipelines();
}
