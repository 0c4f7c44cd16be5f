//===- OutlineKernels.cpp - one noinline function per linalg op -----------===//

#include "mp/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
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

/// Whether every result of `loop` is its iteration argument updated in
/// place (through destination-passing ops and nested loops), so that the
/// outlined kernel writes into the buffer it is given. A loop that yields
/// fresh tensors (streaming attention's running statistics) stays inline:
/// a kernel cannot return a buffer whose size only it knows.
bool updatesInPlace(scf::ForOp loop) {
  for (auto [arg, yielded] :
       llvm::zip(loop.getRegionIterArgs(), loop.getYieldedValues())) {
    Value v = yielded;
    while (v != arg) {
      auto result = dyn_cast<OpResult>(v);
      if (!result || result.getOwner()->getBlock() != loop.getBody())
        return false;
      Operation *def = result.getOwner();
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
        v = dps.getTiedOpOperand(result)->get();
      else if (auto inner = dyn_cast<scf::ForOp>(def))
        v = inner.getInits()[result.getResultNumber()];
      else
        return false;
    }
  }
  return true;
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
      // dynamic shapes), and loops over linalg ops (a convolution's taps)
      // as one kernel each: what is inside a loop stays with it.
      SmallVector<Operation *> ops;
      auto outlinable = [&](Operation *op) {
        Operation *parent = op->getParentOp();
        return parent == func.getOperation() || isa<scf::IfOp>(parent);
      };
      func.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (isa<linalg::LinalgOp>(op) && outlinable(op)) {
          ops.push_back(op);
          return WalkResult::skip();
        }
        if (auto loop = dyn_cast<scf::ForOp>(op)) {
          bool overLinalg = loop.getBody()
                                ->walk([](linalg::LinalgOp) {
                                  return WalkResult::interrupt();
                                })
                                .wasInterrupted();
          if (overLinalg && outlinable(op) && loop.getNumResults() > 0 &&
              updatesInPlace(loop))
            ops.push_back(op);
          return WalkResult::skip();
        }
        return WalkResult::advance();
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
