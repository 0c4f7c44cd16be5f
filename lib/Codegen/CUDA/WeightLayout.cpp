//===- WeightLayout.cpp - weights in Tensor Core fragment order -----------===//

#include "WeightLayout.h"

#include "mp/Support/ElementData.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

using namespace mlir;

memref::GlobalOp mp::constantHalfGlobal(Value operand) {
  // Reshapes of an identity-layout buffer keep its row-major order.
  while (Operation *reshape = operand.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(reshape))
      break;
    operand = reshape->getOperand(0);
  }
  auto get = operand.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return {};
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  if (!global || !global.getConstant() || !global.getType().hasStaticShape() ||
      !global.getType().getLayout().isIdentity() ||
      !global.getType().getElementType().isF16())
    return {};
  auto init = dyn_cast_or_null<ElementsAttr>(global.getInitialValueAttr());
  if (!init || rawElementData(init).first.empty())
    return {};
  return global;
}

memref::GlobalOp
mp::buildFragmentOrderedWeight(SymbolTable &symbols, memref::GlobalOp source,
                               TileCounts tiles,
                               ArrayRef<int64_t> columnOffsets,
                               ArrayRef<int64_t> reductionOffsets, bool quadK) {
  std::pair<ArrayRef<char>, bool> sourceData =
      rawElementData(cast<ElementsAttr>(*source.getInitialValue()));
  ArrayRef<char> raw = sourceData.first;
  bool splat = sourceData.second;
  auto half = [&](int64_t offset) {
    uint16_t h;
    std::memcpy(&h, raw.data() + (splat ? 0 : 2 * offset), 2);
    return h;
  };
  int64_t columns = columnOffsets.size(), depth = reductionOffsets.size();
  std::vector<uint16_t> data(tiles.n * tiles.k * 2 * 32 * 2, 0);
  size_t next = 0;
  for (int64_t nt = 0; nt < tiles.n; ++nt)
    for (int64_t kt = 0; kt < tiles.k; ++kt)
      for (int64_t reg = 0; reg < 2; ++reg)
        for (int64_t lane = 0; lane < 32; ++lane)
          for (int64_t e = 0; e < 2; ++e, ++next) {
            int64_t n = 8 * nt + lane / 4;
            int64_t k = quadK ? 16 * kt + 4 * (lane % 4) + 2 * reg + e
                              : 16 * kt + 8 * reg + 2 * (lane % 4) + e;
            if (n < columns && k < depth)
              data[next] = half(columnOffsets[n] + reductionOffsets[k]);
          }

  OpBuilder b(source.getContext()); // detached: the table places it
  auto type = MemRefType::get({tiles.n, tiles.k, 2, 32, 2}, b.getF16Type());
  auto tensorType = RankedTensorType::get(type.getShape(), b.getF16Type());
  ArrayRef<char> bytes(reinterpret_cast<const char *>(data.data()),
                       data.size() * sizeof(uint16_t));
  std::string name = (source.getSymName() + "_fragments").str();
  auto value = DenseResourceElementsAttr::get(
      tensorType, name,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(uint16_t)));
  // Each register's 128 bytes start a line of their own.
  auto global = memref::GlobalOp::create(
      b, source.getLoc(), name, b.getStringAttr("private"), type, value,
      /*constant=*/true, /*alignment=*/b.getI64IntegerAttr(128));
  symbols.insert(global, std::next(Block::iterator(source)));
  return global;
}
