//===- ToolOptions.h - the options mp's tools show in --help ----*- C++ -*-===//

#ifndef MP_SUPPORT_TOOLOPTIONS_H
#define MP_SUPPORT_TOOLOPTIONS_H

#include "llvm/Support/CommandLine.h"

namespace mp {

/// Hides from --help every command-line option registered so far that is
/// in none of the `keep` categories: the hundreds of backend flags (AMDGPU,
/// ARM, ...) that linking LLVM registers when the process starts. They
/// still work and --help-hidden lists them. Options registered later (the
/// MLIR pass manager's, the pass list) stay visible, so call this first in
/// main.
void hideLibraryOptions(llvm::ArrayRef<const llvm::cl::OptionCategory *> keep);

} // namespace mp

#endif // MP_SUPPORT_TOOLOPTIONS_H
