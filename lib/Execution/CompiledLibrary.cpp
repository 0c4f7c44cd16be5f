//===- CompiledLibrary.cpp - run a library written by mp-compile ----------===//

#include "mp/Execution/CompiledLibrary.h"
#include "mp/runtime.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"

#include <chrono>

using namespace mlir;

namespace mp {

/// The MLIR element type of an mp_dtype (null for an unknown one).
static Type elementType(MLIRContext *ctx, int32_t dtype) {
  Builder b(ctx);
  switch (dtype) {
  case MP_DTYPE_FLOAT32:
    return b.getF32Type();
  case MP_DTYPE_FLOAT16:
    return b.getF16Type();
  case MP_DTYPE_BFLOAT16:
    return b.getBF16Type();
  case MP_DTYPE_FLOAT64:
    return b.getF64Type();
  case MP_DTYPE_BOOL:
    return b.getI1Type();
  case MP_DTYPE_INT8:
    return b.getIntegerType(8);
  case MP_DTYPE_INT16:
    return b.getIntegerType(16);
  case MP_DTYPE_INT32:
    return b.getIntegerType(32);
  case MP_DTYPE_INT64:
    return b.getIntegerType(64);
  case MP_DTYPE_UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case MP_DTYPE_UINT16:
    return b.getIntegerType(16, false);
  case MP_DTYPE_UINT32:
    return b.getIntegerType(32, false);
  case MP_DTYPE_UINT64:
    return b.getIntegerType(64, false);
  }
  return {};
}

CompiledLibrary::~CompiledLibrary() { mp_library_close(library); }

std::unique_ptr<CompiledLibrary>
CompiledLibrary::open(MLIRContext *ctx, StringRef path, int &status,
                      std::string &error) {
  auto lib = std::unique_ptr<CompiledLibrary>(new CompiledLibrary());
  status = mp_library_open(path.str().c_str(), &lib->library);
  if (status != MP_OK) {
    error = mp_last_error();
    return nullptr;
  }
  const mp_model_desc *desc = mp_library_describe(lib->library);
  lib->targetName = desc->target;
  lib->precisionName = desc->precision;
  auto specs = [&](const mp_tensor_desc *list, int32_t n,
                   std::vector<HostTensor> &out) {
    for (int32_t i = 0; i < n; ++i) {
      HostTensor t;
      t.name = list[i].name;
      t.elementType = elementType(ctx, list[i].dtype);
      if (!t.elementType) {
        error = "'" + path.str() + "': tensor '" + t.name +
                "' has an unknown dtype " + std::to_string(list[i].dtype);
        return false;
      }
      t.shape.assign(list[i].shape, list[i].shape + list[i].rank);
      out.push_back(std::move(t));
    }
    return true;
  };
  if (!specs(desc->inputs, desc->num_inputs, lib->inputSpecs) ||
      !specs(desc->outputs, desc->num_outputs, lib->outputSpecs)) {
    status = MP_ERROR_INVALID;
    return nullptr;
  }
  return lib;
}

bool CompiledLibrary::matchInputs(ArrayRef<HostTensor> inputs,
                                  std::vector<const HostTensor *> &matched,
                                  std::string &error) const {
  for (const HostTensor &spec : inputSpecs) {
    const HostTensor *given = nullptr;
    for (const HostTensor &t : inputs)
      if (t.name == spec.name)
        given = &t;
    if (!given) {
      error = "missing input '" + spec.name + "' (" + spec.describe() + ")";
      return false;
    }
    bool fits = given->elementType == spec.elementType &&
                given->shape.size() == spec.shape.size();
    for (size_t d = 0; fits && d < spec.shape.size(); ++d)
      fits = spec.shape[d] < 0 || spec.shape[d] == given->shape[d];
    if (!fits) {
      error = "input '" + spec.name + "' is " + given->describe() +
              ", the library was compiled for " + spec.describe();
      return false;
    }
    matched.push_back(given);
  }
  for (const HostTensor &t : inputs)
    if (llvm::none_of(inputSpecs,
                      [&](const HostTensor &s) { return s.name == t.name; })) {
      error = "the library has no input named '" + t.name + "'";
      return false;
    }
  return true;
}

/// Zero-filled outputs of the described (static) shapes.
static void allocateOutputs(std::vector<HostTensor> &out) {
  for (HostTensor &t : out)
    t.data.assign(t.numElements() * HostTensor::elementBytes(t.elementType),
                  0);
}

bool CompiledLibrary::run(ArrayRef<HostTensor> inputs,
                          std::vector<HostTensor> &out, int &status,
                          std::string &error) {
  status = MP_ERROR_INVALID;
  std::vector<const HostTensor *> matched;
  if (!matchInputs(inputs, matched, error))
    return false;
  std::vector<const void *> in;
  for (const HostTensor *t : matched)
    in.push_back(t->data.data());
  out = outputSpecs;
  if (mp_library_has_dynamic_shapes(library))
    return runShaped(inputs, out, status, error);
  allocateOutputs(out);
  std::vector<void *> outPtrs;
  for (HostTensor &t : out)
    outPtrs.push_back(t.data.data());
  status = mp_library_run(library, in.data(), outPtrs.data());
  if (status != MP_OK) {
    error = mp_last_error();
    return false;
  }
  return true;
}

namespace {
/// Buffers of mp_library_device_alloc, freed with the object.
struct DeviceBuffers {
  ::mp_library *library;
  std::vector<void *> buffers;
  ~DeviceBuffers() {
    for (void *b : buffers)
      mp_library_device_free(library, b);
  }
  /// A buffer holding `t`'s data (uploaded when `upload`); null on failure.
  void *add(const HostTensor &t, bool upload, int &status) {
    void *buffer = nullptr;
    status = mp_library_device_alloc(library, t.data.size(), &buffer);
    if (status == MP_OK)
      buffers.push_back(buffer);
    if (status == MP_OK && upload)
      status =
          mp_library_upload(library, buffer, t.data.data(), t.data.size());
    return status == MP_OK ? buffer : nullptr;
  }
};
} // namespace

bool CompiledLibrary::runOnDevice(ArrayRef<HostTensor> inputs,
                                  std::vector<HostTensor> &out, unsigned runs,
                                  double &runsMs, int &status,
                                  std::string &error) {
  status = MP_ERROR_INVALID;
  if (mp_library_has_dynamic_shapes(library)) {
    error = "runs on device buffers need a library of static shapes";
    return false;
  }
  std::vector<const HostTensor *> matched;
  if (!matchInputs(inputs, matched, error))
    return false;
  out = outputSpecs;
  allocateOutputs(out);
  DeviceBuffers buffers{library, {}};
  std::vector<const void *> in;
  std::vector<void *> outPtrs;
  auto failed = [&] {
    error = mp_last_error();
    return false;
  };
  for (auto [i, t] : llvm::enumerate(matched)) {
    if (mp_library_input_on_host(library, i)) {
      in.push_back(t->data.data());
      continue;
    }
    in.push_back(buffers.add(*t, /*upload=*/true, status));
    if (status != MP_OK)
      return failed();
  }
  for (const HostTensor &t : out) {
    outPtrs.push_back(buffers.add(t, /*upload=*/false, status));
    if (status != MP_OK)
      return failed();
  }
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  for (unsigned r = 0; r < std::max(runs, 1u); ++r)
    if ((status = mp_library_run_device(library, in.data(), outPtrs.data())))
      return failed();
  if ((status = mp_library_synchronize(library)))
    return failed();
  runsMs =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  for (auto [t, buffer] : llvm::zip(out, outPtrs))
    if ((status = mp_library_download(library, t.data.data(), buffer,
                                      t.data.size())))
      return failed();
  return true;
}

bool CompiledLibrary::runShaped(ArrayRef<HostTensor> inputs,
                                std::vector<HostTensor> &out, int &status,
                                std::string &error) {
  std::vector<mp_shaped_tensor> in(inputSpecs.size()), res(out.size());
  for (auto [i, spec] : llvm::enumerate(inputSpecs)) {
    const std::string &name = spec.name;
    const HostTensor &given = *llvm::find_if(
        inputs, [&](const HostTensor &t) { return t.name == name; });
    if (given.shape.size() > MP_MAX_RANK) {
      error = "input '" + spec.name + "' has more than MP_MAX_RANK dims";
      return false;
    }
    in[i].data = const_cast<char *>(given.data.data());
    llvm::copy(given.shape, in[i].shape);
  }
  status = mp_library_run_shaped(library, in.data(), res.data());
  if (status != MP_OK) {
    error = mp_last_error();
    return false;
  }
  for (auto [t, r] : llvm::zip(out, res)) {
    t.shape.assign(r.shape, r.shape + t.shape.size());
    const char *data = static_cast<const char *>(r.data);
    t.data.assign(data, data + t.numElements() *
                                   HostTensor::elementBytes(t.elementType));
    mp_free(r.data);
  }
  return true;
}

} // namespace mp
