//===- OnnxTensors.cpp - ONNX TensorProto to MLIR attributes --------------===//

#include "OnnxTensors.h"
#include "NodeImporter.h"
#include "mp/Import/TensorFile.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;

namespace mp::import {

StringRef onnxTypeName(int32_t onnxType) {
  if (onnx::TensorProto_DataType_IsValid(onnxType))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(onnxType));
  // Types newer than the ONNX 1.12 protobuf this is built with.
  static const char *const newer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",        "INT4",           "FLOAT4E2M1", "FLOAT8E8M0",
      "UINT2",        "INT2"};
  if (onnxType >= 17 && onnxType < 17 + (int32_t)std::size(newer))
    return newer[onnxType - 17];
  return "UNKNOWN";
}

Type convertElementType(MLIRContext *ctx, int32_t onnxType) {
  Builder b(ctx);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, false);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

/// Bytes per element in ONNX raw_data for the supported types.
static int64_t rawElementSize(Type elt) {
  if (elt.isInteger(1))
    return 1;
  return (elt.getIntOrFloatBitWidth() + 7) / 8;
}

namespace {
/// The packed little-endian bytes of a tensor, with ownership that can be
/// handed to a resource blob.
struct TensorBytes {
  ArrayRef<char> data;
  /// Owners; at most one is set.
  std::unique_ptr<std::string> ownedString;
  std::unique_ptr<llvm::MemoryBuffer> ownedBuffer;
  std::vector<char> ownedVector;
};
} // namespace

/// Appends the typed-field values of `t` as packed bytes of `elt`.
void packTypedFields(const onnx::TensorProto &t, Type elt,
                            std::vector<char> &out) {
  auto append = [&](const void *p, size_t n) {
    const char *c = static_cast<const char *>(p);
    out.insert(out.end(), c, c + n);
  };
  int64_t size = rawElementSize(elt);
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float v : t.float_data())
      append(&v, 4);
    break;
  case onnx::TensorProto::DOUBLE:
    for (double v : t.double_data())
      append(&v, 8);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t v : t.int64_data())
      append(&v, 8);
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    for (uint64_t v : t.uint64_data())
      append(&v, size);
    break;
  default:
    // int32_data holds INT32, INT16, INT8, UINT16, UINT8, BOOL and the bit
    // patterns of FLOAT16/BFLOAT16, one per entry.
    for (int32_t v : t.int32_data())
      append(&v, size);
    break;
  }
}

static LogicalResult readExternal(onnx::TensorProto &t,
                                  const TensorSource &source, Location loc,
                                  int64_t expected, TensorBytes &bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset" || kv.key() == "length") {
      char *end = nullptr;
      long long v = std::strtoll(kv.value().c_str(), &end, 10);
      if (kv.value().empty() || *end || v < 0)
        return emitError(loc) << "tensor '" << t.name() << "': bad external "
                              << kv.key() << " '" << kv.value() << "'";
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    return emitError(loc) << "tensor '" << t.name()
                          << "' has external data without a location";
  if (llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return emitError(loc) << "tensor '" << t.name() << "': external data "
                          << "location '" << location
                          << "' must be a relative path inside the model's "
                             "directory";
  SmallString<256> path(source.baseDir);
  llvm::sys::path::append(path, location);
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize))
    return emitError(loc) << "tensor '" << t.name()
                          << "': cannot open external data file '" << path
                          << "': " << ec.message();
  if (length < 0)
    length = (int64_t)fileSize - offset;
  if (length != expected)
    return emitError(loc) << "tensor '" << t.name() << "': external data has "
                          << length << " bytes, the tensor needs " << expected;
  if ((uint64_t)(offset + length) > fileSize)
    return emitError(loc) << "tensor '" << t.name() << "': external data file '"
                          << path << "' is too short (" << fileSize
                          << " bytes, need " << offset + length << ")";
  auto buffer = llvm::MemoryBuffer::getFileSlice(path, length, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer)
    return emitError(loc) << "tensor '" << t.name() << "': cannot read '"
                          << path << "': " << buffer.getError().message();
  bytes.ownedBuffer = std::move(*buffer);
  bytes.data = ArrayRef<char>(bytes.ownedBuffer->getBufferStart(),
                              bytes.ownedBuffer->getBufferSize());
  return success();
}

FailureOr<ElementsAttr> convertTensor(onnx::TensorProto &t,
                                      const TensorSource &source,
                                      Location loc) {
  MLIRContext *ctx = loc.getContext();
  Type elt = convertElementType(ctx, t.data_type());
  if (!elt)
    return emitError(loc) << "tensor '" << t.name() << "' has unsupported "
                          << "element type " << onnxTypeName(t.data_type());
  if (t.has_segment())
    return emitError(loc) << "tensor '" << t.name()
                          << "' is segmented, which is not supported";
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return emitError(loc) << "tensor '" << t.name() << "' has negative dim "
                            << d;
    dims.push_back(d);
    // Sizes beyond 2^48 elements are not real tensors; they overflow.
    if (__builtin_mul_overflow(count, d, &count) || count > (int64_t(1) << 48))
      return emitError(loc) << "tensor '" << t.name()
                            << "' has an impossible number of elements";
  }
  auto type = RankedTensorType::get(dims, elt);
  int64_t expected = count * rawElementSize(elt);

  TensorBytes bytes;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    if (failed(readExternal(t, source, loc, expected, bytes)))
      return failure();
  } else if (t.has_raw_data() && !source.takeRawData) {
    bytes.data = ArrayRef<char>(t.raw_data().data(), t.raw_data().size());
  } else if (t.has_raw_data()) {
    bytes.ownedString.reset(t.release_raw_data());
    bytes.data = ArrayRef<char>(bytes.ownedString->data(),
                                bytes.ownedString->size());
  } else {
    packTypedFields(t, elt, bytes.ownedVector);
    bytes.data = bytes.ownedVector;
  }
  if ((int64_t)bytes.data.size() != expected)
    return emitError(loc) << "tensor '" << t.name() << "' of type " << type
                          << " needs " << expected << " bytes of data, has "
                          << bytes.data.size();

  if (elt.isInteger(1)) {
    SmallVector<bool> values(bytes.data.begin(), bytes.data.end());
    return cast<ElementsAttr>(DenseElementsAttr::get(type, values));
  }
  bool small = expected < source.resourceThresholdBytes ||
               (isa<IntegerType>(elt) && count <= 4096);
  if (small) {
    bool splat = false;
    if (count == 0)
      return cast<ElementsAttr>(
          DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>()));
    if (!DenseElementsAttr::isValidRawBuffer(type, bytes.data, splat))
      return emitError(loc) << "tensor '" << t.name() << "': invalid data";
    return cast<ElementsAttr>(
        DenseElementsAttr::getFromRawBuffer(type, bytes.data));
  }

  // Large: hand the bytes to a resource blob without copying when aligned.
  size_t align = rawElementSize(elt);
  AsmResourceBlob blob;
  if (reinterpret_cast<uintptr_t>(bytes.data.data()) % align != 0 ||
      (!bytes.ownedString && !bytes.ownedBuffer)) {
    blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes.data, align);
  } else if (bytes.ownedString) {
    std::string *owner = bytes.ownedString.release();
    blob = AsmResourceBlob(bytes.data, align,
                           [owner](void *, size_t, size_t) { delete owner; },
                           /*dataIsMutable=*/false);
  } else {
    llvm::MemoryBuffer *owner = bytes.ownedBuffer.release();
    blob = AsmResourceBlob(bytes.data, align,
                           [owner](void *, size_t, size_t) { delete owner; },
                           /*dataIsMutable=*/false);
  }
  std::string name = t.name().empty() ? std::string("tensor") : t.name();
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, name, std::move(blob)));
}

} // namespace mp::import

namespace mp {

bool readTensorProtoFile(StringRef path, MLIRContext *ctx, HostTensor &out,
                         std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = ("cannot read '" + path + "': " + buffer.getError().message()).str();
    return false;
  }
  onnx::TensorProto t;
  if (!t.ParseFromArray((*buffer)->getBufferStart(),
                        (int)(*buffer)->getBufferSize())) {
    error = ("'" + path + "' is not a serialized onnx.TensorProto").str();
    return false;
  }
  out.name = t.name();
  out.elementType = import::convertElementType(ctx, t.data_type());
  if (!out.elementType) {
    error = ("'" + path + "' has unsupported element type " +
             import::onnxTypeName(t.data_type()))
                .str();
    return false;
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    error = ("'" + path + "' keeps its data externally; not supported for "
                          "test tensors")
                .str();
    return false;
  }
  out.shape.assign(t.dims().begin(), t.dims().end());
  if (t.has_raw_data())
    out.data.assign(t.raw_data().begin(), t.raw_data().end());
  else
    import::packTypedFields(t, out.elementType, out.data);
  int64_t need = out.numElements() * HostTensor::elementBytes(out.elementType);
  if ((int64_t)out.data.size() != need) {
    error = ("'" + path + "' has " + std::to_string(out.data.size()) +
             " bytes of data for " + out.describe())
                .str();
    return false;
  }
  return true;
}

bool readTensorFile(StringRef path, MLIRContext *ctx, HostTensor &out,
                    std::string &error) {
  return path.ends_with(".npy") ? readNpy(path, ctx, out, error)
                                : readTensorProtoFile(path, ctx, out, error);
}

std::vector<std::string> numberedFiles(StringRef dir, StringRef prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    SmallString<256> p(dir);
    llvm::sys::path::append(p, prefix + "_" + std::to_string(i) + ".pb");
    if (!llvm::sys::fs::exists(p))
      break;
    files.push_back(p.str().str());
  }
  return files;
}

} // namespace mp
