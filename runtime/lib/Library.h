//===- Library.h - an opened mp-compile library -----------------*- C++ -*-===//

#ifndef MP_RUNTIME_LIBRARY_H
#define MP_RUNTIME_LIBRARY_H

#include "mp/runtime.h"

#include <memory>
#include <mutex>
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
  /// Shared by every handle of the same loaded image (dlopen returns one
  /// handle per file): the generated code may keep state in the image
  /// between and during runs (a CUDA wrapper's kept buffers and graph), so
  /// runs of one image take turns. Other libraries have their own.
  std::shared_ptr<std::mutex> imageMutex;
};

namespace mp {

/// Whether `lib` was built for the CUDA target (its description says so).
bool isCudaLibrary(const mp_library &lib);

/// Held while a call works on what `lib` shares with calls on other
/// threads: its loaded image (runs, the release at close) and, for a CUDA
/// library while CUDA graphs are on, the runtime's one stream, which a
/// capture records whole (every CUDA call then takes turns, across
/// libraries). `image` false: only the latter (buffer copies and frees).
class LibraryLock {
public:
  explicit LibraryLock(const mp_library &lib, bool image = true);

private:
  std::unique_lock<std::mutex> stream, imageLock;
};

/// Calls a library's run entry (mp_model_run or mp_model_run_device) after
/// the checks every run makes; `caller` names the API function in messages.
mp_status runEntry(const char *caller, mp_library *lib, mp_model_run_fn entry,
                   const char *symbol, const void *const *inputs,
                   void *const *outputs);

} // namespace mp

#endif // MP_RUNTIME_LIBRARY_H
