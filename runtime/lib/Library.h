//===- Library.h - an opened mp-compile library -----------------*- C++ -*-===//

#ifndef MP_RUNTIME_LIBRARY_H
#define MP_RUNTIME_LIBRARY_H

#include "mp/runtime.h"

#include <string>
#include <vector>

/// What mp_library_open found in a library.
struct mp_library {
  void *handle = nullptr;
  const mp_model_desc *desc = nullptr;
  mp_model_run_fn run = nullptr;
  /// Libraries with dynamic dims (mp-compile --dynamic-shapes) only.
  mp_model_run_shaped_fn runShaped = nullptr;
  /// CUDA libraries only: runs on device buffers.
  mp_model_run_device_fn runDevice = nullptr;
  /// The inputs runDevice reads from host memory.
  std::vector<int32_t> hostInputs;
  std::string path;
};

namespace mp {

/// Calls a library's run entry (mp_model_run or mp_model_run_device) after
/// the checks every run makes; `caller` names the API function in messages.
mp_status runEntry(const char *caller, mp_library *lib, mp_model_run_fn entry,
                   const char *symbol, const void *const *inputs,
                   void *const *outputs);

} // namespace mp

#endif // MP_RUNTIME_LIBRARY_H
