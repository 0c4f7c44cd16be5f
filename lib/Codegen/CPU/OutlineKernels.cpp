//===- OutlineKernels.cpp - one noinline function per linalg op -----------===//

#include "mp/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mp {
#define GEN_PASS_DEF_OUTLINEKERNELS
#include "mp/Codegen/CPU/Passes.h.inc"
} // namespace mp

using namespace mlir;

namespace {

/// Producers cloned into a kernel instead of passed to it: the empty tensor
/// it writes into and a fill that initializes only its accumulator.
bool isClonedProducer(Value v, Operation *kernelOp) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::EmptyOp>(def))
    return def->getNumOperands() == 0;
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return v.hasOneUse() && *v.getUsers().begin() == kernelOp &&
           isa_and_nonnull<tensor::EmptyOp>(
               fill.getOutputs()[0].getDefiningOp()) &&
           fill.getOutputs()[0].getDefiningOp()->getNumOperands() == 0 &&
           isa_and_nonnull<arith::ConstantOp>(
               fill.getInputs()[0].getDefiningOp());
  return false;
}

/// Scalar constants are cloned rather than passed.
bool isScalarConstant(Value v) {
  auto c = v.getDefiningOp<arith::ConstantOp>();
  return c && !isa<ShapedType>(c.getType());
}

/// A fill whose one user is a linalg op of the same block: it is outlined
/// with that user.
bool isInitOfAnotherKernel(Operation &op) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  if (!fill || !fill->hasOneUse())
    return false;
  Operation *user = *fill->getUsers().begin();
  return isa<linalg::LinalgOp>(user) && !isa<linalg::FillOp>(user) &&
         user->getBlock() == fill->getBlock() &&
         isClonedProducer(fill->getResult(0), user);
}

struct OutlineKernelsPass
    : public mp::impl::OutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isDeclaration() || func.isPrivate())
        continue;
      unsigned counter = 0;
      Operation *insertAfter = func;
      // Linalg ops in scf.if branches too (the run-time broadcasts of
      // dynamic shapes); those in loop bodies stay with their loop.
      SmallVector<Operation *> ops;
      func.walk([&](linalg::LinalgOp op) {
        Operation *parent = op->getParentOp();
        if (parent == func.getOperation() || isa<scf::IfOp>(parent))
          ops.push_back(op);
      });
      for (Operation *op : ops) {
        // Fills are outlined with their consumer when they have one.
        if (isInitOfAnotherKernel(*op))
          continue;
        insertAfter = outline(func, op, symbols, counter++, insertAfter);
      }
    }
  }

  /// Outlines `op` into a kernel placed after `insertAfter`; returns it.
  func::FuncOp outline(func::FuncOp parent, Operation *op,
                       SymbolTable &symbols, unsigned index,
                       Operation *insertAfter) {
    // Values the kernel reads: operands and captures, minus what is cloned.
    SetVector<Value> used;
    for (Value v : op->getOperands())
      used.insert(v);
    getUsedValuesDefinedAbove(op->getRegions(), used);
    SmallVector<Value> args;
    SetVector<Operation *> cloned;
    for (Value v : used) {
      if (isClonedProducer(v, op)) {
        if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
          cloned.insert(fill.getInputs()[0].getDefiningOp());
          cloned.insert(fill.getOutputs()[0].getDefiningOp());
        }
        cloned.insert(v.getDefiningOp());
      } else if (isScalarConstant(v)) {
        cloned.insert(v.getDefiningOp());
      } else {
        args.push_back(v);
      }
    }

    OpBuilder b(parent);
    b.setInsertionPointAfter(insertAfter);
    auto type = b.getFunctionType(ValueRange(args).getTypes(),
                                  op->getResultTypes());
    std::string name =
        (parent.getName() + "_kernel_" + std::to_string(index)).str();
    auto kernel = func::FuncOp::create(b, op->getLoc(), name, type);
    kernel.setPrivate();
    // func-to-llvm carries `passthrough` over to the LLVM function.
    kernel->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
    symbols.insert(kernel, b.getInsertionPoint());
    Block *entry = kernel.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [v, arg] : llvm::zip(args, entry->getArguments()))
      map.map(v, arg);
    // Producers in program order (constants and empties before the fill).
    SmallVector<Operation *> producers = cloned.takeVector();
    llvm::sort(producers, [](Operation *a, Operation *c) {
      return a->isBeforeInBlock(c);
    });
    for (Operation *p : producers)
      if (!map.contains(p->getResult(0)))
        b.clone(*p, map);
    Operation *body = b.clone(*op, map);
    func::ReturnOp::create(b, op->getLoc(), body->getResults());

    b.setInsertionPoint(op);
    auto call = func::CallOp::create(b, op->getLoc(), kernel, args);
    op->replaceAllUsesWith(call.getResults());
    op->erase();
    for (Operation *p : llvm::reverse(producers))
      if (p->use_empty())
        p->erase();
    return kernel;
  }
};

} // namespace
