//===- TensorFile.h - ONNX TensorProto files as host tensors ----*- C++ -*-===//

#ifndef MP_IMPORT_TENSORFILE_H
#define MP_IMPORT_TENSORFILE_H

#include "mp/Execution/HostTensor.h"

namespace mp {

/// Reads a serialized onnx.TensorProto (`input_0.pb` of the ONNX test
/// layout), raw or typed fields. Errors name the file.
bool readTensorProtoFile(llvm::StringRef path, mlir::MLIRContext *ctx,
                         HostTensor &out, std::string &error);

} // namespace mp

#endif // MP_IMPORT_TENSORFILE_H
