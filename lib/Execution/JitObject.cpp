//===- JitObject.cpp - a compiled variant's machine code, loaded ----------===//

#include "JitObject.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <mutex>

using namespace llvm;
using namespace llvm::orc;

namespace mp {

void initializeJitTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
}

JitObject::~JitObject() = default;

std::unique_ptr<JitObject> JitObject::load(StringRef object,
                                           std::string &error) {
  auto fail = [&](const Twine &what, Error e) {
    error = (what + ": " + toString(std::move(e))).str();
    return nullptr;
  };
  initializeJitTarget();
  auto host = JITTargetMachineBuilder::detectHost();
  if (!host)
    return fail("cannot describe the host CPU", host.takeError());
  auto layout = host->getDefaultDataLayoutForTarget();
  if (!layout)
    return fail("cannot get the host's data layout", layout.takeError());
  // RuntimeDyld, as MLIR's ExecutionEngine links.
  auto jit = LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*host))
                 .setObjectLinkingLayerCreator(
                     [](ExecutionSession &session)
                         -> Expected<std::unique_ptr<ObjectLayer>> {
                       return std::make_unique<RTDyldObjectLinkingLayer>(
                           session, [](const MemoryBuffer &) {
                             return std::make_unique<SectionMemoryManager>();
                           });
                     })
                 .create();
  if (!jit)
    return fail("cannot create a JIT", jit.takeError());
  JITDylib &main = (*jit)->getMainJITDylib();
  char prefix = layout->getGlobalPrefix();
  // Definitions win over generators: mp's runtime symbols first, then
  // MLIR's C runner utilities and the process.
  if (Error e = main.define(absoluteSymbols(jitRuntimeSymbols(
          MangleAndInterner((*jit)->getExecutionSession(), *layout)))))
    return fail("cannot define the runtime symbols", std::move(e));
  auto utils =
      DynamicLibrarySearchGenerator::Load(MP_MLIR_C_RUNNER_UTILS, prefix);
  if (!utils)
    return fail("cannot load " MP_MLIR_C_RUNNER_UTILS, utils.takeError());
  main.addGenerator(std::move(*utils));
  auto process = DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return fail("cannot search the process's symbols", process.takeError());
  main.addGenerator(std::move(*process));
  if (Error e = (*jit)->addObjectFile(
          MemoryBuffer::getMemBufferCopy(object, "mp-jit-object")))
    return fail("cannot add the object", std::move(e));
  auto loaded = std::unique_ptr<JitObject>(new JitObject());
  loaded->jit = std::move(*jit);
  return loaded;
}

JitObject::PackedFunction JitObject::lookupPacked(StringRef name,
                                                  std::string &error) {
  auto address = jit->lookup(("_mlir_" + name).str());
  if (!address) {
    error = "cannot link the compiled code: " + toString(address.takeError());
    return nullptr;
  }
  return address->toPtr<PackedFunction>();
}

} // namespace mp
