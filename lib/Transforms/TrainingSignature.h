//===- TrainingSignature.h - named inputs and outputs of a step -*- C++ -*-===//
//
// Training steps name every argument and result (`mp.name`), because
// trainers feed each `NAME.next` result back as input `NAME`.
//
//===----------------------------------------------------------------------===//

#ifndef MP_LIB_TRANSFORMS_TRAININGSIGNATURE_H
#define MP_LIB_TRANSFORMS_TRAININGSIGNATURE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <utility>

namespace mp {

/// A result of the step and its name.
using NamedValue = std::pair<std::string, mlir::Value>;

/// The entry function of `module` (the first public one), or null after
/// emitting an error that names `pass`.
mlir::func::FuncOp trainingEntry(mlir::ModuleOp module, llvm::StringRef pass);

/// Appends an argument named `name` of type `type`.
mlir::BlockArgument addNamedArgument(mlir::func::FuncOp func, mlir::Type type,
                                     llvm::StringRef name);

/// The function's results with their names, in order.
llvm::SmallVector<NamedValue> namedResults(mlir::func::FuncOp func);

/// Makes `results` the function's results (types, names, return op).
void setNamedResults(mlir::func::FuncOp func,
                     llvm::ArrayRef<NamedValue> results);

/// Erases ops without uses or side effects, last first.
void eraseDeadOps(mlir::func::FuncOp func);

} // namespace mp

#endif // MP_LIB_TRANSFORMS_TRAININGSIGNATURE_H
