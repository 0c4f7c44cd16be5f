//===- OnnxTensors.h - ONNX TensorProto to MLIR attributes ------*- C++ -*-===//

#ifndef MP_LIB_IMPORT_ONNXTENSORS_H
#define MP_LIB_IMPORT_ONNXTENSORS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

#include "onnx/onnx_pb.h"

namespace mp::import {

/// Where and how tensors are read.
struct TensorSource {
  /// Directory that external data locations are relative to.
  std::string baseDir;
  /// Byte size from which tensors become resource blobs.
  int64_t resourceThresholdBytes = 1024;
  /// Whether raw bytes may be moved out of the proto. Off while a Loop or
  /// Scan body is unrolled: each iteration imports the same tensors again.
  bool takeRawData = true;
};

/// Converts `tensor` into an elements attribute. Raw bytes are moved out of
/// the proto into a resource blob when large (no copy) and allowed; external
/// data is mapped from its file. Errors (unsupported type, wrong byte count,
/// missing or short external file) are emitted at `loc` and give failure.
mlir::FailureOr<mlir::ElementsAttr> convertTensor(onnx::TensorProto &tensor,
                                                  const TensorSource &source,
                                                  mlir::Location loc);

/// Appends the typed-field values (float_data, int32_data, ...) of `t` as
/// packed little-endian bytes of `elt`.
void packTypedFields(const onnx::TensorProto &t, mlir::Type elt,
                     std::vector<char> &out);

/// The ONNX name of a TensorProto data type (for messages).
llvm::StringRef onnxTypeName(int32_t onnxType);

} // namespace mp::import

#endif // MP_LIB_IMPORT_ONNXTENSORS_H
