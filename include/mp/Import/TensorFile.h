//===- TensorFile.h - ONNX TensorProto files as host tensors ----*- C++ -*-===//

#ifndef MP_IMPORT_TENSORFILE_H
#define MP_IMPORT_TENSORFILE_H

#include "mp/Support/HostTensor.h"

#include <string>
#include <vector>

namespace mp {

/// Reads a serialized onnx.TensorProto (`input_0.pb` of the ONNX test
/// layout), raw or typed fields. Errors name the file.
bool readTensorProtoFile(llvm::StringRef path, mlir::MLIRContext *ctx,
                         HostTensor &out, std::string &error);

/// Reads a .npy file or a serialized onnx.TensorProto (any other name).
bool readTensorFile(llvm::StringRef path, mlir::MLIRContext *ctx,
                    HostTensor &out, std::string &error);

/// The files DIR/<prefix>_0.pb, _1.pb, ... that exist (the ONNX test layout).
std::vector<std::string> numberedFiles(llvm::StringRef dir,
                                       llvm::StringRef prefix);

} // namespace mp

#endif // MP_IMPORT_TENSORFILE_H
