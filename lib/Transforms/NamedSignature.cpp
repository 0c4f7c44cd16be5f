//===- NamedSignature.cpp - named graph inputs and outputs --------------===//

#include "NamedSignature.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace mp {

func::FuncOp entryFunction(ModuleOp module, StringRef pass) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      return func;
  emitError(module.getLoc()) << pass << ": the module has no function to "
                                        "transform (import a model first)";
  return nullptr;
}

BlockArgument addNamedArgument(func::FuncOp func, Type type, StringRef name) {
  Builder b(func.getContext());
  unsigned index = func.getNumArguments();
  auto attrs = b.getDictionaryAttr(
      b.getNamedAttr("mp.name", b.getStringAttr(name)));
  (void)func.insertArgument(index, type, attrs, func.getLoc());
  return func.getArgument(index);
}

SmallVector<NamedValue> namedResults(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  SmallVector<NamedValue> results;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto name = func.getResultAttrOfType<StringAttr>(i, "mp.name");
    results.push_back({name ? name.str() : "#" + std::to_string(i), v});
  }
  return results;
}

/// The values, types and `mp.name` attributes of `results`.
static void unzipNamed(Builder &b, ArrayRef<NamedValue> results,
                       SmallVectorImpl<Value> &values,
                       SmallVectorImpl<Type> &types,
                       SmallVectorImpl<DictionaryAttr> &attrs) {
  for (const auto &[name, v] : results) {
    values.push_back(v);
    types.push_back(v.getType());
    attrs.push_back(
        b.getDictionaryAttr(b.getNamedAttr("mp.name", b.getStringAttr(name))));
  }
}

void setNamedResults(func::FuncOp func, ArrayRef<NamedValue> results) {
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  OpBuilder b(ret);
  SmallVector<Value> values;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  unzipNamed(b, results, values, types, attrs);
  func::ReturnOp::create(b, ret.getLoc(), values);
  ret.erase();
  func.setType(
      b.getFunctionType(func.getArgumentTypes(), TypeRange(types)));
  func.setAllResultAttrs(attrs);
}

LogicalResult appendNamedResults(func::FuncOp func,
                                 ArrayRef<NamedValue> results) {
  Builder b(func.getContext());
  SmallVector<Value> values;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  unzipNamed(b, results, values, types, attrs);
  unsigned end = func.getNumResults();
  SmallVector<unsigned> indices(values.size(), end);
  if (failed(func.insertResults(indices, types, attrs)))
    return failure();
  func.front().getTerminator()->insertOperands(end, values);
  return success();
}

void eraseDeadOps(func::FuncOp func) {
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(func.front())))
    if (op.use_empty() && isMemoryEffectFree(&op) &&
        !op.hasTrait<OpTrait::IsTerminator>())
      op.erase();
}

} // namespace mp
