//===- ToolOptions.cpp - the options mp's tools show in --help ------------===//

#include "mp/Support/ToolOptions.h"

#include "llvm/ADT/STLExtras.h"

using namespace llvm;

void mp::hideLibraryOptions(ArrayRef<const cl::OptionCategory *> keep) {
  for (auto &entry : cl::getRegisteredOptions()) {
    StringRef name = entry.first;
    cl::Option *option = entry.second;
    // --help, --help-hidden, --version and friends stay.
    if (name.starts_with("help") || name == "version" ||
        name == "print-options" || name == "print-all-options")
      continue;
    bool kept = llvm::any_of(option->Categories, [&](cl::OptionCategory *c) {
      return llvm::is_contained(keep, c);
    });
    if (!kept && option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  }
}
