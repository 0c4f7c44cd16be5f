//===- HostTensor.cpp - tensors in host memory, .npy files, comparison ----===//

#include "mp/Support/HostTensor.h"
#include "mp/Support/Float16.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace mp {

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t HostTensor::elementBytes(Type type) {
  return type.isInteger(1) ? 1 : (type.getIntOrFloatBitWidth() + 7) / 8;
}

double HostTensor::at(int64_t i) const {
  const char *p = data.data() + i * elementBytes(elementType);
  auto load = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  if (elementType.isF32())
    return load(float());
  if (elementType.isF64())
    return load(double());
  if (elementType.isF16())
    return halfToFloat(load(uint16_t()));
  if (elementType.isBF16()) {
    uint32_t bits = uint32_t(load(uint16_t())) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  auto it = cast<IntegerType>(elementType);
  bool u = it.isUnsigned() || it.getWidth() == 1;
  switch (it.getWidth()) {
  case 1:
  case 8:
    return u ? (double)load(uint8_t()) : (double)load(int8_t());
  case 16:
    return u ? (double)load(uint16_t()) : (double)load(int16_t());
  case 32:
    return u ? (double)load(uint32_t()) : (double)load(int32_t());
  default:
    return u ? (double)load(uint64_t()) : (double)load(int64_t());
  }
}

std::string HostTensor::describe() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << elementType << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (d < 0) // ShapedType::kDynamic in a compiled model's signature.
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

std::string npyDescr(Type t) {
  if (t.isF32())
    return "<f4";
  if (t.isF16())
    return "<f2";
  if (t.isF64())
    return "<f8";
  if (t.isInteger(1))
    return "|b1";
  auto it = dyn_cast<IntegerType>(t);
  if (!it)
    return "";
  std::string kind = it.isUnsigned() ? "u" : "i";
  int bytes = it.getWidth() / 8;
  return (bytes == 1 ? "|" : "<") + kind + std::to_string(bytes);
}

Type npyType(StringRef descr, MLIRContext *ctx) {
  Builder b(ctx);
  if (descr == "<f4")
    return b.getF32Type();
  if (descr == "<f2")
    return b.getF16Type();
  if (descr == "<f8")
    return b.getF64Type();
  if (descr == "|b1")
    return b.getI1Type();
  if (descr.size() == 3 && (descr[1] == 'i' || descr[1] == 'u')) {
    unsigned bytes = descr[2] - '0';
    if (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)
      // Signed integers are signless in mp (as the ONNX importer makes them).
      return descr[1] == 'i' ? b.getIntegerType(bytes * 8)
                             : b.getIntegerType(bytes * 8, /*isSigned=*/false);
  }
  return {};
}

bool readNpy(StringRef path, MLIRContext *ctx, HostTensor &out,
             std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = ("cannot read '" + path + "': " + buffer.getError().message()).str();
    return false;
  }
  StringRef bytes = (*buffer)->getBuffer();
  if (!bytes.starts_with("\x93NUMPY") || bytes.size() < 10) {
    error = ("'" + path + "' is not a .npy file").str();
    return false;
  }
  unsigned major = (unsigned char)bytes[6];
  size_t headerLen, start;
  if (major == 1) {
    headerLen = (unsigned char)bytes[8] | ((unsigned char)bytes[9] << 8);
    start = 10;
  } else {
    if (bytes.size() < 12) {
      error = ("'" + path + "' is truncated").str();
      return false;
    }
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= (size_t)(unsigned char)bytes[8 + i] << (8 * i);
    start = 12;
  }
  if (start + headerLen > bytes.size()) {
    error = ("'" + path + "' is truncated").str();
    return false;
  }
  StringRef header = bytes.substr(start, headerLen);
  auto field = [&](StringRef key) -> StringRef {
    size_t pos = header.find(("'" + key + "'").str());
    if (pos == StringRef::npos)
      return {};
    StringRef rest = header.substr(pos + key.size() + 2).ltrim(": ");
    return rest;
  };
  StringRef descr = field("descr");
  descr = descr.drop_front(1).take_until([](char c) { return c == '\''; });
  if (field("fortran_order").starts_with("True")) {
    error = ("'" + path + "': Fortran-order arrays are not supported").str();
    return false;
  }
  out.elementType = npyType(descr, ctx);
  if (!out.elementType) {
    error = ("'" + path + "': unsupported dtype '" + descr + "'").str();
    return false;
  }
  StringRef shape = field("shape").drop_front(1).take_until(
      [](char c) { return c == ')'; });
  out.shape.clear();
  SmallVector<StringRef> dims;
  shape.split(dims, ',', -1, /*KeepEmpty=*/false);
  for (StringRef d : dims) {
    int64_t v;
    if (d.trim().getAsInteger(10, v)) {
      error = ("'" + path + "': bad shape").str();
      return false;
    }
    out.shape.push_back(v);
  }
  size_t need = out.numElements() * HostTensor::elementBytes(out.elementType);
  StringRef payload = bytes.drop_front(start + headerLen);
  if (payload.size() != need) {
    error = ("'" + path + "' holds " + std::to_string(payload.size()) +
             " bytes of data, its header needs " + std::to_string(need))
                .str();
    return false;
  }
  out.data.assign(payload.begin(), payload.end());
  return true;
}

HostTensor widenToF32(const HostTensor &in) {
  HostTensor widened = in;
  widened.elementType = Float32Type::get(in.elementType.getContext());
  widened.data.resize(in.numElements() * 4);
  for (int64_t i = 0, n = in.numElements(); i < n; ++i) {
    float f = (float)in.at(i);
    std::memcpy(widened.data.data() + 4 * i, &f, 4);
  }
  return widened;
}

bool writeNpy(StringRef path, const HostTensor &in, std::string &error) {
  // NumPy has no bfloat16: write those values as float32.
  HostTensor widened;
  if (in.elementType.isBF16())
    widened = widenToF32(in);
  const HostTensor &t = in.elementType.isBF16() ? widened : in;
  std::string shape;
  for (int64_t d : t.shape)
    shape += std::to_string(d) + ", ";
  if (t.shape.size() > 1)
    shape.erase(shape.size() - 2); // "(2, 3)"; one dim keeps "(2,)"
  else if (t.shape.size() == 1)
    shape.erase(shape.size() - 1);
  std::string header = "{'descr': '" + npyDescr(t.elementType) +
                       "', 'fortran_order': False, 'shape': (" + shape +
                       "), }";
  // Pad so that the data starts on a 64-byte boundary, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = ("cannot write '" + path + "': " + ec.message()).str();
    return false;
  }
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  os.write(t.data.data(), t.data.size());
  return true;
}

Comparison compare(const HostTensor &actual, const HostTensor &expected,
                   double rtol, double atol) {
  Comparison c;
  if (actual.shape != expected.shape) {
    c.shapeMatches = false;
    return c;
  }
  int64_t n = expected.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double a = actual.at(i), e = expected.at(i);
    if (std::isnan(a) && std::isnan(e))
      continue;
    if (!std::isfinite(a) && std::isfinite(e))
      c.nonFinite++;
    if (std::isinf(e)) { // an infinite reference must be met exactly
      if (a != e) {
        c.mismatches++;
        c.maxAbs = INFINITY;
      }
      continue;
    }
    double diff = std::fabs(a - e);
    if (std::isnan(diff))
      diff = INFINITY;
    c.maxAbs = std::max(c.maxAbs, diff);
    if (e != 0)
      c.maxRel = std::max(c.maxRel, diff / std::fabs(e));
    if (!(diff <= atol + rtol * std::fabs(e)))
      c.mismatches++;
  }
  // Argmax agreement over the last axis for float outputs of rank >= 2.
  if (isa<FloatType>(expected.elementType) && expected.shape.size() >= 2 &&
      expected.shape.back() > 1) {
    int64_t width = expected.shape.back(), rows = n / width, agree = 0;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t ia = 0, ie = 0;
      for (int64_t j = 1; j < width; ++j) {
        if (actual.at(r * width + j) > actual.at(r * width + ia))
          ia = j;
        if (expected.at(r * width + j) > expected.at(r * width + ie))
          ie = j;
      }
      agree += ia == ie;
    }
    c.argmaxAgreement = rows ? double(agree) / rows : 1;
  }
  return c;
}

} // namespace mp
