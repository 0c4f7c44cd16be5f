//===- CudaToolkit.cpp - the CUDA toolkit and architecture names ----------===//

#include "mp/Pipelines/CudaToolkit.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace llvm;

std::optional<unsigned> mp::parseGpuArch(StringRef name) {
  if (!name.consume_front("sm_") && !name.consume_front("compute_"))
    return std::nullopt;
  unsigned sm = 0;
  StringRef digits = name.take_while(llvm::isDigit);
  if (digits.empty() || digits.getAsInteger(10, sm))
    return std::nullopt;
  return sm;
}

bool mp::hasPtxImages(ArrayRef<std::string> chips) {
  return llvm::any_of(
      chips, [](StringRef chip) { return chip.starts_with("compute_"); });
}

std::string mp::findCudaToolkit() {
  auto hasPtxas = [](StringRef root) {
    SmallString<128> path(root);
    llvm::sys::path::append(path, "bin", "ptxas");
    return llvm::sys::fs::can_execute(path);
  };
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *root = std::getenv(var); root && hasPtxas(root))
      return root;
  if (auto ptxas = llvm::sys::findProgramByName("ptxas"))
    return llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
        .str();
  if (hasPtxas("/usr/local/cuda"))
    return "/usr/local/cuda";
  return "";
}
