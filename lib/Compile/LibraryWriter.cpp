//===- LibraryWriter.cpp - lower, emit an object, link a shared library ---===//

#include "mp/Compile/Library.h"

#include "mp/Codegen/CUDA/Passes.h"
#include "mp/Dialect/Mp/IR/MpOps.h"
#include "mp/Pipelines/CudaToolkit.h"
#include "mp/Precision/OpInfo.h"
#include "mp/Support/CompileCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <dlfcn.h>

using namespace mlir;

namespace mp {

namespace {

LogicalResult writeText(Location loc, StringRef path, StringRef text) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return emitError(loc) << "cannot write '" << path << "': " << error;
  file->os() << text;
  file->keep();
  return success();
}

/// The host C compiler that compiles the wrapper and links the library, or
/// nothing when none is found.
std::optional<std::string> hostCompiler(const LibraryOptions &options) {
  if (!options.hostCompiler.empty())
    return options.hostCompiler;
  if (const char *cc = std::getenv("MP_CC"))
    return std::string(cc);
  for (StringRef name : {"clang-22", "clang", "cc"})
    if (auto path = llvm::sys::findProgramByName(name))
      return *path;
  return std::nullopt;
}

FailureOr<std::string> findHostCompiler(Location loc,
                                        const LibraryOptions &options) {
  if (std::optional<std::string> cc = hostCompiler(options))
    return *cc;
  return emitError(loc) << "no C compiler to link the library: install "
                           "clang-22 or set MP_CC",
         failure();
}

/// The folders of mp/runtime.h and libmp_runtime.so: an installation's
/// include/ and lib/ relative to this executable (PREFIX/bin/mp-compile, or
/// the Python package MP_PACKAGE_FROM_BIN names from pip's scripts folder),
/// else those of the build.
std::pair<std::string, std::string> runtimeDirs() {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  SmallVector<StringRef, 2> prefixes = {".."};
#ifdef MP_PACKAGE_FROM_BIN
  prefixes.push_back(MP_PACKAGE_FROM_BIN);
#endif
  for (StringRef prefix : prefixes) {
    SmallString<256> include(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(include, prefix);
    llvm::sys::path::remove_dots(include, /*remove_dot_dot=*/true);
    SmallString<256> lib(include), header, runtime;
    llvm::sys::path::append(include, "include");
    llvm::sys::path::append(lib, "lib");
    llvm::sys::path::append(header, include, "mp", "runtime.h");
    llvm::sys::path::append(runtime, lib, "libmp_runtime.so");
    if (llvm::sys::fs::exists(header) && llvm::sys::fs::exists(runtime))
      return {std::string(include), std::string(lib)};
  }
  return {MP_RUNTIME_INCLUDE_DIR, MP_RUNTIME_LIBRARY_DIR};
}

/// A PIC target machine for this host (the library's host code), or for
/// the CPU `cpu` names (its features only, not this machine's).
FailureOr<std::unique_ptr<llvm::TargetMachine>> hostMachine(Location loc,
                                                            StringRef cpu) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return emitError(loc) << "cannot describe the host CPU: "
                          << llvm::toString(builder.takeError()),
           failure();
  if (!cpu.empty()) {
    builder->setCPU(cpu.str());
    builder->setFeatures("");
  }
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return emitError(loc) << "cannot create a target machine: "
                          << llvm::toString(machine.takeError()),
           failure();
  if (!cpu.empty() && !(*machine)->getMCSubtargetInfo()->isCPUStringValid(cpu))
    return emitError(loc) << "'" << cpu << "' is not a CPU LLVM knows for "
                          << builder->getTargetTriple().str()
                          << " (try x86-64-v3)",
           failure();
  return std::move(*machine);
}

/// Every kernel's PTX, per architecture, from binaries in assembly form.
std::string collectPtx(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      os << "// ----- kernel module " << binary.getSymName() << " for ";
      if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
        os << nvvm.getChip();
      else
        os << object.getTarget();
      os << "\n"
         << object.getObject().getValue() << "\n";
    }
  });
  return text;
}

/// What mp-plan-arena recorded on the entry function (an `mp.arena`
/// dictionary, carried to the llvm.func and its C interface).
ArenaStats arenaOf(ModuleOp module, const EntrySignature &entry) {
  ArenaStats stats;
  Operation *func = SymbolTable::lookupSymbolIn(module, entry.symbol);
  auto dict = func ? func->getAttrOfType<DictionaryAttr>("mp.arena")
                   : DictionaryAttr();
  if (!dict)
    return stats;
  auto get = [&](StringRef key) {
    auto value = dict.getAs<IntegerAttr>(key);
    return value ? value.getInt() : 0;
  };
  stats.bytes = get("bytes");
  stats.buffers = get("buffers");
  stats.bufferBytes = get("buffer_bytes");
  stats.peakBytes = get("peak_bytes");
  return stats;
}

LogicalResult runCommand(Location loc, ArrayRef<std::string> argv) {
  SmallVector<StringRef> args(argv.begin(), argv.end());
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(args[0], args, std::nullopt, {}, 0, 0,
                                     &error);
  if (rc == 0)
    return success();
  return emitError(loc) << "'" << llvm::join(args, " ") << "' failed"
                        << (error.empty() ? "" : ": " + error)
                        << " (exit " << rc << ")";
}

} // namespace

LibraryPaths libraryPaths(StringRef outputPath) {
  SmallString<128> out(outputPath);
  llvm::sys::fs::make_absolute(out);
  SmallString<128> header(out), json(out);
  llvm::sys::path::replace_extension(header, ".h");
  llvm::sys::path::replace_extension(json, ".json");
  return {std::string(out), std::string(header), std::string(json)};
}

std::string libraryToolchainKey(const LibraryOptions &options) {
  std::string key;
  llvm::raw_string_ostream os(key);
  auto stamp = [&](StringRef what, StringRef path) {
    SmallString<256> real;
    if (llvm::sys::fs::real_path(path, real))
      real = path;
    llvm::sys::fs::file_status status;
    os << what << " " << real;
    if (llvm::sys::fs::status(real, status))
      os << " missing\n";
    else
      os << " " << status.getSize() << " bytes, modified "
         << status.getLastModificationTime().time_since_epoch().count() << "\n";
  };
  auto hash = [&](StringRef what, StringRef path) {
    os << what << " " << path << " "
       << hashFile(path).value_or(std::string("missing")) << "\n";
  };
  // The code generators and the pipeline's passes: in the shared libraries
  // of an LLVM installation, or in this binary (see buildFingerprint).
  os << "llvm " << LLVM_VERSION_STRING << "\n";
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&llvm::sys::getProcessTriple), &info) &&
      info.dli_fname)
    stamp("libLLVM", info.dli_fname);
  if (dladdr(reinterpret_cast<void *>(&translateModuleToLLVMIR), &info) &&
      info.dli_fname)
    stamp("libMLIR", info.dli_fname);
  std::optional<std::string> cc = hostCompiler(options);
  if (cc)
    stamp("cc", *cc);
  else
    os << "cc none\n";
  auto [runtimeInclude, runtimeLib] = runtimeDirs();
  SmallString<256> header(runtimeInclude), runtime(runtimeLib);
  llvm::sys::path::append(header, "mp", "runtime.h");
  llvm::sys::path::append(runtime, "libmp_runtime.so");
  hash("runtime header", header);
  hash("runtime library", runtime);
  if (options.target == LibraryOptions::Target::Cuda) {
    std::string toolkit =
        options.cuda.toolkit.empty() ? findCudaToolkit() : options.cuda.toolkit;
    SmallString<256> ptxas(toolkit), libdevice(toolkit);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    os << "cuda toolkit " << toolkit << "\n";
    stamp("ptxas", ptxas);
    hash("libdevice", libdevice);
  }
  return key;
}

LogicalResult writeLibrary(ModuleOp module, const EntrySignature &entry,
                           const LibraryOptions &options,
                           llvm::raw_ostream &progress) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  bool cuda = options.target == LibraryOptions::Target::Cuda;
  if (options.emit == LibraryOptions::Emit::Ptx && !cuda)
    return emitError(loc) << "--emit ptx needs --target cuda";

  PassManager pm(ctx, ModuleOp::getOperationName());
  if (cuda) {
    CudaPipelineOptions cudaOptions = options.cuda;
    if (cudaOptions.toolkit.empty())
      cudaOptions.toolkit = findCudaToolkit();
    if (cudaOptions.toolkit.empty())
      return emitError(loc) << "the CUDA target needs the CUDA toolkit "
                               "(ptxas and libdevice): set CUDA_HOME or put "
                               "ptxas on PATH";
    cudaOptions.assembly = options.emit == LibraryOptions::Emit::Ptx;
    cudaOptions.resultsAsOutParams = !entry.returnsOutputs;
    progress << "mp-compile: lowering to CUDA kernels for "
             << llvm::join(cudaOptions.chips, ", ")
             << (cudaOptions.assembly ? " (PTX)"
                 : hasPtxImages(cudaOptions.chips)
                     ? " (PTX images: the driver compiles them)"
                     : " (ptxas)")
             << "\n";
    buildCudaPipeline(pm, cudaOptions);
    // The fill level of in-place KV caches stays in host memory: the host
    // places the cache writes and sizes the attention grid with it.
    if (entry.kvCache.lengthInput >= 0)
      if (auto func = module.lookupSymbol<func::FuncOp>(
              StringRef(entry.symbol).drop_front(strlen("_mlir_ciface_"))))
        func.setArgAttr(entry.kvCache.lengthInput, kHostResidentAttr,
                        UnitAttr::get(ctx));
  } else {
    progress << "mp-compile: lowering for the CPU\n";
    buildCpuPipeline(pm, /*resultsAsOutParams=*/!entry.returnsOutputs,
                     /*pooledAllocations=*/true);
  }
  // The --mlir-print-ir-* options, where the tool registered them.
  (void)applyPassManagerCLOptions(pm);
  if (failed(pm.run(module)))
    return failure();
  ArenaStats arena = arenaOf(module, entry);
  if (arena.buffers)
    progress << llvm::formatv(
        "mp-compile: activation arena: {0} bytes for {1} temporaries ({2} "
        "bytes if each had its own buffer; at most {3} live at once)\n",
        arena.bytes, arena.buffers, arena.bufferBytes, arena.peakBytes);
  if (options.emit == LibraryOptions::Emit::Ptx)
    return writeText(loc, options.outputPath, collectPtx(module));
  if (options.emit == LibraryOptions::Emit::Mlir) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os);
    return writeText(loc, options.outputPath, text);
  }

  progress << "mp-compile: translating to LLVM IR\n";
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  registerAllGPUToLLVMIRTranslations(registry);
  ctx->appendDialectRegistry(registry);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "mp_model");
  if (!llvmModule)
    return emitError(loc) << "translation to LLVM IR failed";
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine =
      hostMachine(loc, options.hostCpu);
  if (failed(machine))
    return failure();
  // Failed run-time checks (cf.assert) call puts(message) and abort(): the
  // wrapper's handlers instead, so that a CPU run returns the message as
  // its error rather than ending the process (wrapperSource).
  if (llvm::Function *puts = llvmModule->getFunction("puts"))
    puts->setName("mp_check_message");
  if (llvm::Function *abort = llvmModule->getFunction("abort")) {
    abort->setName("mp_check_failed");
    abort->addFnAttr(llvm::Attribute::NoReturn);
  }
  // Only the wrapper's mp_model_* functions are the library's interface.
  for (llvm::GlobalValue &value : llvmModule->global_values())
    if (!value.isDeclaration() && !value.hasLocalLinkage())
      value.setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  auto optimize = makeOptimizingTransformer(3, 0, machine->get());
  if (llvm::Error e = optimize(llvmModule.get()))
    return emitError(loc) << "LLVM optimization failed: "
                          << llvm::toString(std::move(e));
  if (options.emit == LibraryOptions::Emit::Llvm) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    return writeText(loc, options.outputPath, text);
  }

  // The object and the wrapper go to a scratch folder; the three outputs
  // next to each other.
  SmallString<128> scratch;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("mp-compile", scratch))
    return emitError(loc) << "cannot create a scratch folder: "
                          << ec.message();
  llvm::scope_exit cleanup(
      [&] { llvm::sys::fs::remove_directories(scratch); });
  SmallString<128> objectPath(scratch), wrapperPath(scratch);
  llvm::sys::path::append(objectPath, "model.o");
  llvm::sys::path::append(wrapperPath, "wrapper.c");
  progress << "mp-compile: emitting the host object\n";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return emitError(loc) << "cannot write '" << objectPath
                            << "': " << ec.message();
    llvm::legacy::PassManager codegen;
    if ((*machine)->addPassesToEmitFile(codegen, os, nullptr,
                                        llvm::CodeGenFileType::ObjectFile))
      return emitError(loc) << "the host target cannot emit objects";
    codegen.run(*llvmModule);
  }
  EntrySignature wrapped = entry;
  wrapped.readsDeviceOnHost =
      cuda && llvmModule->getFunction("mp_cuda_copy_to_host") != nullptr;
  if (failed(writeText(loc, wrapperPath, wrapperSource(wrapped, options))))
    return failure();

  FailureOr<std::string> cc = findHostCompiler(loc, options);
  if (failed(cc))
    return failure();
  LibraryPaths paths = libraryPaths(options.outputPath);
  StringRef out = paths.library;
  if (std::error_code ec = llvm::sys::fs::create_directories(
          llvm::sys::path::parent_path(out)))
    return emitError(loc) << "cannot create the folder of '" << out
                          << "': " << ec.message();
  progress << "mp-compile: linking " << out << "\n";
  auto [runtimeInclude, runtimeLib] = runtimeDirs();
  std::vector<std::string> argv = {
      *cc,         "-shared",
      "-fPIC",     "-O2",
      "-fvisibility=hidden",
      "-I" + runtimeInclude,
      std::string(wrapperPath),
      std::string(objectPath),
      "-o",        std::string(out),
      "-L" + runtimeLib,
      // The runtime beside the library first, then where mp-compile found it.
      "-Wl,-rpath,$ORIGIN",
      "-Wl,-rpath," + runtimeLib,
      "-lmp_runtime", "-lm"};
  if (failed(runCommand(loc, argv)))
    return failure();

  // libNAME.h and libNAME.json beside libNAME.so.
  StringRef stem = llvm::sys::path::stem(out);
  StringRef header = paths.header, json = paths.description;
  if (failed(writeText(loc, header, headerSource(entry, options, stem))) ||
      failed(writeText(loc, json, descriptionJson(entry, options, arena))))
    return failure();
  progress << "mp-compile: wrote " << out << ", " << header << ", " << json
           << "\n";
  return success();
}

} // namespace mp
