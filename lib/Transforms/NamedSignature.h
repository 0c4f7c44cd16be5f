//===- NamedSignature.h - named graph inputs and outputs -----*- C++ -*-===//
//
// Passes that change a graph's signature (training steps, in-place KV
// caches) name every argument and result they add (`mp.name`): callers
// feed inputs and read outputs by name.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_TRANSFORMS_NAMEDSIGNATURE_H
#define MP_LIB_TRANSFORMS_NAMEDSIGNATURE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <utility>

namespace mp {

/// A result of the step and its name.
using NamedValue = std::pair<std::string, mlir::Value>;

/// The entry function of `module` (the first public one with a body), or
/// null after emitting an error that names `pass`.
mlir::func::FuncOp entryFunction(mlir::ModuleOp module, llvm::StringRef pass);

/// Appends an argument named `name` of type `type`.
mlir::BlockArgument addNamedArgument(mlir::func::FuncOp func, mlir::Type type,
                                     llvm::StringRef name);

/// The function's results with their names, in order.
llvm::SmallVector<NamedValue> namedResults(mlir::func::FuncOp func);

/// Makes `results` the function's results (types, names, return op).
void setNamedResults(mlir::func::FuncOp func,
                     llvm::ArrayRef<NamedValue> results);

/// Appends `results` to the function's results, named; the existing
/// results keep their attributes.
mlir::LogicalResult appendNamedResults(mlir::func::FuncOp func,
                                       llvm::ArrayRef<NamedValue> results);

/// Erases ops without uses or side effects, last first.
void eraseDeadOps(mlir::func::FuncOp func);

} // namespace mp

#endif // MP_LIB_TRANSFORMS_NAMEDSIGNATURE_H
