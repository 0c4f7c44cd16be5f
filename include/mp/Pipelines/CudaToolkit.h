//===- CudaToolkit.h - the CUDA toolkit and architecture names -*- C++ -*-===//

#ifndef MP_PIPELINES_CUDATOOLKIT_H
#define MP_PIPELINES_CUDATOOLKIT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mp {

/// The CUDA toolkit root holding bin/ptxas and nvvm/libdevice: from
/// CUDA_ROOT, CUDA_HOME or CUDA_PATH, else ptxas on PATH, else
/// /usr/local/cuda; empty if none is found.
std::string findCudaToolkit();

/// The XY of a GPU architecture name: "sm_XY" (a cubin; a suffix as in
/// "sm_90a" is allowed) or "compute_XY" (PTX); nullopt for anything else.
std::optional<unsigned> parseGpuArch(llvm::StringRef name);

/// Whether `chips` asks for PTX images (a "compute_XY" among them).
bool hasPtxImages(llvm::ArrayRef<std::string> chips);

} // namespace mp

#endif // MP_PIPELINES_CUDATOOLKIT_H
