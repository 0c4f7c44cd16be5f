//===- LibrarySources.cpp - the C wrapper, header and JSON of a library ---===//

#include "mp/Compile/Library.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <set>

using namespace mlir;

namespace mp {

namespace {

/// ONNX TensorProto.DataType number (the runtime's mp_dtype) and a name.
std::pair<int, StringRef> dtypeOf(Type type) {
  if (type.isF32())
    return {1, "float32"};
  if (type.isF16())
    return {10, "float16"};
  if (type.isBF16())
    return {16, "bfloat16"};
  if (type.isF64())
    return {11, "float64"};
  if (type.isInteger(1))
    return {9, "bool"};
  if (auto i = dyn_cast<IntegerType>(type)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 8:
      return u ? std::make_pair(2, StringRef("uint8"))
               : std::make_pair(3, StringRef("int8"));
    case 16:
      return u ? std::make_pair(4, StringRef("uint16"))
               : std::make_pair(5, StringRef("int16"));
    case 32:
      return u ? std::make_pair(12, StringRef("uint32"))
               : std::make_pair(6, StringRef("int32"));
    case 64:
      return u ? std::make_pair(13, StringRef("uint64"))
               : std::make_pair(7, StringRef("int64"));
    }
  }
  return {0, "unknown"};
}

std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if ((unsigned char)c < 0x20) {
      out += llvm::formatv("\\{0:o3}", (unsigned)(unsigned char)c).str();
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// "2, 3" (-1 for a dim fixed at run time).
std::string dimsList(ArrayRef<int64_t> shape) {
  return llvm::join(llvm::map_range(shape,
                                    [](int64_t d) {
                                      return std::to_string(
                                          ShapedType::isDynamic(d) ? -1 : d);
                                    }),
                    ", ");
}

int64_t numElements(const HostTensor &t) {
  int64_t n = 1;
  for (int64_t d : t.shape)
    n *= d;
  return n;
}

bool isCuda(const LibraryOptions &options) {
  return options.target == LibraryOptions::Target::Cuda;
}

/// `static const mp_tensor_desc NAME[] = {...};` with its shape arrays.
void emitDescs(llvm::raw_ostream &os, StringRef array,
               ArrayRef<HostTensor> tensors) {
  for (auto [i, t] : llvm::enumerate(tensors))
    os << "static const int64_t " << array << "_shape_" << i << "[] = {"
       << (t.shape.empty() ? "0" : dimsList(t.shape)) << "};\n";
  os << "static const mp_tensor_desc " << array << "[] = {\n";
  for (auto [i, t] : llvm::enumerate(tensors))
    os << "  {" << cString(t.name) << ", " << dtypeOf(t.elementType).first
       << ", " << t.shape.size() << ", " << array << "_shape_" << i
       << "},\n";
  if (tensors.empty())
    os << "  {0, 0, 0, 0},\n";
  os << "};\n";
}

/// Failed run-time checks of the compiled code (cf.assert) call
/// `puts(message)` then `abort()`; LibraryWriter renames the two to the
/// functions below. While a CPU run is guarded (emitCheckGuard) a failed
/// check returns from the run with MP_ERROR_INVALID and its message (the
/// memory the run had allocated is not given back); elsewhere (the CUDA
/// target's host code) it still aborts.
const char *checkHandlers =
    "static __thread jmp_buf *mp_check_exit;\n"
    "static __thread char mp_check_text[1024];\n\n"
    "int mp_check_message(const char *message) {\n"
    "  snprintf(mp_check_text, sizeof mp_check_text, \"%s\", message);\n"
    "  return 0;\n}\n\n"
    "__attribute__((noreturn)) void mp_check_failed(void) {\n"
    "  if (mp_check_exit)\n    longjmp(*mp_check_exit, 1);\n"
    "  fprintf(stderr, \"%s\\n\", mp_check_text);\n  abort();\n}\n\n";

/// Opens a guarded call of the entry: a failed check comes back here and
/// returns its message as the run's error. `emitCheckGuardEnd` closes it.
void emitCheckGuard(llvm::raw_ostream &os) {
  os << "  jmp_buf check_jump;\n"
     << "  jmp_buf *check_outer = mp_check_exit;\n"
     << "  mp_check_text[0] = 0;\n"
     << "  mp_check_exit = &check_jump;\n"
     << "  if (setjmp(check_jump) != 0) {\n"
     << "    mp_check_exit = check_outer;\n"
     << "    return mp_set_error(MP_ERROR_INVALID, mp_check_text[0] ? "
        "mp_check_text : \"a run-time check of the model failed\");\n"
     << "  }\n";
}

void emitCheckGuardEnd(llvm::raw_ostream &os) {
  os << "  mp_check_exit = check_outer;\n";
}

/// `mp_memref_R NAME = {ptr, ptr, 0, {sizes}, {strides}};`
void emitDescriptor(llvm::raw_ostream &os, StringRef name, StringRef ptr,
                    const HostTensor &t) {
  SmallVector<int64_t> strides(t.shape.size(), 1);
  for (int64_t i = (int64_t)t.shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * t.shape[i + 1];
  os << "  mp_memref_" << t.shape.size() << " " << name << " = {" << ptr
     << ", " << ptr << ", 0";
  if (!t.shape.empty())
    os << ", {" << dimsList(t.shape) << "}, {" << dimsList(strides) << "}";
  os << "};\n";
}

/// CUDA wrappers: what runs keep with CUDA graphs on (mp_model_run's
/// device inputs and outputs; the captured graph and the buffers it was
/// captured on) and `mp_model_release`, which frees it; the inputs that
/// mp_model_run_device reads from host memory.
std::string cudaRunState(const EntrySignature &entry) {
  size_t numIn = std::max<size_t>(1, entry.inputs.size()),
         numOut = std::max<size_t>(1, entry.outputs.size());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "static void *keptIn[" << numIn << "], *keptOut[" << numOut
     << "];\n"
     << "static const void *graphIn[" << numIn << "];\n"
     << "static void *graphOut[" << numOut << "];\n"
     << "static mp_cuda_graph *graph;\n"
     << "static int ran, noGraph;\n\n"
     << "MP_EXPORT void mp_model_release(void) {\n"
     << "  mp_cuda_graph_destroy(graph);\n"
     << "  graph = 0;\n  ran = noGraph = 0;\n"
     << "  for (int i = 0; i < " << numIn << "; ++i) {\n"
     << "    if (keptIn[i])\n      mp_cuda_free(keptIn[i]);\n"
     << "    keptIn[i] = 0;\n  }\n"
     << "  for (int i = 0; i < " << numOut << "; ++i) {\n"
     << "    if (keptOut[i])\n      mp_cuda_free(keptOut[i]);\n"
     << "    keptOut[i] = 0;\n  }\n}\n\n";
  os << "static const int32_t hostInputs[] = {";
  if (entry.kvCache.lengthInput >= 0)
    os << entry.kvCache.lengthInput << ", ";
  os << "-1};\n\n"
     << "MP_EXPORT const int32_t *mp_model_host_inputs(void) {\n"
     << "  return hostInputs;\n}\n\n";
  return text;
}

bool isInPlace(const EntrySignature &entry, size_t output) {
  return output < entry.inPlaceOf.size() && entry.inPlaceOf[output] >= 0;
}

/// The check of the KV cache fill level before a run (mp-kv-cache-in-place).
void emitKvCacheCheck(llvm::raw_ostream &os, const EntrySignature &entry) {
  const EntrySignature::KvCache &kv = entry.kvCache;
  if (kv.lengthInput < 0)
    return;
  StringRef name = entry.inputs[kv.lengthInput].name;
  std::string format = ("input '" + name + "' is %lld, out of range [0, " +
                        Twine(kv.capacity - kv.newPositions + 1) + "): with " +
                        Twine(kv.newPositions) +
                        " new position(s) per step the KV cache needs %lld "
                        "positions, and it holds 0 to " +
                        Twine(kv.capacity) + " (mp-compile --max-seq-len)")
                           .str();
  os << "  {\n    int64_t length = *(const int64_t *)in[" << kv.lengthInput
     << "];\n    if (length < 0 || length > " << kv.capacity - kv.newPositions
     << ") {\n      char message[512];\n"
     << "      snprintf(message, sizeof message, " << cString(format)
     << ", (long long)length, (long long)(length + " << kv.newPositions
     << "));\n      return mp_set_error(MP_ERROR_INVALID, message);\n    }\n"
     << "  }\n";
}

} // namespace

/// The wrapper of an entry with dynamic dims: mp_model_run_shaped builds
/// descriptors from the caller's shapes, checks that dims the model names
/// alike agree, and copies the returned outputs into malloc'ed buffers
/// (freeing what the compiled code allocated). CUDA: the inputs are
/// uploaded into device buffers first, and the outputs downloaded.
void emitShapedRun(llvm::raw_ostream &os, const EntrySignature &entry,
                   bool cuda) {
  os << "void _mlir_memref_to_llvm_free(void *);\n\n"
     << "static void mp_strides(const int64_t *sizes, int64_t *strides, "
        "int rank) {\n"
     << "  int64_t s = 1;\n"
     << "  for (int d = rank - 1; d >= 0; --d) {\n"
     << "    strides[d] = s;\n    s *= sizes[d];\n  }\n}\n\n"
     << "static size_t mp_bytes(const int64_t *sizes, int rank, size_t "
        "element) {\n"
     << "  for (int d = 0; d < rank; ++d)\n"
     << "    element *= (size_t)sizes[d];\n  return element;\n}\n\n"
     << "MP_EXPORT int32_t mp_model_run(const void *const *in, "
        "void *const *out) {\n"
     << "  (void)in;\n  (void)out;\n"
     << "  return mp_set_error(MP_ERROR_INVALID, \"this library has dims "
        "fixed at run time: run it with mp_library_run_shaped\");\n}\n\n"
     << "MP_EXPORT int32_t mp_model_run_shaped(const mp_shaped_tensor *in, "
        "mp_shaped_tensor *out) {\n";
  // Dims named alike ("batch") must agree.
  llvm::StringMap<std::pair<size_t, size_t>> first;
  for (auto [i, declared] : llvm::enumerate(entry.declaredInputs)) {
    if (i >= entry.inputs.size())
      break;
    for (auto [d, name] : llvm::enumerate(declared.names)) {
      if (name.empty() || d >= entry.inputs[i].shape.size())
        continue;
      auto [it, inserted] = first.try_emplace(name, i, d);
      if (inserted)
        continue;
      auto [fi, fd] = it->second;
      std::string format = ("input '" + entry.inputs[i].name + "' has " +
                            name + " = %lld (dim " + Twine(d) +
                            "), input '" + entry.inputs[fi].name + "' has " +
                            name + " = %lld")
                               .str();
      os << "  if (in[" << i << "].shape[" << d << "] != in[" << fi
         << "].shape[" << fd << "]) {\n    char message[512];\n"
         << "    snprintf(message, sizeof message, " << cString(format)
         << ", (long long)in[" << i << "].shape[" << d << "], (long long)in["
         << fi << "].shape[" << fd << "]);\n"
         << "    return mp_set_error(MP_ERROR_INVALID, message);\n  }\n";
    }
  }
  os << "  int32_t status = " << (cuda ? "mp_cuda_init()" : "MP_OK")
     << ";\n  if (status != MP_OK)\n    return status;\n";
  os << "  struct {";
  for (auto [j, t] : llvm::enumerate(entry.outputs))
    os << " mp_memref_" << t.shape.size() << " r" << j << ";";
  os << " } results;\n";
  size_t numIn = std::max<size_t>(1, entry.inputs.size());
  os << "  void *data[" << numIn << "] = {0};\n";
  for (auto [i, t] : llvm::enumerate(entry.inputs)) {
    size_t rank = t.shape.size();
    if (cuda) {
      os << "  {\n    size_t bytes = mp_bytes(in[" << i << "].shape, " << rank
         << ", " << HostTensor::elementBytes(t.elementType) << ");\n"
         << "    data[" << i << "] = mp_cuda_alloc(bytes);\n"
         << "    mp_cuda_copy_to_device(data[" << i << "], in[" << i
         << "].data, bytes);\n  }\n";
    } else {
      os << "  data[" << i << "] = in[" << i << "].data;\n";
    }
    os << "  mp_memref_" << rank << " a" << i << " = {data[" << i
       << "], data[" << i << "], 0";
    if (rank) {
      os << ", {";
      for (size_t d = 0; d < rank; ++d)
        os << (d ? ", " : "") << "in[" << i << "].shape[" << d << "]";
      os << "}, {0}";
    }
    os << "};\n";
    if (rank)
      os << "  mp_strides(a" << i << ".sizes, a" << i << ".strides, " << rank
         << ");\n";
  }
  if (cuda)
    os << "  status = mp_cuda_take_status();\n";
  os << "  for (int j = 0; j < " << entry.outputs.size() << "; ++j)\n"
     << "    out[j].data = 0;\n"
     << "  if (status == MP_OK) {\n";
  if (!cuda)
    emitCheckGuard(os);
  os << "  " << entry.symbol << "(&results";
  for (size_t i = 0; i < entry.inputs.size(); ++i)
    os << ", &a" << i;
  os << ");\n";
  if (!cuda)
    emitCheckGuardEnd(os);
  // Outputs may share a buffer (one value returned twice): freed once.
  for (auto [j, t] : llvm::enumerate(entry.outputs)) {
    size_t rank = t.shape.size();
    int64_t eltBytes = HostTensor::elementBytes(t.elementType);
    std::string result = "results.r" + std::to_string(j);
    // A rank-0 descriptor has no sizes.
    os << "  {\n    size_t bytes = "
       << (rank ? "mp_bytes(" + result + ".sizes, " + std::to_string(rank) +
                      ", " + std::to_string(eltBytes) + ")"
                : std::to_string(eltBytes))
       << ";\n";
    for (size_t d = 0; d < rank; ++d)
      os << "    out[" << j << "].shape[" << d << "] = " << result
         << ".sizes[" << d << "];\n";
    os << "    out[" << j << "].data = malloc(bytes ? bytes : 1);\n"
       << "    const void *from = (char *)" << result << ".aligned + "
       << result << ".offset * " << eltBytes << ";\n"
       << "    if (!out[" << j << "].data)\n"
       << "      status = mp_set_error(MP_ERROR_OUT_OF_MEMORY, "
       << cString("no memory for output '" + t.name + "'") << ");\n"
       << "    else\n      "
       << (cuda ? "mp_cuda_copy_to_host" : "memcpy") << "(out[" << j
       << "].data, from, bytes);\n";
    os << "    if (1";
    for (size_t k = 0; k < j; ++k)
      os << " && " << result << ".allocated != results.r" << k
         << ".allocated";
    for (size_t i = 0; i < entry.inputs.size(); ++i)
      os << " && " << result << ".allocated != data[" << i << "]";
    os << ")\n      "
       << (cuda ? "mp_cuda_memref_free" : "_mlir_memref_to_llvm_free") << "("
       << result << ".allocated);\n  }\n";
  }
  os << "  }\n";
  if (cuda) {
    os << "  if (status == MP_OK)\n    status = mp_cuda_take_status();\n";
    for (size_t i = 0; i < entry.inputs.size(); ++i)
      os << "  mp_cuda_free(data[" << i << "]);\n";
  }
  os << "  if (status != MP_OK)\n    for (int j = 0; j < "
     << entry.outputs.size() << "; ++j) {\n      free(out[j].data);\n"
     << "      out[j].data = 0;\n    }\n  return status;\n}\n";
}

std::string wrapperSource(const EntrySignature &entry,
                          const LibraryOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* Generated by mp-compile from " << options.sourcePath
     << ": the library's exported entry points. */\n"
     << "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
     << "#include <setjmp.h>\n#include <string.h>\n"
     << "#include \"mp/runtime.h\"\n\n"
     << "#define MP_EXPORT __attribute__((visibility(\"default\")))\n\n"
     << checkHandlers;
  // One memref descriptor type per rank used.
  std::set<size_t> ranks;
  for (const HostTensor &t : entry.inputs)
    ranks.insert(t.shape.size());
  for (const HostTensor &t : entry.outputs)
    ranks.insert(t.shape.size());
  for (size_t rank : ranks) {
    os << "typedef struct { void *allocated, *aligned; int64_t offset;";
    if (rank)
      os << " int64_t sizes[" << rank << "], strides[" << rank << "];";
    os << " } mp_memref_" << rank << ";\n";
  }
  // The entry takes every input, then the outputs not updated in place
  // (with dynamic dims, it returns the outputs through its first argument).
  std::vector<int> inPlaceBy = entry.updatedBy();
  std::vector<std::string> argNames;
  os << "\nextern void " << entry.symbol << "(";
  if (entry.returnsOutputs)
    os << "void *" << (entry.inputs.empty() ? "" : ", ");
  for (auto [i, t] : llvm::enumerate(entry.inputs)) {
    os << (i ? ", " : "") << "mp_memref_" << t.shape.size() << " *";
    argNames.push_back("a" + std::to_string(i));
  }
  for (auto [i, t] : llvm::enumerate(entry.outputs)) {
    if (isInPlace(entry, i) || entry.returnsOutputs)
      continue;
    os << (argNames.empty() ? "" : ", ") << "mp_memref_" << t.shape.size()
       << " *";
    argNames.push_back("r" + std::to_string(i));
  }
  os << ");\n\n";
  emitDescs(os, "inputs", entry.inputs);
  emitDescs(os, "outputs", entry.outputs);
  os << "static const char *const gpu_archs[] = {";
  if (isCuda(options))
    for (const std::string &chip : options.cuda.chips)
      os << cString(chip) << ", ";
  os << "0};\n\n";
  os << "static const mp_model_desc description = {\n"
     << "  MP_ABI_VERSION, " << (isCuda(options) ? "\"cuda\"" : "\"cpu\"")
     << ", " << cString(options.precision) << ", "
     << cString(options.sourcePath) << ",\n  " << entry.inputs.size()
     << ", inputs, " << entry.outputs.size() << ", outputs, "
     << (isCuda(options) ? options.cuda.chips.size() : 0)
     << ", gpu_archs};\n\n"
     << "MP_EXPORT const mp_model_desc *mp_model_describe(void) {\n"
     << "  return &description;\n}\n\n";
  if (entry.returnsOutputs) {
    emitShapedRun(os, entry, isCuda(options));
    return text;
  }
  // CPU: mp_model_run is the whole run. CUDA: the check of the fill level
  // is shared by the two entry points below.
  os << (isCuda(options)
             ? cudaRunState(entry) +
                   "static int32_t mp_kv_check(const void *const *in) {\n"
                   "  (void)in;\n"
             : std::string("MP_EXPORT int32_t mp_model_run(const void "
                           "*const *in, void *const *out) {\n"));
  auto bytes = [](const HostTensor &t) {
    return std::to_string(numElements(t) *
                          HostTensor::elementBytes(t.elementType));
  };
  // A cache updated in place is passed as its output's buffer.
  auto callEntry = [&](StringRef in, StringRef out) {
    os << "  {\n";
    for (auto [i, t] : llvm::enumerate(entry.inputs))
      emitDescriptor(os, "a" + std::to_string(i),
                     inPlaceBy[i] >= 0
                         ? (out + "[" + Twine(inPlaceBy[i]) + "]").str()
                         : ("(void *)" + in + "[" + Twine(i) + "]").str(),
                     t);
    for (auto [i, t] : llvm::enumerate(entry.outputs))
      if (!isInPlace(entry, i))
        emitDescriptor(os, "r" + std::to_string(i),
                       (out + "[" + Twine(i) + "]").str(), t);
    os << "  " << entry.symbol << "(";
    for (auto [i, name] : llvm::enumerate(argNames))
      os << (i ? ", " : "") << "&" << name;
    os << ");\n  }\n";
  };
  emitKvCacheCheck(os, entry);
  if (!isCuda(options)) {
    // No copy when the caller passes the cache's input and output as one
    // buffer.
    for (auto [i, j] : llvm::enumerate(inPlaceBy))
      if (j >= 0)
        os << "  if (out[" << j << "] != in[" << i << "])\n    memcpy(out["
           << j << "], in[" << i << "], " << bytes(entry.inputs[i]) << ");\n";
    emitCheckGuard(os);
    callEntry("in", "out");
    emitCheckGuardEnd(os);
    os << "  return MP_OK;\n}\n";
    return text;
  }
  // CUDA: mp_run_queued queues one run on device buffers; with graphs on
  // (unless MP_CUDA_GRAPHS=0), from the second run on (the first uploads the
  // weights) it captures the launches once and replays the graph on runs
  // over the same buffers; a failed capture falls back to plain runs.
  // mp_model_run_device is that on the caller's buffers; mp_model_run wraps
  // it in copies from and to host buffers (kept across runs with graphs).
  // Every runtime failure on the way is sticky and reported once.
  size_t numIn = std::max<size_t>(1, entry.inputs.size()),
         numOut = std::max<size_t>(1, entry.outputs.size());
  auto isHostInput = [&](size_t i) {
    return (int)i == entry.kvCache.lengthInput;
  };
  os << "  return MP_OK;\n}\n\n"; // ends mp_kv_check
  os << "static void mp_call(const void *const *in, void *const *out) {\n";
  callEntry("in", "out");
  os << "}\n\n"
     << "static int mp_graph_buffers(const void *const *in, "
        "void *const *out) {\n"
     << "  (void)in;\n  (void)out;\n  return 1";
  for (size_t i = 0; i < entry.inputs.size(); ++i)
    if (inPlaceBy[i] < 0 && !isHostInput(i))
      os << " && in[" << i << "] == graphIn[" << i << "]";
  for (size_t j = 0; j < entry.outputs.size(); ++j)
    os << " && out[" << j << "] == graphOut[" << j << "]";
  os << ";\n}\n\n"
     << "static int32_t mp_run_queued(const void *const *in, "
        "void *const *out) {\n"
     << "  int32_t status = mp_cuda_take_status();\n"
     << "  if (status != MP_OK)\n    return status;\n"
     // A graph would replay the device values the host read back during
     // the capture.
     << (entry.readsDeviceOnHost ? "  noGraph = 1;\n" : "");
  if (entry.kvCache.lengthInput >= 0)
    // The fill level is in the launches' arguments (cache rows written,
    // positions attended, the attention's split): every run is captured
    // again and the graph updated, still one cuGraphLaunch on the device.
    os << "  if (mp_cuda_graphs_enabled() && graph && !noGraph &&\n"
       << "      mp_graph_buffers(in, out)) {\n"
       << "    if (mp_cuda_capture_begin() != MP_OK ||\n"
       << "        (mp_call(in, out), !mp_cuda_capture_update(graph))) {\n"
       << "      mp_cuda_graph_destroy(graph);\n"
       << "      graph = 0;\n      noGraph = 1;\n"
       << "      (void)mp_cuda_take_status();\n    }\n  }\n";
  os << "  if (mp_cuda_graphs_enabled() && !graph && ran && !noGraph) {\n"
     << "    if (mp_cuda_capture_begin() == MP_OK) {\n"
     << "      mp_call(in, out);\n"
     << "      graph = mp_cuda_capture_end();\n    }\n"
     << "    if (!graph) {\n      noGraph = 1;\n"
     << "      (void)mp_cuda_take_status();\n    } else {\n"
     << (entry.inputs.empty()
             ? std::string()
             : "      memcpy(graphIn, in, sizeof(void *) * " +
                   std::to_string(entry.inputs.size()) + ");\n")
     << (entry.outputs.empty()
             ? std::string()
             : "      memcpy(graphOut, out, sizeof(void *) * " +
                   std::to_string(entry.outputs.size()) + ");\n")
     << "    }\n  }\n"
     << "  if (graph && mp_graph_buffers(in, out))\n"
     << "    mp_cuda_graph_launch(graph);\n"
     << "  else\n    mp_call(in, out);\n"
     << "  ran = 1;\n  return mp_cuda_take_status();\n}\n\n";

  os << "MP_EXPORT int32_t mp_model_run_device(const void *const *in, "
        "void *const *out) {\n"
     << "  int32_t status = mp_kv_check(in);\n"
     << "  if (status != MP_OK)\n    return status;\n"
     << "  status = mp_cuda_init();\n"
     << "  if (status != MP_OK)\n    return status;\n";
  for (auto [i, j] : llvm::enumerate(inPlaceBy))
    if (j >= 0)
      os << "  if (out[" << j << "] != in[" << i
         << "])\n    mp_cuda_copy_on_device(out[" << j << "], in[" << i
         << "], " << bytes(entry.inputs[i]) << ");\n";
  os << "  return mp_run_queued(in, out);\n}\n\n";

  os << "MP_EXPORT int32_t mp_model_run(const void *const *in, "
        "void *const *out) {\n"
     << "  int32_t status = mp_kv_check(in);\n"
     << "  if (status != MP_OK)\n    return status;\n"
     << "  status = mp_cuda_init();\n"
     << "  if (status != MP_OK)\n    return status;\n"
     << "  int graphs = mp_cuda_graphs_enabled();\n"
     << "  void *din[" << numIn << "] = {0}, *dout[" << numOut
     << "] = {0};\n";
  auto deviceBuffer = [&](StringRef array, StringRef kept, size_t i,
                          const HostTensor &t) {
    os << "  " << array << "[" << i << "] = !graphs ? mp_cuda_alloc("
       << bytes(t) << ") : " << kept << "[" << i << "] ? " << kept << "["
       << i << "] : (" << kept << "[" << i << "] = mp_cuda_alloc("
       << bytes(t) << "));\n";
  };
  for (auto [i, t] : llvm::enumerate(entry.inputs)) {
    if (inPlaceBy[i] >= 0)
      continue; // uploaded into its output's device buffer below
    if (isHostInput(i)) {
      os << "  din[" << i << "] = (void *)in[" << i << "]; /* read on the "
         << "host */\n";
      continue;
    }
    deviceBuffer("din", "keptIn", i, t);
    os << "  mp_cuda_copy_to_device(din[" << i << "], in[" << i << "], "
       << bytes(t) << ");\n";
  }
  for (auto [i, t] : llvm::enumerate(entry.outputs))
    deviceBuffer("dout", "keptOut", i, t);
  for (auto [i, j] : llvm::enumerate(inPlaceBy))
    if (j >= 0)
      os << "  mp_cuda_copy_to_device(dout[" << j << "], in[" << i << "], "
         << bytes(entry.inputs[i]) << ");\n";
  os << "  status = mp_cuda_take_status();\n"
     << "  if (status == MP_OK)\n"
     << "    status = mp_run_queued((const void *const *)din, dout);\n"
     << "  if (status == MP_OK) {\n";
  for (auto [i, t] : llvm::enumerate(entry.outputs))
    os << "    mp_cuda_copy_to_host(out[" << i << "], dout[" << i << "], "
       << bytes(t) << ");\n";
  os << "    status = mp_cuda_take_status();\n  }\n"
     << "  if (!graphs) {\n";
  for (size_t i = 0; i < entry.inputs.size(); ++i)
    if (inPlaceBy[i] < 0 && !isHostInput(i))
      os << "    mp_cuda_free(din[" << i << "]);\n";
  for (size_t i = 0; i < entry.outputs.size(); ++i)
    os << "    mp_cuda_free(dout[" << i << "]);\n";
  os << "  }\n  return status;\n}\n";
  return text;
}

std::string headerSource(const EntrySignature &entry,
                         const LibraryOptions &options,
                         StringRef guardName) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string guard = guardName.upper() + "_H";
  for (char &c : guard)
    if (!llvm::isAlnum(c))
      c = '_';
  os << "/* Generated by mp-compile from " << options.sourcePath << ".\n"
     << " * Target: " << (isCuda(options) ? "cuda" : "cpu");
  if (isCuda(options))
    os << " (" << llvm::join(options.cuda.chips, ", ") << ")";
  os << ", precision: " << options.precision << ".\n *\n";
  if (entry.returnsOutputs)
    os << " * Dims shown as ? are fixed at run time: mp_model_run_shaped(inputs,"
          " outputs)\n * takes host tensors with their shapes and sets each "
          "output's shape and a\n * buffer the caller frees with mp_free "
          "(mp_model_run refuses to run):\n";
  else
    os << " * mp_model_run(inputs, outputs) takes dense row-major host "
          "buffers:\n";
  auto dims = [](ArrayRef<int64_t> shape) {
    return llvm::join(llvm::map_range(shape,
                                      [](int64_t d) {
                                        return ShapedType::isDynamic(d)
                                                   ? std::string("?")
                                                   : std::to_string(d);
                                      }),
                      ", ");
  };
  for (auto [i, t] : llvm::enumerate(entry.inputs))
    os << " *   inputs[" << i << "]  " << t.name << "  "
       << dtypeOf(t.elementType).second << "[" << dims(t.shape) << "]\n";
  for (auto [i, t] : llvm::enumerate(entry.outputs)) {
    os << " *   outputs[" << i << "] " << t.name << "  "
       << dtypeOf(t.elementType).second << "[" << dims(t.shape) << "]";
    if (isInPlace(entry, i))
      os << "  (inputs[" << entry.inPlaceOf[i] << "] updated in place: "
         << "pass one buffer for both to avoid a copy)";
    os << "\n";
  }
  if (entry.kvCache.lengthInput >= 0)
    os << " * KV caches hold " << entry.kvCache.capacity
       << " positions; inputs[" << entry.kvCache.lengthInput
       << "] says how many are filled (at most "
       << entry.kvCache.capacity - entry.kvCache.newPositions << ").\n";
  if (isCuda(options) && !entry.returnsOutputs) {
    os << " * mp_model_run_device(inputs, outputs) takes device buffers "
          "instead and copies\n * nothing between host and device; it "
          "returns once the kernels are queued\n * (mp_library_run_device)";
    if (entry.kvCache.lengthInput >= 0)
      os << ". inputs[" << entry.kvCache.lengthInput
         << "] stays a host buffer there";
    os << ".\n";
  }
  os << " * It returns an mp_status; mp_last_error() says what failed.\n"
     << " * Link with -lmp_runtime, or open it with mp_library_open().\n"
     << " */\n#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"mp/runtime.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n"
     << "#endif\n\nconst mp_model_desc *mp_model_describe(void);\n"
     << "int32_t mp_model_run(const void *const *inputs, void *const "
        "*outputs);\n"
     << (entry.returnsOutputs
             ? "int32_t mp_model_run_shaped(const mp_shaped_tensor *inputs, "
               "mp_shaped_tensor *outputs);\n"
         : isCuda(options)
             ? "int32_t mp_model_run_device(const void *const *inputs, "
               "void *const *outputs);\n"
             : "")
     << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* "
     << guard << " */\n";
  return text;
}

std::string descriptionJson(const EntrySignature &entry,
                            const LibraryOptions &options,
                            const ArenaStats &arena) {
  auto tensors = [&](ArrayRef<HostTensor> list,
                     ArrayRef<EntrySignature::DeclaredShape> declared,
                     bool outputs) {
    llvm::json::Array out;
    for (auto [i, t] : llvm::enumerate(list)) {
      llvm::json::Array shape, modelShape, dimNames;
      bool dynamic = false;
      for (int64_t d : t.shape) {
        dynamic |= ShapedType::isDynamic(d);
        shape.push_back(ShapedType::isDynamic(d) ? llvm::json::Value(nullptr)
                                                 : llvm::json::Value(d));
      }
      // As the model declares it: null where a dim is dynamic there (the
      // library is specialized to `shape`), with the ONNX dim names.
      if (i < declared.size()) {
        for (int64_t d : declared[i].sizes)
          modelShape.push_back(ShapedType::isDynamic(d) ? llvm::json::Value(nullptr)
                                                        : llvm::json::Value(d));
        for (const std::string &name : declared[i].names)
          dimNames.push_back(name);
      }
      out.push_back(llvm::json::Object{
          {"name", t.name},
          {"dtype", dtypeOf(t.elementType).second},
          {"shape", std::move(shape)},
          {"model_shape", std::move(modelShape)},
          {"dim_names", std::move(dimNames)},
          {"bytes",
           dynamic ? llvm::json::Value(nullptr)
                   : llvm::json::Value(numElements(t) *
                                       HostTensor::elementBytes(t.elementType))},
      });
      if (outputs && isInPlace(entry, i))
        (*out.back().getAsObject())["in_place_of"] =
            entry.inputs[entry.inPlaceOf[i]].name;
    }
    return out;
  };
  llvm::json::Array archs;
  if (isCuda(options))
    for (const std::string &chip : options.cuda.chips)
      archs.push_back(chip);
  llvm::json::Object root{
      {"abi_version", 1},
      {"target", isCuda(options) ? "cuda" : "cpu"},
      {"gpu_archs", std::move(archs)},
      {"precision", options.precision},
      {"source", options.sourcePath},
      {"entry", entry.returnsOutputs ? "mp_model_run_shaped" : "mp_model_run"},
      {"inputs", tensors(entry.inputs, entry.declaredInputs, false)},
      {"outputs", tensors(entry.outputs, entry.declaredOutputs, true)},
      {"activation_arena",
       llvm::json::Object{{"bytes", arena.bytes},
                          {"buffers", arena.buffers},
                          {"buffer_bytes", arena.bufferBytes},
                          {"peak_bytes", arena.peakBytes}}},
  };
  if (entry.kvCache.lengthInput >= 0)
    root["kv_cache"] = llvm::json::Object{
        {"length_input", entry.inputs[entry.kvCache.lengthInput].name},
        {"capacity", entry.kvCache.capacity},
        {"new_positions", entry.kvCache.newPositions}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return text;
}

} // namespace mp
