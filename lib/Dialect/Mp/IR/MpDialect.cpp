//===- MpDialect.cpp - the mp dialect -------------------------------------===//

#include "mp/Dialect/Mp/IR/MpDialect.h"
#include "mp/Dialect/Mp/IR/MpOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mp;

#include "mp/Dialect/Mp/IR/MpOpsDialect.cpp.inc"

#include "mp/Dialect/Mp/IR/MpEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mp/Dialect/Mp/IR/MpAttrs.cpp.inc"

void MpDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mp/Dialect/Mp/IR/MpAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mp/Dialect/Mp/IR/MpOps.cpp.inc"
      >();
}

Operation *MpDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
